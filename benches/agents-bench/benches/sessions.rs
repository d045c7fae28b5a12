//! Criterion benches of durable sessions: the cost of committing one step at 10, 1,000 and
//! 10,000 messages of history (SQLite file in WAL mode; Postgres when
//! `AGENTS_TEST_POSTGRES_URL` is set), the load time of a 10,000-message session, and (printed)
//! the bytes stored per message.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr
)]

use agents_bench::state_with_history;
use agents_core::incremental::StateEncoder;
use agents_core::testing::with_recorded_step;
use agents_core::{AgentState, AgentStep, StepParts};
use agents_sessions::{Commit, PostgresSessionStore, SessionStore, SqliteSessionStore};
mod common;

use common::{config, runtime};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use messages::{Message, Messages};
use sqlx::Row;

fn commit(encoder: &mut StateEncoder, state: &AgentState) -> Commit {
    Commit {
        delta: encoder.encode(state).unwrap(),
        commit_id: uuid_like(state),
        title: String::new(),
        message_count: state.messages().len() as u64,
        committed_at: chrono::Utc::now(),
        lease: None,
    }
}

fn uuid_like(state: &AgentState) -> String {
    format!("{}-{}", state.agent_id(), state.step_count())
}

/// A step like a model answer: its input is the whole history, its response one message.
fn next_step(state: AgentState, i: usize) -> AgentState {
    let step = AgentStep::from_parts(StepParts {
        input_messages: state.messages_for_inference(),
        response_messages: Messages::from(vec![Message::assistant(format!(
            "the answer to step {i}, a sentence of ordinary length for a model reply"
        ))]),
        ..Default::default()
    });
    with_recorded_step(state, step)
}

/// Per iteration: one step recorded, encoded and committed (one transaction).
fn bench_commits(c: &mut Criterion, backend: &str, store: &dyn SessionStore) {
    let rt = runtime();
    let mut group = c.benchmark_group("sessions/commit");
    for len in [10usize, 1_000, 10_000] {
        let id = format!("bench-{backend}-{len}-{}", std::process::id());
        let mut encoder = StateEncoder::new();
        let mut state = state_with_history(len);
        let mut version = rt
            .block_on(store.write(&id, 0, &commit(&mut encoder, &state)))
            .unwrap();
        let mut i = 0;
        group.bench_function(BenchmarkId::new(backend, len), |b| {
            b.iter(|| {
                i += 1;
                state = next_step(std::mem::take(&mut state), i);
                let commit = commit(&mut encoder, &state);
                version = rt.block_on(store.write(&id, version, &commit)).unwrap();
            });
        });
    }
    group.finish();
}

fn sessions(c: &mut Criterion) {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let sqlite = rt
        .block_on(SqliteSessionStore::open(dir.path().join("bench.db")))
        .unwrap();
    bench_commits(c, "sqlite_wal", &sqlite);
    match std::env::var("AGENTS_TEST_POSTGRES_URL") {
        Ok(url) => {
            let postgres = rt.block_on(PostgresSessionStore::connect(&url)).unwrap();
            bench_commits(c, "postgres", &postgres);
        }
        Err(_) => eprintln!(
            "SKIPPED: Postgres commit benches (set AGENTS_TEST_POSTGRES_URL, e.g. from `cargo xtask pg`)"
        ),
    }

    // Load time of a 10,000-message session, and bytes stored per message.
    let id = "bench-load-10000";
    let state = state_with_history(10_000);
    rt.block_on(sqlite.write(id, 0, &commit(&mut StateEncoder::new(), &state)))
        .unwrap();
    let mut group = c.benchmark_group("sessions/load");
    group.bench_function(BenchmarkId::new("sqlite_wal", 10_000), |b| {
        b.iter(|| rt.block_on(sqlite.load(id)).unwrap().unwrap());
    });
    group.finish();
    let bytes: i64 = rt
        .block_on(
            sqlx::query(
                "SELECT SUM(LENGTH(body) + LENGTH(checksum)) FROM session_messages WHERE session_id = $1",
            )
            .bind(id)
            .fetch_one(sqlite.pool()),
        )
        .unwrap()
        .get(0);
    eprintln!(
        "sessions/bytes_per_message: {:.1} (message rows of a 10,000-message session incl. checksum; JSON text of the message {:.1})",
        bytes as f64 / 10_000.0,
        state.messages().iter().map(|m| serde_json::to_string(&m).unwrap().len()).sum::<usize>() as f64 / 10_000.0
    );
}

criterion_group! {
    name = benches;
    config = config();
    targets = sessions
}
criterion_main!(benches);
