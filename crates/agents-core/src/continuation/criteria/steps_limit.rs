//! `StepsLimit`: a guard on the number of steps.

use crate::continuation::criterion::ContinuationCriterion;
use crate::records::decision::StopReason;
use crate::records::evaluation::ContinuationEvaluation;
use crate::state::agent_state::AgentState;

/// The name this criterion reports in its evaluations.
const NAME: &str = "StepsLimit";

/// Forbids another step once `max` steps ran in this execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepsLimit {
    max: usize,
}

impl StepsLimit {
    /// A limit of `max` steps.
    pub fn new(max: usize) -> Self {
        Self { max }
    }
}

impl ContinuationCriterion for StepsLimit {
    fn evaluate(&self, state: &AgentState) -> ContinuationEvaluation {
        let steps = state.step_count();
        if steps >= self.max {
            return ContinuationEvaluation::forbid(NAME, StopReason::StepsLimit)
                .with_reason(format!("step limit reached: {steps} of {} steps", self.max));
        }
        ContinuationEvaluation::allow(NAME)
    }

    fn name(&self) -> &str {
        NAME
    }
}
