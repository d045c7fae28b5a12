//! What running on Restate costs, side by side in one run on one machine: the time per step
//! of the same six-step execution (five tool steps and an answer, a model and a tool that
//! answer at once) in process, through the Postgres session store (a commit per step), and
//! through Restate (each model and tool call a journal entry, each step's state journaled
//! and stored); then sessions per second with one and two service instances.
//!
//! `cargo bench -p agents-restate --bench overhead` with a Restate server
//! (`cargo xtask restate start`, export `AGENTS_TEST_RESTATE_INGRESS`/`ADMIN`) and, for the
//! Postgres column, `AGENTS_TEST_POSTGRES_URL` (`cargo xtask pg start`). Prints a markdown
//! table (docs/distributed.md keeps one). `--runs N` (default 30), `--sessions N` (default
//! 60).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use agents_core::{
    Agent, AgentState, ContinuationCriteria, FunctionTool, StepsLimit, ToolCallPresenceCheck,
};
use agents_restate::testing::RoundRobinProxy;
use agents_restate::{register_deployment, serve, AgentSession, SessionClient};
use agents_sessions::{AgentSessionExt, PostgresSessionStore};
use async_trait::async_trait;
use drivers_toolcalling::ToolCallingDriver;
use inference::{InferenceError, InferenceRequest, InferenceResponse, LanguageModel};
use messages::{Role, ToolCall};
use serde_json::json;

const TOOL_STEPS: usize = 5;
const STEPS: usize = TOOL_STEPS + 1;

/// Five tool calls, one per step, then the answer; decided from the conversation.
struct Steps;

#[async_trait]
impl LanguageModel for Steps {
    async fn complete(
        &self,
        request: InferenceRequest,
    ) -> Result<InferenceResponse, InferenceError> {
        let made = request
            .messages
            .iter()
            .filter(|m| m.role() == Role::Assistant && m.has_tool_calls())
            .count();
        if made >= TOOL_STEPS {
            return Ok(InferenceResponse::text("done"));
        }
        Ok(InferenceResponse::with_tool_calls([ToolCall::new(
            format!("call_{made}"),
            "noop",
            json!({ "n": made }),
        )]))
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct N {
    n: usize,
}

fn agent() -> Agent {
    let noop = FunctionTool::new("noop", "Does nothing.", |args: N| async move {
        Ok::<_, String>(format!("ok {}", args.n))
    });
    Agent::new(ToolCallingDriver::new(Steps).with_parallel_tool_calls(false))
        .with_tool(noop)
        .with_processors(agents_processing::standard_processors(
            agents_processing::TraceRetention::Ephemeral,
        ))
        .with_criteria(
            ContinuationCriteria::new()
                .with(ToolCallPresenceCheck::new())
                .with(StepsLimit::new(20)),
        )
}

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn per_step(total: Duration, runs: usize) -> f64 {
    total.as_secs_f64() * 1e3 / (runs * STEPS) as f64
}

async fn start_instance(name: &str) -> (std::net::SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let session = AgentSession::new(Arc::new(agent())).with_name(name);
    tokio::spawn(async move { serve(session, listener, stopped).await.unwrap() });
    (addr, stop)
}

/// Sessions per second: `sessions` executions sent at once through `client`.
async fn throughput(client: &SessionClient, prefix: &str, sessions: usize) -> f64 {
    let started = Instant::now();
    let replies = futures::future::join_all((0..sessions).map(|i| {
        let client = client.clone();
        let id = format!("{prefix}{i}");
        async move { client.send(&id, "go").await }
    }))
    .await;
    let elapsed = started.elapsed();
    for reply in replies {
        assert_eq!(reply.unwrap().steps, STEPS);
    }
    sessions as f64 / elapsed.as_secs_f64()
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` and nextest's `--list` run
    // bench targets too, and get nothing to do.
    if !std::env::args().any(|arg| arg == "--bench") {
        return;
    }
    let runs = arg("--runs", 30);
    let sessions = arg("--sessions", 60);
    let (Ok(ingress), Ok(admin)) = (
        std::env::var("AGENTS_TEST_RESTATE_INGRESS"),
        std::env::var("AGENTS_TEST_RESTATE_ADMIN"),
    ) else {
        println!("SKIPPED: no Restate server (cargo xtask restate start, export AGENTS_TEST_RESTATE_INGRESS/ADMIN)");
        return;
    };
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();

    // In process.
    let local = agent();
    let _ = local
        .execute(AgentState::new().with_user_message("go"))
        .await;
    let started = Instant::now();
    for _ in 0..runs {
        let state = local
            .execute(AgentState::new().with_user_message("go"))
            .await
            .unwrap();
        assert_eq!(state.step_count(), STEPS);
    }
    let in_process = per_step(started.elapsed(), runs);

    // The Postgres session store.
    let postgres = match std::env::var("AGENTS_TEST_POSTGRES_URL") {
        Ok(url) => {
            let store = PostgresSessionStore::connect(&url).await.unwrap();
            let _ = local
                .session(&store, format!("warm-{stamp}"))
                .send("go")
                .await;
            let started = Instant::now();
            for i in 0..runs {
                let state = local
                    .session(&store, format!("bench-{stamp}-{i}"))
                    .send("go")
                    .await
                    .unwrap();
                assert_eq!(state.step_count(), STEPS);
            }
            Some(per_step(started.elapsed(), runs))
        }
        Err(_) => None,
    };

    // Restate, one instance.
    let one = format!("bench_one_{stamp}");
    let (addr, _stop_one) = start_instance(&one).await;
    register_deployment(&admin, &format!("http://{addr}"))
        .await
        .unwrap();
    let client = SessionClient::new(&ingress).unwrap().with_object_name(&one);
    client.send("warm", "go").await.unwrap();
    let started = Instant::now();
    for i in 0..runs {
        let reply = client.send(&format!("r{i}"), "go").await.unwrap();
        assert_eq!(reply.steps, STEPS);
    }
    let restate = per_step(started.elapsed(), runs);
    let one_instance = throughput(&client, "t", sessions).await;

    // Restate, two instances behind one URI.
    let two = format!("bench_two_{stamp}");
    let (a, _stop_a) = start_instance(&two).await;
    let (b, _stop_b) = start_instance(&two).await;
    let proxy = RoundRobinProxy::start(vec![a, b]).await.unwrap();
    register_deployment(&admin, &proxy.uri()).await.unwrap();
    let client = SessionClient::new(&ingress).unwrap().with_object_name(&two);
    client.send("warm", "go").await.unwrap();
    let two_instances = throughput(&client, "t", sessions).await;

    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load = load.split_whitespace().next().unwrap_or("?");
    println!("{STEPS}-step executions, {runs} runs each, one at a time; {sessions} sessions at once for the throughput; {cores} cores, load average {load}\n");
    println!("| | per step | per {STEPS}-step execution |");
    println!("|---|---:|---:|");
    for (label, value) in [
        ("in process (`Agent::execute`)", Some(in_process)),
        ("Postgres session store (`Session::send`)", postgres),
        (
            "Restate (`SessionClient::send` through the ingress)",
            Some(restate),
        ),
    ] {
        match value {
            Some(ms) => println!("| {label} | {ms:.2} ms | {:.1} ms |", ms * STEPS as f64),
            None => println!("| {label} | not measured (no AGENTS_TEST_POSTGRES_URL) | |"),
        }
    }
    println!("\n| Restate service instances | sessions per second |");
    println!("|---|---:|");
    println!("| 1 | {one_instance:.1} |");
    println!("| 2 (round-robin proxy) | {two_instances:.1} |");
}
