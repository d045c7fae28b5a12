//! Sessions through Restate's ingress against a real server: a three-step run, approvals
//! decided later (and by timeout), cancellation.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

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

/// Polls until `session` waits on a call, and answers its id.
async fn waiting_call(client: &agents_restate::SessionClient, session: &str) -> String {
    for _ in 0..400 {
        if let Some(call) = client.pending_approvals(session).await.unwrap().first() {
            return call.call_id.clone();
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{session} never waited for a decision");
}

/// What the model read for the call `id`.
fn call_result(state: &agents_core::AgentState, id: &str) -> String {
    state
        .steps()
        .flat_map(|step| step.tool_executions().iter().cloned().collect::<Vec<_>>())
        .find(|execution| execution.id() == id)
        .unwrap_or_else(|| panic!("the call {id} has a recorded execution"))
        .result_text()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_and_rejections_through_the_ingress_decide_the_waiting_calls() {
    let Some(restate) = restate("approvals_and_rejections") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger");
    let agent = agent(Planner::new(), ledger.clone()).with_approval_required(["append"]);
    let session =
        AgentSession::new(Arc::new(agent)).with_name(unique_name("approvals_and_rejections"));
    let (_instance, client) = start(&restate, session).await;

    let invocation = client.send_later("a1", "lines a b").await.unwrap();
    let first = waiting_call(&client, "a1").await;
    assert_eq!(first, "call_0");
    // A decision binds to what was shown: a fingerprint of another call is refused, the one
    // the listing showed is accepted.
    let shown = client.pending_approvals("a1").await.unwrap()[0]
        .fingerprint
        .clone();
    assert_eq!(shown.len(), 12, "{shown}");
    let stale = client.approve_checked("a1", &first, "000000000000").await;
    let error = stale.unwrap_err().to_string();
    assert!(error.contains("not the one you were shown"), "{error}");
    client.approve_checked("a1", &first, &shown).await.unwrap();
    // The second call waits in its own suspension.
    let mut second = waiting_call(&client, "a1").await;
    while second == first {
        tokio::time::sleep(Duration::from_millis(25)).await;
        second = waiting_call(&client, "a1").await;
    }
    client
        .reject("a1", &second, "not b, thank you")
        .await
        .unwrap();
    let reply = client.attach(&invocation).await.unwrap();

    assert_eq!(reply.status, AgentStatus::Completed);
    assert_eq!(
        read_lines(&ledger),
        ["a"],
        "the approved call ran, the rejected one did not"
    );
    let state = client.state("a1").await.unwrap().unwrap();
    assert!(call_result(&state, &second).contains("not b, thank you"));
    assert!(client.pending_approvals("a1").await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_decision_within_the_approval_timeout_rejects_the_call() {
    let Some(restate) = restate("no_decision_within_the_approval_timeout") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger");
    let agent = agent(Planner::new(), ledger.clone()).with_approval_required(["append"]);
    let session = AgentSession::new(Arc::new(agent))
        .with_name(unique_name("approval_timeout"))
        .with_approval_timeout(Some(Duration::from_millis(500)));
    let (_instance, client) = start(&restate, session).await;

    let reply = client.send("t1", "lines a").await.unwrap();

    assert_eq!(reply.status, AgentStatus::Completed);
    assert!(read_lines(&ledger).is_empty(), "the call never ran");
    let state = client.state("t1").await.unwrap().unwrap();
    assert!(
        call_result(&state, "call_0").contains("no decision within the approval timeout"),
        "{}",
        call_result(&state, "call_0")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_invocation_leaves_a_valid_conversation() {
    let Some(restate) = restate("a_cancelled_invocation") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger");
    let agent = agent(Planner::new(), ledger.clone()).with_approval_required(["append"]);
    let session = AgentSession::new(Arc::new(agent)).with_name(unique_name("cancel"));
    let (_instance, client) = start(&restate, session).await;

    // Cancelled inside a running tool call.
    let invocation = client.send_later("c1", "wait").await.unwrap();
    for _ in 0..400 {
        if read_lines(&ledger).contains(&"wait started".to_owned()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(client.cancel("c1").await.unwrap(), "a send was running");
    let reply = client.attach(&invocation).await.unwrap();
    assert_eq!(reply.status, AgentStatus::Failed);
    assert_eq!(reply.stop_reason, Some(StopReason::UserRequested));
    assert!(read_lines(&ledger).contains(&"wait cancelled".to_owned()));
    assert!(
        reply.answer.is_some(),
        "the cancelled run ends with a notice"
    );
    let state = client.state("c1").await.unwrap().unwrap();
    common::assert_valid_conversation(&state);
    assert!(!client.cancel("c1").await.unwrap(), "nothing runs any more");

    // Cancelled while it waits for a decision, with the next message queued behind it.
    let invocation = client.send_later("c2", "lines a").await.unwrap();
    waiting_call(&client, "c2").await;
    let queued = client.send_later("c2", "hello").await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        client.state("c2").await.unwrap().unwrap().status(),
        AgentStatus::Suspended,
        "the second message waits its turn"
    );
    assert!(client.cancel("c2").await.unwrap());
    let reply = client.attach(&invocation).await.unwrap();
    assert_eq!(reply.status, AgentStatus::Failed);
    assert_eq!(reply.stop_reason, Some(StopReason::UserRequested));
    assert!(
        !read_lines(&ledger).contains(&"a".to_owned()),
        "the waiting call never ran"
    );
    let next = client.attach(&queued).await.unwrap();
    assert_eq!(
        next.status,
        AgentStatus::Completed,
        "the queued message ran next"
    );
    let state = client.state("c2").await.unwrap().unwrap();
    common::assert_valid_conversation(&state);
    assert!(client.pending_approvals("c2").await.unwrap().is_empty());
    let users = state
        .messages()
        .iter()
        .filter(|m| m.role() == messages::Role::User)
        .count();
    assert_eq!(users, 2, "both messages are in the conversation");
}

/// The planner, after failing `failures` times with a retryable error (a timeout).
struct Flaky {
    failures: std::sync::atomic::AtomicUsize,
    attempts: Arc<std::sync::atomic::AtomicUsize>,
    inner: Planner,
}

#[async_trait::async_trait]
impl inference::LanguageModel for Flaky {
    async fn complete(
        &self,
        request: inference::InferenceRequest,
    ) -> Result<inference::InferenceResponse, inference::InferenceError> {
        self.attempts.fetch_add(1, Ordering::SeqCst);
        let left = self.failures.load(Ordering::SeqCst);
        if left > 0 {
            self.failures.store(left - 1, Ordering::SeqCst);
            return Err(inference::InferenceError::Timeout {
                after: Duration::from_millis(1),
            });
        }
        self.inner.complete(request).await
    }
}

fn flaky_session(
    failures: usize,
    attempts: u32,
) -> (
    AgentSession,
    Arc<std::sync::atomic::AtomicUsize>,
    tempfile::TempDir,
) {
    let dir = tempfile::tempdir().unwrap();
    let counter = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let model = Flaky {
        failures: std::sync::atomic::AtomicUsize::new(failures),
        attempts: Arc::clone(&counter),
        inner: Planner::new(),
    };
    let agent = agents_core::Agent::new(drivers_toolcalling::ToolCallingDriver::new(model))
        .with_processors(agents_processing::standard_processors(
            agents_processing::TraceRetention::Ephemeral,
        ));
    let session = AgentSession::new(Arc::new(agent))
        .with_name(unique_name("flaky"))
        .with_model_retry(
            agents_restate::RunRetryPolicy::new()
                .initial_delay(Duration::from_millis(10))
                .max_attempts(attempts),
        );
    (session, counter, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restate_retries_a_retryable_model_error_and_records_the_one_that_outlasts_the_policy() {
    let Some(restate) = restate("restate_retries_a_retryable_model_error") else {
        return;
    };
    let (session, attempts, _dir) = flaky_session(2, 5);
    let (_instance, client) = start(&restate, session).await;
    let reply = client.send("f1", "hello").await.unwrap();
    assert_eq!(reply.status, AgentStatus::Completed);
    assert_eq!(reply.answer.as_deref(), Some("done"));
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        3,
        "two timeouts, then the reply"
    );

    let (session, attempts, _dir) = flaky_session(100, 3);
    let (_instance, client) = start(&restate, session).await;
    let reply = client.send("f2", "hello").await.unwrap();
    assert_eq!(reply.status, AgentStatus::Failed, "the policy gave up");
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        3,
        "as many attempts as the policy allows"
    );
    let state = client.state("f2").await.unwrap().unwrap();
    let step = state.current_step().expect("a failure step");
    assert!(
        step.errors()
            .iter()
            .any(|e| e.message.contains("timed out")),
        "the failure says why: {:?}",
        step.errors()
    );
}
