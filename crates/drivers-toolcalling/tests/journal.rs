//! A step re-run with a journal: the recorded model reply is reused and recorded tool results
//! are not run again; a call started (its intent recorded) and never finished runs again only
//! when its tool is idempotent or read-only, any other is reported interrupted; results are
//! reused only for the same place, id, name and arguments (the mechanism durable sessions use).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agents_core::{
    Agent, AgentEvent, AgentState, CallIntent, FunctionTool, JournalError, StepJournal,
    StepOptions, ToolEffects, ToolExecution, ToolFailureKind, INTERRUPTED_MESSAGE,
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
    intents: Mutex<HashMap<String, CallIntent>>,
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
    async fn recorded_intent(&self, key: &str) -> Result<Option<CallIntent>, JournalError> {
        Ok(self.intents.lock().unwrap().get(key).cloned())
    }
    async fn record_intent(&self, intent: &CallIntent) -> Result<(), JournalError> {
        self.intents
            .lock()
            .unwrap()
            .insert(intent.key(), intent.clone());
        Ok(())
    }
    async fn recorded_tool_result(&self, key: &str) -> Result<Option<ToolExecution>, JournalError> {
        Ok(self.results.lock().unwrap().get(key).cloned())
    }
    async fn record_tool_result(
        &self,
        key: &str,
        execution: &ToolExecution,
    ) -> Result<(), JournalError> {
        self.results
            .lock()
            .unwrap()
            .insert(key.to_owned(), execution.clone());
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
    // The crash came before c2 started: neither its intent nor its result is recorded.
    journal.results.lock().unwrap().remove("1:c2");
    journal.intents.lock().unwrap().remove("1:c2");

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
        journal.results.lock().unwrap().contains_key("1:c2"),
        "c2 recorded again"
    );
}

/// Counts its runs and the idempotency keys it saw.
fn counting_tool(effects: ToolEffects) -> (FunctionTool, Arc<Mutex<Vec<String>>>) {
    let keys = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&keys);
    let tool = FunctionTool::with_context("count", "Counts.", move |args: Args, context| {
        let seen = Arc::clone(&seen);
        async move {
            seen.lock()
                .unwrap()
                .push(context.idempotency_key().unwrap_or_default());
            Ok::<_, String>(format!("ran {}", args.n))
        }
    })
    .with_effects(effects);
    (tool, keys)
}

/// Runs the step once with `journal`, then forgets c1's result as a crash after it started
/// would (its intent stays), and runs the step again; returns the re-run state and events.
async fn interrupted_rerun(
    effects: ToolEffects,
) -> (
    AgentState,
    Arc<Mutex<Vec<String>>>,
    Vec<AgentEvent>,
    Arc<MemoryJournal>,
) {
    let (tool, keys) = counting_tool(effects);
    let journal = Arc::new(MemoryJournal::default());
    let reply = InferenceResponse::with_tool_calls([ToolCall::new("c1", "count", json!({"n": 1}))]);
    let state = AgentState::new().with_user_message("count");
    // The id the first run's execution got, as a durable store passes it to a re-run.
    let options = || {
        StepOptions::new()
            .with_journal(journal.clone())
            .with_execution_id("exec-1")
    };
    let agent =
        Agent::new(ToolCallingDriver::new(ScriptedModel::new([reply]))).with_tool(tool.clone());
    agent.step_with(state.clone(), &options()).await.unwrap();
    assert!(journal.intents.lock().unwrap().contains_key("0:c1"));
    journal.results.lock().unwrap().remove("0:c1");

    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let agent = Agent::new(ToolCallingDriver::new(ScriptedModel::new([])))
        .with_tool(tool)
        .on_event(move |event: &AgentEvent| seen.lock().unwrap().push(event.clone()));
    let rerun = agent.step_with(state, &options()).await.unwrap();
    let events = events.lock().unwrap().clone();
    (rerun, keys, events, journal)
}

fn interrupted_events(events: &[AgentEvent]) -> Vec<bool> {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolCallInterrupted { rerun, .. } => Some(*rerun),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn an_interrupted_side_effecting_call_is_not_run_again_and_says_so() {
    let (rerun, keys, events, journal) = interrupted_rerun(ToolEffects::SideEffecting).await;
    assert_eq!(keys.lock().unwrap().len(), 1, "ran once, before the crash");
    let execution = rerun
        .current_step()
        .unwrap()
        .tool_executions()
        .iter()
        .next()
        .unwrap()
        .clone();
    assert_eq!(execution.failure_kind(), Some(ToolFailureKind::Interrupted));
    assert_eq!(execution.error_message(), Some(INTERRUPTED_MESSAGE));
    assert!(INTERRUPTED_MESSAGE
        .starts_with("This call was interrupted and may or may not have taken effect"));
    assert_eq!(interrupted_events(&events), vec![false]);
    // Surfaced once: the interrupted result is recorded, a further re-run reuses it.
    assert_eq!(
        journal.results.lock().unwrap()["0:c1"].failure_kind(),
        Some(ToolFailureKind::Interrupted)
    );
}

#[tokio::test]
async fn an_interrupted_idempotent_call_runs_again_with_the_same_idempotency_key() {
    for effects in [ToolEffects::Idempotent, ToolEffects::ReadOnly] {
        let (rerun, keys, events, journal) = interrupted_rerun(effects).await;
        let keys = keys.lock().unwrap().clone();
        assert_eq!(keys.len(), 2, "{effects:?}: ran again");
        assert_eq!(
            keys[0], "exec-1:c1",
            "{effects:?}: execution id and call id"
        );
        assert_eq!(keys[0], keys[1], "{effects:?}: the same key both times");
        let execution = rerun
            .current_step()
            .unwrap()
            .tool_executions()
            .iter()
            .next()
            .unwrap()
            .clone();
        assert!(!execution.has_error(), "{effects:?}");
        assert_eq!(interrupted_events(&events), vec![true]);
        assert_eq!(journal.intents.lock().unwrap()["0:c1"].attempt, 2);
    }
}

#[tokio::test]
async fn a_repeated_call_id_in_one_reply_gets_its_own_result_and_a_foreign_result_is_refused() {
    let (tool, keys) = counting_tool(ToolEffects::SideEffecting);
    // A provider that repeats an id within one reply (the driver renames the second after the
    // execution, so a re-run must keep the execution's id, as sessions do).
    let reply = InferenceResponse::with_tool_calls([
        ToolCall::new("dup", "count", json!({"n": 1})),
        ToolCall::new("dup", "count", json!({"n": 2})),
    ]);
    let state = AgentState::new().with_user_message("count");
    let journal = Arc::new(MemoryJournal::default());
    let agent =
        Agent::new(ToolCallingDriver::new(ScriptedModel::new([reply]))).with_tool(tool.clone());
    let first = agent
        .step_with(
            state.clone(),
            &StepOptions::new()
                .with_journal(journal.clone())
                .with_execution_id("exec-1"),
        )
        .await
        .unwrap();
    let results: Vec<String> = first
        .current_step()
        .unwrap()
        .tool_executions()
        .iter()
        .map(ToolExecution::result_text)
        .collect();
    assert_eq!(results, ["ran 1", "ran 2"]);
    assert_eq!(keys.lock().unwrap().len(), 2);

    // A re-run reuses each result at its own place.
    let agent = Agent::new(ToolCallingDriver::new(ScriptedModel::new([]))).with_tool(tool.clone());
    let rerun = agent
        .step_with(
            state.clone(),
            &StepOptions::new()
                .with_journal(journal.clone())
                .with_execution_id("exec-1"),
        )
        .await
        .unwrap();
    assert_eq!(keys.lock().unwrap().len(), 2, "nothing ran again");
    assert_eq!(
        rerun
            .current_step()
            .unwrap()
            .tool_executions()
            .iter()
            .nth(1)
            .unwrap()
            .result_text(),
        "ran 2"
    );

    // A journal whose entry at a place records another call is not trusted.
    let foreign = journal.results.lock().unwrap()["0:dup"].clone();
    let second = journal
        .results
        .lock()
        .unwrap()
        .keys()
        .find(|key| key.starts_with("1:"))
        .cloned()
        .unwrap();
    journal.results.lock().unwrap().insert(second, foreign);
    let agent = Agent::new(ToolCallingDriver::new(ScriptedModel::new([]))).with_tool(tool);
    let refused = agent
        .step_with(
            state,
            &StepOptions::new()
                .with_journal(journal)
                .with_execution_id("exec-1"),
        )
        .await
        .unwrap();
    let step = refused.current_step().unwrap();
    assert!(
        step.error_messages()
            .iter()
            .any(|e| e.contains("journal could not be trusted")),
        "{:?}",
        step.error_messages()
    );
    assert_eq!(keys.lock().unwrap().len(), 2, "nothing ran");
}

#[tokio::test]
async fn an_interrupted_call_that_ran_on_approval_is_asked_for_again() {
    let (tool, keys) = counting_tool(ToolEffects::SideEffecting);
    let reply = InferenceResponse::with_tool_calls([ToolCall::new("c1", "count", json!({"n": 1}))]);
    let agent = Agent::new(ToolCallingDriver::new(ScriptedModel::new([reply])))
        .with_tool(tool.clone())
        .with_approval_required(["count"]);
    let waiting = agent
        .step(AgentState::new().with_user_message("count"))
        .await
        .unwrap();
    assert_eq!(waiting.status(), agents_core::AgentStatus::Suspended);
    let approved = waiting.approve("c1").unwrap();

    // The approved call starts, and the process dies before its result is recorded.
    let journal = Arc::new(MemoryJournal::default());
    let options = StepOptions::new().with_journal(journal.clone());
    agent.step_with(approved.clone(), &options).await.unwrap();
    assert_eq!(keys.lock().unwrap().len(), 1);
    journal.results.lock().unwrap().clear();

    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let agent = Agent::new(ToolCallingDriver::new(ScriptedModel::new([])))
        .with_tool(tool)
        .with_approval_required(["count"])
        .on_event(move |event: &AgentEvent| seen.lock().unwrap().push(event.clone()));
    let asked = agent.step_with(approved, &options).await.unwrap();
    assert_eq!(
        keys.lock().unwrap().len(),
        1,
        "not run again without a new decision"
    );
    assert_eq!(asked.status(), agents_core::AgentStatus::Suspended);
    let pending = asked.pending_approvals();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].call_id(), "c1");
    assert!(!pending[0].is_decided(), "the person decides again");
    assert_eq!(interrupted_events(&events.lock().unwrap()), vec![false]);
}
