//! The lease as a `Session` holds it: renewed while a long step runs, the step stopped with
//! nothing written when another runner takes the lease over, a waiting runner that goes on
//! once the lease is given back, and a graceful stop that commits the step in progress.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::Arc;
use std::time::Duration;

use agents_core::{
    Agent, AgentStatus, ContinuationCriteria, FunctionTool, StepsLimit, ToolCallPresenceCheck,
};
use agents_sessions::{
    AgentSessionExt, LeaseRequest, MemorySessionStore, SessionError, SessionStore,
};
use drivers_toolcalling::ToolCallingDriver;
use inference::{InferenceResponse, ScriptedModel};
use messages::ToolCall;
use serde_json::json;
use tokio::sync::Notify;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Wait {
    ms: u64,
}

/// An agent whose model calls `wait` (which sleeps `ms` and signals `started`), then answers.
fn agent(ms: u64, started: Arc<Notify>) -> Agent {
    let tool = FunctionTool::new("wait", "Waits.", move |args: Wait| {
        let started = Arc::clone(&started);
        async move {
            started.notify_one();
            tokio::time::sleep(Duration::from_millis(args.ms)).await;
            Ok::<_, String>("waited")
        }
    });
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([ToolCall::new("w1", "wait", json!({ "ms": ms }))]),
        InferenceResponse::text("done"),
    ]);
    Agent::new(ToolCallingDriver::new(model))
        .with_tool(tool)
        .with_criteria(
            ContinuationCriteria::new()
                .with(ToolCallPresenceCheck::new())
                .with(StepsLimit::new(10)),
        )
}

fn request(owner: &str, take_over: Option<u64>) -> LeaseRequest {
    LeaseRequest {
        owner: owner.into(),
        pid: 1,
        host: "elsewhere".into(),
        now: chrono::Utc::now(),
        ttl: Duration::from_secs(30),
        take_over,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_longer_than_the_lease_keeps_it_by_renewing() {
    let store = MemorySessionStore::new();
    let started = Arc::new(Notify::new());
    let session = agent(400, Arc::clone(&started))
        .session(&store, "long")
        .with_lease_ttl(Duration::from_millis(120));
    let run = tokio::spawn(async move { session.send("wait").await });
    started.notified().await;
    // Past the lease's first expiry, another runner is still refused: it was renewed.
    tokio::time::sleep(Duration::from_millis(250)).await;
    let refused = store.acquire_lease("long", &request("other", None)).await;
    assert!(
        matches!(refused, Err(SessionError::Busy { .. })),
        "{refused:?}"
    );
    let done = run.await.unwrap().unwrap();
    assert_eq!(done.status(), AgentStatus::Completed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runner_whose_lease_is_taken_over_stops_and_writes_nothing_more() {
    let store = MemorySessionStore::new();
    let started = Arc::new(Notify::new());
    let session = agent(300, Arc::clone(&started))
        .session(&store, "taken")
        .with_lease_ttl(Duration::from_millis(90));
    let run = tokio::spawn(async move { session.send("wait").await });
    started.notified().await;
    let version = store.load_latest("taken").await.unwrap().unwrap().version;
    // Another runner decides the holder is dead and takes the lease over.
    let holder = store
        .lease_holder("taken", chrono::Utc::now())
        .await
        .unwrap()
        .unwrap();
    store
        .acquire_lease("taken", &request("other", Some(holder.token)))
        .await
        .unwrap();
    let error = run.await.unwrap().unwrap_err();
    assert!(matches!(error, SessionError::LeaseLost { .. }), "{error}");
    assert_eq!(
        store.load_latest("taken").await.unwrap().unwrap().version,
        version,
        "the step in progress was not committed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_runner_goes_on_when_the_lease_is_given_back() {
    let store = MemorySessionStore::new();
    let started = Arc::new(Notify::new());
    let first = agent(200, Arc::clone(&started)).session(&store, "queue");
    let run = tokio::spawn(async move { first.send("wait").await });
    started.notified().await;
    let second = Agent::new(agents_core::testing::ScriptedDriver::new([
        InferenceResponse::text("second"),
    ]))
    .session(&store, "queue");
    assert!(second.send("again").await.unwrap_err().is_busy());
    let waited = second.waiting_for_lease(true).send("again").await.unwrap();
    assert!(run.await.unwrap().is_ok());
    assert_eq!(waited.final_response().unwrap().text(), "second");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graceful_stop_commits_the_step_in_progress_and_leaves_the_run_to_resume() {
    let store = MemorySessionStore::new();
    let started = Arc::new(Notify::new());
    let stop = tokio_util::sync::CancellationToken::new();
    let agent = agent(150, Arc::clone(&started));
    let session = agent
        .session(&store, "stopped")
        .with_graceful_stop(stop.clone());
    let run = tokio::spawn(async move { session.send("wait").await });
    started.notified().await;
    stop.cancel();
    let stopped = run.await.unwrap().unwrap();
    assert_eq!(
        stopped.status(),
        AgentStatus::InProgress,
        "left for resume: {:?} after {} steps",
        stopped.stop_reason(),
        stopped.step_count()
    );
    assert_eq!(stopped.step_count(), 1, "the step in progress finished");
    assert_eq!(store.load("stopped").await.unwrap().unwrap(), stopped);
    // Given back: a resume takes the lease and finishes the run.
    let done = agent.session(&store, "stopped").resume().await.unwrap();
    assert_eq!(done.status(), AgentStatus::Completed);
    assert_eq!(done.final_response().unwrap().text(), "done");
}
