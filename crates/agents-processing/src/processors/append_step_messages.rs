//! `AppendStepMessages`: legacy mode, every message a step produced persists.

use agents_core::{AgentError, AgentState, Next, DEFAULT_SECTION};
use async_trait::async_trait;

use crate::StateProcessor;

/// Post-step: appends the step's whole output (trace, then response) to `messages`.
///
/// This is the legacy behaviour: tool calls and tool results become part of the persistent
/// conversation.
#[derive(Clone, Copy, Debug, Default)]
pub struct AppendStepMessages;

#[async_trait]
impl StateProcessor for AppendStepMessages {
    async fn process(&self, state: AgentState, next: Next) -> Result<AgentState, AgentError> {
        let state = next(state).await?;
        let Some(step) = state.current_step() else {
            return Ok(state);
        };
        let output = step.output_messages();
        if output.is_empty() {
            return Ok(state);
        }
        let store = state.store().section(DEFAULT_SECTION).append(output);
        Ok(state.with_store(store))
    }
}
