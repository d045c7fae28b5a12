//! `AppendStepMessages`: legacy mode, every message a step produced persists.

use agents_core::{AgentError, AgentState, DEFAULT_SECTION};

use crate::InlineProcessor;

/// Post-step: appends the step's whole output (trace, then response) to `messages`.
///
/// This is the legacy behaviour: tool calls and tool results become part of the persistent
/// conversation.
#[derive(Clone, Copy, Debug, Default)]
pub struct AppendStepMessages;

impl InlineProcessor for AppendStepMessages {
    fn after(&self, state: AgentState) -> Result<AgentState, AgentError> {
        let Some(step) = state.current_step() else {
            return Ok(state);
        };
        let output = step.output_messages();
        if output.is_empty() {
            return Ok(state);
        }
        Ok(state.edit_store(|store| store.section_mut(DEFAULT_SECTION).append(output)))
    }
}
