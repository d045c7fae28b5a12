//! Criterion benches of the web console (`agents serve`) over a SQLite file holding 10,000
//! sessions: the sessions page (first and last page) and the page of a 1,000-step session,
//! rendered through the console's router. Printed: the process's resident memory before and
//! after paging through all 10,000 sessions several times (the list reads a page at a time,
//! so it stays flat).
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr
)]

mod common;

use std::time::{Duration, Instant};

use agents::serve::Console;
use agents_core::incremental::StateEncoder;
use agents_core::{
    Agent, AgentState, ContinuationCriteria, ErrorPolicy, FunctionTool, StepsLimit,
    ToolCallPresenceCheck, ToolError,
};
use agents_processing::{standard_processors, TraceRetention};
use agents_sessions::{AgentSessionExt, Commit, SessionStore, SqliteSessionStore};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use common::{config, runtime};
use criterion::{criterion_group, criterion_main, Criterion};
use drivers_toolcalling::ToolCallingDriver;
use inference::{InferenceResponse, ModelCatalog, ScriptedModel, ToolCall, Usage};
use tower::ServiceExt;

const SESSIONS: usize = 10_000;
const STEPS: usize = 1_000;

fn priced(response: InferenceResponse) -> InferenceResponse {
    response.with_model("gpt-4o-mini").with_usage(Usage {
        input_tokens: 2_000,
        output_tokens: 60,
        cache_read_tokens: 1_500,
        ..Usage::default()
    })
}

/// An agent that calls `echo` `steps - 1` times, then answers.
fn agent(steps: usize) -> Agent {
    let mut replies: Vec<InferenceResponse> = (1..steps)
        .map(|i| {
            priced(InferenceResponse::with_tool_calls([ToolCall::new(
                format!("call_{i}"),
                "echo",
                serde_json::json!({ "text": format!("step {i}: look at the next file") }),
            )]))
        })
        .collect();
    replies.push(priced(InferenceResponse::text(
        "Done: every file was read.",
    )));
    Agent::new(ToolCallingDriver::new(ScriptedModel::new(replies)))
        .with_tool(FunctionTool::new(
            "echo",
            "Echoes",
            |args: serde_json::Value| async move {
                Ok::<_, ToolError>(format!("read {}", args["text"]))
            },
        ))
        .with_processors(standard_processors(TraceRetention::Ephemeral))
        .with_error_policy(ErrorPolicy::retry_tool_errors(3))
        .with_criteria(
            ContinuationCriteria::new()
                .with(StepsLimit::new(steps + 1))
                .with(ToolCallPresenceCheck::new()),
        )
        .with_model_catalog(ModelCatalog::builtin())
}

/// A store with `SESSIONS` finished two-step sessions and one of `STEPS` steps.
async fn store(dir: &std::path::Path) -> SqliteSessionStore {
    let store = SqliteSessionStore::open(dir.join("sessions.db"))
        .await
        .unwrap();
    let started = Instant::now();
    let finished = agent(2)
        .execute(AgentState::new().with_user_message("Read the notes and sum them up"))
        .await
        .unwrap();
    let now = chrono::Utc::now();
    for i in 0..SESSIONS {
        let state = finished.clone();
        let mut commit = Commit::new(&state, StateEncoder::new().encode(&state).unwrap());
        commit.title = format!("session {i:05}: read the notes and sum them up");
        commit.committed_at = now - chrono::Duration::seconds((SESSIONS - i) as i64);
        store.write(&format!("s{i:05}"), 0, &commit).await.unwrap();
    }
    agent(STEPS)
        .session(&store, "long")
        .send("Read all thousand files")
        .await
        .unwrap();
    eprintln!(
        "store: {SESSIONS} sessions + one of {STEPS} steps, built in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    store
}

async fn render(app: &Router, uri: &str) -> usize {
    let response = app
        .clone()
        .oneshot(Request::get(uri).body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK, "{uri}");
    axum::body::to_bytes(response.into_body(), 64 << 20)
        .await
        .unwrap()
        .len()
}

/// Resident memory of this process, in KiB (Linux).
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|text| text.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4)
}

fn console(c: &mut Criterion) {
    let runtime = runtime();
    let dir = tempfile::tempdir().unwrap();
    let store = runtime.block_on(store(dir.path()));
    let (app, _turns) = Console::new(store).build();

    let bytes = runtime.block_on(render(&app, "/sessions/long"));
    eprintln!(
        "the {STEPS}-step session page: {} KiB of HTML",
        bytes / 1024
    );

    // Memory while listing every session, a page at a time, five times over.
    let pages = SESSIONS.div_ceil(50) as u64;
    let list_all = || async {
        for page in 0..pages {
            render(&app, &format!("/?page={page}")).await;
        }
    };
    runtime.block_on(list_all());
    let before = rss_kib();
    let started = Instant::now();
    for _ in 0..5 {
        runtime.block_on(list_all());
    }
    eprintln!(
        "listing all {SESSIONS} sessions ({pages} pages) 5 times: {:.1} s; resident memory \
         {before} KiB before, {} KiB after",
        started.elapsed().as_secs_f64(),
        rss_kib()
    );

    let mut group = c.benchmark_group("console");
    group.bench_function("sessions page (first of 10,000)", |b| {
        b.iter(|| runtime.block_on(render(&app, "/")));
    });
    group.bench_function("sessions page (last of 10,000)", |b| {
        b.iter(|| runtime.block_on(render(&app, &format!("/?page={}", pages - 1))));
    });
    group.bench_function("sessions search (10,000 titles)", |b| {
        b.iter(|| runtime.block_on(render(&app, "/?q=session%2009999")));
    });
    group.bench_function("session page (1,000 steps)", |b| {
        b.iter(|| runtime.block_on(render(&app, "/sessions/long")));
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = config().measurement_time(Duration::from_secs(5));
    targets = console
}
criterion_main!(benches);
