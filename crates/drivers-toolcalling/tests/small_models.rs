//! What small local models do, against a scripted model: calls written as text, calls one
//! brace short, made-up tool names, empty replies and replies cut at the token limit.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::HashSet;

use agents_core::AgentDriver;
use agents_core::{
    Agent, AgentError, AgentState, DefaultToolExecutor, EmptyResponseCheck, ErrorPolicy,
    FunctionTool, Next, StateProcessor, StepContext, StepsLimit, StopReason, ToolCallPresenceCheck,
    ToolEffects, ToolFailureKind, Tools, DEFAULT_SECTION, EXECUTION_BUFFER_SECTION,
};
use async_trait::async_trait;
use drivers_toolcalling::{RecoveredCallsShown, ToolCallingDriver};
use inference::{FinishReason, InferenceResponse, ScriptedModel, Usage};
use messages::{Role, ToolCall};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct City {
    /// The city's name.
    city: String,
}

#[derive(Deserialize, JsonSchema)]
struct Path {
    /// The file.
    path: String,
}

#[derive(Deserialize, JsonSchema)]
struct Search {
    /// The text to look for.
    #[allow(dead_code)]
    pattern: String,
}

/// A read-only tool `name` that returns `result` whatever it is asked (`A`: its arguments).
fn answering<A: DeserializeOwned + JsonSchema + Send + 'static>(
    name: &'static str,
    description: &'static str,
    result: &'static str,
) -> FunctionTool {
    FunctionTool::new(name, description, move |_: A| async move {
        Ok::<_, String>(result.to_owned())
    })
    .with_effects(ToolEffects::ReadOnly)
}

/// Runs `request` with `tools`: the model reads `path` with `read_file`, then gives
/// `replies` in turn.
async fn replies_after_reading(
    request: &str,
    path: &str,
    tools: &Tools,
    replies: &[&str],
) -> (AgentState, ScriptedModel) {
    let mut script = vec![InferenceResponse::with_tool_calls([read("c1", path)])];
    script.extend(replies.iter().map(|reply| text(reply)));
    run_with(asking(request), script, |driver| {
        agent(driver).with_tools(tools.clone())
    })
    .await
}

/// `get_weather` (a function tool: side effects, as far as the driver knows) and `read_file`
/// (read-only).
fn tools() -> Tools {
    Tools::new()
        .with(FunctionTool::new(
            "get_weather",
            "Current weather for a city.",
            |args: City| async move { Ok::<_, String>(format!("Sunny in {}", args.city)) },
        ))
        .with(
            FunctionTool::new("read_file", "Reads a file.", |args: Path| async move {
                Ok::<_, String>(format!("contents of {}", args.path))
            })
            .with_effects(ToolEffects::ReadOnly),
        )
}

/// Separated-trace persistence: the trace to the execution buffer, the answer to the
/// conversation.
struct SeparatedTrace;

#[async_trait]
impl StateProcessor for SeparatedTrace {
    async fn process(&self, state: AgentState, next: Next<'_>) -> Result<AgentState, AgentError> {
        let state = next.run(state).await?;
        let Some(step) = state.current_step().cloned() else {
            return Ok(state);
        };
        let store = state
            .store()
            .section(EXECUTION_BUFFER_SECTION)
            .append(step.trace_messages().clone())
            .section(DEFAULT_SECTION)
            .append(step.response_messages().clone());
        Ok(state.with_store(store))
    }
}

fn agent(driver: ToolCallingDriver) -> Agent {
    Agent::new(driver)
        .with_tools(tools())
        // The test's own stack and criteria, in place of the defaults.
        .with_processors(agents_core::StateProcessors::new([
            std::sync::Arc::new(SeparatedTrace) as std::sync::Arc<dyn agents_core::StateProcessor>,
        ]))
        .with_criteria(agents_core::ContinuationCriteria::new())
        .with_criterion(ToolCallPresenceCheck::new())
        .with_criterion(EmptyResponseCheck::new())
        .with_criterion(StepsLimit::new(6))
        .with_error_policy(ErrorPolicy::retry_tool_errors(3))
}

/// A new conversation whose user asks `request`.
fn asking(request: &str) -> AgentState {
    AgentState::new().with_user_message(request)
}

/// Runs "Weather in Paris?" through the test agent, the model giving `replies`.
async fn run(replies: Vec<InferenceResponse>) -> (AgentState, ScriptedModel) {
    run_on(asking("Weather in Paris?"), replies).await
}

/// Runs `state` through the test agent, the model giving `replies`: the finished state and
/// the model, which remembers the requests it was sent.
async fn run_on(
    state: AgentState,
    replies: impl IntoIterator<Item = InferenceResponse>,
) -> (AgentState, ScriptedModel) {
    run_with(state, replies, agent).await
}

/// As [`run_on`], with the agent built from the model's driver by `build` (the test agent with
/// a setting more: `|driver| agent(driver).with_tools(..)`).
async fn run_with(
    state: AgentState,
    replies: impl IntoIterator<Item = InferenceResponse>,
    build: impl FnOnce(ToolCallingDriver) -> Agent,
) -> (AgentState, ScriptedModel) {
    let model = ScriptedModel::new(replies);
    let done = build(ToolCallingDriver::new(model.clone()))
        .execute(state)
        .await
        .unwrap();
    (done, model)
}

/// Asserts that `step`'s first call was refused for being written among other text.
fn assert_refused_for_prose(step: &agents_core::AgentStep) {
    let refused = step.tool_executions().iter().next().unwrap();
    assert!(refused.has_error());
    let message = refused.error_message().unwrap_or_default();
    assert!(
        message.contains("only a reply that is the call alone runs it"),
        "{message}"
    );
}

/// Asserts that the last reply of `done` was not saved as the answer: the step has no
/// response message and records that the reply is not an answer, and that error stopped the
/// run.
fn assert_not_saved(done: &AgentState) {
    assert_eq!(answer(done), None);
    assert_eq!(done.stop_reason(), Some(StopReason::Error));
    let last = done.steps().last().unwrap();
    assert!(last.response_messages().is_empty());
    assert!(
        last.errors()[0].message.contains("not an answer"),
        "{:?}",
        last.errors()
    );
}

/// Every tool execution of `done`'s steps, in order.
fn executions_of(done: &AgentState) -> Vec<agents_core::ToolExecution> {
    done.steps()
        .flat_map(|step| step.tool_executions().iter().cloned())
        .collect()
}

fn answer(state: &AgentState) -> Option<String> {
    state.final_response().map(|m| m.text())
}

fn text(reply: &str) -> InferenceResponse {
    InferenceResponse::text(reply)
}

const PARIS_CALL: &str = r#"{"name": "get_weather", "arguments": {"city": "Paris"}}"#;

#[tokio::test]
async fn recovery_is_on_by_default_and_the_call_runs() {
    let (done, model) = run(vec![text(PARIS_CALL), text("Sunny in Paris.")]).await;
    assert_eq!(answer(&done).as_deref(), Some("Sunny in Paris."));
    let first = done.steps().next().unwrap();
    assert_eq!(
        first.tool_executions().iter().next().unwrap().result_text(),
        "Sunny in Paris"
    );
    // The model sees a real call and its result, not its own JSON text.
    let second = model.requests()[1].messages.to_transcript();
    // Its id says it was recovered from text, with the execution in it.
    let id = done
        .steps()
        .next()
        .unwrap()
        .tool_executions()
        .iter()
        .next()
        .unwrap()
        .id()
        .to_owned();
    assert!(id.starts_with("recovered_") && id.ends_with("_1_1"), "{id}");
    assert!(
        second.contains(&format!("tool get_weather [{id}]: Sunny in Paris")),
        "{second}"
    );
}

/// Tried on new tasks of the eval's kinds (issue 36, 2026-12-07): the 1.5B model wrote its
/// call between `<tool_response>` tags three times, alone; taken for a call among other text,
/// it never ran. Alone in those tags, a call runs as in `<tool_call>` tags; a result the model
/// wrote there itself is still no call (the forged-evidence check withholds it).
#[tokio::test]
async fn a_call_alone_in_tool_response_tags_runs_and_a_result_written_there_does_not() {
    let tagged = format!("<tool_response>\n{PARIS_CALL}\n</tool_response>");
    let (done, _) = run(vec![text(&tagged), text("Sunny in Paris.")]).await;
    assert_eq!(answer(&done).as_deref(), Some("Sunny in Paris."));
    let first = done.steps().next().unwrap();
    assert_eq!(
        first.tool_executions().iter().next().unwrap().result_text(),
        "Sunny in Paris"
    );
    // A call beside other text in those tags, or a result: not run.
    for reply in [
        format!("I'll check. <tool_response>\n{PARIS_CALL}\n</tool_response>"),
        "<tool_response>\nSunny in Paris\n</tool_response>".to_owned(),
    ] {
        let (done, _) = run(vec![
            text(&reply),
            text("It is sunny."),
            text("It is sunny."),
        ])
        .await;
        assert!(
            done.steps().all(|step| step
                .tool_executions()
                .iter()
                .all(|e| e.result_text() != "Sunny in Paris")),
            "{reply}"
        );
    }
}

#[tokio::test]
async fn shown_as_written_the_model_sees_its_own_call_and_the_state_keeps_a_native_one() {
    let read_call = r#"{"name": "read_file", "arguments": {"path": "notes.md"}}"#;
    let cases = [
        // A read-only call announced in prose, and a call that is the whole reply.
        (
            format!("I'll read it:\n```json\n{read_call}\n```"),
            "read_file",
            "contents of notes.md",
        ),
        (PARIS_CALL.to_owned(), "get_weather", "Sunny in Paris"),
    ];
    for (reply, tool, result) in cases {
        let model = ScriptedModel::new([text(&reply), text("Done.")]);
        let driver = ToolCallingDriver::new(model.clone())
            .with_recovered_calls_shown(RecoveredCallsShown::AsWritten);
        let done = agent(driver).execute(asking("Go.")).await.unwrap();
        assert_eq!(answer(&done).as_deref(), Some("Done."));
        let shown = &model.requests()[1].messages;
        let transcript = shown.to_transcript();
        assert!(
            shown
                .iter()
                .all(|m| !m.has_tool_calls() && m.role() != Role::Tool),
            "no native call or tool message: {transcript}"
        );
        let written = shown.get(1).unwrap();
        assert_eq!(written.role(), Role::Assistant);
        assert!(
            written
                .text()
                .contains(&format!("{{\"name\": \"{tool}\", \"arguments\": ")),
            "the call as written: {transcript}"
        );
        assert_eq!(
            shown.get(2).map(|m| (m.role(), m.text())),
            Some((
                Role::User,
                format!("<tool_response>\n{result}\n</tool_response>")
            ))
        );
        // The state keeps the call as a native call with its result.
        let trace = done
            .steps()
            .next()
            .unwrap()
            .trace_messages()
            .to_transcript();
        assert!(trace.contains(&format!("assistant -> {tool}")), "{trace}");
        assert!(trace.contains(&format!("tool {tool} [")), "{trace}");
    }
}

#[tokio::test]
async fn with_recovery_off_a_call_written_as_text_is_the_answer() {
    let model = ScriptedModel::new([text(PARIS_CALL)]);
    let driver = ToolCallingDriver::new(model).with_content_tool_call_recovery(false);
    let done = agent(driver)
        .execute(asking("Weather in Paris?"))
        .await
        .unwrap();
    assert_eq!(done.step_count(), 1);
    assert_eq!(answer(&done).as_deref(), Some(PARIS_CALL));
}

#[tokio::test]
async fn prose_that_merely_contains_json_is_the_answer() {
    for reply in [
        "The data is {\"city\": \"Paris\", \"temp\": 22}.".to_owned(),
        "Paris today:\n```json\n{\"city\": \"Paris\", \"temp\": 22}\n```".to_owned(),
    ] {
        let (done, _) = run(vec![text(&reply)]).await;
        assert_eq!(done.step_count(), 1, "{reply}");
        assert_eq!(answer(&done), Some(reply.clone()));
        assert!(done.steps().next().unwrap().tool_executions().is_empty());
    }
}

const UNKNOWN_CALL: &str = r#"{"name": "get_forecast", "arguments": {"city": "Paris"}}"#;

/// Issue 36's development task d23: the model called a tool the agent does not have, then said
/// it cannot do the task at all. It has tools: it is told so once, and the call that follows
/// runs.
#[tokio::test]
async fn a_denial_of_the_tools_after_an_unknown_tool_is_told_the_tools_exist() {
    let denial = "I apologize, but I cannot get a forecast because I do not have the ability \
                  to access weather services.";
    let (done, model) = run(vec![
        text(UNKNOWN_CALL),
        text(denial),
        text(PARIS_CALL),
        text("It is sunny in Paris."),
    ])
    .await;
    assert_eq!(answer(&done).as_deref(), Some("It is sunny in Paris."));
    let told = model.requests()[2].messages.to_transcript();
    assert!(told.contains("you do have tools"), "{told}");
    // said again after that, the denial stands as what the model answers
    let (done, _) = run(vec![text(UNKNOWN_CALL), text(denial), text(denial)]).await;
    assert_eq!(answer(&done).as_deref(), Some(denial));
}

/// Issue 36's development task d13: "To find the third line of poem.txt, I will call the
/// `read_file` function with the path "poem.txt" and the arguments {"offset": 3, "limit": 1}."
/// was saved as the answer: a reply holding JSON was left to text-call recovery, which reads
/// no call in it. JSON that is no call is judged as any text: a plan, asked for the call.
#[tokio::test]
async fn a_plan_with_json_that_is_no_call_gets_the_plan_nudge() {
    let plan = r#"To find the weather, I will call the `get_weather` function with the arguments {"units": "metric"}."#;
    let (done, model) = run(vec![text(plan), text(PARIS_CALL), text("Sunny in Paris.")]).await;
    assert_eq!(answer(&done).as_deref(), Some("Sunny in Paris."));
    assert_eq!(done.steps().next().unwrap().tool_executions().len(), 1);
    let nudged = model.requests()[1].messages.to_transcript();
    assert!(nudged.contains(plan), "{nudged}");
    assert!(
        nudged.contains("do not describe the call: make it now"),
        "{nudged}"
    );
    assert_eq!(model.requests().len(), 3);
}

/// Issue 36's development task d15: asked "What is the total of the amount column in
/// sales.csv?", the 0.5B model answered "..., you can use the following JSON object:" and a
/// call to `total_amount`, a tool it does not have; that was saved as the answer. A call to an
/// unknown tool after prose is not an answer unless the request asks for such text: it gets
/// the unknown-tool error, which names the agent's tools, and the run goes on.
#[tokio::test]
async fn an_announced_call_to_an_unknown_tool_is_refused_unless_the_request_asks_for_one() {
    for announced in [
        format!("To get the weather, you can use the following JSON object:\n\n{UNKNOWN_CALL}"),
        format!("Earlier I would have called\n```json\n{UNKNOWN_CALL}\n```"),
    ] {
        let (done, model) = run(vec![
            text(&announced),
            text(PARIS_CALL),
            text("Sunny in Paris."),
        ])
        .await;
        assert_eq!(
            answer(&done).as_deref(),
            Some("Sunny in Paris."),
            "{announced}"
        );
        let first = done.steps().next().unwrap();
        let refused = first.tool_executions().iter().next().unwrap();
        assert_eq!(refused.failure_kind(), Some(ToolFailureKind::UnknownTool));
        let second = model.requests()[1].messages.to_transcript();
        assert!(
            second.contains("There is no tool named `get_forecast`"),
            "{second}"
        );
        assert!(second.contains("`get_weather`"), "{second}");
        assert!(done
            .messages()
            .iter()
            .all(|m| !m.text().contains("get_forecast")));
    }
    // Asked what such a call looks like (JSON, a tool call, the tool by name), the reply is
    // the answer, and nothing runs.
    let announced = format!("A call looks like this:\n```json\n{UNKNOWN_CALL}\n```");
    for request in [
        "Show me the JSON for a forecast call.",
        "What does a tool call for the forecast look like?",
        "Show an example call.",
        "How would I use get_forecast?",
    ] {
        let (done, model) = run_on(asking(request), [text(&announced)]).await;
        assert_eq!(answer(&done), Some(announced.clone()), "{request}");
        assert!(done.steps().next().unwrap().tool_executions().is_empty());
        assert_eq!(model.requests().len(), 1, "{request}");
    }
}

/// Issue 36: after the tool ran, the 1.5B model wrote how one could use the tool ("To find the
/// weather, you can use the `read_file` function ...") and that plan was saved as the answer.
/// A plan after the tools ran gets one nudge in the same step; the reply to it is the answer.
#[tokio::test]
async fn a_plan_after_the_tools_ran_gets_one_nudge_and_the_answer_follows() {
    let plan = "To find the weather, you can use the `read_file` function to read paris.txt.";
    let (done, model) = run(vec![
        text(r#"{"name": "read_file", "arguments": {"path": "paris.txt"}}"#),
        text(plan),
        text("It is sunny in Paris."),
    ])
    .await;
    assert_eq!(answer(&done).as_deref(), Some("It is sunny in Paris."));
    assert_eq!(done.step_count(), 2);
    let nudged = model.requests()[2].messages.to_transcript();
    assert!(nudged.contains(plan), "{nudged}");
    assert!(
        nudged.contains("Answer the user's question now"),
        "{nudged}"
    );
    // Once per step: a second plan is not an answer either. It is not saved, and the step's
    // error stops the run (an agent with answer-on-stop answers from what was found).
    let (done, model) = run(vec![
        text(r#"{"name": "read_file", "arguments": {"path": "paris.txt"}}"#),
        text(plan),
        text(plan),
    ])
    .await;
    assert_eq!(model.requests().len(), 3, "one nudge, no more");
    assert_not_saved(&done);
}

/// Issue 36: after a call to a tool the agent does not have, the model pasted the fix-it
/// error as its reply. It gets one nudge; the reply to it is the answer, and a second copy is
/// not saved.
#[tokio::test]
async fn a_copied_tool_error_gets_one_nudge_and_is_never_the_answer() {
    let copied = "Error: There is no tool named `get_forecast`. Did you mean";
    let (done, model) = run_on(
        asking("Forecast for Paris?"),
        [
            text(UNKNOWN_CALL),
            text(copied),
            text("I cannot get a forecast: there is no such tool."),
        ],
    )
    .await;
    assert_eq!(
        answer(&done).as_deref(),
        Some("I cannot get a forecast: there is no such tool.")
    );
    let nudged = model.requests()[2].messages.to_transcript();
    assert!(nudged.contains("not an answer"), "{nudged}");

    let (done, _) = run_on(
        asking("Forecast for Paris?"),
        [text(UNKNOWN_CALL), text(copied), text(copied)],
    )
    .await;
    assert_eq!(
        answer(&done),
        None,
        "a copied error is never saved as the answer"
    );
    assert_eq!(done.stop_reason(), Some(StopReason::Error));
}

/// Issue 32's 32-turn conversation, turn 12 ("In config.ini, change workers from 4 to 6"):
/// the 1.5B model claimed the change without a call, and after the claim nudge wrote a plan
/// ("you can use the `edit_file` function ...") that ended the turn with the file untouched.
/// A plan when no tool has run gets its own nudge, once per step; a call in the reply to it
/// runs.
#[tokio::test]
async fn a_plan_when_no_tool_ran_gets_one_nudge_and_the_call_follows() {
    let claim = "I used the `read_file` tool: it is sunny in Paris.";
    let plan = "To find the weather, you can use the `read_file` function to read paris.txt.";
    let call = r#"{"name": "read_file", "arguments": {"path": "paris.txt"}}"#;
    let (done, model) = run(vec![
        text(claim),
        text(plan),
        text(call),
        text("It is sunny in Paris."),
    ])
    .await;
    assert_eq!(answer(&done).as_deref(), Some("It is sunny in Paris."));
    let first = done.steps().next().unwrap();
    assert_eq!(first.tool_executions().len(), 1);
    // The second nudge's request holds the whole exchange: the claim, its nudge, the plan
    // and the nudge for the call.
    let nudged = model.requests()[2].messages.to_transcript();
    for part in [
        claim,
        "no tool has run for this request",
        plan,
        "do not describe the call: make it now",
    ] {
        assert!(nudged.contains(part), "{part} in {nudged}");
    }
    // The reply, two nudges, and the answer after the call.
    assert_eq!(model.requests().len(), 4);

    // Asked how something is done, the model may give the same answer again: it stands.
    let (done, model) = run_on(
        asking("How do I find the weather in Paris?"),
        vec![text(plan), text(plan)],
    )
    .await;
    assert_eq!(answer(&done).as_deref(), Some(plan));
    assert_eq!(model.requests().len(), 2);

    // Asked for the weather, the same plan twice is not an answer (issue 32's 32-turn
    // conversation, digest mode: saved, it became the answer of every later turn but one).
    // It is not saved, and the step's error stops the run.
    let (done, model) = run(vec![text(plan), text(plan)]).await;
    assert_eq!(model.requests().len(), 2, "one nudge, no more");
    assert_not_saved(&done);
}

/// Issue 32's 32-turn conversation: in separated mode the 1.5B model answered "In config.ini,
/// change workers from 4 to 6" with "The workers in config.ini have been changed from 4 to 6."
/// and no call, and the file was untouched; later it wrote "I called the `search_files` tool"
/// having called nothing. A call or a change claimed when no tool ran gets one nudge in the
/// same step; a call in the reply to it runs.
#[tokio::test]
async fn a_call_claimed_when_no_tool_ran_gets_one_nudge_and_the_call_follows() {
    let claim = "I called the `read_file` tool: it is sunny in Paris.";
    let call = r#"{"name": "read_file", "arguments": {"path": "paris.txt"}}"#;
    let (done, model) = run(vec![text(claim), text(call), text("It is sunny in Paris.")]).await;
    assert_eq!(answer(&done).as_deref(), Some("It is sunny in Paris."));
    assert_eq!(done.steps().next().unwrap().tool_executions().len(), 1);
    let nudged = model.requests()[1].messages.to_transcript();
    assert!(nudged.contains(claim), "{nudged}");
    assert!(
        nudged.contains("no tool has run for this request"),
        "{nudged}"
    );
    // Once per step, and a claim of a call made again after its nudge is never the answer:
    // saved, later turns read it as something that happened. The step's error stops the run
    // (which answers on stop where that is on).
    let (done, model) = run(vec![text(claim), text(claim)]).await;
    assert_eq!(answer(&done), None, "a claim repeated after its nudge");
    assert_eq!(done.stop_reason(), Some(StopReason::Error));
    assert_eq!(model.requests().len(), 2);
    // A change told of in the passive may be what a file says: asked about once, it stands.
    let passive = "The forecast for Paris was updated this morning: sunny.";
    let (done, model) = run(vec![text(passive), text(passive)]).await;
    assert_eq!(answer(&done).as_deref(), Some(passive));
    assert_eq!(model.requests().len(), 2);
    // After a tool ran, saying so is an answer (with what the tool returned: a reply that
    // tells the use and nothing the tool returned is asked for the facts, see below).
    let told = "I called the `get_weather` tool: it is sunny in Paris.";
    let (done, model) = run(vec![text(PARIS_CALL), text(told)]).await;
    assert_eq!(answer(&done).as_deref(), Some(told));
    assert_eq!(model.requests().len(), 2);
}

/// Issue 32's 32-turn conversation at 8cc4411: after only `read_file` ran, the 1.5B model
/// answered "I called the `edit_file` function ..." (turn 12) and told of a `search_files`
/// call that never ran (turn 9); asked about it, it said the same again, and that was saved as
/// the answer. A call the execution did not make, claimed again after its nudge, is never
/// the answer; a reply to the nudge that answers from the results is.
#[tokio::test]
async fn a_call_claimed_beyond_the_calls_that_ran_is_never_the_answer_after_its_nudge() {
    let claim = "I called the `read_file` tool on paris.txt: it is sunny in Paris.";
    let (done, model) = run(vec![text(PARIS_CALL), text(claim), text(claim)]).await;
    assert_eq!(answer(&done), None, "a claim repeated after its nudge");
    assert_eq!(done.stop_reason(), Some(StopReason::Error));
    let nudged = model.requests()[2].messages.to_transcript();
    assert!(
        nudged.contains("Your last reply says you called `read_file`, but no such call has run"),
        "{nudged}"
    );
    let last = done.steps().last().unwrap();
    assert!(
        last.errors()[0]
            .message
            .contains("claimed a call or a change its calls do not show"),
        "{:?}",
        last.errors()
    );

    let answered = "It is sunny in Paris, says get_weather.";
    let (done, model) = run(vec![text(PARIS_CALL), text(claim), text(answered)]).await;
    assert_eq!(answer(&done).as_deref(), Some(answered));
    assert_eq!(model.requests().len(), 3);
}

/// The 1.5B model on the eval's development half (d6): "To list the files in the fruits
/// directory, I used the `list_dir` function ... The function returned the names and sizes of
/// the files in the directory." was saved as the answer, with no file named. A reply that
/// tells which tool was used and nothing the tools returned gets one nudge; the reply to it
/// stands, whatever it is (a computed answer, "the sum is 42", holds no word of the results
/// either, so this nudge never discards a reply).
#[tokio::test]
async fn a_reply_that_tells_the_tool_used_and_not_what_it_found_gets_one_nudge() {
    let told = "To answer, I used the `get_weather` function, which returned the weather.";
    let (done, model) = run(vec![
        text(PARIS_CALL),
        text(told),
        text("It is sunny in Paris."),
    ])
    .await;
    assert_eq!(answer(&done).as_deref(), Some("It is sunny in Paris."));
    let nudged = model.requests()[2].messages.to_transcript();
    assert!(
        nudged.contains("said which tool you used, not what it found"),
        "{nudged}"
    );
    // Once per step, and never a step error: the same reply again is the answer.
    let (done, model) = run(vec![text(PARIS_CALL), text(told), text(told)]).await;
    assert_eq!(answer(&done).as_deref(), Some(told));
    assert_eq!(model.requests().len(), 3);
    assert!(done.steps().all(|step| step.errors().is_empty()));
}

/// Issue 36's eval, d1: "Which port is configured in config.ini?" answered "The port is
/// configured in config.ini." after a call: every word the request's. One nudge; the reply
/// to it stands, whatever it is.
#[tokio::test]
async fn a_reply_that_only_restates_the_request_gets_one_nudge() {
    let echo = "The weather in Paris.";
    let (done, model) = run(vec![
        text(PARIS_CALL),
        text(echo),
        text("It is sunny in Paris."),
    ])
    .await;
    assert_eq!(answer(&done).as_deref(), Some("It is sunny in Paris."));
    let nudged = model.requests()[2].messages.to_transcript();
    assert!(
        nudged.contains("only repeats the request; it does not answer it"),
        "{nudged}"
    );
    let (done, model) = run(vec![text(PARIS_CALL), text(echo), text(echo)]).await;
    assert_eq!(answer(&done).as_deref(), Some(echo));
    assert_eq!(model.requests().len(), 3);
    assert!(done.steps().all(|step| step.errors().is_empty()));
    // An answer with a fact of its own is not asked about.
    let (done, model) = run(vec![text(PARIS_CALL), text("Sunny.")]).await;
    assert_eq!(answer(&done).as_deref(), Some("Sunny."));
    assert_eq!(model.requests().len(), 2);
}

/// A guess of the weather, written before any tool had returned.
const GUESS: &str = "It is rainy in Paris today, at 12 degrees.";

/// A reply that calls `get_weather` for Paris beside a plan holding [`GUESS`].
fn plan_with_guess() -> InferenceResponse {
    InferenceResponse::with_tool_calls([ToolCall::new(
        "call_a",
        "get_weather",
        json!({"city": "Paris"}),
    )])
    .with_content(format!(
        "I'll get the weather for Paris with `get_weather`. The result: {GUESS}"
    ))
}

/// Issue 36's eval, d10: the 1.5B model wrote a plan with made-up file contents and their sum
/// beside its first call, then, after reading both files, answered with the plan's sum. An
/// answer that repeats what the model wrote before any tool had returned gets one nudge, asked
/// without that text; given again, it is not the answer (the run answers on stop).
#[tokio::test]
async fn an_answer_written_before_any_result_gets_one_nudge() {
    let (guess, plan) = (GUESS, plan_with_guess());
    let (done, model) = run(vec![
        plan.clone(),
        text(guess),
        text("It is sunny in Paris."),
    ])
    .await;
    assert_eq!(answer(&done).as_deref(), Some("It is sunny in Paris."));
    let nudged = model.requests()[2].messages.to_transcript();
    assert!(
        nudged.contains("so it comes from your plan, not from the results"),
        "{nudged}"
    );
    // Asked without the guess in view: the call and its result stay, the plan's text and
    // the copy go.
    assert!(!nudged.contains("rainy"), "{nudged}");
    assert!(nudged.contains("Sunny in Paris"), "{nudged}");
    let (done, model) = run(vec![plan, text(guess), text(guess)]).await;
    assert_eq!(model.requests().len(), 3, "one nudge, no more");
    assert_not_saved(&done);
    // An answer the results gave is not asked about.
    let (done, model) = run(vec![
        text(PARIS_CALL),
        text("It is sunny in Paris today, says the forecast."),
    ])
    .await;
    assert_eq!(model.requests().len(), 2);
    assert!(answer(&done).is_some());
}

/// Issue 36's eval, d10 again: the guess refused after its nudge came back as the answer on
/// stop, asked with the plan in view. It is no answer there either: the clean page of results
/// is asked next, and its answer is saved.
#[tokio::test]
async fn a_guess_given_as_the_answer_on_stop_is_asked_again_from_the_results() {
    let (guess, plan) = (GUESS, plan_with_guess());
    let (done, model) = run_with(
        asking("Weather in Paris?"),
        [
            plan,
            text(guess),
            text(guess),
            // asked to answer on stop, with the plan in view
            text(guess),
            // asked from the page of results
            text("It is sunny in Paris."),
        ],
        |driver| agent(driver).with_answer_on_stop(agents_core::AnswerOnStop::Synthesize),
    )
    .await;
    assert_eq!(model.requests().len(), 5);
    assert_eq!(answer(&done).as_deref(), Some("It is sunny in Paris."));
    let page = model.requests()[4].messages.to_transcript();
    assert!(
        page.contains("Sunny in Paris") && !page.contains("rainy"),
        "{page}"
    );
}

/// Issue 36's eval, d6: after the listing came back, the 1.5B model's answer on stop was "To
/// list the files in the fruits directory, you can use the `list_dir` function.", a plan the
/// step would have refused. It is no answer on stop either: the page of results is asked
/// next, and its answer is saved.
#[tokio::test]
async fn a_plan_given_as_the_answer_on_stop_is_asked_again_from_the_results() {
    let plan = "To get the weather in Paris, you can use the `get_weather` function.";
    let (done, model) = run_with(
        asking("Weather in Paris?"),
        [
            text(PARIS_CALL),
            text(plan),
            text(plan),
            // asked to answer on stop, with the plan in view
            text(plan),
            // asked from the page of results
            text("It is sunny in Paris."),
        ],
        |driver| agent(driver).with_answer_on_stop(agents_core::AnswerOnStop::Synthesize),
    )
    .await;
    assert_eq!(model.requests().len(), 5);
    assert_eq!(answer(&done).as_deref(), Some("It is sunny in Paris."));
}

/// Issue 32's 32-turn conversation: the 1.5B model answered a new request with an earlier
/// answer (separated mode: "change workers from 4 to 6" got the port line of the turn before;
/// legacy mode: six turns in a row got turn 6's answer). A reply that repeats an earlier
/// answer given to a different request gets one nudge quoting the request; the reply to it
/// counts unless it is a repeat too (asked about a right repeat, the model gave a wrong one).
#[tokio::test]
async fn a_repeat_of_an_earlier_answer_to_another_request_gets_one_nudge() {
    let paris = "It is sunny in Paris today, with a light wind.";
    let rome = "It is raining in Rome today, with a strong wind.";
    let rome_call = r#"{"name": "get_weather", "arguments": {"city": "Rome"}}"#;
    let model = ScriptedModel::new(vec![
        text(PARIS_CALL),
        text(paris),
        text(rome_call),
        text(paris),
        text(rome),
        // "What did you find for Paris?": the right repeat, then another repeat.
        text(paris),
        text(rome),
    ]);
    let agent = agent(ToolCallingDriver::new(model.clone()));
    let first = agent.execute(asking("Weather in Paris?")).await.unwrap();
    assert_eq!(answer(&first).as_deref(), Some(paris));
    let second = agent
        .execute(first.with_user_message("And in Rome?"))
        .await
        .unwrap();
    assert_eq!(answer(&second).as_deref(), Some(rome));
    let nudged = model.requests()[4].messages.to_transcript();
    assert!(
        nudged.contains("repeats what you answered to an earlier, different request"),
        "{nudged}"
    );
    assert!(
        nudged.contains("The latest request is: \"And in Rome?\""),
        "{nudged}"
    );
    assert_eq!(model.requests().len(), 5, "one nudge, no more");
    let third = agent
        .execute(second.with_user_message("What did you find for Paris?"))
        .await
        .unwrap();
    assert_eq!(answer(&third).as_deref(), Some(paris));
    assert_eq!(model.requests().len(), 7);
    assert!(third.steps().all(|step| step.errors().is_empty()));
}

/// Issue 32's 32-turn conversation in separated mode (session 20): one turn stopped, and the
/// apology answer-on-stop synthesized for it ("I'm sorry, but I cannot answer your question
/// ...") became the answer of eight later turns, four of them after their tool had run. A copy
/// of an answer made on a stop gets one nudge, asked without those answers; the call in the
/// reply runs and its answer is saved. A copy after the nudge is never saved as the answer.
#[tokio::test]
async fn a_copy_of_an_answer_made_on_a_stop_is_asked_without_it_and_never_saved() {
    let apology = "I'm sorry, but I cannot answer your question as I do not have the \
                   information you need to provide.";
    let stopped = messages::Message::assistant(apology)
        .with_metadata(agents_core::INCOMPLETE_KEY, true)
        .with_metadata(agents_core::STOP_REASON_KEY, "error")
        .with_metadata(agents_core::ANSWERED_BY_KEY, "synthesize");
    let request = "Read config.ini: what is the workers value?";
    let conversation = AgentState::new()
        .with_messages(
            messages::Messages::new()
                .appended(messages::Message::user(
                    "In config.ini, change workers from 4 to 6.",
                ))
                .appended(stopped),
        )
        .with_user_message(request);
    let read = r#"{"name": "read_file", "arguments": {"path": "config.ini"}}"#;
    let (done, model) = run_on(
        conversation.clone(),
        [text(apology), text(read), text("Workers is 4.")],
    )
    .await;
    assert_eq!(answer(&done).as_deref(), Some("Workers is 4."));
    let asked = model.requests()[1].messages.to_transcript();
    assert!(
        !asked.contains("I'm sorry"),
        "the copy's source is left out: {asked}"
    );
    assert!(
        asked.contains(&format!("The latest request is: \"{request}\"")),
        "{asked}"
    );
    assert_eq!(
        done.steps().next().unwrap().tool_executions().len(),
        1,
        "the call in the reply to the nudge ran"
    );
    // Nothing is lost: the conversation still holds the stopped turn's answer.
    assert!(done.messages().to_transcript().contains("I'm sorry"));
    // The next step's request is the conversation again, the stopped turn's answer in it.
    assert!(model.requests()[2]
        .messages
        .to_transcript()
        .contains("I'm sorry"));

    let (done, _) = run_on(conversation.clone(), [text(apology), text(apology)]).await;
    assert_eq!(done.stop_reason(), Some(StopReason::Error));
    assert_eq!(
        done.messages().len(),
        conversation.messages().len(),
        "a copy is never saved as the answer"
    );
    let error = &done.steps().last().unwrap().errors()[0].message;
    assert!(error.contains("stopped unfinished"), "{error}");
}

/// Issue 32's 32-turn conversation in separated mode: after the first turn the 1.5B model
/// answered questions about the project's files from memory ("There are 10 lines that
/// contain ERROR", where app.log has 34) without a single call. An answer to a request that
/// names a file, given when no tool has run, gets one nudge to look; a call in the reply runs.
#[tokio::test]
async fn an_answer_about_a_named_file_given_without_looking_gets_one_nudge() {
    let request = "What does paris.txt say about the weather?";
    let call = r#"{"name": "read_file", "arguments": {"path": "paris.txt"}}"#;
    let (done, model) = run_on(
        asking(request),
        [
            text("It is raining in Paris."),
            text(call),
            text("It is sunny in Paris."),
        ],
    )
    .await;
    assert_eq!(answer(&done).as_deref(), Some("It is sunny in Paris."));
    assert_eq!(done.steps().next().unwrap().tool_executions().len(), 1);
    let nudged = model.requests()[1].messages.to_transcript();
    assert!(nudged.contains("It is raining in Paris."), "{nudged}");
    assert!(nudged.contains("Call a tool to read it now"), "{nudged}");
    // What does not replace the first answer: a reply to the nudge without a call (the 1.5B
    // model answered "The file ... contains the line: ..." having read nothing), the same
    // answer again (one nudge per step), an empty reply.
    for reply in [
        "The file paris.txt contains the line: rain.",
        "It is raining.",
        "",
    ] {
        let (done, model) = run_on(asking(request), [text("It is raining."), text(reply)]).await;
        assert_eq!(answer(&done).as_deref(), Some("It is raining."), "{reply}");
        assert_eq!(model.requests().len(), 2, "{reply}");
    }
}

/// Issue 36's held-out run h16: the 1.5B model called a tool it does not have (`move_file`),
/// got the unknown-tool error, then wrote "To move a file, you can use the `move_file`
/// function. Here's how:" and the same call in a fence, which was saved as the answer. A block
/// calling an unknown tool the model already tried is a second try, not an example: it gets
/// the unknown-tool error again and the run goes on to a real answer.
#[tokio::test]
async fn an_announced_call_to_an_unknown_tool_tried_before_is_refused_not_the_answer() {
    let announced = format!(
        "To get the forecast, you can use the `get_forecast` function. Here's how:\n\n```json\n{UNKNOWN_CALL}\n```"
    );
    let (done, model) = run(vec![
        text(UNKNOWN_CALL),
        text(&announced),
        text("Sunny in Paris."),
    ])
    .await;
    assert_eq!(answer(&done).as_deref(), Some("Sunny in Paris."));
    assert_eq!(done.step_count(), 3);
    let second = done.steps().nth(1).unwrap();
    let refused = second.tool_executions().iter().next().unwrap();
    assert_eq!(refused.failure_kind(), Some(ToolFailureKind::UnknownTool));
    assert!(
        refused
            .result_text()
            .contains("There is no tool named `get_forecast`"),
        "{}",
        refused.result_text()
    );
    // The model was told, in the third request, that the call did not run.
    let third = model.requests()[2].messages.to_transcript();
    assert!(
        third.contains("There is no tool named `get_forecast`"),
        "{third}"
    );
}

#[tokio::test]
async fn a_call_inside_a_sentence_is_not_run_and_not_the_answer() {
    // "Here's the result: {"name": "read_file", ...}" was saved as an answer by the 1.5B
    // model: a call that does not run is never the answer. The model gets a tool result
    // saying why, and answers next.
    // The model is first asked, in the same step, whether it meant the call (sent alone, it
    // would run); here it writes the same reply again.
    for reply in [
        format!("To get the weather I would call {PARIS_CALL}."),
        r#"Here's the result: {"name": "read_file", "arguments": {"path": "todo.txt"}}"#.to_owned(),
        format!("I will ignore the injected text <tool_call>{PARIS_CALL}</tool_call> of course."),
    ] {
        let (done, model) = run(vec![text(&reply), text(&reply), text("Sunny in Paris.")]).await;
        assert_eq!(answer(&done).as_deref(), Some("Sunny in Paris."), "{reply}");
        let asked = model.requests()[1].messages.to_transcript();
        assert!(
            asked.contains("reply now with only the JSON object of the call"),
            "{asked}"
        );
        let first = done.steps().next().unwrap();
        let executions: Vec<_> = first.tool_executions().iter().cloned().collect();
        assert_eq!(executions.len(), 1, "{reply}");
        assert!(executions[0].has_error(), "{reply}");
        let error = executions[0].error_message().unwrap();
        assert!(error.contains("was not run"), "{error}");
        assert!(error.contains("reply with only the call"), "{error}");
        assert!(executions[0].id().starts_with("recovered_"));
        let third = model.requests()[2].messages.to_transcript();
        assert!(third.contains("was not run"), "{third}");
    }
}

#[tokio::test]
async fn a_side_effecting_call_announced_in_prose_is_asked_about_and_runs_only_sent_alone() {
    // The 1.5B model on the development half (d19): "To find the largest file, I'll use the
    // `bash` function ..." and the call in a fence. Told by a tool error to send the call
    // alone, it repeated the reply word for word four times; asked by a user message in the
    // same step, it sent the call alone.
    let reply = format!(
        "I'll check the weather with `get_weather`:\n```json\n{PARIS_CALL}\n```\nThis returns it."
    );
    let (done, model) = run(vec![text(&reply), text(PARIS_CALL), text("Sunny.")]).await;
    assert_eq!(answer(&done).as_deref(), Some("Sunny."));
    let steps: Vec<_> = done.steps().collect();
    assert_eq!(steps.len(), 2);
    let ran: Vec<_> = steps[0].tool_executions().iter().cloned().collect();
    assert_eq!(ran.len(), 1, "the call sent alone ran, once");
    assert_eq!(ran[0].result_text(), "Sunny in Paris");
    let asked = model.requests()[1].messages.to_transcript();
    assert!(
        asked.contains("did not run: it was written among other text"),
        "{asked}"
    );
    assert!(
        asked.contains("This returns it."),
        "the reply asked about: {asked}"
    );

    // An explanation stays one: the model says so, and nothing runs.
    let (done, _) = run(vec![text(&reply), text("I was only showing the call.")]).await;
    assert_eq!(
        answer(&done).as_deref(),
        Some("I was only showing the call.")
    );
    assert_eq!(done.steps().next().unwrap().tool_executions().len(), 0);
}

#[tokio::test]
async fn a_side_effecting_call_announced_in_prose_twice_is_refused_with_send_it_alone() {
    let reply = format!(
        "I'll check the weather with `get_weather`:\n```json\n{PARIS_CALL}\n```\nThis returns it."
    );
    let (done, model) = run(vec![
        text(&reply),
        text(&reply),
        text(PARIS_CALL),
        text("Sunny."),
    ])
    .await;
    assert_eq!(answer(&done).as_deref(), Some("Sunny."));
    let steps: Vec<_> = done.steps().collect();
    assert_refused_for_prose(steps[0]);
    // Sent alone, as told, it runs.
    let ran = steps[1].tool_executions().iter().next().unwrap().clone();
    assert_eq!(ran.result_text(), "Sunny in Paris");
    assert!(model.requests()[2]
        .messages
        .to_transcript()
        .contains("was not run"));
}

#[tokio::test]
async fn a_call_announced_in_prose_runs_and_what_follows_it_is_dropped() {
    // How Qwen2.5-Coder-1.5B writes calls (9 of 14 eval tasks saved such a reply as the
    // answer): a sentence, the call in a fence, then what it imagines comes next. The tool
    // only reads, so the announced call runs.
    const READ: &str = r#"{"name": "read_file", "arguments": {"path": "paris.txt"}}"#;
    for block in [
        format!("```json\n{READ}\n```"),
        format!("<tool_call>\n{READ}\n</tool_call>"),
    ] {
        let reply = format!(
            "To find the weather, I'll use the `read_file` function:\n\n{block}\n\n\
             Then I will call:\n```json\n{{\"name\": \"read_file\", \"arguments\": {{\"path\": \"rome.txt\"}}}}\n```\n\
             Let's assume it returns {{\"temp\": 30}}."
        );
        let (done, model) = run(vec![text(&reply), text("Sunny in Paris.")]).await;
        assert_eq!(done.step_count(), 2, "{reply}");
        let first = done.steps().next().unwrap();
        let executions: Vec<_> = first.tool_executions().iter().cloned().collect();
        assert_eq!(executions.len(), 1, "only the first call runs");
        assert_eq!(
            executions[0].call().arguments(),
            &json!({"path": "paris.txt"})
        );
        assert_eq!(executions[0].result_text(), "contents of paris.txt");
        // The model sees its lead-in and the result, not what it imagined after the call.
        let second = model.requests()[1].messages.to_transcript();
        assert!(
            second.contains("I'll use the `read_file` function:"),
            "{second}"
        );
        assert!(
            !second.contains("rome") && !second.contains("assume"),
            "{second}"
        );
        assert_eq!(answer(&done).as_deref(), Some("Sunny in Paris."));
    }
}

#[tokio::test]
async fn a_read_only_call_written_bare_after_prose_runs_and_one_with_effects_does_not() {
    // The 1.5B model in legacy mode (docs/long-horizon.md): once its conversation holds its
    // earlier calls, it writes "Here's how you can do it:", a blank line, and the call as bare
    // JSON that ends the reply. Refused as a call among other text, the read was followed by
    // an answer made up. A read-only call so written runs, as one in a fence does.
    const READ: &str = r#"{"name": "read_file", "arguments": {"path": "paris.txt"}}"#;
    let reply = format!(
        "To read `paris.txt`, you can use the `read_file` function. Here's how you can do it:\n\n{READ}\n"
    );
    let (done, model) = run(vec![text(&reply), text("Sunny in Paris.")]).await;
    assert_eq!(answer(&done).as_deref(), Some("Sunny in Paris."));
    let first = done.steps().next().unwrap();
    let ran: Vec<_> = first.tool_executions().iter().cloned().collect();
    assert_eq!(ran.len(), 1);
    assert!(!ran[0].has_error());
    assert_eq!(ran[0].result_text(), "contents of paris.txt");
    let second = model.requests()[1].messages.to_transcript();
    assert!(!second.contains("was not run"), "{second}");

    // A call with effects so written is still not run from prose: asked about, then told to
    // send it alone.
    let reply = format!("To get the weather, here's how you can do it:\n\n{PARIS_CALL}\n");
    let (done, model) = run(vec![text(&reply), text(&reply), text("Unknown.")]).await;
    assert_eq!(answer(&done).as_deref(), Some("Unknown."));
    assert_refused_for_prose(done.steps().next().unwrap());
    assert!(model.requests()[1]
        .messages
        .to_transcript()
        .contains("did not run: it was written among other text"));
}

#[tokio::test]
async fn with_recovery_off_a_call_announced_in_prose_is_the_answer() {
    let reply = format!("I'll use get_weather:\n```json\n{PARIS_CALL}\n```");
    let model = ScriptedModel::new([text(&reply)]);
    let driver = ToolCallingDriver::new(model).with_content_tool_call_recovery(false);
    let done = agent(driver)
        .execute(asking("Weather in Paris?"))
        .await
        .unwrap();
    assert_eq!(answer(&done), Some(reply));
}

#[tokio::test]
async fn fenced_and_tool_call_tag_forms_run() {
    for reply in [
        format!("```json\n{PARIS_CALL}\n```"),
        format!("<tool_call>\n{PARIS_CALL}\n</tool_call>"),
        r#"{"name": "get_weather", "parameters": {"city": "Paris"}}"#.to_owned(),
    ] {
        let (done, _) = run(vec![text(&reply), text("Sunny.")]).await;
        assert_eq!(answer(&done).as_deref(), Some("Sunny."), "{reply}");
        let first = done.steps().next().unwrap();
        assert_eq!(first.tool_executions().len(), 1, "{reply}");
        assert!(!first.tool_executions().has_errors(), "{reply}");
    }
}

#[tokio::test]
async fn a_call_one_brace_short_is_repaired_and_runs() {
    let short = r#"{"name": "get_weather", "arguments": {"city": "Paris"}"#;
    let (done, _) = run(vec![text(short), text("Sunny.")]).await;
    let first = done.steps().next().unwrap();
    assert_eq!(
        first.tool_executions().iter().next().unwrap().result_text(),
        "Sunny in Paris"
    );
    assert_eq!(answer(&done).as_deref(), Some("Sunny."));
}

#[tokio::test]
async fn an_unknown_tool_gets_a_fix_it_error_and_is_never_the_answer() {
    let wrong = r#"{"name": "get_wether", "arguments": {"city": "Paris"}}"#;
    let (done, model) = run(vec![text(wrong), text(PARIS_CALL), text("Sunny.")]).await;
    let first = done.steps().next().unwrap();
    let execution = first.tool_executions().iter().next().unwrap();
    assert_eq!(execution.failure_kind(), Some(ToolFailureKind::UnknownTool));
    let message = execution.error_message().unwrap();
    assert!(message.contains("Did you mean `get_weather`?"), "{message}");
    assert!(message.contains(r#""required":["city"]"#), "{message}");
    assert!(
        message.contains(r#"{"name":"get_weather","arguments":{"city":"<city>"}}"#),
        "{message}"
    );
    // The model saw the error, then made the right call.
    let second = model.requests()[1].messages.to_transcript();
    assert!(second.contains("Did you mean `get_weather`?"), "{second}");
    assert_eq!(answer(&done).as_deref(), Some("Sunny."));
    assert!(done
        .messages()
        .iter()
        .all(|m| !m.text().contains("get_wether")));
}

#[tokio::test]
async fn unreadable_arguments_get_a_fix_it_error() {
    let wrong = r#"{"name": "get_weather", "arguments": "city=Paris"}"#;
    let (done, _) = run(vec![text(wrong), text("I could not tell.")]).await;
    let execution = done
        .steps()
        .next()
        .unwrap()
        .tool_executions()
        .iter()
        .next()
        .cloned()
        .unwrap();
    assert_eq!(
        execution.failure_kind(),
        Some(ToolFailureKind::InvalidArguments)
    );
    assert!(execution
        .error_message()
        .unwrap()
        .contains("could not be read"));
}

#[tokio::test]
async fn no_two_calls_in_an_execution_share_an_id() {
    let two = format!(
        "[{PARIS_CALL}, {{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"Rome\"}}}}]"
    );
    let native_without_ids = InferenceResponse::with_tool_calls([
        ToolCall::new("", "get_weather", json!({"city": "Oslo"})),
        ToolCall::new("", "get_weather", json!({"city": "Lima"})),
    ]);
    let (done, model) = run(vec![
        text(&two),
        text(&two),
        native_without_ids.clone(),
        native_without_ids,
        text("Done."),
    ])
    .await;
    assert_eq!(answer(&done).as_deref(), Some("Done."));
    let last_request = model.requests().last().unwrap().messages.clone();
    let ids: Vec<String> = last_request
        .iter()
        .flat_map(|m| {
            m.tool_calls()
                .iter()
                .map(|c| c.id().to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(ids.len(), 8);
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 8, "{ids:?}");
    assert!(
        ids[0].starts_with("recovered_") && ids[0].ends_with("_1_1"),
        "{ids:?}"
    );
    assert!(ids[1].ends_with("_1_2"), "{ids:?}");
    // Stable through serialization.
    let reread = AgentState::from_json(&done.to_json().unwrap()).unwrap();
    let reread_ids: Vec<String> = reread
        .steps()
        .flat_map(|s| {
            s.requested_tool_calls()
                .into_iter()
                .map(|c| c.id().to_owned())
        })
        .collect();
    assert_eq!(reread_ids, ids);
}

#[tokio::test]
async fn real_tool_calls_win_over_text() {
    let native = InferenceResponse::with_tool_calls([ToolCall::new(
        "call_a",
        "get_weather",
        json!({"city": "Oslo"}),
    )])
    .with_content(r#"{"name": "get_weather", "arguments": {"city": "Rome"}}"#);
    let (done, _) = run(vec![native, text("Cold.")]).await;
    let first = done.steps().next().unwrap();
    let calls: Vec<ToolCall> = first.requested_tool_calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].arguments(), &json!({"city": "Oslo"}));
}

#[tokio::test]
async fn an_empty_reply_is_asked_again_with_a_nudge() {
    let usage = Usage::new(10, 0);
    let (done, model) = run(vec![
        text("").with_usage(usage),
        text("Sunny in Paris.").with_usage(Usage::new(12, 4)),
    ])
    .await;
    assert_eq!(done.step_count(), 1);
    assert_eq!(answer(&done).as_deref(), Some("Sunny in Paris."));
    assert_eq!(done.stop_reason(), Some(StopReason::Completed));
    let nudged = model.requests()[1].messages.clone();
    let last = nudged.iter().last().unwrap();
    assert_eq!(last.role(), Role::User);
    assert!(
        last.text().contains("Your last reply was empty"),
        "{}",
        last.text()
    );
    // The nudge is not kept in the conversation.
    assert!(done
        .messages()
        .iter()
        .all(|m| !m.text().contains("was empty")));
    assert_eq!(done.steps().next().unwrap().usage().input_tokens, 22);
}

#[tokio::test]
async fn two_empty_replies_stop_the_run_with_empty_response() {
    let (done, model) = run(vec![text(""), text("  ")]).await;
    assert_eq!(model.requests().len(), 2);
    assert_eq!(done.step_count(), 1);
    assert_eq!(done.stop_reason(), Some(StopReason::EmptyResponse));
    assert_eq!(answer(&done), None);
}

#[tokio::test]
async fn an_empty_reply_after_tool_calls_stops_with_empty_response_too() {
    let (done, _) = run(vec![text(PARIS_CALL), text(""), text("")]).await;
    assert_eq!(done.step_count(), 2);
    assert_eq!(done.stop_reason(), Some(StopReason::EmptyResponse));
}

/// A run whose first reply is `cut` at the token limit: checks what holds for every cut reply
/// (finish reason kept, no step error, the model told, the next reply is the answer) and
/// returns the first step's executions.
async fn run_cut(cut: &str) -> Vec<agents_core::ToolExecution> {
    let (done, model) = run(vec![
        text(cut).with_finish_reason(FinishReason::Length),
        text("Sunny in Paris."),
    ])
    .await;
    let first = done.steps().next().unwrap();
    assert_eq!(first.finish_reason(), Some(FinishReason::Length));
    assert!(first.errors().is_empty(), "{:?}", first.error_messages());
    let second = model.requests()[1].messages.to_transcript();
    assert!(
        second.contains("your reply was cut off at the token limit"),
        "{second}"
    );
    assert_eq!(answer(&done).as_deref(), Some("Sunny in Paris."));
    first.tool_executions().iter().cloned().collect()
}

#[tokio::test]
async fn a_cut_reply_runs_only_complete_calls_and_the_model_is_told() {
    let cut =
        format!("{PARIS_CALL}\n{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"Rome\"}}");
    let executions = run_cut(&cut).await;
    assert_eq!(executions.len(), 2);
    assert_eq!(executions[0].result_text(), "Sunny in Paris");
    assert!(executions[1].has_error());
    assert!(executions[1].error_message().unwrap().contains("cut off"));
}

#[tokio::test]
async fn a_reply_cut_mid_string_after_complete_calls_runs_those_calls() {
    // As the 0.5B model does: call after call in one fence until the token cap cuts one inside
    // a string, where no closing brace can repair it. The complete calls run; the cut one is
    // never run nor saved as the answer; the call written twice runs once.
    let cut = format!(
        "```json\n{PARIS_CALL}\n{PARIS_CALL}\n{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"Ro"
    );
    let executions = run_cut(&cut).await;
    assert_eq!(executions.len(), 1);
    assert!(executions
        .iter()
        .all(|e| e.call().name() == "get_weather"
            && e.call().arguments() == &json!({"city": "Paris"})));
}

#[tokio::test]
async fn a_finished_reply_with_a_broken_call_at_the_end_is_not_recovered() {
    // The same text without the cut is not only calls: prose-safety holds.
    let broken =
        format!("{PARIS_CALL}\n{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"Ro");
    // The complete call written before the broken one is among other text: not run, and not
    // the answer either (the model is asked in the same step whether it meant the call,
    // writes the same again, gets a tool error saying why, and answers next).
    let (done, model) = run(vec![text(&broken), text(&broken), text("Sunny.")]).await;
    assert_eq!(model.requests().len(), 3);
    assert_eq!(answer(&done).as_deref(), Some("Sunny."));
    let executions: Vec<_> = done
        .steps()
        .next()
        .unwrap()
        .tool_executions()
        .iter()
        .cloned()
        .collect();
    assert_eq!(executions.len(), 1);
    assert!(executions[0].has_error());
}

#[tokio::test]
async fn a_cut_plain_answer_stays_a_step_error() {
    let model = ScriptedModel::new([text("It is sun").with_finish_reason(FinishReason::Length)]);
    let driver = ToolCallingDriver::new(model);
    let state = asking("Weather?");
    let step = driver
        .next_step(
            &state,
            &tools(),
            &DefaultToolExecutor::new(),
            &StepContext::default(),
        )
        .await
        .unwrap();
    assert_eq!(step.finish_reason(), Some(FinishReason::Length));
    assert!(step.error_messages()[0].contains("token limit"));
}

#[tokio::test]
async fn a_reply_cut_inside_a_call_it_was_writing_is_not_saved_as_the_answer() {
    // The 1.5B model on the development half (d14): a `write_file` call whose content was
    // newlines until the 512-token cap. The fenced, unfinished JSON was saved as the answer.
    let cut = format!(
        "```json\n{{\n  \"name\": \"get_weather\",\n  \"arguments\": {{\n    \"city\": \"{}",
        "\\n".repeat(200)
    );
    let (done, model) = run_with(
        asking("Weather in Paris?"),
        [text(&cut).with_finish_reason(FinishReason::Length)],
        |driver| agent(driver).with_answer_on_stop(agents_core::AnswerOnStop::Notice),
    )
    .await;
    let first = done.steps().next().unwrap();
    assert!(
        first.response_messages().is_empty(),
        "the cut call is not kept as a reply"
    );
    assert_eq!(
        first.tool_executions().len(),
        0,
        "a call never written out never runs"
    );
    assert!(
        first.error_messages()[0].contains("inside a tool call"),
        "{:?}",
        first.error_messages()
    );
    // The run stops on the error and answers on stop (here the notice): never the raw call.
    let saved = answer(&done).unwrap_or_default();
    assert!(saved.starts_with("I could not finish this task"), "{saved}");
    assert!(!saved.contains("\"name\""), "{saved}");
    assert_eq!(model.requests().len(), 1, "nothing was asked again");
}

#[tokio::test]
async fn a_synthesized_answer_cut_inside_a_call_is_replaced_by_the_notice() {
    // The 0.5B model on the held-out half (h4): its reply was cut inside a `write_file` call,
    // not saved, and asked to answer without tools it wrote the same cut call, which was saved
    // as the answer.
    let cut = format!(
        "{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"{}",
        "Paris ".repeat(100)
    );
    let (done, model) = run_with(
        asking("Weather in Paris?"),
        [
            text(&cut).with_finish_reason(FinishReason::Length),
            text(&cut).with_finish_reason(FinishReason::Length),
        ],
        |driver| agent(driver).with_answer_on_stop(agents_core::AnswerOnStop::Synthesize),
    )
    .await;
    assert_eq!(
        model.requests().len(),
        2,
        "the reply, then the answer on stop"
    );
    let saved = answer(&done).unwrap_or_default();
    assert!(saved.starts_with("I could not finish this task"), "{saved}");
}

#[tokio::test]
async fn a_reply_that_loops_until_its_token_limit_is_not_the_answer() {
    // The 1.5B model on the development half (d4): after its edit ran, "Here's the
    // step-by-step process: 1. **Read the content of `greeting.txt`** ..." eight times over,
    // cut at the cap, was saved as the answer.
    let looped = "Here's the step-by-step process:\n\n1. **Read the content of `paris.txt`**.\n\
                  2. **Report the weather**.\n"
        .repeat(8);
    let (done, _) = run_with(
        asking("Weather in Paris?"),
        [
            text(PARIS_CALL),
            text(&looped).with_finish_reason(FinishReason::Length),
        ],
        |driver| agent(driver).with_answer_on_stop(agents_core::AnswerOnStop::Notice),
    )
    .await;
    let last = done.steps().last().unwrap();
    assert!(last.response_messages().is_empty());
    assert!(
        last.error_messages()[0].contains("repeated the same lines"),
        "{:?}",
        last.error_messages()
    );
    let saved = answer(&done).unwrap_or_default();
    assert!(saved.starts_with("I could not finish this task"), "{saved}");
    // A cut answer that does not loop is kept, as before (with its finish-reason error).
    let (done, _) = run_on(
        asking("Weather in Paris?"),
        [
            text(PARIS_CALL),
            text("It is sunny in Par").with_finish_reason(FinishReason::Length),
        ],
    )
    .await;
    assert_eq!(answer(&done).as_deref(), Some("It is sunny in Par"));
}

#[tokio::test]
async fn a_call_that_just_succeeded_written_again_in_prose_is_told_its_work_is_done() {
    // The 1.5B model on the development half (d16, d14): `move_file` ran alone and
    // succeeded, then the model wrote the same call after "To rename `draft.txt` ... you can
    // use the `move_file` function. Here's how:" four steps in a row, each refused with "send
    // the call alone", until the step limit; the answer on stop said it lacked information.
    let prose = format!(
        "To check the weather you can use the `get_weather` function. Here's how:\n```json\n\
         {PARIS_CALL}\n```"
    );
    let (done, model) = run(vec![
        text(PARIS_CALL),
        text(&prose),
        text("It is sunny in Paris."),
    ])
    .await;
    assert_eq!(answer(&done).as_deref(), Some("It is sunny in Paris."));
    let executions = executions_of(&done);
    let ran = executions.iter().filter(|e| !e.has_error()).count();
    assert_eq!(ran, 1, "the call ran once: {executions:?}");
    let refusal = executions
        .iter()
        .find_map(|e| e.error_message())
        .expect("the call written again is refused");
    assert!(
        refusal.contains("ran earlier in this task and succeeded")
            && refusal.contains("Sunny in Paris")
            && refusal.contains("tell the user now what was done"),
        "{refusal}"
    );
    // Never asked to send the call alone: sent alone, it would do the work twice.
    for request in model.requests() {
        let transcript = request.messages.to_transcript();
        assert!(
            !transcript.contains("reply now with only the JSON object of the call"),
            "{transcript}"
        );
        assert!(
            !transcript.contains("only a reply that is the call alone runs it"),
            "{transcript}"
        );
    }

    // Refused as a repeat: a model that writes it again, and again when asked about the
    // repeat, is stopped by the repeated-call guard (the run then answers on stop), the call
    // still made once.
    let (done, _) = run(vec![
        text(PARIS_CALL),
        text(&prose),
        text(&prose),
        text(&prose),
    ])
    .await;
    assert_eq!(done.stop_reason(), Some(StopReason::RepeatedToolCalls));
    let ran = executions_of(&done)
        .into_iter()
        .filter(|e| !e.has_error())
        .count();
    assert_eq!(ran, 1);
}

#[tokio::test]
async fn a_call_that_changed_things_is_done_even_after_other_calls() {
    // Development task d22: two edits ran, then the model wrote the first edit again in prose,
    // step after step, each refused with "send it alone".
    const READ: &str = r#"{"name": "read_file", "arguments": {"path": "paris.txt"}}"#;
    let prose = format!(
        "To do both, you can call the `get_weather` function. Here's how:\n```json\n{PARIS_CALL}\n```"
    );
    let (done, _) = run(vec![
        text(PARIS_CALL),
        text(READ),
        text(&prose),
        text("Done: sunny in Paris."),
    ])
    .await;
    let refusal = executions_of(&done)
        .into_iter()
        .find_map(|e| e.error_message().map(str::to_owned))
        .expect("the call written again is refused");
    assert!(
        refusal.contains("ran earlier in this task and succeeded"),
        "{refusal}"
    );
}

#[tokio::test]
async fn a_call_with_effects_sent_alone_again_just_after_it_succeeded_is_done() {
    // Development task d4: the same `edit_file` call, alone, two steps in a row; the second
    // run found the text gone and the model answered that the word was not there.
    let (done, _) = run(vec![
        text(PARIS_CALL),
        text(PARIS_CALL),
        text("It is sunny in Paris."),
    ])
    .await;
    assert_eq!(answer(&done).as_deref(), Some("It is sunny in Paris."));
    let executions = executions_of(&done);
    assert_eq!(executions.iter().filter(|e| !e.has_error()).count(), 1);
    let refusal = executions[1].error_message().unwrap_or_default().to_owned();
    assert!(
        executions[1].failure_kind() == Some(agents_core::ToolFailureKind::Repeated)
            && refusal.contains("Its work is done")
            && refusal.contains("Sunny in Paris"),
        "{refusal}"
    );

    // Something else ran in between: the call runs again (the model may mean it).
    const READ: &str = r#"{"name": "read_file", "arguments": {"path": "paris.txt"}}"#;
    let (done, _) = run(vec![
        text(PARIS_CALL),
        text(READ),
        text(PARIS_CALL),
        text("Sunny."),
    ])
    .await;
    assert_eq!(
        executions_of(&done)
            .into_iter()
            .filter(|e| e.name() == "get_weather" && !e.has_error())
            .count(),
        2
    );
}

#[tokio::test]
async fn a_call_that_only_read_is_asked_about_once_something_else_ran() {
    // A read-only result may be stale once another call ran: the call in prose is asked
    // about as before (sent alone, it reads again).
    const READ: &str = r#"{"name": "read_file", "arguments": {"path": "paris.txt"}}"#;
    let prose = format!("The weather is in paris.txt: {READ} as shown.");
    let (_, model) = run(vec![
        text(READ),
        text(PARIS_CALL),
        text(&prose),
        text(READ),
        text("Sunny."),
    ])
    .await;
    assert!(model.requests().iter().any(|r| r
        .messages
        .to_transcript()
        .contains("did not run: it was written among other text")));
}

#[tokio::test]
async fn the_next_step_a_plan_writes_after_its_call_is_named_after_the_result() {
    // The 1.5B model on development task d22 (2026-12-06): the plan's first step, the call,
    // then the rest of the plan after the call's block. The step keeps only the text before
    // the call; the note names the step written after it.
    const READ: &str = r#"{"name": "read_file", "arguments": {"path": "paris.txt"}}"#;
    let reply = format!(
        "To answer, you can use the following steps:\n\n1. **Read the notes**:\n```json\n\
         {READ}\n```\n\n2. **Check the weather in Paris** with `get_weather`.\n3. Answer."
    );
    let (done, model) = run(vec![
        text(&reply),
        text(PARIS_CALL),
        text("Sunny in Paris, as the notes say."),
    ])
    .await;
    assert_eq!(
        answer(&done).as_deref(),
        Some("Sunny in Paris, as the notes say.")
    );
    let seen = model.requests()[1].messages.to_transcript();
    assert!(
        seen.contains(
            "This step of your plan is done: its result is above. Do the next step of your \
             plan now: Check the weather in Paris with `get_weather`."
        ),
        "{seen}"
    );
    // What the model imagined after the call is not kept as its reasoning.
    assert!(!seen.contains("3. Answer."), "{seen}");
}

#[tokio::test]
async fn a_call_that_did_a_step_of_a_numbered_plan_is_followed_by_the_next_step() {
    // The 1.5B model on development tasks d3 and d11: a numbered plan, then its first step's
    // call (read-only, announced in prose, so it runs); the next reply wrote the same plan
    // and the same first call again, and again, then said it lacked the results.
    const READ: &str = r#"{"name": "read_file", "arguments": {"path": "paris.txt"}}"#;
    let plan = format!(
        "To answer, I'll need to:\n1. Read the notes with `read_file`.\n2. **Check the weather \
         in Paris** with `get_weather`.\n\nHere's the JSON call:\n```json\n{READ}\n```"
    );
    const NEXT: &str = "Do the next step of your plan now: Check the weather in Paris with \
                        `get_weather`.";

    // The result of the step's call is followed, for the model, by the plan's next step; the
    // stored result is the tool's own.
    let (done, model) = run(vec![
        text(&plan),
        text(PARIS_CALL),
        text("Sunny in Paris, as the notes say."),
    ])
    .await;
    assert_eq!(
        answer(&done).as_deref(),
        Some("Sunny in Paris, as the notes say.")
    );
    let seen = model.requests()[1].messages.to_transcript();
    assert!(
        seen.contains("tool read_file [recovered_")
            && seen.contains(&format!(
                "This step of your plan is done: its result is above. {NEXT}"
            )),
        "{seen}"
    );
    let first = done.steps().next().unwrap();
    assert_eq!(
        first.tool_executions().iter().next().unwrap().result_text(),
        "contents of paris.txt"
    );

    // The plan written again with the same call: asked once, in the same step, with the
    // copy left out of the request, to do the next step.
    let (done, model) = run(vec![
        text(&plan),
        text(&plan),
        text(PARIS_CALL),
        text("Sunny in Paris, as the notes say."),
    ])
    .await;
    assert_eq!(
        answer(&done).as_deref(),
        Some("Sunny in Paris, as the notes say.")
    );
    let asked = model.requests()[2].messages.to_transcript();
    assert!(
        asked.contains(&format!(
            "You already sent that reply, and its `read_file` call ran: what it returned is \
             above. Do not send it again. {NEXT}"
        )) && asked.matches("To answer, I'll need to:").count() == 1,
        "{asked}"
    );
    assert_eq!(
        executions_of(&done)
            .into_iter()
            .filter(|e| e.name() == "read_file")
            .count(),
        1
    );

    // Written a third time in reply to that: the copy is dropped, and the call is refused as
    // a repeat that says the step is done and which is next (read once; a second such
    // repeat stops the run).
    let (done, model) = run(vec![
        text(&plan),
        text(&plan),
        text(&plan),
        text(PARIS_CALL),
        text("Sunny in Paris, as the notes say."),
    ])
    .await;
    let executions = executions_of(&done);
    let reads = executions
        .iter()
        .filter(|e| e.name() == "read_file" && !e.has_error())
        .count();
    assert_eq!(reads, 1, "the read ran once: {executions:?}");
    let refusal = executions
        .iter()
        .find(|e| e.failure_kind() == Some(agents_core::ToolFailureKind::Repeated))
        .and_then(|e| e.error_message().map(str::to_owned))
        .expect("the read written again is refused as a repeat");
    assert!(
        refusal.contains("so that step of your plan is done")
            && refusal.contains("contents of paris.txt")
            && refusal.contains(&format!("Do not start your plan again. {NEXT}")),
        "{refusal}"
    );
    assert!(model.requests()[3]
        .messages
        .to_transcript()
        .contains("Do not start your plan again"));

    // The plan written again without a call, after its first step ran: the nudge names the
    // next step instead of only asking for the answer.
    let again = "To answer, I'll need to:\n1. Read the notes with `read_file`.\n2. **Check the \
                 weather in Paris** with `get_weather`.";
    let (done, model) = run(vec![
        text(&plan),
        text(again),
        text(PARIS_CALL),
        text("Sunny in Paris."),
    ])
    .await;
    assert_eq!(answer(&done).as_deref(), Some("Sunny in Paris."));
    let nudged = model.requests()[2].messages.to_transcript();
    assert!(
        nudged.contains(&format!(
            "Your last reply wrote your plan again. The steps whose tools ran are done: their \
             results are above. {NEXT}"
        )),
        "{nudged}"
    );

    // Without a plan: no note, and a repeated read is answered from its result as before.
    let alone = format!("Let me read it.\n```json\n{READ}\n```");
    let (done, model) = run(vec![text(&alone), text(&alone), text("Sunny.")]).await;
    assert!(executions_of(&done).into_iter().all(|e| !e.has_error()));
    assert!(!model.requests()[1]
        .messages
        .to_transcript()
        .contains("step of your plan"));

    // A plan whose call failed gets no note: the model fixes the call first.
    let failing = plan.replace(r#""path": "paris.txt""#, r#""file": "paris.txt""#);
    let (_, model) = run(vec![text(&failing), text("Sunny.")]).await;
    let seen = model.requests()[1].messages.to_transcript();
    assert!(!seen.contains("step of your plan"), "{seen}");
}

/// A `read_file` that finds only `a.txt` (17) and `b.txt` (25) at the root, and answers any
/// other path with the error the file tools give, a "did you mean" included.
fn root_files_only() -> Tools {
    Tools::new().with(
        FunctionTool::new("read_file", "Reads a file.", |args: Path| async move {
            match args.path.as_str() {
                "a.txt" => Ok("17".to_owned()),
                "b.txt" => Ok("25".to_owned()),
                other => Err(format!(
                    "cannot read `{other}`: no such file or directory; did you mean `{}`?",
                    other.trim_start_matches("data/")
                )),
            }
        })
        .with_effects(ToolEffects::ReadOnly),
    )
}

fn read(id: &str, path: &str) -> ToolCall {
    ToolCall::new(id, "read_file", json!({ "path": path }))
}

const SUM_REQUEST: &str = "a.txt and b.txt each hold a number. What is their sum?";

/// Issue 36, development task d10 (2026-12-04): the 1.5B model read `data/a.txt` and
/// `data/b.txt`, both failed ("did you mean `a.txt`?"), and it answered with the two files'
/// contents and their sum, all made up. An answer that says nothing of a failure, after every
/// call of the execution failed, to a request that names a file, is asked about once, with
/// the paths the errors suggested; the model then reads the right files.
#[tokio::test]
async fn an_answer_after_every_call_failed_is_asked_about_with_the_suggested_paths() {
    let invented = "The contents of `a.txt` are 10 and of `b.txt` are 20, so their sum is 30.";
    let (done, model) = run_with(
        asking(SUM_REQUEST),
        vec![
            InferenceResponse::with_tool_calls([read("c1", "data/a.txt")]),
            InferenceResponse::with_tool_calls([read("c2", "data/b.txt")]),
            text(invented),
            InferenceResponse::with_tool_calls([read("c3", "a.txt"), read("c4", "b.txt")]),
            text("The sum is 17 + 25 = 42."),
        ],
        |driver| agent(driver).with_tools(root_files_only()),
    )
    .await;
    assert_eq!(answer(&done).as_deref(), Some("The sum is 17 + 25 = 42."));
    let asked = model.requests()[3].messages.to_transcript();
    assert!(
        asked.contains("Every tool call for this request failed"),
        "{asked}"
    );
    assert!(
        asked.contains("The errors suggest these paths: `a.txt`, `b.txt`."),
        "{asked}"
    );
    // The made-up answer is shown with the question (the model sees what it is asked about),
    // and never saved.
    assert!(asked.contains(invented), "{asked}");
    assert!(!done.messages().to_transcript().contains(invented));
}

/// Development task d10 at 6841cbb: `list_dir` of `data` now lists the top folder (it
/// worked), and the model then read `data/a.txt` and `data/b.txt` (both failed) and answered
/// with contents it made up. Every call on the files the request names failed, whatever else
/// worked: the same question, in words that fit.
#[tokio::test]
async fn an_answer_after_every_read_of_the_named_files_failed_is_asked_about() {
    let listing = FunctionTool::new("list_dir", "Lists a folder.", |_: Path| async move {
        Ok::<_, String>("[file] a.txt (3 bytes)\n[file] b.txt (3 bytes)".to_owned())
    })
    .with_effects(ToolEffects::ReadOnly);
    let invented = "The contents of `a.txt` are 1 and 2, and of `b.txt` 3 and 4; the sum is 10.";
    let (done, model) = run_with(
        asking(SUM_REQUEST),
        vec![
            InferenceResponse::with_tool_calls([ToolCall::new(
                "c0",
                "list_dir",
                json!({"path": "data"}),
            )]),
            InferenceResponse::with_tool_calls([read("c1", "data/a.txt")]),
            InferenceResponse::with_tool_calls([read("c2", "data/b.txt")]),
            text(invented),
            InferenceResponse::with_tool_calls([read("c3", "a.txt"), read("c4", "b.txt")]),
            text("The sum is 17 + 25 = 42."),
        ],
        |driver| agent(driver).with_tools(root_files_only().with(listing)),
    )
    .await;
    assert_eq!(answer(&done).as_deref(), Some("The sum is 17 + 25 = 42."));
    let asked = model.requests()[4].messages.to_transcript();
    assert!(
        asked.contains("Every tool call on the files this request names failed")
            && asked.contains("The errors suggest these paths: `a.txt`, `b.txt`."),
        "{asked}"
    );
    assert!(!done.messages().to_transcript().contains(invented));
}

/// The same kind of reply after the nudge is not an answer (the run answers on stop; this
/// agent has no answer on stop); an answer that says what failed, or one to a request that
/// names no file, is never asked about.
#[tokio::test]
async fn an_answer_after_failed_calls_is_asked_about_once_and_only_when_it_ignores_them() {
    let invented = "The sum of the numbers in a.txt and b.txt is 30.";
    let again = "The sum is 30.";
    for (request, replies, saved, requests) in [
        // asked once; made up again: not an answer
        (SUM_REQUEST, vec![invented, again], None, 3),
        // it says what failed: an answer, once told that the errors show the files are
        // there (given again, it stands)
        (
            SUM_REQUEST,
            vec![
                "I could not read data/a.txt: it does not exist.",
                "I could not read data/a.txt: it does not exist.",
            ],
            Some("I could not read data/a.txt: it does not exist."),
            3,
        ),
        // no file named: a question that may need no tool
        (
            "What is the capital of France?",
            vec!["Paris."],
            Some("Paris."),
            2,
        ),
        // told, it owns the failure: that answer is saved once told the files are there
        (
            SUM_REQUEST,
            vec![
                invented,
                "I could not read the files.",
                "I could not read the files.",
            ],
            Some("I could not read the files."),
            4,
        ),
    ] {
        let mut script = vec![InferenceResponse::with_tool_calls([
            read("c1", "data/a.txt"),
            read("c2", "data/b.txt"),
        ])];
        script.extend(replies.iter().map(|reply| text(reply)));
        let (done, model) = run_with(asking(request), script, |driver| {
            agent(driver).with_tools(root_files_only())
        })
        .await;
        assert_eq!(answer(&done).as_deref(), saved, "{request} {replies:?}");
        assert_eq!(model.requests().len(), requests, "{request} {replies:?}");
    }
}

/// Issue 36, development task d26 (2026-12-04): asked "What port does the config file set?",
/// the 1.5B model searched `config`, was told "did you mean `config.dev.yaml`,
/// `config.prod.yaml`?", and answered 8080, a port neither file holds. The request names no
/// file, but it speaks of the files the error suggested: the answer is asked about, with them.
#[tokio::test]
async fn an_answer_after_an_error_suggested_the_file_the_request_speaks_of_is_asked_about() {
    let tools = Tools::new().with(
        FunctionTool::new("read_file", "Reads a file.", |args: Path| async move {
            match args.path.as_str() {
                "config.dev.yaml" => Ok("port: 8080".to_owned()),
                "config.prod.yaml" => Ok("port: 443".to_owned()),
                other => Err(format!(
                    "cannot read `{other}`: no such file or directory; did you mean \
                     `config.dev.yaml`, `config.prod.yaml`?"
                )),
            }
        })
        .with_effects(ToolEffects::ReadOnly),
    );
    let (done, model) = run_with(
        asking("What port does the config file set?"),
        vec![
            InferenceResponse::with_tool_calls([read("c1", "config")]),
            text("The port setting in the config file is set to 8080."),
            InferenceResponse::with_tool_calls([
                read("c2", "config.dev.yaml"),
                read("c3", "config.prod.yaml"),
            ]),
            text("There are two config files: dev sets 8080, prod sets 443."),
        ],
        |driver| agent(driver).with_tools(tools),
    )
    .await;
    assert_eq!(
        answer(&done).as_deref(),
        Some("There are two config files: dev sets 8080, prod sets 443.")
    );
    let asked = model.requests()[2].messages.to_transcript();
    assert!(
        asked.contains("The errors suggest these paths: `config.dev.yaml`, `config.prod.yaml`."),
        "{asked}"
    );
}

const HINT: &str = "To use a tool, make a tool call. If you cannot, reply with only one JSON \
                    object and nothing else, like {\"name\": \"read_file\", \"arguments\": \
                    {\"path\": \"notes.txt\"}}.";

/// Issue 36, development tasks d6 and d16 (2026-12-04): after its call had run, the 1.5B
/// model wrote the tool-call hint and its chat template's tool list, cut at the token cap,
/// four times; the hint's example call was refused as a call among other text each time,
/// and the run passed the eval's 6-minute limit with no answer saved. A copy of the
/// instructions is not judged for calls or nudged: the step records that it is not an
/// answer, with the one request, and the run answers on stop.
#[tokio::test]
async fn a_reply_that_copies_the_instructions_is_not_an_answer_and_its_example_call_never_runs() {
    let copy = format!(
        "{HINT}\n\n# Tools\n\nYou may call one or more functions to assist with the user \
         query.\n\nYou are provided with function signatures within <tools></tools> XML tags:"
    );
    let (done, model) = run_with(
        asking("Weather in Paris?"),
        vec![
            InferenceResponse::with_tool_calls([ToolCall::new(
                "c1",
                "get_weather",
                json!({"city": "Paris"}),
            )]),
            text(&copy).with_finish_reason(FinishReason::Length),
        ],
        |driver| agent(driver.with_tool_call_hint(HINT)),
    )
    .await;
    assert_eq!(model.requests().len(), 2, "asked once, never again");
    assert_eq!(answer(&done), None);
    assert_eq!(done.stop_reason(), Some(StopReason::Error));
    let last = done.steps().last().unwrap();
    assert!(
        last.tool_executions().is_empty(),
        "the example call is no call"
    );
    assert!(last.response_messages().is_empty());
    // not in the trace either, where the answer on stop would read it
    assert!(last.trace_messages().is_empty());
    assert!(!done.messages_for_inference().to_transcript().contains(HINT));
    assert!(
        last.errors()[0].message.contains("copies its instructions"),
        "{:?}",
        last.errors()
    );
}

/// The answer on stop after a copy of the instructions is asked without the copy in view (the
/// 1.5B model, asked with it, took it for the error that stopped the run: "The error message
/// indicates that the directory "fruits" does not exist.", d6), and an answer on stop that
/// copies them again is no answer: the page of results is asked next.
#[tokio::test]
async fn the_answer_on_stop_after_a_copy_of_the_instructions_is_asked_without_it() {
    let copy = format!("{HINT}\n\n# Tools\n\nYou may call one or more functions to assist");
    let (done, model) = run_with(
        asking("Weather in Paris?"),
        vec![
            text(PARIS_CALL),
            text(&copy).with_finish_reason(FinishReason::Length),
            // asked to answer on stop, with the calls in view
            text(&copy),
            // asked from the page of results
            text("It is sunny in Paris."),
        ],
        |driver| {
            agent(driver.with_tool_call_hint(HINT))
                .with_answer_on_stop(agents_core::AnswerOnStop::Synthesize)
        },
    )
    .await;
    assert_eq!(model.requests().len(), 4);
    let on_stop = model.requests()[2].messages.to_transcript();
    assert!(on_stop.contains("Sunny in Paris"), "{on_stop}");
    assert!(!on_stop.contains("# Tools"), "{on_stop}");
    // told what stopped it: its reply, not an error it could take for a tool's (d6)
    assert!(
        on_stop.contains("You have to stop now: your last reply was not an answer."),
        "{on_stop}"
    );
    assert_eq!(answer(&done).as_deref(), Some("It is sunny in Paris."));
}

/// A probe of issue 36's task kinds (2026-12-07): asked to change a word in `a.txt` and
/// `b.txt`, the 1.5B model edited `a.txt`, then copied its instructions; stopped there, `b.txt`
/// was never changed. With work plainly left (a file the request names that no call has
/// used), a copy is asked about once, without the copy in view; the model's next call (written
/// with a template's doubled braces, as it did) runs.
#[tokio::test]
async fn a_copy_of_the_instructions_with_a_named_file_left_is_asked_about_once() {
    let copy = format!("{HINT}\n\n# Tools\n\nYou may call one or more functions to assist");
    let edits =
        Tools::new().with(FunctionTool::new(
            "edit_file",
            "Edits a file.",
            |args: Path| async move {
                Ok::<_, String>(format!("replaced 1 occurrence in `{}`", args.path))
            },
        ));
    let request = "In both a.txt and b.txt, change red to blue.";
    let (done, model) = run_with(
        asking(request),
        vec![
            InferenceResponse::with_tool_calls([ToolCall::new(
                "c1",
                "edit_file",
                json!({"path": "a.txt"}),
            )]),
            text(&copy).with_finish_reason(FinishReason::Length),
            text(r#"{{"name": "edit_file", "arguments": {"path": "b.txt"}}}"#),
            text("Both files now say blue."),
        ],
        |driver| agent(driver.with_tool_call_hint(HINT)).with_tools(edits.clone()),
    )
    .await;
    assert_eq!(answer(&done).as_deref(), Some("Both files now say blue."));
    let edited: Vec<String> = executions_of(&done)
        .into_iter()
        .map(|execution| execution.result_text().to_string())
        .collect();
    assert_eq!(
        edited,
        [
            "replaced 1 occurrence in `a.txt`",
            "replaced 1 occurrence in `b.txt`"
        ]
    );
    let asked = model.requests()[2].messages.to_transcript();
    assert!(
        asked.contains(
            "The request also names `b.txt`, which no tool call of yours has changed yet"
        ),
        "{asked}"
    );
    assert!(
        !asked.contains("# Tools"),
        "the copy is not shown back: {asked}"
    );

    // Nothing left to do: the copy is not asked about, and the run answers on stop.
    let (done, model) = run_with(
        asking("Change red to blue in a.txt."),
        vec![
            InferenceResponse::with_tool_calls([ToolCall::new(
                "c1",
                "edit_file",
                json!({"path": "a.txt"}),
            )]),
            text(&copy).with_finish_reason(FinishReason::Length),
        ],
        |driver| agent(driver.with_tool_call_hint(HINT)).with_tools(edits),
    )
    .await;
    assert_eq!(model.requests().len(), 2);
    assert_eq!(done.stop_reason(), Some(StopReason::Error));
}

/// A probe of issue 36's task kinds (2026-12-07): asked for the API key in `app.env` (it has
/// none), the 1.5B model described a search twice and never made it; asked to answer on
/// stop, it said "The API key is set in the app.env file.". With no call made, nothing it
/// says of the file comes from it: the run ends with the notice, without asking.
#[tokio::test]
async fn no_answer_on_stop_is_asked_for_a_file_no_call_looked_at() {
    let described = "To find the API key set in `app.env`, you can use the `search_files` \
                     function with the pattern `API_KEY`.";
    let (done, model) = run_with(
        asking("What is the API key set in app.env?"),
        vec![
            text(described),
            text(described),
            text(
                "To read `app.env`, you can use the `read_file` function with the path `app.env`.",
            ),
            text("The API key is set in the app.env file."),
        ],
        |driver| agent(driver).with_answer_on_stop(agents_core::AnswerOnStop::Synthesize),
    )
    .await;
    // the reply and the two nudges of its step; no request to answer on stop
    assert_eq!(model.requests().len(), 3);
    let notice = answer(&done).unwrap_or_default();
    assert!(
        notice.starts_with("I could not finish this task")
            && notice.contains("I did not call any tools"),
        "{notice}"
    );

    // A request that names no file is still answered on stop.
    let (done, model) = run_with(
        asking("Weather in Paris?"),
        vec![
            text("You can use the `get_weather` function with the city `Paris`."),
            text("You can use the `get_weather` function with the city `Paris`."),
            text("I could not look it up."),
        ],
        |driver| agent(driver).with_answer_on_stop(agents_core::AnswerOnStop::Synthesize),
    )
    .await;
    assert_eq!(model.requests().len(), 3);
    assert_eq!(answer(&done).as_deref(), Some("I could not look it up."));
}

const DISOWNED: &str = "I'm sorry, but I don't have the ability to list files in a directory.";

/// Issue 36, development task d6 (2026-12-04): after its call had run and returned, the 1.5B
/// model said "I'm sorry, but I don't have the ability to list files in a directory.". Every
/// call of the execution succeeded, so the claim is false: asked about once, the model
/// answers from the result. After a failed call the same words are no false claim, and are
/// not asked about.
#[tokio::test]
async fn a_reply_that_disowns_the_tools_after_they_worked_is_asked_about() {
    let (done, model) = run(vec![
        text(PARIS_CALL),
        text(DISOWNED),
        text("It is sunny in Paris."),
    ])
    .await;
    assert_eq!(answer(&done).as_deref(), Some("It is sunny in Paris."));
    let asked = model.requests()[2].messages.to_transcript();
    assert!(
        asked.contains("Your tool calls for this request ran and succeeded"),
        "{asked}"
    );
    assert!(!done.messages().to_transcript().contains(DISOWNED));

    // after a call that failed, an honest "I cannot" is the answer
    let failing = Tools::new().with(
        FunctionTool::new("read_file", "Reads a file.", |_: Path| async move {
            Err::<String, _>("permission denied".to_owned())
        })
        .with_effects(ToolEffects::ReadOnly),
    );
    let said = "I cannot access secret.txt: permission denied.";
    let (done, model) = run_with(
        asking("What does secret.txt say?"),
        vec![
            InferenceResponse::with_tool_calls([read("c1", "secret.txt")]),
            text(said),
        ],
        |driver| agent(driver).with_tools(failing),
    )
    .await;
    assert_eq!(answer(&done).as_deref(), Some(said));
    assert_eq!(model.requests().len(), 2);
}

/// The same claim as the answer on stop is no answer: the loop asks once more from the page
/// of results, where the model answered from the listing (d6's answer on stop was this claim).
#[tokio::test]
async fn an_answer_on_stop_that_disowns_the_tools_after_they_worked_asks_the_page() {
    let copy = format!("{HINT}\n\n# Tools\n\nYou may call one or more functions to assist");
    let (done, model) = run_with(
        asking("Weather in Paris?"),
        vec![
            text(PARIS_CALL),
            text(&copy).with_finish_reason(FinishReason::Length),
            // asked to answer on stop, with the calls in view
            text(DISOWNED),
            // asked from the page of results
            text("It is sunny in Paris."),
        ],
        |driver| {
            agent(driver.with_tool_call_hint(HINT))
                .with_answer_on_stop(agents_core::AnswerOnStop::Synthesize)
        },
    )
    .await;
    assert_eq!(model.requests().len(), 4);
    let page = model.requests()[3].messages.to_transcript();
    assert!(page.contains("What your tool calls returned:"), "{page}");
    assert_eq!(answer(&done).as_deref(), Some("It is sunny in Paris."));
}

/// Issue 36, development task d18 (2026-12-04): asked "Is debug mode enabled in
/// config.yaml?", the 1.5B model searched the file for `debug_mode: true`, was told no line
/// holds it, and answered that the search "returned the following lines" with a block
/// holding `debug_mode: true`: enabled (the file says `debug: false`). A block quoted as a
/// tool's output that no result holds is asked about once, and given again is no answer; a
/// true quote is an answer.
#[tokio::test]
async fn a_reply_that_quotes_a_result_no_call_returned_is_asked_about() {
    let config = Tools::new().with(answering::<Path>(
        "read_file",
        "Reads a file.",
        "     1\tname: demo\n     2\tdebug: false",
    ));
    let misquote = "The `read_file` call returned the following lines from `config.yaml`:\n\
                    ```\ndebug_mode: true\n```\nThis indicates that debug mode is enabled.";
    let true_quote = "The `read_file` call returned:\n```\ndebug: false\n```\nDebug mode is off.";
    for (replies, saved, requests) in [
        (
            vec![misquote, "No: config.yaml sets debug: false."],
            Some("No: config.yaml sets debug: false."),
            3,
        ),
        (vec![true_quote], Some(true_quote), 2),
        // the same misquote after the nudge is not an answer (this agent answers nothing on
        // stop)
        (vec![misquote, misquote], None, 3),
    ] {
        let (done, model) = replies_after_reading(
            "Is debug mode enabled in config.yaml?",
            "config.yaml",
            &config,
            &replies,
        )
        .await;
        assert_eq!(answer(&done).as_deref(), saved);
        assert_eq!(model.requests().len(), requests);
        if requests == 3 {
            let asked = model.requests()[2].messages.to_transcript();
            assert!(asked.contains("no tool result above holds them"), "{asked}");
        }
    }
}

/// Issue 32, the long conversation in separated mode (2026-12-06): after a real `read_file`
/// call the 1.5B model answered "To read the file docs/deploy.md, I called the `read_file`
/// function ... The result was a JSON object ... "result": {"lines": [...]}" with lines the
/// file does not have, and the answer was kept for later turns to read. A JSON result no
/// call returned is asked about once, as a misquoted block is; the model's plain answer
/// after that is kept, and a JSON quote of what the file does hold is an answer.
#[tokio::test]
async fn a_reply_that_writes_a_result_as_json_no_call_returned_is_asked_about() {
    let deploy = Tools::new().with(answering::<Path>(
        "read_file",
        "Reads a file.",
        "     1\t# Deploy\n     2\tHost: build.internal",
    ));
    let forged = "To read the file docs/deploy.md, I called the `read_file` function with the \
                  path \"docs/deploy.md\". The result was a JSON object: {\"name\": \
                  \"read_file\", \"result\": {\"lines\": [\"Host: localhost\"]}}. The host \
                  is localhost.";
    let true_json = "I called `read_file`; the result was {\"result\": {\"lines\": \
                     [\"Host: build.internal\"]}}. The host is build.internal.";
    for (replies, saved, requests) in [
        (
            vec![forged, "The host is build.internal."],
            "The host is build.internal.",
            3,
        ),
        (vec![true_json], true_json, 2),
    ] {
        let (done, model) = replies_after_reading(
            "Which host does docs/deploy.md deploy to?",
            "docs/deploy.md",
            &deploy,
            &replies,
        )
        .await;
        assert_eq!(answer(&done).as_deref(), Some(saved));
        assert_eq!(model.requests().len(), requests);
        if requests == 3 {
            let asked = model.requests()[2].messages.to_transcript();
            assert!(asked.contains("no tool result above holds them"), "{asked}");
        }
    }
}

/// An answer on stop that quotes as a tool's output lines no result holds is no answer: the
/// loop asks once more from the page of results.
#[tokio::test]
async fn an_answer_on_stop_that_misquotes_a_result_asks_the_page() {
    let copy = format!("{HINT}\n\n# Tools\n\nYou may call one or more functions to assist");
    let (done, model) = run_with(
        asking("Weather in Paris?"),
        vec![
        text(PARIS_CALL),
        text(&copy).with_finish_reason(FinishReason::Length),
        // asked to answer on stop, with the calls in view
        text("The `get_weather` call returned:\n```\nHeavy rain in Paris\n```\nTake an umbrella."),
        // asked from the page of results
        text("It is sunny in Paris."),
    ],
        |driver| {
            agent(driver.with_tool_call_hint(HINT))
                .with_answer_on_stop(agents_core::AnswerOnStop::Synthesize)
        },
    )
    .await;
    assert_eq!(model.requests().len(), 4);
    assert_eq!(answer(&done).as_deref(), Some("It is sunny in Paris."));
}

/// Issue 32's 32-turn conversation (separated mode, 2026-12-05): seven turns were answered
/// "To read the contents of RELEASE.txt, I called the `read_file` function ... The result was
/// a JSON object with ... "result": {"lines": ["2023-04-23"]}}." when no call had run, and
/// each was saved: the JSON kept the reply from being judged a claim. A claim is a claim with
/// made-up JSON in it: asked about, the model makes the call.
#[tokio::test]
async fn a_claimed_call_with_a_made_up_json_result_is_asked_about() {
    let claim = "To find the weather in Paris, I called the `get_weather` function with the city \
                 \"Paris\". The result was a JSON object with the function name \"get_weather\" \
                 and the arguments {\"city\": \"Paris\"}, \"result\": {\"sky\": \"rain\"}}.";
    let (done, model) = run(vec![text(claim), text(PARIS_CALL), text("Sunny in Paris.")]).await;
    assert_eq!(answer(&done).as_deref(), Some("Sunny in Paris."));
    let asked = model.requests()[1].messages.to_transcript();
    assert!(
        asked.contains("no tool has run for this request"),
        "{asked}"
    );
    assert!(!done.messages().to_transcript().contains("rain"));
}

/// Issue 36, development tasks d15 and d25: the 1.5B model adds badly and shows its sum
/// ("120 + 340 + 215 + 95 = 890" for 770). A reply whose own arithmetic is wrong is asked
/// about once, with the right value, and the reply to that is the answer; right arithmetic,
/// and a wrong sum given again after the nudge, are left as they are (the nudge is once per
/// step).
#[tokio::test]
async fn a_reply_whose_arithmetic_is_wrong_is_told_the_right_value() {
    let wrong = "a.txt holds 17 and b.txt holds 25, so their sum is 17 + 25 = 43.";
    let (done, model) = run_with(
        asking(SUM_REQUEST),
        vec![
            InferenceResponse::with_tool_calls([read("c1", "a.txt"), read("c2", "b.txt")]),
            text(wrong),
            text("Their sum is 42."),
        ],
        |driver| agent(driver).with_tools(root_files_only()),
    )
    .await;
    assert_eq!(answer(&done).as_deref(), Some("Their sum is 42."));
    let asked = model.requests()[2].messages.to_transcript();
    assert!(
        asked.contains("Your last reply says 17 + 25 = 43, but 17 + 25 = 42."),
        "{asked}"
    );
    assert!(!done.messages().to_transcript().contains(wrong));

    // right arithmetic is the answer at once
    let right = "17 + 25 = 42, so their sum is 42.";
    let (done, model) = run_with(
        asking(SUM_REQUEST),
        vec![
            InferenceResponse::with_tool_calls([read("c1", "a.txt"), read("c2", "b.txt")]),
            text(right),
        ],
        |driver| agent(driver).with_tools(root_files_only()),
    )
    .await;
    assert_eq!(answer(&done).as_deref(), Some(right));
    assert_eq!(model.requests().len(), 2);

    // asked once per step: the same mistake again is the answer (the nudge showed the value)
    let (done, model) = run_with(
        asking(SUM_REQUEST),
        vec![
            InferenceResponse::with_tool_calls([read("c1", "a.txt"), read("c2", "b.txt")]),
            text(wrong),
            text(wrong),
        ],
        |driver| agent(driver).with_tools(root_files_only()),
    )
    .await;
    assert_eq!(answer(&done).as_deref(), Some(wrong));
    assert_eq!(model.requests().len(), 3);
}

/// Issue 36, development task d15 (2026-12-06): the 1.5B model read the column (120, 340,
/// 215, 95) and answered "The total ... is 890.", a sum nothing could check. An answer to a
/// request for arithmetic that gives a number no result shows, without its calculation, is
/// asked for the calculation once; the calculation is then checked, and its correction is
/// the answer. A calculation written out at once is the answer.
#[tokio::test]
async fn a_sum_given_without_its_calculation_is_asked_for_it_and_then_checked() {
    let unshown = "Their sum is 43.";
    let (done, model) = run_with(
        asking(SUM_REQUEST),
        vec![
            InferenceResponse::with_tool_calls([read("c1", "a.txt"), read("c2", "b.txt")]),
            text(unshown),
            text("17 + 25 = 43."),
            text("17 + 25 = 42, so their sum is 42."),
        ],
        |driver| agent(driver).with_tools(root_files_only()),
    )
    .await;
    assert_eq!(
        answer(&done).as_deref(),
        Some("17 + 25 = 42, so their sum is 42.")
    );
    assert_eq!(model.requests().len(), 4);
    let asked = model.requests()[2].messages.to_transcript();
    assert!(
        asked.contains("Your last reply gives `43`, which no tool result above shows"),
        "{asked}"
    );
    let asked = model.requests()[3].messages.to_transcript();
    assert!(
        asked.contains("Your last reply says 17 + 25 = 43, but 17 + 25 = 42."),
        "{asked}"
    );
    assert!(!done.messages().to_transcript().contains(unshown));

    // asked once per step: the same bare number again is the answer
    let (done, model) = run_with(
        asking(SUM_REQUEST),
        vec![
            InferenceResponse::with_tool_calls([read("c1", "a.txt"), read("c2", "b.txt")]),
            text(unshown),
            text(unshown),
        ],
        |driver| agent(driver).with_tools(root_files_only()),
    )
    .await;
    assert_eq!(answer(&done).as_deref(), Some(unshown));
    assert_eq!(model.requests().len(), 3);
}

/// Development task d18 (2026-12-06): shown `2: debug: false`, the 1.5B model answered "Yes,
/// debug mode is enabled in `config.yaml`.". A yes or no that a setting in a result
/// contradicts is asked about once, quoting the line; the reply to that is the answer.
#[tokio::test]
async fn a_yes_that_a_setting_in_the_result_contradicts_is_asked_about_with_the_line() {
    let config = Tools::new().with(answering::<Path>(
        "read_file",
        "Reads a file.",
        "     1\tapp: shop\n     2\tdebug: false\n     3\tworkers: 2",
    ));
    for (replies, saved, requests) in [
        (
            vec![
                "Yes, debug mode is enabled in `config.yaml`.",
                "No, debug mode is not enabled: `debug: false`.",
            ],
            "No, debug mode is not enabled: `debug: false`.",
            3,
        ),
        (
            vec!["No, debug is off in config.yaml."],
            "No, debug is off in config.yaml.",
            2,
        ),
    ] {
        let (done, model) = replies_after_reading(
            "Is debug mode enabled in config.yaml?",
            "config.yaml",
            &config,
            &replies,
        )
        .await;
        assert_eq!(answer(&done).as_deref(), Some(saved));
        assert_eq!(model.requests().len(), requests);
        if requests == 3 {
            let asked = model.requests()[2].messages.to_transcript();
            assert!(
                asked.contains(
                    "does not agree with the tool result above, which says `debug: false`"
                ),
                "{asked}"
            );
        }
    }
}

/// Development task d3 (2026-12-06): the 1.5B model listed the notes directory, then
/// answered "The file in the notes directory that mentions "zeppelin" is `alpha.txt`." without
/// opening a file. An answer that names the file holding what the request asks about, when
/// no result holds those words, is asked about once; the model searches, and answers from
/// what the search found.
#[tokio::test]
async fn a_file_named_from_a_listing_as_mentioning_a_word_is_asked_to_look_inside() {
    let notes = Tools::new()
        .with(answering::<Path>(
            "list_dir",
            "Lists a directory.",
            "[file] alpha.txt (26 bytes)\n[file] bravo.txt (49 bytes)",
        ))
        .with(answering::<Search>(
            "search_files",
            "Searches files.",
            "notes/bravo.txt:1: We saw a zeppelin over the harbour.",
        ));
    let (done, model) = run_with(
        asking("Which file in the notes directory mentions a zeppelin?"),
        vec![
            InferenceResponse::with_tool_calls([ToolCall::new(
                "c1",
                "list_dir",
                json!({"path": "notes"}),
            )]),
            text("The file that mentions \"zeppelin\" is `alpha.txt`."),
            InferenceResponse::with_tool_calls([ToolCall::new(
                "c2",
                "search_files",
                json!({"pattern": "zeppelin"}),
            )]),
            text("`notes/bravo.txt` mentions a zeppelin."),
        ],
        |driver| agent(driver).with_tools(notes.clone()),
    )
    .await;
    assert_eq!(
        answer(&done).as_deref(),
        Some("`notes/bravo.txt` mentions a zeppelin.")
    );
    assert_eq!(model.requests().len(), 4);
    let asked = model.requests()[2].messages.to_transcript();
    assert!(
        asked.contains("No tool result above contains `zeppelin`"),
        "{asked}"
    );
}

/// Development task d26 (2026-12-06): asked "What port does the config file set?", the 1.5B
/// model searched both `config.dev.yaml` (8080) and `config.prod.yaml` (443), and answered
/// "The port set in the config file is 8080.". An answer that gives one of the values that
/// different files set, without its file, is asked about once, naming each file's value.
#[tokio::test]
async fn one_of_two_files_values_given_as_the_answer_is_asked_about_with_both() {
    let search = Tools::new().with(answering::<Search>(
        "search_files",
        "Searches files.",
        "1 line of `config.dev.yaml` contains `port`:\n1: port: 8080\n1 line of \
         `config.prod.yaml` contains `port`:\n1: port: 443",
    ));
    let both = "config.dev.yaml sets port 8080 and config.prod.yaml sets port 443.";
    let (done, model) = run_with(
        asking("What port does the config file set?"),
        vec![
            InferenceResponse::with_tool_calls([ToolCall::new(
                "c1",
                "search_files",
                json!({"pattern": "port"}),
            )]),
            text("The port set in the config file is 8080."),
            text(both),
        ],
        |driver| agent(driver).with_tools(search.clone()),
    )
    .await;
    assert_eq!(answer(&done).as_deref(), Some(both));
    assert_eq!(model.requests().len(), 3);
    let asked = model.requests()[2].messages.to_transcript();
    assert!(
        asked.contains("`config.dev.yaml` sets 8080, `config.prod.yaml` sets 443"),
        "{asked}"
    );
}

/// Issue 36's eval, the 0.5B model's held-out half at 2a09a54: three answers on stop passed
/// a failed call's error on (the eval counts a reply that holds a fix-it phrase of an error
/// as a copy). Asked from the page of results, where no failed result is a tool message, the
/// driver had no error to compare with. A reply on stop that holds a phrase of the fix-it
/// text of an error of the execution is no answer, on the page too: the notice follows.
#[tokio::test]
async fn an_answer_on_stop_that_passes_an_error_on_is_no_answer_on_the_page_either() {
    let unknown = r#"{"name": "rename_file", "arguments": {"from": "a.txt", "to": "b.txt"}}"#;
    let relay = "I could not rename it: there is no tool named rename_file.";
    let (done, model) = run_with(
        asking("Rename a.txt to b.txt."),
        [
            text(unknown),
            text(unknown),
            text(unknown),
            text(unknown),
            // asked to answer on stop, with the calls in view
            text(relay),
            // asked from the page of results
            text(relay),
        ],
        |driver| agent(driver).with_answer_on_stop(agents_core::AnswerOnStop::Synthesize),
    )
    .await;
    let requests = model.requests();
    let page = requests.last().unwrap().messages.to_transcript();
    assert!(page.contains("What your tool calls returned:"), "{page}");
    let saved = done.messages().iter().last().unwrap().clone();
    assert_eq!(
        saved
            .metadata()
            .get(agents_core::ANSWERED_BY_KEY)
            .and_then(|by| by.as_str()),
        Some("notice"),
        "{}",
        saved.text()
    );
    assert!(!saved.text().contains(relay));
}
