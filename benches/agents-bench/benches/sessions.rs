//! Criterion benches of durable sessions: the cost of committing one step at 10, 1,000 and
//! 10,000 messages of history (SQLite file in WAL mode; Postgres when
//! `AGENTS_TEST_POSTGRES_URL` is set); the store traffic of a step with one tool call, before
//! (reply and result journaled, commit) and after (under a lease: reply, the call's intent and
//! result journaled and the commit, each checking the fencing token; timed from the first
//! journal entry to the commit, the step itself made up untimed); the load time of a
//! 10,000-message session, and (printed) the bytes stored per message.
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
use agents_sessions::{
    Commit, LeaseRequest, PostgresSessionStore, SessionStore, SqliteSessionStore,
};
mod common;

use common::{config, runtime};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use messages::{Message, Messages};
use sqlx::Row;

fn commit(encoder: &mut StateEncoder, state: &AgentState) -> Commit {
    let mut commit = Commit::new(state, encoder.encode(state).unwrap());
    commit.commit_id = uuid_like(state);
    commit
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
/// `rt` is the runtime the store was opened in: a pool's connections belong to the runtime
/// that opened them, and die with it.
fn bench_commits(
    c: &mut Criterion,
    rt: &tokio::runtime::Runtime,
    backend: &str,
    store: &dyn SessionStore,
) {
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

/// What a step journals for a model reply or a call (the size of a small tool execution).
const JOURNAL_BODY: &str = r#"{"call":{"id":"call_1","name":"read_file","arguments":{"path":"notes/todo.txt"}},"outcome":{"status":"success","content":"1. buy milk\n2. call the plumber\n3. write the report"},"started_at":"2026-11-26T03:00:00Z","completed_at":"2026-11-26T03:00:00.002Z"}"#;

/// Per iteration: the store traffic of a step with one tool call. `fenced`: under a lease, with
/// the call's intent (after this change); otherwise the reply and result journaled and the
/// commit, no lease (before).
fn bench_step_with_call(
    c: &mut Criterion,
    rt: &tokio::runtime::Runtime,
    backend: &str,
    store: &dyn SessionStore,
    fenced: bool,
) {
    let label = if fenced { "after" } else { "before" };
    let mut group = c.benchmark_group(format!("sessions/step_with_call/{label}"));
    for len in [10usize, 1_000, 10_000] {
        let id = format!("bench-call-{label}-{backend}-{len}-{}", std::process::id());
        let lease = fenced.then(|| {
            let request = LeaseRequest {
                owner: "bench".into(),
                pid: std::process::id(),
                host: "bench".into(),
                now: chrono::Utc::now(),
                ttl: std::time::Duration::from_secs(3600),
                take_over: None,
            };
            rt.block_on(store.acquire_lease(&id, &request))
                .unwrap()
                .token
        });
        let mut encoder = StateEncoder::new();
        let mut state = state_with_history(len);
        let mut first = commit(&mut encoder, &state);
        first.lease = lease;
        let mut version = rt.block_on(store.write(&id, 0, &first)).unwrap();
        let mut i = 0;
        group.bench_function(BenchmarkId::new(backend, len), |b| {
            // Timed: the store traffic and the encoding of the commit. Not timed: making up
            // the next step (the loop does that whatever the store).
            b.iter_custom(|iterations| {
                let mut timed = std::time::Duration::ZERO;
                for _ in 0..iterations {
                    i += 1;
                    state = next_step(std::mem::take(&mut state), i);
                    let next = version + 1;
                    let started = std::time::Instant::now();
                    rt.block_on(async {
                        store
                            .journal_put(&id, next, "reply:reply", JOURNAL_BODY, lease)
                            .await
                            .unwrap();
                        if fenced {
                            store
                                .journal_put(&id, next, "intent:0:call_1", JOURNAL_BODY, lease)
                                .await
                                .unwrap();
                        }
                        store
                            .journal_put(&id, next, "tool:0:call_1", JOURNAL_BODY, lease)
                            .await
                            .unwrap();
                    });
                    let mut step = commit(&mut encoder, &state);
                    step.lease = lease;
                    version = rt.block_on(store.write(&id, version, &step)).unwrap();
                    timed += started.elapsed();
                }
                timed
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
    bench_commits(c, &rt, "sqlite_wal", &sqlite);
    for fenced in [false, true] {
        bench_step_with_call(c, &rt, "sqlite_wal", &sqlite, fenced);
    }
    match std::env::var("AGENTS_TEST_POSTGRES_URL") {
        Ok(url) => {
            let postgres = rt.block_on(PostgresSessionStore::connect(&url)).unwrap();
            bench_commits(c, &rt, "postgres", &postgres);
            for fenced in [false, true] {
                bench_step_with_call(c, &rt, "postgres", &postgres, fenced);
            }
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
