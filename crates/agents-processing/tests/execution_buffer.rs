//! The seeds' checklist, each over a real loop: `agents_core::Agent` with a scripted driver,
//! real tools and the standard processor stacks.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agents_core::testing::ScriptedDriver;
use agents_core::{
    Agent, AgentState, AgentStatus, ContinuationCriteria, ErrorPolicy, ErrorPolicyCriterion,
    FunctionTool, StepsLimit, StopReason, ToolCallPresenceCheck, ToolError,
    EXECUTION_BUFFER_SECTION,
};
use agents_processing::{
    standard_processors, AccumulateTokenUsage, EstimateTokenCounter, StateProcessors, TokenCounter,
    TraceRetention, EXECUTION_DIGEST_KEY, TOKEN_USAGE_PARAMETER,
};
use futures::StreamExt;
use inference::{InferenceResponse, Usage};
use messages::{Message, Role, ToolCall};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct CityArgs {
    city: String,
}

fn weather() -> FunctionTool {
    FunctionTool::new(
        "get_weather",
        "Current weather for a city",
        |args: CityArgs| async move { Ok::<_, ToolError>(format!("22°C and sunny in {}", args.city)) },
    )
}

fn call(id: &str, city: &str) -> ToolCall {
    ToolCall::new(id, "get_weather", json!({ "city": city }))
}

fn criteria(max_steps: usize) -> ContinuationCriteria {
    ContinuationCriteria::new()
        .with(StepsLimit::new(max_steps))
        .with(ErrorPolicyCriterion::new(ErrorPolicy::retry_tool_errors(3)))
        .with(ToolCallPresenceCheck::new())
}

fn agent(driver: ScriptedDriver, retention: TraceRetention, max_steps: usize) -> Agent {
    Agent::new(driver)
        .with_tool(weather())
        .with_criteria(criteria(max_steps))
        .with_processors(standard_processors(retention))
}

fn roles(messages: &messages::Messages) -> Vec<Role> {
    messages.iter().map(Message::role).collect()
}

#[tokio::test]
async fn single_tool_call_keeps_only_question_and_answer_and_buffers_the_trace_during_the_run() {
    let driver = ScriptedDriver::new([
        InferenceResponse::with_tool_calls([call("c1", "Paris")]),
        InferenceResponse::text("It is 22°C and sunny in Paris."),
    ]);
    let agent = agent(driver.clone(), TraceRetention::Ephemeral, 10);
    let states: Vec<AgentState> = agent
        .iterate(AgentState::new().with_user_message("Weather in Paris?"))
        .map(|s| s.unwrap())
        .collect()
        .await;

    // After step 1 the trace sits in the buffer and nothing new persisted.
    let after_tool_step = &states[0];
    let buffer = after_tool_step
        .store()
        .section(EXECUTION_BUFFER_SECTION)
        .messages();
    assert_eq!(roles(&buffer), [Role::Assistant, Role::Tool]);
    assert_eq!(buffer.get(1).unwrap().text(), "22°C and sunny in Paris");
    assert_eq!(after_tool_step.messages().len(), 1);

    // Step 2's input saw the trace.
    let second_input = &driver.inputs()[1];
    assert_eq!(
        roles(second_input),
        [Role::User, Role::Assistant, Role::Tool]
    );

    let done = states.last().unwrap();
    assert_eq!(done.status(), AgentStatus::Completed);
    assert_eq!(roles(&done.messages()), [Role::User, Role::Assistant]);
    assert_eq!(
        done.final_response().unwrap().text(),
        "It is 22°C and sunny in Paris."
    );
    assert!(done.store().section(EXECUTION_BUFFER_SECTION).is_empty());
    assert_eq!(
        done.step_executions().len(),
        2,
        "the full trace stays in the step executions"
    );
    assert_eq!(
        done.step_executions()
            .get(0)
            .unwrap()
            .step()
            .trace_messages()
            .len(),
        2
    );
}

#[tokio::test]
async fn several_tool_calls_are_all_buffered_and_none_persist() {
    let driver = ScriptedDriver::new([
        InferenceResponse::with_tool_calls([call("c1", "Paris"), call("c2", "Rome")]),
        InferenceResponse::with_tool_calls([call("c3", "Oslo")]),
        InferenceResponse::text("Paris and Rome are sunny; so is Oslo."),
    ]);
    let done = agent(driver.clone(), TraceRetention::Ephemeral, 10)
        .execute(AgentState::new().with_user_message("Compare three cities"))
        .await
        .unwrap();
    let third_input = &driver.inputs()[2];
    assert_eq!(
        roles(third_input),
        [
            Role::User,
            Role::Assistant,
            Role::Tool,
            Role::Tool,
            Role::Assistant,
            Role::Tool
        ]
    );
    assert_eq!(roles(&done.messages()), [Role::User, Role::Assistant]);
    assert!(done.store().section(EXECUTION_BUFFER_SECTION).is_empty());
}

#[tokio::test]
async fn a_step_without_tool_calls_appends_the_answer() {
    let driver = ScriptedDriver::new([InferenceResponse::text("Hello!")]);
    let done = agent(driver, TraceRetention::Ephemeral, 10)
        .execute(AgentState::new().with_user_message("Hi"))
        .await
        .unwrap();
    assert_eq!(roles(&done.messages()), [Role::User, Role::Assistant]);
    assert_eq!(done.messages().last().unwrap().text(), "Hello!");
}

#[tokio::test]
async fn a_stop_on_the_step_limit_right_after_a_tool_call_leaves_the_buffer_empty() {
    let driver = ScriptedDriver::new([
        InferenceResponse::with_tool_calls([call("c1", "Paris")]),
        InferenceResponse::text("never reached"),
    ]);
    let done = agent(driver, TraceRetention::Ephemeral, 1)
        .execute(AgentState::new().with_user_message("Weather?"))
        .await
        .unwrap();
    assert_eq!(done.stop_reason(), Some(StopReason::StepsLimit));
    assert!(done.store().section(EXECUTION_BUFFER_SECTION).is_empty());
    assert_eq!(
        roles(&done.messages()),
        [Role::User],
        "no answer, and no trace persisted"
    );
}

#[tokio::test]
async fn a_driver_error_that_stops_the_run_leaves_the_buffer_empty_and_continuation_starts_clean() {
    let driver = ScriptedDriver::from_results([
        Ok(InferenceResponse::with_tool_calls([call("c1", "Paris")])),
        Err(agents_core::AgentError::driver("the model went away")),
    ]);
    let done = Agent::new(driver)
        .with_tool(weather())
        .with_criteria(criteria(10))
        .with_error_policy(ErrorPolicy::stop_on_any_error())
        .with_processors(standard_processors(TraceRetention::Ephemeral))
        .execute(AgentState::new().with_user_message("Weather?"))
        .await
        .unwrap();
    assert_eq!(done.status(), AgentStatus::Failed);
    assert!(done.store().section(EXECUTION_BUFFER_SECTION).is_empty());

    // Even a state whose buffer was left full (e.g. restored from an old checkpoint) starts the
    // next turn clean.
    let stale = done
        .store()
        .section(EXECUTION_BUFFER_SECTION)
        .append(Message::tool_result("c1", "get_weather", "stale"));
    let dirty = done.with_store(stale);
    assert!(dirty
        .clone()
        .for_continuation()
        .store()
        .section(EXECUTION_BUFFER_SECTION)
        .is_empty());
    assert!(dirty
        .with_user_message("try again")
        .store()
        .section(EXECUTION_BUFFER_SECTION)
        .is_empty());
}

#[tokio::test]
async fn legacy_mode_persists_every_step_message() {
    let driver = ScriptedDriver::new([
        InferenceResponse::with_tool_calls([call("c1", "Paris")]),
        InferenceResponse::text("Sunny."),
    ]);
    let done = agent(driver, TraceRetention::Full, 10)
        .execute(AgentState::new().with_user_message("Weather?"))
        .await
        .unwrap();
    assert_eq!(
        roles(&done.messages()),
        [Role::User, Role::Assistant, Role::Tool, Role::Assistant]
    );
    assert!(done.messages().get(1).unwrap().has_tool_calls());
    assert!(done.store().section(EXECUTION_BUFFER_SECTION).is_empty());
}

#[tokio::test]
async fn a_nested_run_exposes_only_its_final_text_to_the_parent() {
    #[derive(Deserialize, JsonSchema)]
    struct Task {
        prompt: String,
    }
    let child_driver = ScriptedDriver::new([
        InferenceResponse::with_tool_calls([call("inner_1", "Lyon")]),
        InferenceResponse::text("Lyon: 22°C."),
    ]);
    let child = std::sync::Arc::new(agent(child_driver, TraceRetention::Ephemeral, 10));
    let spawn = FunctionTool::new("research", "Ask a sub-agent", move |task: Task| {
        let child = std::sync::Arc::clone(&child);
        async move {
            let done = child
                .execute(AgentState::new().with_user_message(task.prompt))
                .await
                .map_err(|e| ToolError::failed(e.to_string()))?;
            assert_eq!(
                done.messages().len(),
                2,
                "the child persists only question and answer"
            );
            Ok::<_, ToolError>(done.final_response().map(|m| m.text()).unwrap_or_default())
        }
    });
    let parent_driver = ScriptedDriver::new([
        InferenceResponse::with_tool_calls([ToolCall::new(
            "p1",
            "research",
            json!({"prompt": "Lyon weather"}),
        )]),
        InferenceResponse::text("Lyon is at 22°C."),
    ]);
    let parent = Agent::new(parent_driver.clone())
        .with_tool(spawn)
        .with_criteria(criteria(10))
        .with_processors(standard_processors(TraceRetention::Ephemeral));
    let done = parent
        .execute(AgentState::new().with_user_message("Research Lyon"))
        .await
        .unwrap();
    let seen = parent_driver.inputs()[1].to_transcript();
    assert!(seen.contains("tool research [p1]: Lyon: 22°C."), "{seen}");
    assert!(
        !seen.contains("inner_1"),
        "the child's trace must not reach the parent: {seen}"
    );
    assert_eq!(roles(&done.messages()), [Role::User, Role::Assistant]);
}

#[tokio::test]
async fn digest_retention_persists_bounded_calls_and_results_before_the_answer() {
    let driver = ScriptedDriver::new([
        InferenceResponse::with_tool_calls([call("c1", "Paris"), call("c2", "Rome")]),
        InferenceResponse::text("Both sunny."),
    ]);
    let done = agent(driver, TraceRetention::digest(200), 10)
        .execute(AgentState::new().with_user_message("Paris and Rome?"))
        .await
        .unwrap();
    let messages = done.messages();
    // The digest has the shape of a tool trace (which a model never writes itself), not of
    // assistant prose (which it copies).
    assert_eq!(
        roles(&messages),
        [
            Role::User,
            Role::Assistant,
            Role::Tool,
            Role::Tool,
            Role::Assistant
        ]
    );
    let calls = messages.get(1).unwrap();
    assert!(
        calls.text().is_empty(),
        "no prose in the digest: {}",
        calls.text()
    );
    assert_eq!(calls.tool_calls().len(), 2);
    assert_eq!(calls.tool_calls()[0].arguments(), &json!({"city": "Paris"}));
    for i in 1..4 {
        assert_eq!(
            messages
                .get(i)
                .unwrap()
                .metadata()
                .get(EXECUTION_DIGEST_KEY),
            Some(&json!(true))
        );
    }
    let paris = messages.get(2).unwrap();
    assert_eq!(paris.text(), "22°C and sunny in Paris");
    assert_eq!(paris.tool_call_id(), Some(calls.tool_calls()[0].id()));
    assert!(calls.tool_calls()[0].id().starts_with("digest_"));
    assert!(messages.get(3).unwrap().text().contains("Rome"));
    assert_eq!(messages.get(4).unwrap().text(), "Both sunny.");

    // A tiny budget keeps the digest bounded and says what it left out.
    let many: Vec<ToolCall> = (0..30)
        .map(|i| call(&format!("c{i}"), &format!("City{i}")))
        .collect();
    let driver = ScriptedDriver::new([
        InferenceResponse::with_tool_calls(many),
        InferenceResponse::text("Done."),
    ]);
    let done = agent(driver, TraceRetention::digest(60), 10)
        .execute(AgentState::new().with_user_message("Thirty cities"))
        .await
        .unwrap();
    let digest: Vec<_> = done
        .messages()
        .iter()
        .filter(|m| m.metadata().contains_key(EXECUTION_DIGEST_KEY))
        .cloned()
        .collect();
    let kept = digest[0].tool_calls().len();
    assert!(kept > 0 && kept < 30, "{kept} calls kept");
    assert_eq!(digest.len(), kept + 1, "one result per kept call");
    let last = digest.last().unwrap().text();
    assert!(
        last.contains(&format!("and {} later call(s) not kept", 30 - kept)),
        "{last}"
    );
    let tokens: usize = digest
        .iter()
        .map(|m| {
            EstimateTokenCounter.count_text(&m.text())
                + m.tool_calls()
                    .iter()
                    .map(|c| {
                        EstimateTokenCounter.count_text(c.name())
                            + EstimateTokenCounter.count_text(&c.arguments().to_string())
                    })
                    .sum::<usize>()
        })
        .sum();
    assert!(tokens <= 60, "{tokens} tokens");
}

#[tokio::test]
async fn token_usage_is_accumulated_in_store_parameters_across_executions() {
    let driver = ScriptedDriver::new([
        InferenceResponse::text("One.").with_usage(Usage::new(10, 2)),
        InferenceResponse::text("Two.").with_usage(Usage::new(20, 3)),
    ]);
    let agent = Agent::new(driver)
        .with_criteria(criteria(10))
        .with_processors(StateProcessors::new([
            std::sync::Arc::new(AccumulateTokenUsage)
                as std::sync::Arc<dyn agents_processing::StateProcessor>,
        ]));
    let first = agent
        .execute(AgentState::new().with_user_message("1"))
        .await
        .unwrap();
    let second = agent.execute(first.with_user_message("2")).await.unwrap();
    let usage = second
        .store()
        .parameters()
        .get(TOKEN_USAGE_PARAMETER)
        .unwrap();
    assert_eq!(usage["executions"], json!(2));
    assert_eq!(usage["total"]["input_tokens"], json!(30));
    assert_eq!(usage["last_execution"]["output_tokens"], json!(3));
}
