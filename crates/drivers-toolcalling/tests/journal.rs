//! A step re-run with a journal: the recorded model reply is reused and recorded tool results
//! are not run again (the mechanism durable sessions use for exactly-once tools).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agents_core::{
    Agent, AgentState, FunctionTool, JournalError, StepJournal, StepOptions, ToolExecution,
};
use async_trait::async_trait;
use drivers_toolcalling::ToolCallingDriver;
use inference::{InferenceResponse, ScriptedModel};
use messages::ToolCall;
use serde::Deserialize;
use serde_json::json;

#[derive(Debug, Default)]
struct MemoryJournal {
    replies: Mutex<HashMap<String, InferenceResponse>>,
    results: Mutex<HashMap<String, ToolExecution>>,
}

#[async_trait]
impl StepJournal for MemoryJournal {
    async fn recorded_reply(&self, key: &str) -> Result<Option<InferenceResponse>, JournalError> {
        Ok(self.replies.lock().unwrap().get(key).cloned())
    }
    async fn record_reply(&self, key: &str, reply: &InferenceResponse) -> Result<(), JournalError> {
        self.replies
            .lock()
            .unwrap()
            .insert(key.into(), reply.clone());
        Ok(())
    }
    async fn recorded_tool_result(&self, id: &str) -> Result<Option<ToolExecution>, JournalError> {
        Ok(self.results.lock().unwrap().get(id).cloned())
    }
    async fn record_tool_result(&self, execution: &ToolExecution) -> Result<(), JournalError> {
        let id = execution.call().id().to_owned();
        self.results.lock().unwrap().insert(id, execution.clone());
        Ok(())
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Args {
    n: u32,
}

#[tokio::test]
async fn a_rerun_step_reuses_the_recorded_reply_and_runs_only_unrecorded_calls() {
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&runs);
    let tool = FunctionTool::new("count", "Counts.", move |args: Args| {
        let counter = Arc::clone(&counter);
        async move {
            counter.fetch_add(1, Ordering::SeqCst);
            Ok::<_, String>(format!("ran {}", args.n))
        }
    });
    let reply = InferenceResponse::with_tool_calls([
        ToolCall::new("c1", "count", json!({"n": 1})),
        ToolCall::new("c2", "count", json!({"n": 2})),
    ]);
    let state = AgentState::new().with_user_message("count twice");

    // The first run: the model replies, c1 finishes... and the process dies before the step
    // is committed. Its journal holds the reply and c1's result.
    let model = ScriptedModel::new([reply.clone()]);
    let agent = Agent::new(ToolCallingDriver::new(model)).with_tool(tool.clone());
    let journal = Arc::new(MemoryJournal::default());
    let full = agent
        .step_with(
            state.clone(),
            &StepOptions::new().with_journal(journal.clone()),
        )
        .await
        .unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    journal.results.lock().unwrap().remove("c2");

    // The re-run: a model with nothing scripted (calling it would fail the step), and only
    // c2 runs again.
    let agent = Agent::new(ToolCallingDriver::new(ScriptedModel::new([]))).with_tool(tool);
    let rerun = agent
        .step_with(state, &StepOptions::new().with_journal(journal.clone()))
        .await
        .unwrap();
    assert_eq!(
        runs.load(Ordering::SeqCst),
        3,
        "c1 ran once, c2 twice (it was not recorded)"
    );
    let step = rerun.current_step().unwrap();
    assert!(!step.has_errors(), "{:?}", step.error_messages());
    assert_eq!(
        step.trace_messages(),
        full.current_step().unwrap().trace_messages()
    );
    assert!(
        journal.results.lock().unwrap().contains_key("c2"),
        "c2 recorded again"
    );
}
