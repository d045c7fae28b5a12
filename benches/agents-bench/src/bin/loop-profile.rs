//! `loop-profile`: runs the overhead harness's 2-step run in a loop, for
//! `valgrind --tool=callgrind` or `perf` (criterion's timing loop is not deterministic enough
//! to count instructions per run), without building `benches/rig-compare`.
//!
//! ```text
//! loop-profile HISTORY RUNS [scripted|http|transfer]
//! loop-profile HISTORY RUNS scripted FEATURE
//! ```
//!
//! Each run executes `tool_calling_agent` (a `noop` tool call, then the answer; separated
//! mode) on one current-thread runtime, from a state holding HISTORY messages and the
//! request. Instructions per run are (Ir(RUNS) − Ir(R)) / (RUNS − R) for some R ≥ 1 (with
//! HTTP, the first run encodes the whole history). The model is:
//! - `scripted` (the default): the zero-latency scripted one; each run is
//!   `agent.execute(start.clone().with_user_message(..))`, as measured since session 7;
//!   with FEATURE, the agent of that variant of `agents_bench::features::FEATURES`
//!   (`reply-checks`, `tool-limits`, ...: one default off or one opt-in on), for
//!   `cargo xtask bench --features`;
//! - `http`: the real `OpenAiCompatible` provider against the local mock server, as the
//!   `http_step/run` bench (`agent.execute(start.clone())`, the request already in `start`);
//!   the instructions include the mock server's thread, and not the kernel's copy of the
//!   body;
//! - `transfer`: no agent at all: the two requests of such a run (`two_step_requests`: as
//!   many bytes as the run sends), encoded once, POSTed raw to the mock server as the provider
//!   sends them, as `http_step/transfer` does. `http` minus
//!   `transfer` is the step's own work beside moving the bytes.
// A profiling driver: it prints the runs it made, so the work cannot be optimised away.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use agents_bench::features::{feature, FEATURES};
use agents_bench::mock_openai::http_step_agent;
use agents_bench::{answered, history, two_step_requests};
use agents_core::{Agent, AgentState};

fn main() -> std::process::ExitCode {
    match run() {
        Ok(runs) => {
            println!("{runs} runs");
            std::process::ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("loop-profile: {message}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<u64, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (history_len, runs, mode, variant) = match args.as_slice() {
        [history_len, runs] => (history_len, runs, "scripted", "defaults"),
        [history_len, runs, mode] => (history_len, runs, mode.as_str(), "defaults"),
        [history_len, runs, mode, variant] if mode == "scripted" => {
            (history_len, runs, "scripted", variant.as_str())
        }
        _ => {
            return Err(
                "usage: loop-profile HISTORY RUNS [scripted [FEATURE]|http|transfer]".into(),
            )
        }
    };
    let history_len: usize = history_len.parse().map_err(|_| "HISTORY: a number")?;
    let runs: u64 = runs.parse().map_err(|_| "RUNS: a number")?;
    let history = AgentState::new().with_messages(history(history_len));
    if mode == "scripted" {
        // `defaults` is `tool_calling_agent` over the `noop`-then-answer model, separated mode.
        let agent = feature(variant)
            .ok_or_else(|| format!("unknown feature `{variant}`: {}", feature_names()))?
            .agent();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .map_err(|e| e.to_string())?;
        return rt.block_on(async {
            for _ in 0..runs {
                let start = history.clone().with_user_message(REQUEST);
                answered(agent.execute(start).await)?;
            }
            Ok(runs)
        });
    }
    let start = history.with_user_message(REQUEST);
    // The provider's timeouts need the timer, and its socket the I/O driver.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let (server, model, agent) = http_step_agent()?;
    match mode {
        "http" => rt.block_on(execute_runs(&agent, &start, runs)),
        "transfer" => {
            // A run first, so that the two bodies are encoded as the runs encode them.
            rt.block_on(execute_runs(&agent, &start, 1))?;
            let bodies = two_step_requests(&start)
                .iter()
                .map(|request| model.encode_request(request, false))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())?;
            let client = reqwest::Client::new();
            rt.block_on(async {
                for _ in 0..runs {
                    for body in &bodies {
                        let reply = server.post_chat(&client, body.for_attempt()).await;
                        std::hint::black_box(reply.map_err(|e| e.to_string())?);
                    }
                }
                Ok(runs)
            })
        }
        other => Err(format!(
            "unknown mode `{other}`: scripted, http or transfer"
        )),
    }
}

/// The variants' names, for an error.
fn feature_names() -> String {
    let names: Vec<&str> = FEATURES.iter().map(|feature| feature.name).collect();
    names.join(", ")
}

/// The request of every run.
const REQUEST: &str = "Run the tool, please.";

/// `runs` executions of `agent` from `start`.
async fn execute_runs(agent: &Agent, start: &AgentState, runs: u64) -> Result<u64, String> {
    for _ in 0..runs {
        answered(agent.execute(start.clone()).await)?;
    }
    Ok(runs)
}
