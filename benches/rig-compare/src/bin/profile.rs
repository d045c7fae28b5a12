//! Runs one side of the comparison `N` times in a loop, for profilers (`perf`, `callgrind`):
//! `profile agents|rig [N] [history]`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use agents_bench::{state_with_history, tool_calling_agent, two_step_script, CycleModel};
use agents_processing::TraceRetention;
use rig_compare::{rig_agent, rig_history, run_rig, ANSWER, PROMPT};

fn main() {
    let mut args = std::env::args().skip(1);
    let side = args.next().unwrap_or_else(|| "agents".to_owned());
    let n: usize = args.next().map_or(100_000, |n| n.parse().unwrap());
    let len: usize = args.next().map_or(10, |n| n.parse().unwrap());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let start = std::time::Instant::now();
    match side.as_str() {
        "agents" => {
            let ours = tool_calling_agent(
                CycleModel::new(two_step_script()),
                TraceRetention::Ephemeral,
            );
            let state = state_with_history(len).with_user_message(PROMPT);
            for _ in 0..n {
                let done = rt.block_on(ours.execute(state.clone())).unwrap();
                assert_eq!(done.step_executions().len(), 2);
            }
        }
        "rig" => {
            let (rig, _model) = rig_agent().unwrap();
            let history = rig_history(len);
            for _ in 0..n {
                let answer = rt.block_on(run_rig(&rig, &history)).unwrap();
                assert_eq!(answer, ANSWER);
            }
        }
        other => panic!("unknown side {other}: agents or rig"),
    }
    let per_step = start.elapsed().as_secs_f64() * 1e6 / (n as f64 * 2.0);
    eprintln!("{side}: {per_step:.3} us per step over {n} executions");
}
