//! `AppendStepMessages`: legacy mode, every message a step produced persists.

use crate::processing::InlineProcessor;
use crate::records::agent_error::AgentError;
use crate::state::agent_state::AgentState;
use crate::state::sections::DEFAULT_SECTION;

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
        if output.is_empty()
            || state
                .store()
                .section(DEFAULT_SECTION)
                .messages()
                .ends_with_same(&output)
        {
            // Nothing, or already in place: a step held for approval, now resolved in place.
            return Ok(state);
        }
        Ok({
            let store = state.store().section(DEFAULT_SECTION).append(output);
            state.with_store(store)
        })
    }
}
