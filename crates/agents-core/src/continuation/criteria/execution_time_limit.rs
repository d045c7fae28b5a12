//! `ExecutionTimeLimit`: a guard on wall time.

use std::time::Duration;

use crate::continuation::criterion::ContinuationCriterion;
use crate::records::decision::StopReason;
use crate::records::evaluation::ContinuationEvaluation;
use crate::state::agent_state::AgentState;

/// The name this criterion reports in its evaluations.
const NAME: &str = "ExecutionTimeLimit";

/// Forbids another step once `max` elapsed since the execution started.
///
/// It reads the time the state records, both by the agent's [`Clock`](crate::Clock): from the
/// execution's start ([`AgentState::execution`]) to the end of the last step
/// ([`AgentState::updated_at`]). It keeps nothing itself, so one agent runs any number of
/// executions at once, each with its own budget, and a test with a
/// [`ManualClock`](crate::ManualClock) decides exactly when the limit is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExecutionTimeLimit {
    max: Duration,
}

impl ExecutionTimeLimit {
    /// A limit of `max`.
    pub fn new(max: Duration) -> Self {
        Self { max }
    }

    /// How long `state`'s execution has run, as recorded.
    fn elapsed(state: &AgentState) -> Duration {
        state
            .execution()
            .and_then(|execution| (state.updated_at() - execution.started_at()).to_std().ok())
            .unwrap_or_default()
    }
}

impl ContinuationCriterion for ExecutionTimeLimit {
    fn evaluate(&self, state: &AgentState) -> ContinuationEvaluation {
        let elapsed = Self::elapsed(state);
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
}
