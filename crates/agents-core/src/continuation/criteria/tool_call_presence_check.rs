//! `ToolCallPresenceCheck`: keep going while the model asks for tools.

use crate::continuation::criterion::ContinuationCriterion;
use crate::records::evaluation::ContinuationEvaluation;
use crate::state::agent_state::AgentState;

/// The name this criterion reports in its evaluations.
const NAME: &str = "ToolCallPresenceCheck";

/// Requests another step when the last step asked for tool calls (or before the first step);
/// otherwise says the work is done.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ToolCallPresenceCheck;

impl ToolCallPresenceCheck {
    /// The check.
    pub fn new() -> Self {
        Self
    }
}

impl ContinuationCriterion for ToolCallPresenceCheck {
    fn evaluate(&self, state: &AgentState) -> ContinuationEvaluation {
        match state.current_step() {
            None => {
                ContinuationEvaluation::request(NAME).with_reason("no step yet: run the first step")
            }
            Some(step) if step.has_tool_calls() => {
                ContinuationEvaluation::request(NAME).with_reason("the model asked for tool calls")
            }
            Some(_) => ContinuationEvaluation::stop(NAME)
                .with_reason("the model answered without tool calls"),
        }
    }

    fn name(&self) -> &str {
        NAME
    }
}
