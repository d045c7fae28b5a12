//! `TokenUsageLimit`: a guard on the tokens used by an execution.

use crate::continuation::criterion::ContinuationCriterion;
use crate::records::decision::StopReason;
use crate::records::evaluation::ContinuationEvaluation;
use crate::state::agent_state::AgentState;

/// The name this criterion reports in its evaluations.
const NAME: &str = "TokenUsageLimit";

/// Forbids another step once the execution used `max` tokens or more
/// ([`AgentState::execution_usage`] total).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenUsageLimit {
    max: u64,
}

impl TokenUsageLimit {
    /// A limit of `max` tokens.
    pub fn new(max: u64) -> Self {
        Self { max }
    }
}

impl ContinuationCriterion for TokenUsageLimit {
    fn evaluate(&self, state: &AgentState) -> ContinuationEvaluation {
        let used = state.execution_usage().total();
        if used >= self.max {
            return ContinuationEvaluation::forbid(NAME, StopReason::TokenLimit).with_reason(
                format!("token limit reached: {used} of {} tokens", self.max),
            );
        }
        ContinuationEvaluation::allow(NAME)
    }

    fn name(&self) -> &str {
        NAME
    }
}
