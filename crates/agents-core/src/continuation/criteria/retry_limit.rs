//! `RetryLimit`: a guard on failed steps in a row.

use crate::continuation::criterion::ContinuationCriterion;
use crate::errors::error_context::ErrorContext;
use crate::records::decision::StopReason;
use crate::records::evaluation::ContinuationEvaluation;
use crate::state::agent_state::AgentState;

/// The name this criterion reports in its evaluations.
const NAME: &str = "RetryLimit";

/// Forbids another step once `max` steps in a row failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryLimit {
    max: u32,
}

impl RetryLimit {
    /// A limit of `max` consecutive failed steps.
    pub fn new(max: u32) -> Self {
        Self { max }
    }
}

impl ContinuationCriterion for RetryLimit {
    fn evaluate(&self, state: &AgentState) -> ContinuationEvaluation {
        let failures = ErrorContext::from_state(state).consecutive_failures;
        if failures >= self.max {
            return ContinuationEvaluation::forbid(NAME, StopReason::RetryLimit).with_reason(
                format!("retry limit reached: {failures} failed steps in a row"),
            );
        }
        ContinuationEvaluation::allow(NAME)
    }

    fn name(&self) -> &str {
        NAME
    }
}
