//! `AppendContextMetadata`: the agent's metadata, shown to the model once per change.

use messages::Message;
use serde_json::Value;

use crate::processing::InlineProcessor;
use crate::records::agent_error::AgentError;
use crate::state::agent_state::AgentState;
use crate::state::sections::DEFAULT_SECTION;

/// Store parameter holding the last metadata document shown to the model.
pub const CONTEXT_METADATA_PARAMETER: &str = "context_metadata_shown";

/// Metadata key marking the message this processor appends.
pub const CONTEXT_METADATA_KEY: &str = "context_metadata";

/// Post-step: when an execution stops and the agent's metadata is non-empty and differs from
/// what was last shown, appends one user message with the metadata as a JSON block to
/// `messages` (before the final answer, given the standard order), so later turns see it.
///
/// Unlike the original (which appended the block after *every* step), the block is written
/// once per change, so a long conversation does not fill up with copies.
#[derive(Clone, Copy, Debug, Default)]
pub struct AppendContextMetadata;

impl InlineProcessor for AppendContextMetadata {
    fn after(&self, state: AgentState) -> Result<AgentState, AgentError> {
        let stopping = state.is_stopping();
        if !stopping || state.metadata().is_empty() {
            return Ok(state);
        }
        let document = state.metadata().to_value();
        let already_shown = state.store().parameters().get(CONTEXT_METADATA_PARAMETER);
        if already_shown == Some(&document) {
            return Ok(state);
        }
        let pretty =
            serde_json::to_string_pretty(&document).unwrap_or_else(|_| document.to_string());
        let message = Message::user(format!("Context metadata:\n```json\n{pretty}\n```"))
            .with_metadata(CONTEXT_METADATA_KEY, Value::Bool(true));
        let store = state
            .store()
            .section(DEFAULT_SECTION)
            .append(message)
            .with_parameter(CONTEXT_METADATA_PARAMETER, document);
        Ok(state.with_store(store))
    }
}
