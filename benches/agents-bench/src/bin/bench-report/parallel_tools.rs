//! Parallel tools: eight 100 ms tool calls in one step, in parallel and in sequence.

use std::time::{Duration, Instant};

use agents_bench::{criteria, sleep_tool, ReplyModel};
use agents_core::{Agent, AgentState};
use agents_processing::{standard_processors, TraceRetention};
use drivers_toolcalling::ToolCallingDriver;
use messages::ToolCall;
use serde_json::json;

/// Wall time of one execution (tool step plus answer step) with eight 100 ms calls.
#[derive(Debug)]
pub struct ParallelTools {
    pub calls: usize,
    pub tool_delay: Duration,
    pub parallel: Duration,
    pub sequential: Duration,
}

const CALLS: usize = 8;
const ANSWER: &str = "All eight checks passed.";

pub fn measure() -> Result<ParallelTools, String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let delay = Duration::from_millis(100);
    let run = |parallel: bool| -> Result<Duration, String> {
        let calls = (0..CALLS)
            .map(|i| ToolCall::new(format!("call_{i}"), "check", json!({"n": i})))
            .collect();
        let driver = ToolCallingDriver::new(ReplyModel::new(calls, ANSWER))
            .with_parallel_tool_calls(parallel);
        let agent = Agent::new(driver)
            .with_tool(sleep_tool("check", delay))
            .with_criteria(criteria(10))
            .with_processors(standard_processors(TraceRetention::Ephemeral));
        let started = Instant::now();
        let done = rt
            .block_on(agent.execute(AgentState::new().with_user_message("Run all checks")))
            .map_err(|e| e.to_string())?;
        let elapsed = started.elapsed();
        let answered = done.final_response().is_some_and(|m| m.text() == ANSWER);
        let executed = done
            .step_executions()
            .get(0)
            .map(|e| e.step().trace_messages().len())
            .unwrap_or(0);
        if !answered || executed != CALLS + 1 {
            return Err(format!(
                "parallel tools run did not finish as scripted (answered {answered}, trace {executed})"
            ));
        }
        Ok(elapsed)
    };
    // Best of three, to keep scheduler noise out.
    let best = |parallel: bool| -> Result<Duration, String> {
        let mut best = Duration::MAX;
        for _ in 0..3 {
            best = best.min(run(parallel)?);
        }
        Ok(best)
    };
    Ok(ParallelTools {
        calls: CALLS,
        tool_delay: delay,
        parallel: best(true)?,
        sequential: run(false)?,
    })
}
