//! Subagent fan-out and nesting limits, as the model meets them: tool errors, not crashes.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use agents::inference::{InferenceError, InferenceRequest};
use agents::prelude::*;
use async_trait::async_trait;

fn spawn_call(id: &str, prompt: &str) -> ToolCall {
    ToolCall::new(
        id,
        "spawn_subagent",
        json!({"subagent": "researcher", "prompt": prompt}),
    )
}

fn tool_results(request: &InferenceRequest) -> Vec<String> {
    request
        .messages
        .iter()
        .filter(|m| m.role() == Role::Tool)
        .map(|m| m.text())
        .collect()
}

/// A child model that takes a while to answer and records how many answer at once.
#[derive(Default)]
struct SlowModel {
    running: AtomicUsize,
    most_at_once: AtomicUsize,
}

#[async_trait]
impl LanguageModel for SlowModel {
    async fn complete(
        &self,
        _request: InferenceRequest,
    ) -> Result<InferenceResponse, InferenceError> {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.most_at_once.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(300)).await;
        self.running.fetch_sub(1, Ordering::SeqCst);
        Ok(InferenceResponse::text("child answer"))
    }
}

#[tokio::test]
async fn subagents_past_the_concurrency_limit_of_a_step_are_refused_and_can_run_later() {
    let child = Arc::new(SlowModel::default());
    let parent = ScriptedModel::new([
        InferenceResponse::with_tool_calls([
            spawn_call("c1", "one"),
            spawn_call("c2", "two"),
            spawn_call("c3", "three"),
        ]),
        InferenceResponse::with_tool_calls([spawn_call("c4", "three, again")]),
        InferenceResponse::text("all done"),
    ]);
    let researcher = SubagentDefinition {
        model: SubagentModel::Model(child.clone()),
        ..SubagentDefinition::new("researcher", "Looks things up", "You research.")
    };
    let agent = AgentBuilder::new()
        .with_model(parent.clone())
        .with_parallel_tool_calls(true)
        .with_capability(UseSubagents::new([researcher]).with_max_concurrent_subagents(2))
        .build()
        .unwrap();
    let done = agent
        .execute(AgentState::new().with_user_message("research three things"))
        .await
        .unwrap();

    assert_eq!(done.status(), AgentStatus::Completed);
    assert_eq!(done.final_response().unwrap().text(), "all done");
    assert_eq!(child.most_at_once.load(Ordering::SeqCst), 2);
    let requests = parent.requests();
    let first_step = tool_results(&requests[1]);
    assert_eq!(first_step.len(), 3, "{first_step:?}");
    assert_eq!(&first_step[..2], ["child answer", "child answer"]);
    assert!(
        first_step[2].contains("too many subagents at once: 2 already run in this step"),
        "{first_step:?}"
    );
    // The slots were freed when the first two ended: the next step's spawn runs.
    let second_step = tool_results(&requests[2]);
    assert_eq!(second_step.last().map(String::as_str), Some("child answer"));
}

#[tokio::test]
async fn the_default_nesting_limit_stops_the_fourth_level() {
    let spawn = |id: &str| InferenceResponse::with_tool_calls([spawn_call(id, "go deeper")]);
    // One inherited script, in order: parent, child, grandchild, great-grandchild (refused
    // when it tries to nest once more), then the answers back up.
    let model = ScriptedModel::new([
        spawn("p"),
        spawn("c"),
        spawn("g"),
        spawn("gg"),
        InferenceResponse::text("level 3 did it"),
        InferenceResponse::text("level 2 done"),
        InferenceResponse::text("level 1 done"),
        InferenceResponse::text("parent done"),
    ]);
    let agent = AgentBuilder::new()
        .with_model(model.clone())
        .with_capability(UseSubagents::new([SubagentDefinition::new(
            "researcher",
            "Looks things up",
            "You research.",
        )]))
        .build()
        .unwrap();
    let done = agent
        .execute(AgentState::new().with_user_message("go"))
        .await
        .unwrap();
    assert_eq!(done.final_response().unwrap().text(), "parent done");
    let refused = tool_results(&model.requests()[4]);
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(
        refused[0].contains("maximum subagent nesting depth (3) reached"),
        "{refused:?}"
    );
}

fn guarded_parent(model: &ScriptedModel, ran: &Arc<AtomicUsize>) -> Agent {
    let counter = Arc::clone(ran);
    let delete = FunctionTool::new(
        "delete_file",
        "Deletes a file",
        move |args: serde_json::Value| {
            let counter = Arc::clone(&counter);
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                Ok::<_, ToolError>(format!("deleted {}", args["path"]))
            }
        },
    );
    AgentBuilder::new()
        .with_model(model.clone())
        .with_tool(delete)
        .with_approval_required(["delete_file"])
        .with_capability(UseSubagents::new([SubagentDefinition::new(
            "researcher",
            "Looks things up",
            "You research.",
        )]))
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_subagents_waiting_call_is_decided_at_the_top_and_resumed_from_json() {
    let ran = Arc::new(AtomicUsize::new(0));
    // One inherited script: the parent spawns, the child calls the guarded tool.
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([spawn_call("p", "clean up")]),
        InferenceResponse::with_tool_calls([ToolCall::new(
            "c",
            "delete_file",
            json!({"path": "build"}),
        )]),
    ]);
    let state = guarded_parent(&model, &ran)
        .execute(AgentState::new().with_user_message("go"))
        .await
        .unwrap();
    assert_eq!(state.status(), AgentStatus::Suspended);
    assert_eq!(
        ran.load(Ordering::SeqCst),
        0,
        "nothing ran before the decision"
    );
    let pending = state.pending_approvals();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].call_id(), "c");
    // Decisions name a subagent's call by a key that cannot collide with the parent's own
    // calls: the calling agent's call id, then the call's key in the subagent.
    assert_eq!(pending[0].key(), "p/c");
    let fingerprint = state.approval_fingerprint("p/c").unwrap();
    assert_eq!(fingerprint.len(), 12);
    assert!(state.approval_fingerprint("c").is_none());
    assert_eq!(pending[0].tool_name(), "delete_file");
    assert_eq!(pending[0].subagent(), Some("researcher"));

    // Decided at the top, on a state read back from JSON, resumed by a new agent.
    let decided = AgentState::from_json(&state.to_json().unwrap())
        .unwrap()
        .approve_with("p/c", json!({"path": "build/tmp"}))
        .unwrap();
    let decided = AgentState::from_json(&decided.to_json().unwrap()).unwrap();
    let model = ScriptedModel::new([
        InferenceResponse::text("child: deleted build/tmp"),
        InferenceResponse::text("parent done"),
    ]);
    let done = guarded_parent(&model, &ran).execute(decided).await.unwrap();
    assert_eq!(done.status(), AgentStatus::Completed);
    assert_eq!(ran.load(Ordering::SeqCst), 1, "the approved call ran once");
    assert_eq!(done.final_response().unwrap().text(), "parent done");
    // The child saw its tool's result (with the edited arguments); the parent, the answer.
    let child_request = &model.requests()[0];
    assert!(tool_results(child_request)
        .iter()
        .any(|r| r.contains("deleted \"build/tmp\"")));
    assert_eq!(
        tool_results(&model.requests()[1]),
        ["child: deleted build/tmp"]
    );
}

/// State document version 5 keeps a waiting subagent's state in the parent's approvals only;
/// a version 4 document, which also carried it inside the tool execution, still loads and
/// resumes.
#[tokio::test]
async fn a_subagents_suspended_state_lives_in_the_approvals_and_version_4_still_resumes() {
    let ran = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([spawn_call("p", "clean up")]),
        InferenceResponse::with_tool_calls([ToolCall::new(
            "c",
            "delete_file",
            json!({"path": "build"}),
        )]),
    ]);
    let state = guarded_parent(&model, &ran)
        .execute(AgentState::new().with_user_message("go"))
        .await
        .unwrap();
    let mut document: serde_json::Value = serde_json::from_str(&state.to_json().unwrap()).unwrap();
    assert_eq!(document["version"], 5);
    let text = document.to_string();
    assert!(
        !text.contains("\"suspended\":{"),
        "no tool execution carries the subagent's state: {text}"
    );
    let child = document["approvals"][0]["via"]["child"].clone();
    assert_eq!(
        child["status"], "suspended",
        "the approvals hold the child's state"
    );

    // The same run as version 4 wrote it: the child's state also inside the held execution.
    document["version"] = json!(4);
    let outcome = document["step_executions"]
        .as_array_mut()
        .and_then(|steps| steps.last_mut())
        .and_then(|record| record["step"]["tool_executions"].as_array_mut())
        .and_then(|executions| executions.first_mut())
        .map(|execution| &mut execution["outcome"])
        .unwrap();
    assert_eq!(outcome["kind"], "awaiting_approval");
    outcome["suspended"] = json!({"subagent": "researcher", "state": child});
    let v4 = AgentState::from_json(&document.to_string()).unwrap();
    assert_eq!(v4.pending_approvals()[0].subagent(), Some("researcher"));
    // A subagent's call is decided by its key: the calling agent's call id, then its own.
    assert_eq!(v4.pending_approvals()[0].key(), "p/c");
    let decided = v4.approve("p/c").unwrap();
    let model = ScriptedModel::new([
        InferenceResponse::text("child: deleted build"),
        InferenceResponse::text("parent done"),
    ]);
    let done = guarded_parent(&model, &ran).execute(decided).await.unwrap();
    assert_eq!(done.status(), AgentStatus::Completed);
    assert_eq!(ran.load(Ordering::SeqCst), 1, "the approved call ran once");
}

#[tokio::test]
async fn a_rejection_at_the_top_reaches_the_subagent() {
    let ran = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([spawn_call("p", "clean up")]),
        InferenceResponse::with_tool_calls([ToolCall::new("c", "delete_file", json!({}))]),
        InferenceResponse::text("child: not allowed"),
        InferenceResponse::text("parent done"),
    ]);
    let agent = guarded_parent(&model, &ran);
    let state = agent
        .execute(AgentState::new().with_user_message("go"))
        .await
        .unwrap();
    let state = state.reject("p/c", "keep it").unwrap();
    let done = agent.execute(state).await.unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert!(tool_results(&model.requests()[2])
        .iter()
        .any(|r| r.contains("keep it")));
    assert_eq!(done.final_response().unwrap().text(), "parent done");
}

/// The child of the test below: resumes the decided parent state in `APPROVAL_STATE` (a new
/// process, a new agent) and writes the final state and how often the tool ran next to it.
#[tokio::test]
async fn resume_child() {
    let Ok(path) = std::env::var("APPROVAL_STATE") else {
        return; // only runs as a child of the test below
    };
    let state = AgentState::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        InferenceResponse::text("child: deleted"),
        InferenceResponse::text("parent done"),
    ]);
    let done = guarded_parent(&model, &ran).execute(state).await.unwrap();
    std::fs::write(format!("{path}.done"), done.to_json().unwrap()).unwrap();
    std::fs::write(
        format!("{path}.ran"),
        ran.load(Ordering::SeqCst).to_string(),
    )
    .unwrap();
}

#[tokio::test]
async fn a_subagents_call_decided_at_the_top_resumes_in_a_new_process() {
    let ran = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([spawn_call("p", "clean up")]),
        InferenceResponse::with_tool_calls([ToolCall::new(
            "c",
            "delete_file",
            json!({"path": "build"}),
        )]),
    ]);
    let state = guarded_parent(&model, &ran)
        .execute(AgentState::new().with_user_message("go"))
        .await
        .unwrap();
    let decided = state.approve("p/c").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.json");
    std::fs::write(&path, decided.to_json().unwrap()).unwrap();
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "resume_child", "--nocapture", "--test-threads=1"])
        .env("APPROVAL_STATE", &path)
        .status()
        .unwrap();
    assert!(status.success());
    let done = AgentState::from_json(
        &std::fs::read_to_string(format!("{}.done", path.display())).unwrap(),
    )
    .unwrap();
    let child_ran = std::fs::read_to_string(format!("{}.ran", path.display())).unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 0, "nothing ran in this process");
    assert_eq!(
        child_ran, "1",
        "the approved call ran once, in the new process"
    );
    assert_eq!(done.status(), AgentStatus::Completed);
    assert_eq!(done.final_response().unwrap().text(), "parent done");
}

#[tokio::test]
async fn a_subagent_on_its_parents_model_has_its_context_window() {
    let big = FunctionTool::new("big", "Big output", |_: serde_json::Value| async move {
        Ok::<_, ToolError>("x".repeat(20_000))
    });
    // One inherited script: the parent spawns, the child calls `big` then answers, the parent
    // answers.
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([spawn_call("p", "look")]),
        InferenceResponse::with_tool_calls([ToolCall::new("c1", "big", json!({}))]),
        InferenceResponse::text("child done"),
        InferenceResponse::text("parent done"),
    ]);
    let agent = AgentBuilder::new()
        .with_model(model.clone())
        .with_tool(big)
        .with_context_window(8_000)
        .with_capability(UseSubagents::new([SubagentDefinition::new(
            "researcher",
            "Looks things up",
            "You research.",
        )]))
        .build()
        .unwrap();
    let done = agent
        .execute(AgentState::new().with_user_message("go"))
        .await
        .unwrap();
    assert_eq!(done.final_response().unwrap().text(), "parent done");
    // The child's second request holds the result, cut to a quarter of 8,000 tokens.
    let seen = tool_results(&model.requests()[2]);
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(
        seen[0].starts_with(&format!("{}\n[output cut: 18000", "x".repeat(2_000))),
        "{}",
        &seen[0][..2_100.min(seen[0].len())]
    );
}
