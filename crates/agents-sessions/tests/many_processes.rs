//! Many processes, one Postgres: 4 worker processes (this test binary again) advance 100
//! sessions step by step (`Session::step`: load, step, commit), retrying on `Conflict` when
//! another worker took the step. Every session ends with exactly the steps and conversation of
//! a single-process run: no step lost, none duplicated.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    missing_docs
)]

use std::process::Command;

use agents_core::incremental::StateEncoder;
use agents_core::{
    Agent, AgentState, AgentStatus, ContinuationCriteria, FunctionTool, StepsLimit,
    ToolCallPresenceCheck,
};
use agents_sessions::{
    AgentSessionExt, Commit, MemorySessionStore, PostgresSessionStore, SessionError, SessionStore,
};
use async_trait::async_trait;
use drivers_toolcalling::ToolCallingDriver;
use inference::{InferenceError, InferenceRequest, InferenceResponse, LanguageModel};
use messages::{Role, ToolCall};
use serde_json::json;

const SESSIONS: usize = 100;
const WORKERS: usize = 4;

/// Decides from the conversation alone: as many lookups as the question's number mod 3, then
/// an answer.
struct Planner;

#[async_trait]
impl LanguageModel for Planner {
    async fn complete(
        &self,
        request: InferenceRequest,
    ) -> Result<InferenceResponse, InferenceError> {
        let question = request
            .messages
            .iter()
            .find(|m| m.role() == Role::User)
            .map(|m| m.text())
            .unwrap_or_default();
        let n: usize = question
            .rsplit(' ')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let done = request
            .messages
            .iter()
            .filter(|m| m.role() == Role::Tool)
            .count();
        if done > n % 3 {
            return Ok(InferenceResponse::text(format!("answer to {question}")));
        }
        Ok(InferenceResponse::with_tool_calls([ToolCall::new(
            format!("call_{done}"),
            "lookup",
            json!({"q": format!("{question} / {done}")}),
        )]))
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Query {
    q: String,
}

fn agent() -> Agent {
    let lookup = FunctionTool::new("lookup", "Looks up.", |args: Query| async move {
        Ok::<_, String>(format!("found {}", args.q))
    });
    Agent::new(ToolCallingDriver::new(Planner))
        .with_tool(lookup)
        .with_processors(agents_processing::standard_processors(
            agents_processing::TraceRetention::Ephemeral,
        ))
        .with_criteria(
            ContinuationCriteria::new()
                .with(ToolCallPresenceCheck::new())
                .with(StepsLimit::new(10)),
        )
}

fn name(prefix: &str, i: usize) -> String {
    format!("{prefix}-{i}")
}

/// Version 1 of every session: the question, no step yet.
async fn seed(store: &dyn SessionStore, prefix: &str) {
    for i in 0..SESSIONS {
        let state = AgentState::new()
            .with_agent_id(format!("agent-{i}"))
            .with_user_message(format!("question {i}"));
        let mut commit = Commit::new(&state, StateEncoder::new().encode(&state).unwrap());
        commit.commit_id = format!("seed-{i}");
        store.write(&name(prefix, i), 0, &commit).await.unwrap();
    }
}

/// A worker: advances sessions in its own order until every one is finished.
#[tokio::test]
async fn many_processes_worker() {
    let (Ok(url), Ok(prefix), Ok(worker)) = (
        std::env::var("AGENTS_TEST_POSTGRES_URL"),
        std::env::var("WORKER_PREFIX"),
        std::env::var("WORKER_INDEX"),
    ) else {
        return; // only runs as a child of the test below
    };
    let worker: usize = worker.parse().unwrap();
    let store = PostgresSessionStore::connect(&url).await.unwrap();
    let agent = agent();
    let mut open: Vec<usize> = (0..SESSIONS).collect();
    open.rotate_left(worker * SESSIONS / WORKERS);
    let (mut steps, mut conflicts) = (0, 0);
    while !open.is_empty() {
        let mut still_open = Vec::new();
        for &i in &open {
            match agent.session(&store, name(&prefix, i)).step().await {
                Ok(state) if state.status() != AgentStatus::InProgress => {}
                Ok(_) => {
                    steps += 1;
                    still_open.push(i);
                }
                // Another worker holds the session's lease (it is stepping it now), or committed
                // first: skip it for now.
                Err(SessionError::Busy { .. } | SessionError::Conflict { .. }) => {
                    conflicts += 1;
                    still_open.push(i);
                }
                Err(other) => panic!("worker {worker}: {other}"),
            }
        }
        open = still_open;
    }
    eprintln!(
        "worker {worker}: {steps} steps committed that left a run going, {conflicts} busy or \
         conflicting"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_processes_advance_a_hundred_sessions_without_losing_or_repeating_a_step() {
    let url = match std::env::var("AGENTS_TEST_POSTGRES_URL") {
        Ok(url) => url,
        Err(_) if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("CI=true but AGENTS_TEST_POSTGRES_URL is unset: .ci/run must start Postgres")
        }
        Err(_) => {
            eprintln!("SKIPPED: many-processes Postgres test (set AGENTS_TEST_POSTGRES_URL, e.g. from `cargo xtask pg`)");
            return;
        }
    };
    let prefix = format!("mp-{}", uuid::Uuid::now_v7());
    let store = PostgresSessionStore::connect(&url).await.unwrap();
    seed(&store, &prefix).await;

    // The single-process reference.
    let reference = MemorySessionStore::new();
    seed(&reference, &prefix).await;
    let agent = agent();
    for i in 0..SESSIONS {
        agent
            .session(&reference, name(&prefix, i))
            .resume()
            .await
            .unwrap();
    }

    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "many_processes_worker", "--nocapture"])
                .env("WORKER_PREFIX", &prefix)
                .env("WORKER_INDEX", w.to_string())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut worker in workers {
        assert!(worker.wait().unwrap().success());
    }

    for i in 0..SESSIONS {
        let id = name(&prefix, i);
        let expected = reference.load_latest(&id).await.unwrap().unwrap();
        let found = store.load_latest(&id).await.unwrap().unwrap();
        assert_eq!(found.state.status(), AgentStatus::Completed, "{id}");
        assert_eq!(found.state.messages(), expected.state.messages(), "{id}");
        assert_eq!(
            found.state.step_count(),
            expected.state.step_count(),
            "{id}"
        );
        assert_eq!(
            found.version, expected.version,
            "{id}: one version per step, none twice"
        );
    }
}
