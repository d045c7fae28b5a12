//! `AppendStepMessages`: legacy mode, every message a step produced persists.

use agents_core::{AgentError, AgentState, Next, DEFAULT_SECTION};
use async_trait::async_trait;

use crate::{run_inline, InlineProcessor, StateProcessor};

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
        let store = state.store().section(DEFAULT_SECTION).append(output);
        Ok(state.replace_store(store))
    }
}

#[async_trait]
impl StateProcessor for AppendStepMessages {
    fn as_inline(&self) -> Option<&dyn InlineProcessor> {
        Some(self)
    }

    async fn process(&self, state: AgentState, next: Next) -> Result<AgentState, AgentError> {
        run_inline(self, state, next).await
    }
}
