#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! `AgentState`: message streams, continuation, serialization.

use agents_core::testing::{agent_state, with_judged_step, ScriptedDriver};
use agents_core::{
    Agent, AgentState, AgentStatus, ContinuationCriteria, ContinuationEvaluation,
    ContinuationOutcome, StateError, StepsLimit, StopReason, ToolCallPresenceCheck, BUFFER_SECTION,
    DEFAULT_SECTION, EXECUTION_BUFFER_SECTION, SUMMARY_SECTION,
};
use agents_core::{AgentStep, FunctionTool, StepParts, ToolError};
use inference::{InferenceResponse, Usage};
use messages::{Message, ToolCall};
use proptest::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

fn with_trace() -> AgentState {
    let store = AgentState::new()
        .with_user_message("weather?")
        .store()
        .section(EXECUTION_BUFFER_SECTION)
        .append(vec![
            Message::assistant_tool_calls([ToolCall::new("c1", "get_weather", json!({}))]),
            Message::tool_result("c1", "get_weather", "sunny"),
        ]);
    let state = AgentState::new().with_store(store);
    let step = AgentStep::new(state.messages_for_inference())
        .with_inference_response(InferenceResponse::text("x").with_usage(Usage::new(3, 4)));
    let outcome = ContinuationOutcome::from_evaluation(ContinuationEvaluation::request("Test"));
    with_judged_step(state, step, outcome)
}

#[test]
fn section_constants() {
    assert_eq!(AgentState::DEFAULT_SECTION, DEFAULT_SECTION);
    assert_eq!(DEFAULT_SECTION, "messages");
    assert_eq!(AgentState::EXECUTION_BUFFER_SECTION, "execution_buffer");
    assert_eq!(AgentState::SUMMARY_SECTION, SUMMARY_SECTION);
    assert_eq!(AgentState::BUFFER_SECTION, BUFFER_SECTION);
}

#[test]
fn messages_for_inference_compiles_sections_in_order() {
    let store = AgentState::new()
        .store()
        .section(EXECUTION_BUFFER_SECTION)
        .append(Message::tool_result("c", "t", "trace"))
        .section(DEFAULT_SECTION)
        .append(Message::user("conversation"))
        .section(BUFFER_SECTION)
        .append(Message::user("older"))
        .section(SUMMARY_SECTION)
        .append(Message::system("summary"))
        .section("notes")
        .append(Message::user("not sent"));
    let state = AgentState::new().with_store(store);
    assert_eq!(
        state.messages_for_inference().to_transcript(),
        "system: summary\nuser: older\nuser: conversation\ntool t [c]: trace\n"
    );
}

#[test]
fn messages_for_inference_is_the_selected_sections_compiler() {
    use messages::{CompileMessages, SelectedSections};
    let state = with_trace().with_user_message_keep_execution("and tomorrow?");
    let compiler = SelectedSections::new([
        SUMMARY_SECTION,
        BUFFER_SECTION,
        DEFAULT_SECTION,
        EXECUTION_BUFFER_SECTION,
    ]);
    assert_eq!(
        state.messages_for_inference(),
        compiler.compile(state.store())
    );
}

#[test]
fn changing_a_shared_state_in_place_never_changes_the_other_handles() {
    let original = with_trace();
    let snapshot = original.to_json().unwrap();
    let handle = original.clone();
    let store = handle
        .store()
        .section(DEFAULT_SECTION)
        .append(Message::user("only in the copy"));
    let changed = handle.with_store(store);
    assert_eq!(changed.messages().len(), original.messages().len() + 1);
    assert_eq!(original.to_json().unwrap(), snapshot);

    // An unshared state is changed in place: the same answer as on a shared one.
    let store = original.store().section(DEFAULT_SECTION).clear();
    let owned = original
        .to_json()
        .map(|json| AgentState::from_json(&json).unwrap())
        .unwrap();
    let in_place = owned.with_store(store.clone());
    let copied = original.clone().with_store(store);
    assert_eq!(in_place.store(), copied.store());
    assert_eq!(original.to_json().unwrap(), snapshot);
}

#[test]
fn for_continuation_clears_the_execution_state_and_buffer() {
    let state = with_trace().with_metadata("topic", "weather");
    assert_eq!(state.step_count(), 1);
    let next = state.clone().for_continuation();
    assert!(next.store().section(EXECUTION_BUFFER_SECTION).is_empty());
    assert_eq!(next.step_count(), 0);
    assert!(next.current_step().is_none());
    assert!(next.execution().is_none());
    assert_eq!(next.status(), AgentStatus::InProgress);
    // Kept: messages, metadata, ids, lifetime usage.
    assert_eq!(next.messages().len(), 1);
    assert_eq!(next.metadata().get("topic"), Some(&json!("weather")));
    assert_eq!(next.agent_id(), state.agent_id());
    assert_eq!(next.usage().total(), 7);
    assert_eq!(next.execution_usage().total(), 0);
}

#[test]
fn with_user_message_resets_but_keep_execution_does_not() {
    let state = with_trace();
    let reset = state.clone().with_user_message("and tomorrow?");
    assert!(reset.store().section(EXECUTION_BUFFER_SECTION).is_empty());
    assert_eq!(reset.step_count(), 0);
    assert_eq!(
        reset.messages().to_transcript(),
        "user: weather?\nuser: and tomorrow?\n"
    );

    let kept = state.with_user_message_keep_execution("and tomorrow?");
    assert_eq!(kept.store().section(EXECUTION_BUFFER_SECTION).len(), 2);
    assert_eq!(kept.step_count(), 1);
    assert_eq!(kept.messages().len(), 2);
}

#[test]
fn a_recorded_step_counts_once_and_only_the_loop_finishes_an_execution() {
    let state = AgentState::new().with_user_message("hi");
    let step = AgentStep::new(state.messages_for_inference())
        .with_response_messages(vec![Message::assistant("hello")])
        .with_inference_response(InferenceResponse::text("hello").with_usage(Usage::new(5, 5)));
    let outcome = ContinuationOutcome::from_evaluation(ContinuationEvaluation::forbid(
        "StepsLimit",
        StopReason::StepsLimit,
    ));
    let done = with_judged_step(state, step, outcome);
    assert_eq!(done.step_count(), 1);
    assert_eq!(done.usage().total(), 10);
    assert_eq!(done.execution_usage().total(), 10);
    assert!(done.execution().is_some());
    assert!(done.is_stopping());
    assert_eq!(done.final_response().unwrap().text(), "hello");
    // The verdict is recorded; the status and stop reason are the loop's to set when it
    // finishes the execution.
    assert_eq!(done.status(), AgentStatus::InProgress);
    assert_eq!(done.stop_reason(), None);
    assert_eq!(AgentState::new().status(), AgentStatus::InProgress);
}

#[test]
fn final_response_falls_back_to_messages() {
    let state = AgentState::new()
        .with_user_message("hi")
        .with_messages(vec![
            Message::user("hi"),
            Message::assistant("first"),
            Message::assistant_tool_calls([ToolCall::new("c", "t", json!({}))]),
            Message::assistant("  "),
        ]);
    assert_eq!(state.final_response().unwrap().text(), "first");
    assert!(AgentState::new().final_response().is_none());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn json_round_trip_is_lossless(state in agent_state()) {
        let text = state.to_json().unwrap();
        let back = AgentState::from_json(&text).unwrap();
        prop_assert_eq!(&back, &state);
        // Through plain serde as well.
        let value = serde_json::to_value(&state).unwrap();
        prop_assert_eq!(value.get("version"), Some(&json!(5)));
        let back: AgentState = serde_json::from_value(value).unwrap();
        prop_assert_eq!(back.status(), state.status());
        prop_assert_eq!(back.stop_reason(), state.stop_reason());
        prop_assert_eq!(back.usage(), state.usage());
    }

    #[test]
    fn a_step_from_its_parts_equals_the_built_step(step in agents_core::testing::agent_step()) {
        let rebuilt = AgentStep::from_parts(StepParts {
            id: None,
            input_messages: step.input_messages().clone(),
            trace_messages: step.trace_messages().clone(),
            response_messages: step.response_messages().clone(),
            tool_executions: step.tool_executions().clone(),
            inference_response: step.inference_response().cloned(),
            errors: step.errors().to_vec(),
        });
        prop_assert_ne!(rebuilt.id(), step.id(), "a new step gets a new id");
        prop_assert_eq!(rebuilt.with_id(step.id()), step);
    }
}

#[test]
fn corrupt_documents_give_errors_naming_the_field() {
    let mut value = serde_json::to_value(with_trace()).unwrap();
    value["step_executions"][0]["step"]["usage"]["input_tokens"] = json!("lots");
    let error = AgentState::from_json(&value.to_string()).unwrap_err();
    let StateError::InvalidField { path, message } = &error else {
        panic!("expected InvalidField, got {error:?}");
    };
    assert_eq!(path, "step_executions[0].step.usage.input_tokens");
    assert!(message.contains("invalid type"), "{message}");
    assert!(error
        .to_string()
        .starts_with("invalid agent state at `step_executions[0].step.usage.input_tokens`"));

    let mut missing = serde_json::to_value(with_trace()).unwrap();
    missing.as_object_mut().unwrap().remove("agent_id");
    let error = AgentState::from_json(&missing.to_string()).unwrap_err();
    assert!(
        error.to_string().contains("missing field `agent_id`"),
        "{error}"
    );

    let mut bad_status = serde_json::to_value(with_trace()).unwrap();
    bad_status["status"] = json!("sleeping");
    let error = AgentState::from_json(&bad_status.to_string()).unwrap_err();
    assert!(
        matches!(&error, StateError::InvalidField { path, .. } if path == "status"),
        "{error:?}"
    );
}

#[test]
fn foreign_and_future_documents_are_rejected_clearly() {
    assert_eq!(
        AgentState::from_json(r#"{"name": "not a state"}"#).unwrap_err(),
        StateError::MissingVersion { expected: 5 }
    );
    let mut future: Value = serde_json::to_value(AgentState::new()).unwrap();
    future["version"] = json!(6);
    let error = AgentState::from_json(&future.to_string()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "unsupported agent state version 6 (this library reads versions 1 to 5)"
    );
    assert!(matches!(
        AgentState::from_json("{not json"),
        Err(StateError::Syntax(_))
    ));
    assert!(matches!(
        AgentState::from_json("[1, 2]"),
        Err(StateError::InvalidField { .. })
    ));
    // Plain serde refuses another version too.
    assert!(serde_json::from_value::<AgentState>(future).is_err());
}

#[derive(Deserialize, JsonSchema)]
struct CityArgs {
    city: String,
}

#[tokio::test]
async fn serialized_state_after_a_two_step_run() {
    let weather = FunctionTool::new(
        "get_weather",
        "Current weather",
        |args: CityArgs| async move { Ok::<_, ToolError>(format!("22°C and sunny in {}", args.city)) },
    );
    let driver = ScriptedDriver::new([
        InferenceResponse::with_tool_calls([ToolCall::new(
            "call_1",
            "get_weather",
            json!({"city": "Paris"}),
        )])
        .with_usage(Usage::new(12, 6)),
        InferenceResponse::text("It is 22°C and sunny in Paris.").with_usage(Usage::new(30, 9)),
    ]);
    // No processors: the state as the loop alone records it (what persists is the
    // processors' job, snapshotted with them in `agents-processing`).
    let agent = Agent::new(driver)
        .with_tool(weather)
        .with_criteria(
            ContinuationCriteria::new()
                .with(ToolCallPresenceCheck::new())
                .with(StepsLimit::new(5)),
        )
        .with_processors(agents_core::StateProcessors::default());
    let done = agent
        .execute(
            AgentState::new()
                .with_user_message("Weather in Paris?")
                .with_metadata("session", "s-1"),
        )
        .await
        .unwrap();
    let back = AgentState::from_json(&done.to_json().unwrap()).unwrap();
    assert_eq!(back, done);
    insta::assert_json_snapshot!("two_step_run_state", done, {
        ".agent_id" => "[agent_id]",
        ".created_at" => "[time]",
        ".updated_at" => "[time]",
        ".execution.id" => "[execution_id]",
        ".execution.started_at" => "[time]",
        ".step_executions[].id" => "[step_id]",
        ".step_executions[].step.id" => "[step_id]",
        ".step_executions[].started_at" => "[time]",
        ".step_executions[].completed_at" => "[time]",
        ".step_executions[].step.tool_executions[].started_at" => "[time]",
        ".step_executions[].step.tool_executions[].completed_at" => "[time]",
    });
}

#[test]
fn version_1_checkpoints_still_load_and_are_written_back_as_version_5() {
    let v1 = include_str!("fixtures/state_v1.json");
    let state = AgentState::from_json(v1).unwrap();
    assert_eq!(state.messages().len(), 3);
    assert_eq!(state.step_count(), 2);
    assert_eq!(state.status(), AgentStatus::Completed);
    assert_eq!(
        state.final_response().unwrap().text(),
        "It is 22°C and sunny in Paris."
    );
    let first = state.step_executions().iter().next().unwrap();
    assert_eq!(first.step().trace_messages().len(), 2);
    assert_eq!(first.step().input_messages().len(), 3);
    assert_eq!(state.stop_reason(), Some(StopReason::Completed));

    let v3 = state.to_json().unwrap();
    let value: Value = serde_json::from_str(&v3).unwrap();
    assert_eq!(value["version"], json!(5));
    assert_eq!(AgentState::from_json(&v3).unwrap(), state);
    assert!(
        v3.len() < v1.len(),
        "v3 {} bytes, v1 {} bytes",
        v3.len(),
        v1.len()
    );
}

#[test]
fn version_2_checkpoints_still_load_without_their_configuration() {
    let v2 = include_str!("fixtures/state_v2.json");
    let state = AgentState::from_json(v2).unwrap();
    let from_v1 = AgentState::from_json(include_str!("fixtures/state_v1.json")).unwrap();
    assert_eq!(state.messages(), from_v1.messages());
    assert_eq!(state.step_count(), 2);
    assert_eq!(state.status(), AgentStatus::Completed);
    assert_eq!(state.stop_reason(), Some(StopReason::Completed));
    assert_eq!(
        state.final_response().unwrap().text(),
        "It is 22°C and sunny in Paris."
    );
    assert!(state.execution().is_some(), "the steps ran in an execution");
    let v3: Value = serde_json::from_str(&state.to_json().unwrap()).unwrap();
    assert_eq!(v3["version"], json!(5));
    assert!(
        v3.get("cached_context").is_none(),
        "configuration is not state"
    );
    assert_eq!(AgentState::from_json(&v3.to_string()).unwrap(), state);
}

#[tokio::test]
async fn a_checkpoint_writes_each_message_once_and_reading_shares_them_again() {
    // Ten turns in legacy mode: every step's input is the whole conversation so far.
    let mut state = AgentState::new();
    for turn in 0..10 {
        let driver = ScriptedDriver::new([
            InferenceResponse::with_tool_calls([ToolCall::new(
                format!("c{turn}"),
                "get_weather",
                json!({"city": "Paris"}),
            )]),
            InferenceResponse::text(format!("Answer {turn}: 22°C and sunny.")),
        ]);
        let agent = Agent::new(driver)
            .with_tool(weather())
            .with_criteria(
                ContinuationCriteria::new()
                    .with(StepsLimit::new(5))
                    .with(ToolCallPresenceCheck::new()),
            )
            .with_processors(agents_core::StateProcessors::new([std::sync::Arc::new(
                AppendEverything,
            )
                as std::sync::Arc<dyn agents_core::StateProcessor>]));
        state = agent
            .execute(state.with_user_message(format!("Question {turn}: weather in Paris?")))
            .await
            .unwrap();
    }
    assert_eq!(state.messages().len(), 40);
    let json = state.to_json().unwrap();
    let value: Value = serde_json::from_str(&json).unwrap();
    // The conversation is written once, in the store; the steps name it by position.
    let written_messages = json.matches("\"role\"").count();
    assert_eq!(written_messages, 40, "every message exactly once");
    assert_eq!(
        value["step_executions"][1]["step"]["input_messages"],
        json!([[0, 39]])
    );
    let back = AgentState::from_json(&json).unwrap();
    assert_eq!(back, state);
    // Reading shares the step's input with the conversation again (no copies).
    let conversation = back.messages();
    let last = back.step_executions().last().unwrap().step();
    let shared = last
        .input_messages()
        .iter_shared()
        .zip(conversation.iter_shared())
        .all(|(a, b)| std::sync::Arc::ptr_eq(a, b));
    assert!(shared);
}

fn weather() -> FunctionTool {
    FunctionTool::new(
        "get_weather",
        "Current weather",
        |args: CityArgs| async move { Ok::<_, ToolError>(format!("22°C and sunny in {}", args.city)) },
    )
}

/// Legacy persistence in miniature: every output message of a step to `messages`.
struct AppendEverything;

#[async_trait::async_trait]
impl agents_core::StateProcessor for AppendEverything {
    async fn process(
        &self,
        state: AgentState,
        next: agents_core::Next<'_>,
    ) -> Result<AgentState, agents_core::AgentError> {
        let state = next.run(state).await?;
        let output = state
            .current_step()
            .map(AgentStep::output_messages)
            .unwrap_or_default();
        let store = state.store().section(DEFAULT_SECTION).append(output);
        Ok(state.with_store(store))
    }
}

#[tokio::test]
async fn a_message_reference_that_points_nowhere_is_an_error_naming_the_field() {
    let driver = ScriptedDriver::new([InferenceResponse::text("hello")]);
    let agent = Agent::new(driver).with_criteria(
        ContinuationCriteria::new()
            .with(StepsLimit::new(3))
            .with(ToolCallPresenceCheck::new()),
    );
    let done = agent
        .execute(AgentState::new().with_user_message("hi"))
        .await
        .unwrap();
    let mut document: Value = serde_json::from_str(&done.to_json().unwrap()).unwrap();
    document["step_executions"][0]["step"]["input_messages"] = json!([[0, 999]]);
    let error = AgentState::from_json(&document.to_string()).unwrap_err();
    match &error {
        StateError::InvalidField { path, message } => {
            assert_eq!(path, "step_executions[0].step.input_messages");
            assert!(message.contains("out of range"), "{message}");
        }
        other => panic!("expected an invalid field, got {other:?}"),
    }
    document["step_executions"][0]["step"]["input_messages"] = json!("all of them");
    let error = AgentState::from_json(&document.to_string()).unwrap_err();
    assert!(
        matches!(&error, StateError::InvalidField { path, .. } if path == "step_executions[0].step.input_messages"),
        "{error:?}"
    );
}
