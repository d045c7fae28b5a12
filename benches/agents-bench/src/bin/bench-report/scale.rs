//! Scale: many concurrent executions on one tokio runtime, with a tool that sleeps 10 ms.

use std::time::{Duration, Instant};

use agents_bench::{criteria, peak_rss_kib, rss_kib, sleep_tool, ReplyModel};
use agents_core::{Agent, AgentState};
use agents_processing::{standard_processors, TraceRetention};
use drivers_toolcalling::ToolCallingDriver;
use messages::ToolCall;
use serde_json::json;

/// What the scale run measured.
#[derive(Debug)]
pub struct Scale {
    pub executions: usize,
    pub completed_with_answer: usize,
    pub failed: usize,
    pub wall: Duration,
    pub worker_threads: usize,
    pub baseline_rss_kib: u64,
    pub peak_rss_kib: u64,
    /// RSS above its own baseline of a fresh process holding `executions` finished states.
    pub held_states_rss_kib: u64,
}

impl Scale {
    /// Peak memory above the baseline per in-flight execution, in bytes.
    pub fn peak_bytes_per_execution(&self) -> f64 {
        (self.peak_rss_kib.saturating_sub(self.baseline_rss_kib)) as f64 * 1024.0
            / self.executions as f64
    }

    /// Memory above the baseline per finished state held in memory, in bytes.
    pub fn bytes_per_held_state(&self) -> f64 {
        (self
            .held_states_rss_kib
            .saturating_sub(self.baseline_rss_kib)) as f64
            * 1024.0
            / self.executions as f64
    }
}

const ANSWER: &str = "The job finished.";

fn agent() -> Agent {
    Agent::new(ToolCallingDriver::new(ReplyModel::new(
        vec![ToolCall::new("call_1", "wait", json!({"job": "build"}))],
        ANSWER,
    )))
    .with_tool(sleep_tool("wait", Duration::from_millis(10)))
    .with_criteria(criteria(10))
    .with_processors(standard_processors(TraceRetention::Ephemeral))
}

/// Memory of held states, measured in a fresh child process (this one's allocator still holds
/// the memory of the concurrent run, which would hide the states' own size).
fn held_states_rss(executions: usize) -> Result<u64, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let output = std::process::Command::new(exe)
        .args(["--held-states", &executions.to_string()])
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.lines()
        .find_map(|line| line.strip_prefix("held_kib="))
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| format!("held-states child failed: {text}"))
}

/// The child's side: run `executions` executions in batches of 100, hold every finished state,
/// and print the RSS growth in KiB as `held_kib=N`.
pub fn held_states_child(executions: usize) -> Result<(), String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let agent = agent();
    rt.block_on(agent.execute(AgentState::new().with_user_message("warm up")))
        .map_err(|e| e.to_string())?;
    let baseline = rss_kib().unwrap_or(0);
    let mut states = Vec::with_capacity(executions);
    rt.block_on(async {
        for batch in 0..executions.div_ceil(100) {
            let runs = (0..100.min(executions - batch * 100)).map(|i| {
                agent.execute(
                    AgentState::new().with_user_message(format!("Run job {}", batch * 100 + i)),
                )
            });
            for result in futures::future::join_all(runs).await {
                states.push(result.map_err(|e| e.to_string())?);
            }
        }
        Ok::<_, String>(())
    })?;
    let held = rss_kib().unwrap_or(0).saturating_sub(baseline);
    let answered = states
        .iter()
        .filter(|s| s.final_response().is_some_and(|m| m.text() == ANSWER))
        .count();
    if answered != executions {
        return Err(format!(
            "only {answered} of {executions} held states answered"
        ));
    }
    println!("held_kib={held}");
    Ok(())
}

pub fn measure(executions: usize) -> Result<Scale, String> {
    let worker_threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(worker_threads)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let agent = agent();
    // Warm the runtime and the allocator with one run, then take the baseline.
    rt.block_on(agent.execute(AgentState::new().with_user_message("warm up")))
        .map_err(|e| e.to_string())?;
    let baseline_rss_kib = rss_kib().unwrap_or(0);
    let started = Instant::now();
    let results = rt.block_on(async {
        let mut handles = Vec::with_capacity(executions);
        for i in 0..executions {
            let agent = agent.clone();
            let state = AgentState::new().with_user_message(format!("Run job {i}"));
            handles.push(tokio::spawn(async move { agent.execute(state).await }));
        }
        let mut results = Vec::with_capacity(executions);
        for handle in handles {
            results.push(handle.await);
        }
        results
    });
    let wall = started.elapsed();
    let peak = peak_rss_kib().unwrap_or(0);
    let mut states = Vec::with_capacity(executions);
    let mut failed = 0;
    for result in results {
        match result {
            Ok(Ok(state)) => states.push(state),
            _ => failed += 1,
        }
    }
    let completed_with_answer = states
        .iter()
        .filter(|s| s.final_response().is_some_and(|m| m.text() == ANSWER))
        .count();
    drop(states);
    let held_states_rss_kib = held_states_rss(executions)?;
    let scale = Scale {
        executions,
        completed_with_answer,
        failed,
        wall,
        worker_threads,
        baseline_rss_kib,
        peak_rss_kib: peak,
        held_states_rss_kib,
    };
    if scale.completed_with_answer != executions || scale.failed != 0 {
        return Err(format!(
            "executions lost: {} of {executions} finished with the answer, {} failed",
            scale.completed_with_answer, scale.failed
        ));
    }
    Ok(scale)
}
