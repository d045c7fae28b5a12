//! `ExecutionTimeLimit`: a guard on wall time.

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use crate::{AgentState, ContinuationCriterion, ContinuationEvaluation, StopReason};

/// The name this criterion reports in its evaluations.
const NAME: &str = "ExecutionTimeLimit";

/// Forbids another step once `max` elapsed since the execution started.
///
/// It measures with [`tokio::time::Instant`], so tests with a paused tokio clock control it.
/// In the agent loop the baseline is the start of the execution being evaluated, so one agent
/// (and one instance) can run many executions at once, each with its own budget. Evaluated
/// outside the loop, it uses the time of the last [`ContinuationCriterion::execution_started`]
/// call, or of its first evaluation.
#[derive(Debug)]
pub struct ExecutionTimeLimit {
    max: Duration,
    started: Mutex<Option<Instant>>,
}

impl ExecutionTimeLimit {
    /// A limit of `max`.
    pub fn new(max: Duration) -> Self {
        Self {
            max,
            started: Mutex::new(None),
        }
    }

    fn elapsed(&self) -> Duration {
        let start = crate::continuation::execution_start::current().unwrap_or_else(|| {
            let mut started = self.started.lock().unwrap_or_else(|e| e.into_inner());
            *started.get_or_insert_with(Instant::now)
        });
        Instant::now().saturating_duration_since(start)
    }
}

impl ContinuationCriterion for ExecutionTimeLimit {
    fn evaluate(&self, _state: &AgentState) -> ContinuationEvaluation {
        let elapsed = self.elapsed();
        if elapsed >= self.max {
            return ContinuationEvaluation::forbid(NAME, StopReason::TimeLimit).with_reason(
                format!(
                    "time limit reached: {:.1}s of {:.1}s",
                    elapsed.as_secs_f64(),
                    self.max.as_secs_f64()
                ),
            );
        }
        ContinuationEvaluation::allow(NAME)
    }

    fn name(&self) -> &str {
        NAME
    }

    fn execution_started(&self, at: Instant) {
        *self.started.lock().unwrap_or_else(|e| e.into_inner()) = Some(at);
    }
}
