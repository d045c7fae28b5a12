//! `EmptyResponseCheck`: an empty reply is not an answer.

use crate::continuation::criterion::ContinuationCriterion;
use crate::records::decision::StopReason;
use crate::records::evaluation::ContinuationEvaluation;
use crate::state::agent_state::AgentState;

/// The name this criterion reports in its evaluations.
const NAME: &str = "EmptyResponseCheck";

/// Forbids another step, with [`StopReason::EmptyResponse`], when the last step's model reply
/// was empty: no text, no tool calls, no tool executions and no response messages. (Drivers
/// nudge the model once before they record such a step.) Otherwise it allows.
///
/// ```
/// use agents_core::{AgentState, AgentStep, ContinuationCriterion, ContinuationDecision, EmptyResponseCheck, StopReason};
/// use inference::InferenceResponse;
///
/// let empty = AgentStep::new(vec![]).with_inference_response(InferenceResponse::text("  "));
/// let state = agents_core::testing::with_recorded_step(AgentState::new(), empty);
/// let evaluation = EmptyResponseCheck::new().evaluate(&state);
/// assert_eq!(evaluation.decision, ContinuationDecision::Forbid);
/// assert_eq!(evaluation.stop_reason, Some(StopReason::EmptyResponse));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EmptyResponseCheck;

impl EmptyResponseCheck {
    /// The check.
    pub fn new() -> Self {
        Self
    }
}

impl ContinuationCriterion for EmptyResponseCheck {
    fn evaluate(&self, state: &AgentState) -> ContinuationEvaluation {
        let empty = state.current_step().is_some_and(|step| {
            step.inference_response().is_some_and(|response| {
                response.content().trim().is_empty() && !response.has_tool_calls()
            }) && !step.has_tool_calls()
                && step.tool_executions().is_empty()
                && step.response_messages().is_empty()
        });
        if empty {
            ContinuationEvaluation::forbid(NAME, StopReason::EmptyResponse)
                .with_reason("the model's reply was empty (no text and no tool calls)")
        } else {
            ContinuationEvaluation::allow(NAME)
        }
    }

    fn name(&self) -> &str {
        NAME
    }
}
