//! Sessions through Restate's ingress against a real server: a three-step run, approvals
//! decided later (and by timeout), cancellation.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use agents_core::{AgentStatus, StopReason};
use agents_restate::AgentSession;

use common::{agent, read_lines, restate, start, unique_name, Planner};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_three_step_run_through_the_ingress_completes_with_each_effect_once() {
    let Some(restate) = restate("a_three_step_run_through_the_ingress") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger");
    let model = Planner::new();
    let calls = Arc::clone(&model.calls);
    let session = AgentSession::new(Arc::new(agent(model, ledger.clone())))
        .with_name(unique_name("three_steps"));
    let (_instance, client) = start(&restate, session).await;

    let reply = client.send("s1", "lines a b").await.unwrap();

    assert_eq!(reply.status, AgentStatus::Completed);
    assert_eq!(reply.stop_reason, Some(StopReason::Completed));
    assert_eq!(reply.answer.as_deref(), Some("wrote 2 lines"));
    assert_eq!(reply.steps, 3, "two tool steps and the answer");
    assert_eq!(read_lines(&ledger), ["a", "b"]);
    assert_eq!(calls.load(Ordering::SeqCst), 3, "one model call per step");
    let state = client.state("s1").await.unwrap().expect("a stored state");
    assert_eq!(state.step_count(), 3);
    assert_eq!(state.status(), AgentStatus::Completed);
    common::assert_valid_conversation(&state);

    // The next message continues the same conversation.
    let reply = client.send("s1", "lines c").await.unwrap();
    assert_eq!(reply.answer.as_deref(), Some("wrote 1 lines"));
    assert_eq!(read_lines(&ledger), ["a", "b", "c"]);
    let state = client.state("s1").await.unwrap().unwrap();
    assert_eq!(
        state
            .messages()
            .iter()
            .filter(|m| m.role() == messages::Role::User)
            .count(),
        2
    );
    assert!(client.state("never-used").await.unwrap().is_none());
}
