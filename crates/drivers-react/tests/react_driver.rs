//! `ReActDriver` against a scripted model: the prompt, retries, tool steps and final answers.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agents_core::{
    Agent, AgentDriver, AgentError, AgentState, AgentStep, AgentStepType, DefaultToolExecutor,
    ErrorType, FunctionTool, Next, StateProcessor, StepContext, StepsLimit, Tools, DEFAULT_SECTION,
    EXECUTION_BUFFER_SECTION,
};
use async_trait::async_trait;
use drivers_react::{ReActDecision, ReActDriver, StopOnFinalDecision};
use inference::{InferenceError, InferenceResponse, ResponseFormat, ScriptedModel, Usage};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct Pair {
    /// First addend.
    a: f64,
    /// Second addend.
    b: f64,
}

fn tools() -> Tools {
    Tools::new().with(FunctionTool::new(
        "add",
        "Adds two numbers.",
        |p: Pair| async move { Ok::<_, String>(json!(p.a + p.b)) },
    ))
}

/// Separated-trace persistence: trace to the execution buffer, answer to the conversation.
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
            .append(step.trace_messages().clone());
        let store = store
            .section(DEFAULT_SECTION)
            .append(step.response_messages().clone());
        Ok(state.with_store(store))
    }
}

fn reply(decision: ReActDecision) -> InferenceResponse {
    InferenceResponse::text(decision.to_json())
}

fn add_call() -> InferenceResponse {
    reply(ReActDecision::call_tool(
        "I must add the numbers with the tool.",
        "add",
        json!({"a": 2, "b": 3}),
    ))
}

async fn one_step(driver: &ReActDriver) -> AgentStep {
    let state = AgentState::new().with_user_message("What is 2 + 3?");
    driver
        .next_step(
            &state,
            &tools(),
            &DefaultToolExecutor::new(),
            &StepContext::default(),
        )
        .await
        .unwrap()
}

fn step_transcripts(state: &AgentState) -> String {
    state
        .steps()
        .enumerate()
        .map(|(i, step)| {
            format!(
                "## step {} ({:?})\n### trace\n{}### response\n{}",
                i + 1,
                step.step_type(),
                step.trace_messages().to_transcript(),
                step.response_messages().to_transcript()
            )
        })
        .collect()
}

#[tokio::test]
async fn multi_step_tool_use_then_final_answer() {
    let model = ScriptedModel::new([
        add_call().with_usage(Usage::new(300, 30)),
        reply(ReActDecision::final_answer("The tool said 5.", "2 + 3 = 5"))
            .with_usage(Usage::new(350, 20)),
    ]);
    let driver = ReActDriver::new(model.clone()).with_model_name("small-model");
    let agent = separated_agent(driver, tools(), 5);

    let done = agent
        .execute(AgentState::new().with_user_message("What is 2 + 3?"))
        .await
        .unwrap();

    assert_eq!(done.step_count(), 2);
    assert_eq!(answer_of(&done).as_deref(), Some("2 + 3 = 5"));
    assert_eq!(done.usage(), Usage::new(650, 50));
    let first = done.steps().next().unwrap();
    assert_eq!(first.step_type(), AgentStepType::ToolExecution);
    assert_eq!(first.requested_tool_calls()[0].id(), "react_1");
    insta::assert_snapshot!("react_multi_step_messages", step_transcripts(&done));
    insta::assert_json_snapshot!("react_multi_step_requests", model.requests());
}

#[tokio::test]
async fn decision_in_a_code_fence_with_prose_is_accepted() {
    let text = format!(
        "Sure, here is my decision:\n```json\n{}\n```",
        ReActDecision::call_tool("add them", "add", json!({"a": 1, "b": 1})).to_json()
    );
    let model = ScriptedModel::new([InferenceResponse::text(text)]);
    let step = one_step(&ReActDriver::new(model.clone())).await;
    assert_eq!(step.step_type(), AgentStepType::ToolExecution);
    assert_eq!(
        step.trace_messages().to_transcript(),
        "assistant: Thought: add them\n    Action: add\n    Action Input: {\"a\":1,\"b\":1}\nuser: Observation: 2.0\n"
    );
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test]
async fn invalid_decision_is_retried_with_the_error_fed_back() {
    let model = ScriptedModel::new([
        InferenceResponse::text("The answer is obviously 5.").with_usage(Usage::new(10, 5)),
        add_call().with_usage(Usage::new(20, 5)),
    ]);
    let step = one_step(&ReActDriver::new(model.clone())).await;

    assert_eq!(step.step_type(), AgentStepType::ToolExecution);
    assert_eq!(step.usage(), Usage::new(30, 10), "both attempts count");
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].messages.len(), 2, "system + user");
    insta::assert_snapshot!(
        "react_retry_request_tail",
        requests[1].messages.tail(3).to_transcript()
    );
}

#[tokio::test]
async fn malformed_decisions_fail_the_step_cleanly_after_the_retries() {
    let cases = [
        ("not json at all", "the reply contains no JSON object"),
        (
            r#"{"type": "call_tool", "tool": 7}"#,
            "field `tool` must be a string",
        ),
        (
            r#"{"type": "call_tool", "tool": "multiply", "args": {}}"#,
            "unknown tool `multiply`; available tools: add",
        ),
        (
            r#"{"type": "call_tool", "tool": "add", "args": {"a": 1}}"#,
            "tool `add` is missing required arguments: b",
        ),
        (
            r#"{"type": "call_tool", "tool": "add", "args": {"a": "1", "b": 2}}"#,
            "argument `a` of tool `add` must be number",
        ),
        (
            r#"{"type": "call_tool", "tool": "add", "args": [1, 2]}"#,
            "must be a JSON object",
        ),
        (
            r#"{"type": "final_answer", "answer": ""}"#,
            "needs a non-empty `answer`",
        ),
    ];
    for (bad, expected) in cases {
        let model =
            ScriptedModel::new([InferenceResponse::text(bad), InferenceResponse::text(bad)]);
        let driver = ReActDriver::new(model.clone()).with_max_decision_retries(1);
        let step = one_step(&driver).await;

        assert_eq!(model.requests().len(), 2, "{bad}");
        assert_eq!(step.step_type(), AgentStepType::Error, "{bad}");
        assert!(step.tool_executions().is_empty());
        assert!(step.trace_messages().is_empty() && step.response_messages().is_empty());
        assert_eq!(step.errors()[0].error_type, ErrorType::Validation);
        let message = &step.errors()[0].message;
        assert!(
            message.contains("in 2 attempt(s)") && message.contains(expected),
            "{message}"
        );
    }
}

#[tokio::test]
async fn default_is_two_retries() {
    let model = ScriptedModel::new((0..3).map(|_| InferenceResponse::text("??")));
    let step = one_step(&ReActDriver::new(model.clone())).await;
    assert_eq!(model.requests().len(), 3);
    assert_eq!(step.step_type(), AgentStepType::Error);
}

#[tokio::test]
async fn tool_failure_becomes_an_error_observation() {
    let model = ScriptedModel::new([reply(ReActDecision::call_tool(
        "",
        "add",
        json!({"a": 1, "b": 1.0, "c": null}),
    ))]);
    // `c` is unknown and null: dropped before the call.
    let step = one_step(&ReActDriver::new(model)).await;
    assert_eq!(
        step.tool_executions().calls()[0].arguments(),
        &json!({"a": 1, "b": 1.0})
    );

    let failing = Tools::new().with(FunctionTool::new(
        "add",
        "Adds two numbers.",
        |_: Pair| async move { Err::<String, _>("the adder is broken".to_owned()) },
    ));
    let model = ScriptedModel::new([add_call()]);
    let state = AgentState::new().with_user_message("2 + 3?");
    let step = ReActDriver::new(model)
        .next_step(
            &state,
            &failing,
            &DefaultToolExecutor::new(),
            &StepContext::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        step.trace_messages().last().map(|m| m.text()).as_deref(),
        Some("Observation: Error: the adder is broken")
    );
    assert_eq!(step.step_type(), AgentStepType::Error);
}

#[tokio::test]
async fn final_answer_via_a_second_plain_text_inference() {
    let model = ScriptedModel::new([
        reply(ReActDecision::final_answer("done", "5")).with_usage(Usage::new(100, 10)),
        InferenceResponse::text("  The sum of 2 and 3 is 5.  ").with_usage(Usage::new(90, 8)),
    ]);
    let driver = ReActDriver::new(model.clone()).with_final_via_inference(true);
    let step = one_step(&driver).await;

    assert_eq!(
        step.response_messages().to_transcript(),
        "assistant: The sum of 2 and 3 is 5.\n"
    );
    assert_eq!(step.usage(), Usage::new(190, 18));
    assert_eq!(step.step_type(), AgentStepType::FinalResponse);
    let second = &model.requests()[1];
    assert_eq!(second.response_format, None);
    insta::assert_snapshot!("react_final_request", second.messages.to_transcript());
}

#[tokio::test]
async fn json_response_format_can_be_turned_off() {
    let model = ScriptedModel::new([reply(ReActDecision::final_answer("", "5"))]);
    one_step(&ReActDriver::new(model.clone())).await;
    assert_eq!(
        model.requests()[0].response_format,
        Some(ResponseFormat::JsonObject)
    );

    let model = ScriptedModel::new([reply(ReActDecision::final_answer("", "5"))]);
    one_step(&ReActDriver::new(model.clone()).with_json_response_format(false)).await;
    let request = &model.requests()[0];
    assert_eq!(request.response_format, None);
    assert!(
        request.tools.is_empty(),
        "ReAct sends no native tool schemas"
    );
}

#[tokio::test]
async fn inference_failures_are_returned_as_agent_errors() {
    let model = ScriptedModel::from_results([Err(InferenceError::Timeout {
        after: std::time::Duration::from_secs(10),
    })]);
    let state = AgentState::new().with_user_message("2 + 3?");
    let error = ReActDriver::new(model)
        .next_step(
            &state,
            &tools(),
            &DefaultToolExecutor::new(),
            &StepContext::default(),
        )
        .await
        .unwrap_err();
    assert!(matches!(error, AgentError::Inference(_)), "{error:?}");
}

/// A final answer that only describes how to use the tool, as the 1.5B model wrote one on
/// the eval's held-out half (issue 36).
fn plan() -> InferenceResponse {
    reply(ReActDecision::final_answer(
        "I need the sum.",
        "To get the sum, I'll use the `add` tool with a = 2 and b = 3.",
    ))
}

#[tokio::test]
async fn a_plan_given_as_the_answer_before_any_tool_ran_is_asked_about_once_then_the_call_runs() {
    let model = ScriptedModel::new([plan(), add_call()]);
    // No retries at all: the question about a plan is not one.
    let driver = ReActDriver::new(model.clone()).with_max_decision_retries(0);
    let step = one_step(&driver).await;

    assert_eq!(step.step_type(), AgentStepType::ToolExecution);
    assert_eq!(
        step.tool_executions().iter().next().unwrap().result_text(),
        "5.0"
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    let asked = requests[1].messages.last().unwrap().text();
    assert!(
        asked.contains("describes how to use a tool instead of answering")
            && asked.contains("No tool has run")
            && asked.contains("\"call_tool\" decision now"),
        "{asked}"
    );
    assert!(
        step.response_messages().is_empty(),
        "the plan is not the answer"
    );
}

#[tokio::test]
async fn a_how_to_answer_given_again_when_no_tool_ran_is_the_answer() {
    let how_to = "You can use the `add` tool: give it a and b.";
    let answer = || reply(ReActDecision::final_answer("They asked how.", how_to));
    let model = ScriptedModel::new([answer(), answer()]);
    let step = one_step(&ReActDriver::new(model.clone())).await;

    assert_eq!(model.requests().len(), 2, "asked once");
    assert_eq!(step.step_type(), AgentStepType::FinalResponse);
    assert_eq!(
        step.response_messages().to_transcript(),
        format!("assistant: {how_to}\n")
    );
}

#[tokio::test]
async fn a_plan_given_again_after_the_tools_ran_is_no_answer() {
    let model = ScriptedModel::new([add_call(), plan(), plan()]);
    let agent = separated_agent(ReActDriver::new(model.clone()), tools(), 2);

    let done = agent
        .execute(AgentState::new().with_user_message("What is 2 + 3?"))
        .await
        .unwrap();

    let requests = model.requests();
    assert_eq!(
        requests.len(),
        3,
        "one call, one plan asked about, one plan"
    );
    let asked = requests[2].messages.last().unwrap().text();
    assert!(asked.contains("tool results above"), "{asked}");
    let second = done.steps().nth(1).unwrap();
    assert_eq!(second.step_type(), AgentStepType::Error);
    assert!(
        second.errors()[0]
            .message
            .contains("describes how to use a tool instead of answering"),
        "{:?}",
        second.errors()
    );
    assert!(second.response_messages().is_empty());
    assert!(
        nowhere(&done, "I'll use"),
        "the plan is nowhere in the conversation"
    );
}

#[tokio::test]
async fn the_answer_checks_can_be_turned_off() {
    let model = ScriptedModel::new([plan()]);
    let step = one_step(&ReActDriver::new(model.clone()).with_answer_checks(false)).await;
    assert_eq!(model.requests().len(), 1);
    assert_eq!(step.step_type(), AgentStepType::FinalResponse);
}

#[derive(Deserialize, JsonSchema)]
struct PathArg {
    /// The file.
    path: String,
}

#[derive(Deserialize, JsonSchema)]
struct CommandArg {
    /// The command.
    command: String,
}

#[derive(Deserialize, JsonSchema)]
struct EditArgs {
    /// The file.
    path: String,
    /// What to replace.
    old: String,
    /// What to put instead.
    new: String,
}

/// A read-only `read_file` over three small files, a `bash` that prints a checksum, a
/// `write_file` that always fails, and an `edit_file` that only says what it would have
/// changed.
fn file_tools() -> Tools {
    Tools::new()
        .with(
            FunctionTool::new("read_file", "Reads a file.", |p: PathArg| async move {
                match p.path.trim_start_matches("./") {
                    "a.txt" => Ok("17".to_owned()),
                    "b.txt" => Ok("25".to_owned()),
                    "greeting.txt" => Ok("Hello, World!".to_owned()),
                    // as the agents crate's read_file shows a name two files have
                    "README.md" => Ok("(no file is named `README.md` in the workspace's top \
                                       folder; 2 files have that name, each shown below: \
                                       `api/README.md`, `web/README.md`; the request does not \
                                       say which one it means)\n== api/README.md ==\n     1\t\
                                       Version 2.1\n== web/README.md ==\n     1\tVersion 5.0"
                        .to_owned()),
                    "config.yaml" => Ok("     1\tname: shop\n     2\tdebug: false".to_owned()),
                    // as the agents crate's read_file shows a name without its extension
                    "config" => Ok("(no file is named `config` in the workspace's top folder; \
                                    2 files have that name with an extension, each shown \
                                    below: `config.dev.yaml`, `config.prod.yaml`; the request \
                                    does not say which one it means)\n== config.dev.yaml \
                                    ==\n     1\tport: 8080\n== config.prod.yaml ==\n     \
                                    1\tport: 443"
                        .to_owned()),
                    other => Err(format!("no file `{other}`")),
                }
            })
            .with_effects(agents_core::ToolEffects::ReadOnly),
        )
        .with(FunctionTool::new(
            "bash",
            "Runs a shell command.",
            |c: CommandArg| async move {
                Ok::<_, String>(format!("ran `{}`: checksum: 8643", c.command))
            },
        ))
        .with(FunctionTool::new(
            "write_file",
            "Writes a file.",
            |p: PathArg| async move {
                Err::<String, _>(format!("`{}` was not changed: read it first", p.path))
            },
        ))
        .with(FunctionTool::new(
            "edit_file",
            "Replaces text in a file.",
            |e: EditArgs| async move {
                Ok::<_, String>(format!("replaced {} with {} in {}", e.old, e.new, e.path))
            },
        ))
}

fn file_agent(model: &ScriptedModel, steps: usize) -> Agent {
    separated_agent(ReActDriver::new(model.clone()), file_tools(), steps)
}

/// An agent of `driver` with `tools` and the separated trace (the test's own stack and
/// criteria, in place of the defaults), that stops on a final decision or after `steps`.
fn separated_agent(driver: ReActDriver, tools: Tools, steps: usize) -> Agent {
    Agent::new(driver)
        .with_tools(tools)
        .with_processors(agents_core::StateProcessors::new([
            std::sync::Arc::new(SeparatedTrace) as std::sync::Arc<dyn agents_core::StateProcessor>,
        ]))
        .with_criteria(agents_core::ContinuationCriteria::new())
        .with_criterion(StopOnFinalDecision::new())
        .with_criterion(StepsLimit::new(steps))
}

/// The answer the run ended with, as the person reads it.
fn answer_of(done: &AgentState) -> Option<String> {
    done.final_response().map(|m| m.text())
}

/// Whether no message of the conversation holds `text` (a refused reply was not kept).
fn nowhere(done: &AgentState, text: &str) -> bool {
    done.messages().iter().all(|m| !m.text().contains(text))
}

/// `agent` stopping on the first error and synthesizing the answer then (the CLI's
/// defaults), for the answers asked for on a stop.
fn stopping(agent: Agent) -> Agent {
    agent
        .with_error_policy(agents_core::ErrorPolicy::stop_on_any_error())
        .with_answer_on_stop(agents_core::AnswerOnStop::Synthesize)
}

fn read(path: &str) -> InferenceResponse {
    reply(ReActDecision::call_tool(
        "Read it.",
        "read_file",
        json!({"path": path}),
    ))
}

fn answer(text: &str) -> InferenceResponse {
    reply(ReActDecision::final_answer("Done.", text))
}

#[tokio::test]
async fn an_answer_about_a_file_no_call_read_is_asked_about_then_the_file_is_read() {
    // The 1.5B model on development task d10 at 0186aee: `a.txt` read, the sum given as 18.
    let model = ScriptedModel::new([
        read("a.txt"),
        answer("The sum is 18."),
        read("b.txt"),
        answer("17 + 25 = 42, so the sum is 42."),
    ]);
    let done = file_agent(&model, 5)
        .execute(
            AgentState::new()
                .with_user_message("a.txt and b.txt each hold a number. What is their sum?"),
        )
        .await
        .unwrap();

    let requests = model.requests();
    assert_eq!(requests.len(), 4);
    let asked = requests[2].messages.last().unwrap().text();
    assert!(
        asked.contains("the request names `b.txt`, and no tool call of yours has used it")
            && asked.contains("\"call_tool\" decision now"),
        "{asked}"
    );
    assert_eq!(
        answer_of(&done).as_deref(),
        Some("17 + 25 = 42, so the sum is 42.")
    );
    assert!(nowhere(&done, "18"));
}

#[tokio::test]
async fn a_sum_given_without_its_calculation_is_asked_for_it_once_then_checked() {
    // Development task d15's kind: "The total ... is 890." after reading the numbers.
    let model = ScriptedModel::new([
        read("a.txt"),
        read("b.txt"),
        answer("Their sum is 43."),
        answer("17 + 25 = 43."),
        answer("17 + 25 = 42, so their sum is 42."),
    ]);
    let done = file_agent(&model, 6)
        .execute(
            AgentState::new()
                .with_user_message("a.txt and b.txt each hold a number. What is their sum?"),
        )
        .await
        .unwrap();
    let requests = model.requests();
    assert_eq!(requests.len(), 5);
    let asked = requests[3].messages.last().unwrap().text();
    assert!(
        asked.contains("your answer gives `43`, which no tool result shows, without the calculation that gives it")
            && asked.contains("Write the calculation out"),
        "{asked}"
    );
    let asked = requests[4].messages.last().unwrap().text();
    assert!(
        asked.contains("your answer says 17 + 25 = 43, but 17 + 25 = 42"),
        "{asked}"
    );
    assert_eq!(
        answer_of(&done).as_deref(),
        Some("17 + 25 = 42, so their sum is 42.")
    );
}

/// Runs `request` with a model that reads `path`, answers `first`, then `fixed` once asked
/// about it; checks that `fixed` is the saved answer after one question and returns the
/// question (the last message the model got).
async fn asked_once_after_a_read(request: &str, path: &str, first: &str, fixed: &str) -> String {
    let model = ScriptedModel::new([read(path), answer(first), answer(fixed)]);
    let done = file_agent(&model, 6)
        .execute(AgentState::new().with_user_message(request))
        .await
        .unwrap();
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(answer_of(&done).as_deref(), Some(fixed));
    requests[2].messages.last().unwrap().text()
}

#[tokio::test]
async fn an_answer_for_one_of_several_files_of_a_name_is_asked_about_once() {
    // A probe of issue 36's task kinds (d123): two READMEs shown, one answered for.
    let asked = asked_once_after_a_read(
        "What version does the README say?",
        "README.md",
        "The README says version 2.1.",
        "api/README.md says 2.1 and web/README.md says 5.0.",
    )
    .await;
    assert!(
        asked.contains(
            "the tool result shows 2 files of that name: `api/README.md`, `web/README.md`"
        ) && asked.contains("for each file, naming it, or ask the user"),
        "{asked}"
    );
}

#[tokio::test]
async fn a_yes_that_a_setting_line_contradicts_is_asked_about_once() {
    // Development task d18's kind: "Yes" beside `debug: false`.
    let asked = asked_once_after_a_read(
        "Is debug mode enabled in config.yaml?",
        "config.yaml",
        "Yes, debug mode is enabled.",
        "No, debug mode is disabled: config.yaml says debug: false.",
    )
    .await;
    assert!(
        asked
            .contains("your answer does not agree with the tool result, which says `debug: false`")
            && asked.contains("Read that line again"),
        "{asked}"
    );
}

#[tokio::test]
async fn one_of_the_values_two_files_set_is_asked_about_once() {
    // Development task d26's kind: two config files, one port given without its file.
    let asked = asked_once_after_a_read(
        "What port does the config file set?",
        "config",
        "The port is 8080.",
        "config.dev.yaml sets port 8080 and config.prod.yaml sets port 443.",
    )
    .await;
    assert!(
        asked.contains(
            "the tool results show `port` set in more than one file: `config.dev.yaml` sets \
             8080, `config.prod.yaml` sets 443"
        ) && asked.contains("with each file and its value, or ask the user"),
        "{asked}"
    );
}

#[tokio::test]
async fn an_operand_given_as_the_result_is_asked_for_the_calculation_once() {
    // A probe of issue 36's task kinds (d122): "times 3" asked, the number read given back.
    let asked = asked_once_after_a_read(
        "What is the number in a.txt times 3?",
        "a.txt",
        "17",
        "17 * 3 = 51, so it is 51.",
    )
    .await;
    assert!(
        asked.contains(
            "the request asks for a calculation (`times 3`), but your answer gives only `17`"
        ) && asked.contains("Write the calculation out"),
        "{asked}"
    );
}

#[tokio::test]
async fn a_file_said_changed_after_only_a_read_of_it_is_asked_about_then_changed() {
    // The 1.5B model on development task d22 at deb58ba: `VERSION` edited, `about.txt` read,
    // and the answer said `about.txt` had been changed.
    let edit = |path: &str| {
        reply(ReActDecision::call_tool(
            "Edit it.",
            "edit_file",
            json!({"path": path, "old": "World", "new": "Rust"}),
        ))
    };
    let model = ScriptedModel::new([
        edit("notes.txt"),
        read("greeting.txt"),
        answer("greeting.txt has been updated: it now says Hello, Rust!"),
        edit("greeting.txt"),
        answer("Both files now say Rust."),
    ]);
    let done = file_agent(&model, 8)
        .execute(
            AgentState::new()
                .with_user_message("Replace World with Rust in notes.txt and greeting.txt."),
        )
        .await
        .unwrap();

    let requests = model.requests();
    assert_eq!(requests.len(), 5);
    let asked = requests[3].messages.last().unwrap().text();
    assert!(
        asked.contains("your answer says `greeting.txt` was changed, but no call has changed it")
            && asked.contains("Make the change now"),
        "{asked}"
    );
    assert_eq!(
        answer_of(&done).as_deref(),
        Some("Both files now say Rust.")
    );
}

#[derive(Deserialize, JsonSchema)]
struct PatternArg {
    /// The words to look for.
    pattern: String,
}

#[tokio::test]
async fn a_change_still_claimed_after_its_question_is_no_answer() {
    // The 1.5B model on development task d22 at b55f332: `VERSION` edited, the edits of
    // `about.txt` failed, and the answer said both had been changed, again after its question.
    let claim = "The version in both VERSION and greeting.txt has been changed to Rust.";
    let model = ScriptedModel::new([
        reply(ReActDecision::call_tool(
            "Edit it.",
            "edit_file",
            json!({"path": "notes.txt", "old": "World", "new": "Rust"}),
        )),
        read("greeting.txt"),
        answer(claim),
        answer(claim),
        InferenceResponse::text("notes.txt now says Rust; greeting.txt was not changed."),
    ]);
    let done = stopping(file_agent(&model, 8))
        .execute(
            AgentState::new()
                .with_user_message("Replace World with Rust in notes.txt and greeting.txt."),
        )
        .await
        .unwrap();

    assert_eq!(model.requests().len(), 5);
    assert_eq!(
        answer_of(&done).as_deref(),
        Some("notes.txt now says Rust; greeting.txt was not changed.")
    );
    assert!(
        nowhere(&done, "has been changed"),
        "the false claim is nowhere in the conversation"
    );
}

#[tokio::test]
async fn a_file_named_from_a_listing_as_holding_a_word_is_asked_about_then_searched() {
    // The 1.5B model on development task d3 at deb58ba: the folder listed, `alpha.txt`
    // answered, no file opened or searched (`bravo.txt` holds the word).
    let tools = Tools::new()
        .with(FunctionTool::new(
            "list_dir",
            "Lists a folder.",
            |_p: PathArg| async move {
                Ok::<_, String>(
                    "[file] alpha.txt (26 bytes)\n[file] bravo.txt (49 bytes)\n[file] \
                     charlie.txt (30 bytes)"
                        .to_owned(),
                )
            },
        ))
        .with(FunctionTool::new(
            "search_files",
            "Searches the files.",
            |p: PatternArg| async move {
                Ok::<_, String>(format!(
                    "notes/bravo.txt:1: We saw a {} over the harbour.",
                    p.pattern
                ))
            },
        ));
    let model = ScriptedModel::new([
        reply(ReActDecision::call_tool(
            "List them.",
            "list_dir",
            json!({"path": "notes"}),
        )),
        answer("alpha.txt"),
        reply(ReActDecision::call_tool(
            "Search.",
            "search_files",
            json!({"pattern": "zeppelin"}),
        )),
        answer("bravo.txt"),
    ]);
    let done = separated_agent(ReActDriver::new(model.clone()), tools, 6)
        .execute(
            AgentState::new()
                .with_user_message("Which file in the notes directory mentions a zeppelin?"),
        )
        .await
        .unwrap();

    let requests = model.requests();
    assert_eq!(requests.len(), 4);
    let asked = requests[2].messages.last().unwrap().text();
    assert!(
        asked.contains(
            "no tool result contains `zeppelin`, so no file was seen to hold it: your answer \
             names a file without having looked inside it"
        ) && asked.contains("Search the files for it or read them now"),
        "{asked}"
    );
    assert_eq!(answer_of(&done).as_deref(), Some("bravo.txt"));
}

#[tokio::test]
async fn an_answer_the_listing_in_view_contradicts_is_told_the_line_once() {
    // The 1.5B model on development task d19 at 3f25817: shown `beta.log` marked the
    // largest, it answered `alpha.log`.
    let tools = Tools::new().with(FunctionTool::new(
        "list_dir",
        "Lists a folder.",
        |_p: PathArg| async move {
            Ok::<_, String>(
                "[file] alpha.log (60 bytes)\n[file] beta.log (1380 bytes, the largest)\n\
                 [file] gamma.log (330 bytes)\nIn all: 3 files (3 .log files)."
                    .to_owned(),
            )
        },
    ));
    let model = ScriptedModel::new([
        reply(ReActDecision::call_tool(
            "List them.",
            "list_dir",
            json!({"path": "data"}),
        )),
        answer("alpha.log is the largest file, with a size of 60 bytes."),
        answer("beta.log is the largest file (1380 bytes)."),
    ]);
    let done = separated_agent(ReActDriver::new(model.clone()), tools, 6)
        .execute(
            AgentState::new().with_user_message("Which file in the data folder is the largest?"),
        )
        .await
        .unwrap();

    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    let asked = requests[2].messages.last().unwrap().text();
    assert!(
        asked.contains(
            "your answer says `alpha.log` is the largest, but the listing says `[file] beta.log \
             (1380 bytes, the largest)`"
        ) && asked.contains("Read that line again"),
        "{asked}"
    );
    assert_eq!(
        answer_of(&done).as_deref(),
        Some("beta.log is the largest file (1380 bytes).")
    );
}

#[tokio::test]
async fn another_settings_value_given_for_a_missing_one_is_told_the_line_once() {
    // The 1.5B model on development task d27 at b32d853: no password in the file, the user
    // given as the password.
    let tools = Tools::new().with(FunctionTool::new(
        "read_file",
        "Reads a file.",
        |_p: PathArg| async move {
            Ok::<_, String>("1\t[database]\n2\thost = db.local\n3\tuser = admin".to_owned())
        },
    ));
    let model = ScriptedModel::new([
        read("settings.ini"),
        answer("The database password is admin."),
        answer("settings.ini does not set a database password."),
    ]);
    let done = separated_agent(ReActDriver::new(model.clone()), tools, 6)
        .execute(
            AgentState::new().with_user_message("What is the database password in settings.ini?"),
        )
        .await
        .unwrap();

    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    let asked = requests[2].messages.last().unwrap().text();
    assert!(
        asked.contains(
            "your answer gives `admin` for the password, but no tool result mentions a \
             password: `admin` is what the line `user = admin` sets"
        ) && asked.contains("if what was asked for is not there, say so"),
        "{asked}"
    );
    assert_eq!(
        answer_of(&done).as_deref(),
        Some("settings.ini does not set a database password.")
    );
}

#[tokio::test]
async fn a_value_no_result_shows_is_asked_about_once() {
    // A probe of issue 36's task kinds (2026-12-07), with the tool-calling driver: a search
    // that showed only the file's name, then a made-up address.
    let tools =
        Tools::new().with(FunctionTool::new(
            "search_files",
            "Finds files.",
            |_p: PathArg| async move {
                Ok::<_, String>("1 file matches `team.md`:\nteam.md".to_owned())
            },
        ));
    let model = ScriptedModel::new([
        reply(ReActDecision::call_tool(
            "Find it.",
            "search_files",
            json!({"path": "team.md"}),
        )),
        answer("The support desk's address is support@example.com."),
        answer("team.md does not show the support desk's address."),
    ]);
    let done = separated_agent(ReActDriver::new(model.clone()), tools, 6)
        .execute(AgentState::new().with_user_message(
            "What is the email address of the support desk, according to team.md?",
        ))
        .await
        .unwrap();

    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    let asked = requests[2].messages.last().unwrap().text();
    assert!(
        asked.contains("your answer gives `support@example.com`, which no tool result shows"),
        "{asked}"
    );
    assert_eq!(
        answer_of(&done).as_deref(),
        Some("team.md does not show the support desk's address.")
    );
}

#[tokio::test]
async fn an_answer_whose_arithmetic_is_wrong_is_told_the_value_once() {
    // Development task d15's kind: the 1.5B model shows a sum it got wrong.
    let model = ScriptedModel::new([
        read("a.txt"),
        read("b.txt"),
        answer("17 + 25 = 43, so their sum is 43."),
        answer("17 + 25 = 42, so their sum is 42."),
    ]);
    let done = file_agent(&model, 6)
        .execute(
            AgentState::new()
                .with_user_message("a.txt and b.txt each hold a number. What is their sum?"),
        )
        .await
        .unwrap();
    let requests = model.requests();
    assert_eq!(requests.len(), 4);
    let asked = requests[3].messages.last().unwrap().text();
    assert!(
        asked.contains("your answer says 17 + 25 = 43, but 17 + 25 = 42")
            && asked.contains("Correct the arithmetic"),
        "{asked}"
    );
    assert_eq!(
        answer_of(&done).as_deref(),
        Some("17 + 25 = 42, so their sum is 42.")
    );
    assert!(nowhere(&done, "43"));
}

#[tokio::test]
async fn a_change_answered_after_only_reads_is_asked_about_then_made() {
    // Development task d4 at 0186aee: the file read, "replaced" answered, nothing edited.
    let model = ScriptedModel::new([
        read("greeting.txt"),
        answer("The word World has been replaced with Rust."),
        reply(ReActDecision::call_tool(
            "Edit it.",
            "edit_file",
            json!({"path": "greeting.txt", "old": "World", "new": "Rust"}),
        )),
        answer("Replaced World with Rust in greeting.txt."),
    ]);
    let done = file_agent(&model, 5)
        .execute(
            AgentState::new()
                .with_user_message("In the file greeting.txt, replace the word World with Rust."),
        )
        .await
        .unwrap();

    let asked = model.requests()[2].messages.last().unwrap().text();
    assert!(
        asked.contains("nothing has changed yet: the tools that ran only read")
            && asked.contains("using what you read above"),
        "{asked}"
    );
    let edits: Vec<String> = done
        .steps()
        .flat_map(|step| step.tool_executions().iter())
        .filter(|execution| execution.call().name() == "edit_file")
        .map(|execution| execution.result_text())
        .collect();
    assert_eq!(edits, ["replaced World with Rust in greeting.txt"]);
}

#[tokio::test]
async fn an_answer_asked_about_and_given_again_stands() {
    // The file may rightly be unneeded, the change impossible: the second answer is kept.
    let model = ScriptedModel::new([
        answer("I cannot tell without reading it."),
        answer("No file is needed to say that."),
    ]);
    let done = file_agent(&model, 3)
        .execute(
            AgentState::new()
                .with_user_message("Is b.txt worth reading? Answer from what you know."),
        )
        .await
        .unwrap();
    assert_eq!(model.requests().len(), 2, "asked once");
    assert_eq!(
        answer_of(&done).as_deref(),
        Some("No file is needed to say that.")
    );

    let model = ScriptedModel::new([
        read("missing.txt"),
        answer("missing.txt does not exist."),
        answer("missing.txt does not exist, so nothing can be replaced."),
    ]);
    let done = file_agent(&model, 3)
        .execute(
            AgentState::new().with_user_message("Please replace World with Rust in missing.txt."),
        )
        .await
        .unwrap();
    let requests = model.requests();
    assert_eq!(requests.len(), 3, "one read, the change asked about once");
    assert!(requests[2]
        .messages
        .last()
        .unwrap()
        .text()
        .contains("nothing has changed yet"));
    assert_eq!(
        answer_of(&done).as_deref(),
        Some("missing.txt does not exist, so nothing can be replaced.")
    );
}

#[tokio::test]
async fn answers_that_need_nothing_are_not_asked_about() {
    let model = ScriptedModel::new([read("a.txt"), answer("a.txt holds 17.")]);
    let done = file_agent(&model, 5)
        .execute(AgentState::new().with_user_message("What number does a.txt hold?"))
        .await
        .unwrap();
    assert_eq!(model.requests().len(), 2);
    assert_eq!(answer_of(&done).as_deref(), Some("a.txt holds 17."));
    let model = ScriptedModel::new([answer("Paris.")]);
    file_agent(&model, 2)
        .execute(AgentState::new().with_user_message("What is the capital of France?"))
        .await
        .unwrap();
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test]
async fn a_change_claimed_after_the_change_failed_is_asked_about() {
    // Development task d14 at b9e26c0: `write_file` refused, the file read, the line "added".
    let model = ScriptedModel::new([
        reply(ReActDecision::call_tool(
            "Write it.",
            "write_file",
            json!({"path": "a.txt"}),
        )),
        read("a.txt"),
        answer("The line gamma has been added to the end of a.txt."),
        reply(ReActDecision::call_tool(
            "Edit it.",
            "edit_file",
            json!({"path": "a.txt", "old": "17", "new": "17\ngamma"}),
        )),
        answer("Added gamma to a.txt."),
    ]);
    let done = file_agent(&model, 6)
        .execute(AgentState::new().with_user_message("Add the line gamma to the end of a.txt."))
        .await
        .unwrap();

    let asked = model.requests()[3].messages.last().unwrap().text();
    assert!(
        asked.contains("nothing has changed yet: the calls that would change files failed")
            && asked.contains("doing what the error above asks"),
        "{asked}"
    );
    assert_eq!(answer_of(&done).as_deref(), Some("Added gamma to a.txt."));
}

#[tokio::test]
async fn a_request_to_run_something_answered_after_a_read_is_asked_about() {
    // Development task d28 at 6ce4a60: `greet.sh` read, its text given as what it prints.
    let model = ScriptedModel::new([
        read("greet.sh"),
        answer("The script prints the checksum of 1234 * 7 + 5."),
        reply(ReActDecision::call_tool(
            "Run it.",
            "bash",
            json!({"command": "sh greet.sh"}),
        )),
        answer("It prints: checksum: 8643"),
    ]);
    let done = file_agent(&model, 5)
        .execute(AgentState::new().with_user_message(
            "Run the script greet.sh with sh and tell me exactly what it prints.",
        ))
        .await
        .unwrap();

    let asked = model.requests()[2].messages.last().unwrap().text();
    assert!(
        asked.contains("the request asks to run something, and no call has run it: the tools that ran only read"),
        "{asked}"
    );
    assert_eq!(
        answer_of(&done).as_deref(),
        Some("It prints: checksum: 8643")
    );
}

#[tokio::test]
async fn a_plan_written_as_the_answer_on_stop_is_no_answer() {
    // The plan refused as the step's answer, then written again when asked to answer on stop
    // (the 1.5B model on the eval's held-out half at 6ce4a60): the notice, not the plan.
    let stop_plan = "To create it, I'll use the `edit_file` function with the new text.";
    let model = ScriptedModel::new([
        read("greeting.txt"),
        plan(),
        plan(),
        InferenceResponse::text(stop_plan),
        InferenceResponse::text(stop_plan),
    ]);
    let done = stopping(file_agent(&model, 4))
        .execute(AgentState::new().with_user_message("What does greeting.txt say?"))
        .await
        .unwrap();

    // Asked twice (what the model saw, then a clean page of results), a plan both times.
    assert_eq!(model.requests().len(), 5);
    let answer = done.final_response().map(|m| m.text()).unwrap_or_default();
    assert!(
        answer.starts_with("I could not finish this task") && !answer.contains("edit_file"),
        "{answer}"
    );
    assert!(nowhere(&done, "I'll use"), "no plan in the conversation");
}

#[tokio::test]
async fn a_count_the_listing_contradicts_given_again_is_no_answer_nor_on_stop() {
    // The 1.5B model on development task d20 at b55f332: told the listing's count line, it
    // gave "5 Markdown files" again, and it was saved.
    let tools = Tools::new().with(FunctionTool::new(
        "list_dir",
        "Lists a folder.",
        |_p: PathArg| async move {
            Ok::<_, String>(
                "[file] conf.json (3 bytes)\n[file] faq.md (6 bytes)\n[file] intro.md (8 \
                 bytes)\n[file] logo.txt (7 bytes)\n[file] setup.md (8 bytes)\nIn all: 5 \
                 files (3 .md files, 1 .json file, 1 .txt file)."
                    .to_owned(),
            )
        },
    ));
    let wrong = "There are 5 Markdown files in the docs folder.";
    let model = ScriptedModel::new([
        reply(ReActDecision::call_tool(
            "List it.",
            "list_dir",
            json!({"path": "docs"}),
        )),
        answer(wrong),
        answer(wrong),
        // asked to answer on stop, with what it saw, then from a page of the results
        InferenceResponse::text(wrong),
        InferenceResponse::text("There are 3 Markdown files: faq.md, intro.md and setup.md."),
    ]);
    let done = stopping(separated_agent(ReActDriver::new(model.clone()), tools, 6))
        .execute(
            AgentState::new()
                .with_user_message("How many Markdown (.md) files are in the docs folder?"),
        )
        .await
        .unwrap();

    assert_eq!(model.requests().len(), 5);
    assert_eq!(
        answer_of(&done).as_deref(),
        Some("There are 3 Markdown files: faq.md, intro.md and setup.md.")
    );
    assert!(
        nowhere(&done, "5 Markdown"),
        "the contradicted count is nowhere in the conversation"
    );
}

#[tokio::test]
async fn no_answer_on_stop_is_asked_for_a_file_no_call_looked_at() {
    // As with the tool-calling driver (a probe of issue 36, 2026-12-07): with no call made,
    // nothing the model could say of `app.env` comes from it.
    // Replies that are no decision, until the run stops.
    let model = ScriptedModel::new(
        std::iter::repeat_n(InferenceResponse::text("Let me think about app.env."), 4).chain([
            InferenceResponse::text("The API key is set in the app.env file."),
        ]),
    );
    let done = stopping(file_agent(&model, 4))
        .execute(AgentState::new().with_user_message("What is the API key set in app.env?"))
        .await
        .unwrap();

    for request in model.requests() {
        let sent = request.messages.to_transcript();
        assert!(!sent.contains("You have to stop now"), "{sent}");
    }
    let notice = answer_of(&done).unwrap_or_default();
    assert!(
        notice.starts_with("I could not finish this task")
            && notice.contains("I did not call any tools"),
        "{notice}"
    );
    assert!(nowhere(&done, "The API key is set"));
}

#[tokio::test]
async fn a_tool_error_copied_as_the_answer_on_stop_is_no_answer() {
    // The 1.5B model on development task d22 at a230719: asked to answer on stop after a
    // failed edit, it answered with the edit's observation (here the failure stops the run).
    let error = "old_string was not found in `greeting.txt`; the line most like it is line 1: \
                 `Hello, World!`. Copy the text exactly as the file has it (read_file's line \
                 numbers are not part of it)";
    let tools = Tools::new().with(FunctionTool::new(
        "edit_file",
        "Edits a file.",
        move |_p: PathArg| async move { Err::<String, _>(error.to_owned()) },
    ));
    let model = ScriptedModel::new([
        reply(ReActDecision::call_tool(
            "Edit it.",
            "edit_file",
            json!({"path": "greeting.txt"}),
        )),
        InferenceResponse::text(format!("Observation: Error: {error}")),
        InferenceResponse::text("The edit failed: greeting.txt does not hold that text."),
    ]);
    let done = stopping(separated_agent(ReActDriver::new(model.clone()), tools, 6))
        .execute(AgentState::new().with_user_message("Replace World with Rust in greeting.txt."))
        .await
        .unwrap();

    // Asked with what it saw (a copy of the error), then from the page of results.
    assert_eq!(model.requests().len(), 3);
    assert_eq!(
        answer_of(&done).as_deref(),
        Some("The edit failed: greeting.txt does not hold that text.")
    );
}

#[tokio::test]
async fn a_file_whose_changes_failed_is_asked_about_once_when_another_was_changed() {
    // The 1.5B model on development task d22 at ccd9c7d: `VERSION` edited, `about.txt`'s
    // write refused, and the answer gave `about.txt`'s lines.
    let call = |tool: &str, path: &str| {
        reply(ReActDecision::call_tool(
            "Change it.",
            tool,
            json!({"path": path, "old": "1.4.0", "new": "1.5.0"}),
        ))
    };
    let model = ScriptedModel::new([
        call("edit_file", "VERSION"),
        call("write_file", "about.txt"),
        answer("Widget 1.4.0"),
        call("edit_file", "about.txt"),
        answer("VERSION and about.txt now say 1.5.0."),
    ]);
    let done = file_agent(&model, 8)
        .execute(AgentState::new().with_user_message(
            "Change the version from 1.4.0 to 1.5.0 in both VERSION and about.txt.",
        ))
        .await
        .unwrap();
    let requests = model.requests();
    assert_eq!(requests.len(), 5);
    let asked = requests[3].messages.last().unwrap().text();
    assert!(
        asked.contains(
            "the request asks to change `about.txt` too, and the calls that would change it \
             failed"
        ) && asked.contains("Make the change now"),
        "{asked}"
    );
    assert_eq!(
        answer_of(&done).as_deref(),
        Some("VERSION and about.txt now say 1.5.0.")
    );

    // The source of a copy is named and only read: no question.
    let model = ScriptedModel::new([
        read("a.txt"),
        call("edit_file", "b.txt"),
        answer("b.txt now holds what a.txt holds."),
    ]);
    let done = file_agent(&model, 8)
        .execute(AgentState::new().with_user_message("Copy the number in a.txt into b.txt."))
        .await
        .unwrap();
    assert_eq!(model.requests().len(), 3);
    assert_eq!(
        answer_of(&done).as_deref(),
        Some("b.txt now holds what a.txt holds.")
    );
}
