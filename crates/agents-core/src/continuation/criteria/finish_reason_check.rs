//! `FinishReasonCheck`: stop on given finish reasons.

use inference::FinishReason;

use crate::continuation::criterion::ContinuationCriterion;
use crate::records::decision::StopReason;
use crate::records::evaluation::ContinuationEvaluation;
use crate::state::agent_state::AgentState;

/// The name this criterion reports in its evaluations.
const NAME: &str = "FinishReasonCheck";

/// Forbids another step when the last step's finish reason is one of `reasons`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FinishReasonCheck {
    reasons: Vec<FinishReason>,
}

impl FinishReasonCheck {
    /// A check for the given finish reasons (an empty list allows everything).
    pub fn new(reasons: impl IntoIterator<Item = FinishReason>) -> Self {
        Self {
            reasons: reasons.into_iter().collect(),
        }
    }
}

impl ContinuationCriterion for FinishReasonCheck {
    fn evaluate(&self, state: &AgentState) -> ContinuationEvaluation {
        let reason = state.current_step().and_then(|s| s.finish_reason());
        match reason {
            Some(reason) if self.reasons.contains(&reason) => {
                ContinuationEvaluation::forbid(NAME, StopReason::FinishReason)
                    .with_reason(format!("the model finished with `{reason:?}`"))
            }
            _ => ContinuationEvaluation::allow(NAME),
        }
    }

    fn name(&self) -> &str {
        NAME
    }
}
