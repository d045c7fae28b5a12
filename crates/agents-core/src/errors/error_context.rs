//! `ErrorContext`: the failure situation the error policy judges.

use serde::{Deserialize, Serialize};

use crate::records::agent_step::AgentStep;
use crate::records::error_type::ErrorType;
use crate::state::agent_state::AgentState;

/// The failures of the current step and the run so far.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorContext {
    /// The class of the current step's first error.
    pub error_type: ErrorType,
    /// Failed steps in a row, ending with the current one (0 when it did not fail).
    pub consecutive_failures: u32,
    /// Failed steps in this execution, the current one included.
    pub total_failures: u32,
    /// The first error's message.
    pub message: Option<String>,
    /// The first failed tool's name, for tool errors.
    pub tool_name: Option<String>,
}

impl ErrorContext {
    /// No failure.
    pub fn none() -> Self {
        Self {
            error_type: ErrorType::Unknown,
            consecutive_failures: 0,
            total_failures: 0,
            message: None,
            tool_name: None,
        }
    }

    /// The failure context of `state`'s last recorded step.
    ///
    /// The type is the first error's: a failed tool execution is [`ErrorType::Tool`]; a step
    /// error keeps the type it was classified with (rate limits stay rate limits, see
    /// [`AgentError::error_type`](crate::AgentError::error_type)).
    pub fn from_state(state: &AgentState) -> Self {
        let Some(step) = state.current_step() else {
            return Self::none();
        };
        if !judged(step) {
            return Self::none();
        }
        let (error_type, message, tool_name) = first_error(step);
        let steps: Vec<&AgentStep> = state.steps().collect();
        let consecutive = steps.iter().rev().take_while(|s| judged(s)).count();
        let total = steps.iter().filter(|s| judged(s)).count();
        Self {
            error_type,
            consecutive_failures: saturating_u32(consecutive),
            total_failures: saturating_u32(total),
            message,
            tool_name,
        }
    }
}

/// Whether `step` has an error the policy judges. A call a crash interrupted
/// ([`ToolFailureKind::Interrupted`](crate::ToolFailureKind::Interrupted)) is not one: its
/// result tells the model it may or may not have taken effect, and the model decides.
fn judged(step: &AgentStep) -> bool {
    !step.errors().is_empty() || judged_tool_errors(step).next().is_some()
}

fn judged_tool_errors(
    step: &AgentStep,
) -> impl Iterator<Item = &crate::records::tool_execution::ToolExecution> {
    step.tool_executions().errors().filter(|e| {
        e.failure_kind() != Some(crate::records::tool_execution::ToolFailureKind::Interrupted)
    })
}

fn first_error(step: &AgentStep) -> (ErrorType, Option<String>, Option<String>) {
    if let Some(execution) = judged_tool_errors(step).next() {
        return (
            ErrorType::Tool,
            execution.error_message().map(str::to_owned),
            Some(execution.name().to_owned()),
        );
    }
    match step.errors().first() {
        Some(error) => (error.error_type, Some(error.message.clone()), None),
        None => (ErrorType::Unknown, None, None),
    }
}

fn saturating_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
