//! Human approval as a user drives it: a run suspends on the calls that need a person's
//! decision, the decisions are bound to the calls they were made on, the approved calls run
//! exactly once, and the history stays valid for both providers' wire formats throughout.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agents::prelude::*;
use inference::providers::{anthropic, openai};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize, JsonSchema)]
struct CityArgs {
    city: String,
}

#[derive(Deserialize, JsonSchema)]
struct DeleteArgs {
    path: String,
}

/// What the tools did, by tool and argument.
#[derive(Clone, Default)]
struct Ledger(Arc<Mutex<Vec<String>>>);

impl Ledger {
    fn push(&self, entry: String) {
        self.0.lock().unwrap().push(entry);
    }
    fn entries(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

fn weather(ledger: &Ledger) -> FunctionTool {
    let ledger = ledger.clone();
    FunctionTool::new(
        "get_weather",
        "Current weather for a city",
        move |args: CityArgs| {
            let ledger = ledger.clone();
            async move {
                ledger.push(format!("weather {}", args.city));
                Ok::<_, ToolError>(format!("sunny in {}", args.city))
            }
        },
    )
}

fn delete(ledger: &Ledger) -> FunctionTool {
    let ledger = ledger.clone();
    FunctionTool::new("delete_file", "Deletes a file", move |args: DeleteArgs| {
        let ledger = ledger.clone();
        async move {
            ledger.push(format!("delete {}", args.path));
            Ok::<_, ToolError>(format!("deleted {}", args.path))
        }
    })
}

fn mixed_calls(path: &str) -> InferenceResponse {
    InferenceResponse::with_tool_calls([
        ToolCall::new("call_a", "get_weather", json!({"city": "Paris"})),
        ToolCall::new("call_b", "delete_file", json!({"path": path})),
        ToolCall::new("call_c", "get_weather", json!({"city": "Rome"})),
    ])
}

fn builder(model: &ScriptedModel, ledger: &Ledger, separated: bool) -> AgentBuilder {
    AgentBuilder::new()
        .with_model(model.clone())
        .with_tool(weather(ledger))
        .with_tool(delete(ledger))
        .with_separated_tool_trace(separated)
        .with_approval_required(["delete_file"])
}

fn agent(model: &ScriptedModel, ledger: &Ledger, separated: bool) -> Agent {
    builder(model, ledger, separated).build().unwrap()
}

async fn suspended(model: &ScriptedModel, ledger: &Ledger, separated: bool) -> AgentState {
    let state = agent(model, ledger, separated)
        .execute(AgentState::new().with_user_message("Weather, then clean up"))
        .await
        .unwrap();
    assert_eq!(state.status(), AgentStatus::Suspended);
    state
}

/// Every assistant tool call has exactly one result in the message right after it, in both
/// providers' request bodies, and no result is without its call.
fn assert_valid_for_providers(history: &Messages) {
    let request = InferenceRequest::new(history.clone());

    let body = openai::request_body(&request, "m", false, false);
    let messages = body["messages"].as_array().unwrap();
    let mut open: HashMap<String, usize> = HashMap::new();
    for message in messages {
        match message["role"].as_str().unwrap() {
            "assistant" => {
                assert!(open.is_empty(), "calls without results: {open:?}");
                for call in message["tool_calls"].as_array().into_iter().flatten() {
                    open.insert(call["id"].as_str().unwrap().to_owned(), 0);
                }
            }
            "tool" => {
                let id = message["tool_call_id"].as_str().unwrap();
                let count = open.get_mut(id).expect("a tool result without its call");
                *count += 1;
                assert_eq!(*count, 1, "two results for {id}");
            }
            _ => {
                assert!(
                    open.values().all(|n| *n == 1),
                    "calls without results: {open:?}"
                );
                open.clear();
            }
        }
    }
    assert!(
        open.values().all(|n| *n == 1),
        "calls without results at the end: {open:?}"
    );

    let body = anthropic::request_body(&request, "m", 1024, false, false);
    let messages = body["messages"].as_array().unwrap();
    let blocks = |message: &Value, kind: &str, key: &str| -> Vec<String> {
        message["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|block| block["type"] == kind)
            .map(|block| block[key].as_str().unwrap().to_owned())
            .collect()
    };
    for (i, message) in messages.iter().enumerate() {
        let uses = blocks(message, "tool_use", "id");
        let results = blocks(message, "tool_result", "tool_use_id");
        if !results.is_empty() {
            let previous = &messages[i - 1];
            let mut expected = blocks(previous, "tool_use", "id");
            let mut got = results.clone();
            expected.sort();
            got.sort();
            assert_eq!(
                got, expected,
                "tool results must answer the previous tool uses"
            );
        }
        if !uses.is_empty() {
            let next = messages
                .get(i + 1)
                .expect("tool uses without a next message");
            let mut answered = blocks(next, "tool_result", "tool_use_id");
            let mut uses = uses;
            answered.sort();
            uses.sort();
            assert_eq!(answered, uses, "every tool use needs its result next");
        }
    }
}

fn last_tool_result(request: &InferenceRequest, call_id: &str) -> String {
    request
        .messages
        .iter()
        .filter(|m| m.tool_call_id() == Some(call_id))
        .map(|m| m.text())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn a_mixed_step_runs_the_free_calls_suspends_and_runs_the_approved_one_once() {
    for separated in [false, true] {
        let ledger = Ledger::default();
        let model = ScriptedModel::new([mixed_calls("build"), InferenceResponse::text("Done.")]);
        let events = Arc::new(Mutex::new(Vec::new()));
        let items: Vec<AgentState> =
            agent_iterate(&agent_with_events(&model, &ledger, separated, &events))
                .map(Result::unwrap)
                .collect()
                .await;
        let state = items.last().unwrap().clone();
        assert_eq!(
            state.status(),
            AgentStatus::Suspended,
            "iterate ends suspended"
        );
        assert_eq!(ledger.entries(), ["weather Paris", "weather Rome"]);
        let pending = state.pending_approvals();
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].call_id(), "call_b");
        assert_eq!(pending[0].tool_name(), "delete_file");
        assert_eq!(pending[0].arguments(), &json!({"path": "build"}));
        assert!(events
            .lock()
            .unwrap()
            .contains(&"approval_requested".to_owned()));
        // Suspended, the history is already valid: the waiting call has a placeholder result.
        assert_valid_for_providers(&state.messages_for_inference());
        // Stepping an undecided state does nothing.
        let again = agent(&model, &ledger, separated)
            .step(state.clone())
            .await
            .unwrap();
        assert_eq!(again, state);

        let approved = state.approve("call_b").unwrap();
        let done = agent_with_events(&model, &ledger, separated, &events)
            .execute(approved)
            .await
            .unwrap();
        assert_eq!(
            done.status(),
            AgentStatus::Completed,
            "separated: {separated}"
        );
        assert_eq!(
            ledger.entries(),
            ["weather Paris", "weather Rome", "delete build"]
        );
        assert_eq!(done.final_response().unwrap().text(), "Done.");
        let last = model.last_request().unwrap();
        assert_valid_for_providers(&last.messages);
        assert_eq!(last_tool_result(&last, "call_b"), "deleted build");
        assert_eq!(last_tool_result(&last, "call_a"), "sunny in Paris");
        assert!(!last
            .messages
            .iter()
            .any(|m| m.text().contains("waiting for")));
        assert!(events
            .lock()
            .unwrap()
            .contains(&"approval_resolved".to_owned()));
    }
}

fn agent_with_events(
    model: &ScriptedModel,
    ledger: &Ledger,
    separated: bool,
    events: &Arc<Mutex<Vec<String>>>,
) -> Agent {
    let seen = Arc::clone(events);
    builder(model, ledger, separated)
        .on_event(move |event: &AgentEvent| {
            seen.lock().unwrap().push(event.name().to_owned());
        })
        .build()
        .unwrap()
}

fn agent_iterate(
    agent: &Agent,
) -> impl futures::Stream<Item = Result<AgentState, AgentError>> + Send + 'static {
    agent.iterate(AgentState::new().with_user_message("Weather, then clean up"))
}

#[tokio::test]
async fn a_rejection_reaches_the_model_and_the_call_never_runs() {
    let ledger = Ledger::default();
    let model = ScriptedModel::new([mixed_calls("build"), InferenceResponse::text("Understood.")]);
    let state = suspended(&model, &ledger, true).await;
    let rejected = state.reject("call_b", "keep the build directory").unwrap();
    let done = agent(&model, &ledger, true)
        .execute(rejected)
        .await
        .unwrap();
    assert_eq!(done.status(), AgentStatus::Completed);
    assert_eq!(ledger.entries(), ["weather Paris", "weather Rome"]);
    let last = model.last_request().unwrap();
    let result = last_tool_result(&last, "call_b");
    assert!(result.contains("did not approve"), "{result}");
    assert!(result.contains("keep the build directory"), "{result}");
    assert_valid_for_providers(&last.messages);
}

#[tokio::test]
async fn edited_arguments_are_validated_and_are_the_ones_executed() {
    let ledger = Ledger::default();
    let model = ScriptedModel::new([mixed_calls("build"), InferenceResponse::text("Done.")]);
    let state = suspended(&model, &ledger, false).await;

    let error = state
        .clone()
        .approve_with("call_b", json!({"file": "x"}))
        .unwrap_err();
    assert!(
        matches!(error, ApprovalError::InvalidArguments { ref call_id, .. } if call_id == "call_b"),
        "{error:?}"
    );
    assert!(error.to_string().contains("call_b"));

    let edited = state
        .approve_with("call_b", json!({"path": "build/tmp"}))
        .unwrap();
    let done = agent(&model, &ledger, false).execute(edited).await.unwrap();
    assert_eq!(
        ledger.entries(),
        ["weather Paris", "weather Rome", "delete build/tmp"]
    );
    assert_eq!(
        last_tool_result(&model.last_request().unwrap(), "call_b"),
        "deleted build/tmp"
    );
    assert_eq!(done.status(), AgentStatus::Completed);
}

#[tokio::test]
async fn unknown_duplicate_and_stale_decisions_are_refused() {
    let ledger = Ledger::default();
    let model = ScriptedModel::new([mixed_calls("build"), mixed_calls("src")]);
    let shown = suspended(&model, &ledger, false).await;
    // Another run whose waiting call has the same id but other arguments.
    let changed = suspended(&model, &ledger, false).await;

    assert_eq!(
        shown.clone().approve("call_x").unwrap_err(),
        ApprovalError::UnknownCall {
            call_id: "call_x".into()
        }
    );
    let once = shown.clone().approve("call_b").unwrap();
    assert_eq!(
        once.clone().reject("call_b", "no").unwrap_err(),
        ApprovalError::AlreadyDecided {
            call_id: "call_b".into()
        }
    );
    assert_eq!(
        once.approve("call_b").unwrap_err(),
        ApprovalError::AlreadyDecided {
            call_id: "call_b".into()
        }
    );

    let decision = shown.pending_approvals()[0].approve();
    assert_eq!(
        changed.clone().decide(decision.clone()).unwrap_err(),
        ApprovalError::Stale {
            call_id: "call_b".into()
        }
    );
    assert!(shown.clone().decide(decision).is_ok());
    assert!(!changed.approvals_decided());

    // approve_checked: the fingerprint of the call shown approves that call only.
    let fingerprint = shown.approval_fingerprint("call_b").unwrap();
    assert_eq!(fingerprint.len(), 12);
    let error = changed
        .clone()
        .approve_checked("call_b", &fingerprint)
        .unwrap_err();
    assert!(
        matches!(&error, ApprovalError::Changed { call_id, expected, .. }
            if call_id == "call_b" && *expected == fingerprint),
        "{error:?}"
    );
    assert!(error.to_string().contains("is not the one you were shown"));
    assert!(shown.approve_checked("call_b", &fingerprint).is_ok());
}

#[tokio::test]
async fn cancelling_closes_every_waiting_call_and_leaves_a_valid_history() {
    for separated in [false, true] {
        let ledger = Ledger::default();
        let model = ScriptedModel::new([
            mixed_calls("build"),
            mixed_calls("build"),
            InferenceResponse::text("Fine, nothing deleted."),
        ]);
        let state = suspended(&model, &ledger, separated).await;
        let cancelled = state.clone().cancel_pending();
        assert_eq!(cancelled.status(), AgentStatus::Failed);
        assert_eq!(cancelled.stop_reason(), Some(StopReason::UserRequested));
        assert!(cancelled.pending_approvals().is_empty());
        assert_valid_for_providers(&cancelled.messages_for_inference());
        let closed = cancelled
            .current_step()
            .unwrap()
            .tool_executions()
            .iter()
            .find(|e| e.id() == "call_b")
            .unwrap()
            .error_message()
            .unwrap()
            .to_owned();
        assert!(closed.contains("not approved"), "{closed}");

        // A new user message on a suspended run cancels it the same way, and the next
        // execution runs on a valid history.
        let next = state.with_user_message("Never mind, don't delete anything.");
        assert_valid_for_providers(&next.messages_for_inference());
        let done = agent(&model, &ledger, separated)
            .execute(next.clone())
            .await
            .unwrap();
        assert_eq!(done.status(), AgentStatus::Suspended);
        assert_valid_for_providers(&model.last_request().unwrap().messages);
        assert!(!ledger.entries().contains(&"delete build".to_owned()));
    }
}

#[tokio::test]
async fn a_suspended_state_survives_json_and_its_approved_call_runs_exactly_once() {
    let ledger = Ledger::default();
    let model = ScriptedModel::new([mixed_calls("build")]);
    let state = suspended(&model, &ledger, true).await;
    let text = state.to_json().unwrap();
    let loaded = AgentState::from_json(&text).unwrap();
    assert_eq!(loaded, state);

    // Another agent (another process in real life) decides and resumes.
    let model = ScriptedModel::new([InferenceResponse::text("Done.")]);
    let approved = loaded.approve("call_b").unwrap();
    let approved = AgentState::from_json(&approved.to_json().unwrap()).unwrap();
    let agent = agent(&model, &ledger, true);
    let done = agent.execute(approved.clone()).await.unwrap();
    assert_eq!(done.status(), AgentStatus::Completed);
    let deletes = ledger
        .entries()
        .iter()
        .filter(|e| e.starts_with("delete"))
        .count();
    assert_eq!(deletes, 1);
    // The finished state does not run it again.
    let again = agent.execute(done.clone()).await.unwrap();
    assert_eq!(again, done);
    assert_eq!(
        ledger
            .entries()
            .iter()
            .filter(|e| e.starts_with("delete"))
            .count(),
        1
    );
}

#[tokio::test]
async fn a_policy_closure_holds_only_the_calls_it_names() {
    let ledger = Ledger::default();
    let model = ScriptedModel::new([mixed_calls("build"), InferenceResponse::text("Done.")]);
    let agent = AgentBuilder::new()
        .with_model(model.clone())
        .with_tool(weather(&ledger))
        .with_tool(delete(&ledger))
        .with_approval_policy(|call: &ToolCall| call.arguments()["city"] == "Rome")
        .build()
        .unwrap();
    let state = agent
        .execute(AgentState::new().with_user_message("go"))
        .await
        .unwrap();
    assert_eq!(state.status(), AgentStatus::Suspended);
    let ids: Vec<String> = state
        .pending_approvals()
        .iter()
        .map(|p| p.call_id().to_owned())
        .collect();
    assert_eq!(ids, ["call_c"]);
    assert_eq!(ledger.entries(), ["weather Paris", "delete build"]);
}

#[tokio::test]
async fn the_serialized_suspended_state() {
    let ledger = Ledger::default();
    let model = ScriptedModel::new([mixed_calls("build")]);
    let state = suspended(&model, &ledger, true).await;
    let state = state.reject("call_b", "not today").unwrap();
    insta::assert_json_snapshot!("suspended_state", state, {
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
#[should_panic(expected = "without results")]
fn the_history_check_catches_a_call_without_its_result() {
    let call = ToolCall::new("call_1", "get_weather", json!({"city": "Oslo"}));
    let history = Messages::from(vec![
        Message::user("hi"),
        Message::assistant("").with_tool_calls(vec![call]),
        Message::user("next"),
    ]);
    assert_valid_for_providers(&history);
}

/// What a person does with one waiting call in the property below.
#[derive(Clone, Debug)]
enum Choice {
    Approve,
    Edit,
    Reject,
    Undecided,
}

fn choice() -> impl proptest::strategy::Strategy<Value = Choice> {
    use proptest::prelude::*;
    prop_oneof![
        Just(Choice::Approve),
        Just(Choice::Edit),
        Just(Choice::Reject),
        Just(Choice::Undecided),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(24))]

    /// Whatever is decided (and whether the run is then resumed or cancelled), no tool call
    /// is ever left without exactly one result, and each approved call runs exactly once.
    #[test]
    fn any_decisions_keep_every_call_answered_and_run_approved_calls_once(
        choices in proptest::collection::vec(choice(), 3),
        cancel in proptest::bool::ANY,
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let ledger = Ledger::default();
            let calls: Vec<ToolCall> = (0..3)
                .map(|i| ToolCall::new(format!("call_{i}"), "delete_file", json!({"path": format!("f{i}")})))
                .collect();
            let model = ScriptedModel::new([
                InferenceResponse::with_tool_calls(calls),
                InferenceResponse::text("Done."),
            ]);
            let agent = agent(&model, &ledger, true);
            let mut state = agent
                .execute(AgentState::new().with_user_message("clean"))
                .await
                .unwrap();
            let mut expected = Vec::new();
            for (i, choice) in choices.iter().enumerate() {
                let id = format!("call_{i}");
                state = match choice {
                    Choice::Approve => {
                        expected.push(format!("delete f{i}"));
                        state.approve(&id).unwrap()
                    }
                    Choice::Edit => {
                        expected.push(format!("delete g{i}"));
                        state.approve_with(&id, json!({"path": format!("g{i}")})).unwrap()
                    }
                    Choice::Reject => state.reject(&id, "no").unwrap(),
                    Choice::Undecided => state,
                };
            }
            let all_decided = !choices.iter().any(|c| matches!(c, Choice::Undecided));
            let state = if cancel { state.cancel_pending() } else { state };
            let done = agent.execute(state).await.unwrap();
            assert_valid_for_providers(&done.messages_for_inference());
            if cancel {
                assert!(ledger.entries().is_empty());
                assert_eq!(done.status(), AgentStatus::Failed);
            } else if all_decided {
                assert_eq!(ledger.entries(), expected);
                assert_eq!(done.status(), AgentStatus::Completed);
                assert_valid_for_providers(&model.last_request().unwrap().messages);
            } else {
                assert!(ledger.entries().is_empty());
                assert_eq!(done.status(), AgentStatus::Suspended);
            }
        });
    }
}

#[tokio::test]
async fn a_message_that_keeps_the_execution_closes_the_waiting_calls_and_goes_on() {
    let ledger = Ledger::default();
    let model = ScriptedModel::new([mixed_calls("build"), InferenceResponse::text("Skipped.")]);
    let state = suspended(&model, &ledger, true).await;
    let next = state.with_user_message_keep_execution("Skip the deletion.");
    assert_eq!(next.status(), AgentStatus::InProgress);
    assert_eq!(next.stop_reason(), None);
    assert!(next.pending_approvals().is_empty());
    let done = agent(&model, &ledger, true).execute(next).await.unwrap();
    assert_eq!(done.final_response().unwrap().text(), "Skipped.");
    assert_valid_for_providers(&model.last_request().unwrap().messages);
    assert_eq!(ledger.entries(), ["weather Paris", "weather Rome"]);
}

#[tokio::test]
async fn with_the_react_driver_the_model_sees_the_approved_result_not_the_placeholder() {
    // ReAct traces are `Observation:` messages, not tool messages: resuming must rewrite the
    // observation too, or the model reads "awaiting approval" for a call that ran and calls
    // it again (an approved deletion run twice).
    for separated in [false, true] {
        let ledger = Ledger::default();
        let model = ScriptedModel::new([
            InferenceResponse::text(
                r#"{"thought": "clean up", "type": "call_tool", "tool": "delete_file", "args": {"path": "build"}}"#,
            ),
            InferenceResponse::text(
                r#"{"thought": "done", "type": "final_answer", "answer": "Deleted build."}"#,
            ),
        ]);
        let agent = AgentBuilder::new()
            .with_react(model.clone())
            .with_tool(delete(&ledger))
            .with_separated_tool_trace(separated)
            .with_approval_required(["delete_file"])
            .build()
            .unwrap();
        let state = agent
            .execute(AgentState::new().with_user_message("Delete build"))
            .await
            .unwrap();
        assert_eq!(state.status(), AgentStatus::Suspended);
        let call_id = state.pending_approvals()[0].call_id().to_owned();
        let done = agent
            .execute(state.approve(&call_id).unwrap())
            .await
            .unwrap();
        assert_eq!(ledger.entries(), ["delete build"]);
        assert_eq!(done.final_response().unwrap().text(), "Deleted build.");
        let seen = model.last_request().unwrap().messages.to_transcript();
        assert!(seen.contains("Observation: deleted build"), "{seen}");
        assert!(!seen.to_lowercase().contains("approval"), "{seen}");
    }
}

/// A resumed step goes through the processors like any completed step: when its verdict is
/// to stop (here the step limit), separated mode empties the execution buffer and keeps only
/// the question and the answer, so the next question does not carry this execution's tool
/// trace; legacy mode keeps the trace once, not twice. (Before, resume went around the
/// processors and the trace stayed in the buffer.)
#[tokio::test]
async fn a_resumed_step_that_stops_the_run_is_closed_by_the_processors() {
    for separated in [true, false] {
        let ledger = Ledger::default();
        let model = ScriptedModel::new([
            mixed_calls("build"),
            InferenceResponse::text("Cleaned up; Paris and Rome are sunny."),
        ]);
        let agent = builder(&model, &ledger, separated)
            .with_max_steps(1)
            .build()
            .unwrap();
        let state = agent
            .execute(AgentState::new().with_user_message("Weather, then clean up"))
            .await
            .unwrap();
        assert_eq!(state.status(), AgentStatus::Suspended);
        let done = agent
            .execute(state.approve("call_b").unwrap())
            .await
            .unwrap();
        assert_eq!(
            ledger.entries(),
            ["weather Paris", "weather Rome", "delete build"]
        );
        assert!(!done.is_runnable(), "{:?}", done.status());
        let buffer = done.store().section(EXECUTION_BUFFER_SECTION).messages();
        assert!(buffer.is_empty(), "separated {separated}: {buffer:?}");
        let roles: Vec<Role> = done.messages().iter().map(|m| m.role()).collect();
        if separated {
            assert_eq!(
                roles,
                [Role::User, Role::Assistant],
                "{:?}",
                done.messages()
            );
        } else {
            // The question, the calls and their three results, once each (legacy mode
            // appends no answer on stop).
            assert_eq!(
                roles,
                [
                    Role::User,
                    Role::Assistant,
                    Role::Tool,
                    Role::Tool,
                    Role::Tool
                ],
                "{:?}",
                done.messages()
            );
        }
        assert_valid_for_providers(&done.messages_for_inference());
        assert!(done
            .messages()
            .iter()
            .all(|m| !m.text().contains("waiting for")));
    }
}

/// Step hooks are a processor, so a held step passes them twice, like every processor: when
/// the run suspends (its delete call still waiting) and when the decided call has run.
#[tokio::test]
async fn step_hooks_see_a_held_step_again_once_it_is_resolved() {
    let ledger = Ledger::default();
    let model = ScriptedModel::new([
        mixed_calls("build"),
        InferenceResponse::text("Cleaned up; Paris and Rome are sunny."),
    ]);
    let agent = builder(&model, &ledger, true)
        .with_max_steps(1)
        .build()
        .unwrap()
        .after_step(|s| {
            let waiting = s.status() == AgentStatus::Suspended;
            let mut seen = s
                .metadata()
                .get("after_step")
                .and_then(|v| v.as_array().cloned())
                .unwrap_or_default();
            seen.push(serde_json::json!(waiting));
            s.with_metadata("after_step", seen)
        });
    let state = agent
        .execute(AgentState::new().with_user_message("Weather, then clean up"))
        .await
        .unwrap();
    assert_eq!(state.status(), AgentStatus::Suspended);
    assert_eq!(
        state.metadata().get("after_step"),
        Some(&serde_json::json!([true]))
    );
    let done = agent
        .execute(state.approve("call_b").unwrap())
        .await
        .unwrap();
    assert_eq!(
        ledger.entries(),
        ["weather Paris", "weather Rome", "delete build"]
    );
    assert_eq!(
        done.metadata().get("after_step"),
        Some(&serde_json::json!([true, false])),
        "once when held, once when resolved"
    );
}
