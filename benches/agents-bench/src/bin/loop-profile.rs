//! `loop-profile`: runs the overhead harness's 2-step run in a loop, for
//! `valgrind --tool=callgrind` or `perf` (criterion's timing loop is not deterministic enough
//! to count instructions per run), without building `benches/rig-compare`.
//!
//! ```text
//! loop-profile HISTORY RUNS
//! ```
//!
//! Each run is `agent.execute(start.clone().with_user_message(..))` on one current-thread
//! runtime, `start` holding HISTORY messages, the agent being `tool_calling_agent` (a `noop`
//! tool call, then the answer; separated mode). Instructions per run are
//! (Ir(RUNS) − Ir(0)) / RUNS.
// A profiling driver: it prints the runs it made, so the work cannot be optimised away.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use agents_bench::{history, tool_calling_agent, ReplyModel, ANSWER};
use agents_core::AgentState;
use agents_processing::TraceRetention;
use messages::ToolCall;
use serde_json::json;

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
    let [history_len, runs] = args.as_slice() else {
        return Err("usage: loop-profile HISTORY RUNS".into());
    };
    let history_len: usize = history_len.parse().map_err(|_| "HISTORY: a number")?;
    let runs: u64 = runs.parse().map_err(|_| "RUNS: a number")?;
    let agent = tool_calling_agent(
        ReplyModel::new(vec![ToolCall::new("call_1", "noop", json!({}))], ANSWER),
        TraceRetention::Ephemeral,
    );
    let start = AgentState::new().with_messages(history(history_len));
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async {
        for _ in 0..runs {
            let done = agent
                .execute(start.clone().with_user_message("Run the tool, please."))
                .await
                .map_err(|e| e.to_string())?;
            if done.final_response().map(|m| m.text()).as_deref() != Some(ANSWER) {
                return Err("the run did not end with the answer".to_owned());
            }
        }
        Ok(runs)
    })
}
