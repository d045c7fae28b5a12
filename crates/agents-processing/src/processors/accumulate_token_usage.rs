//! `AccumulateTokenUsage`: conversation-wide token accounting in the store's parameters.

use agents_core::{AgentError, AgentState};
use serde_json::json;

use agents_core::InlineProcessor;

/// The store parameter this processor maintains.
pub const TOKEN_USAGE_PARAMETER: &str = "token_usage";

/// Post-step: when an execution stops, records in the message store's parameters
/// (`token_usage`) the conversation's total usage, the number of executions and the usage of
/// the execution that just ended. Parameters travel with the conversation (checkpoints) and
/// are never sent to the model, so dashboards and billing can read them without the loop.
#[derive(Clone, Copy, Debug, Default)]
pub struct AccumulateTokenUsage;

impl InlineProcessor for AccumulateTokenUsage {
    fn after(&self, state: AgentState) -> Result<AgentState, AgentError> {
        let stopping = state.is_stopping();
        if !stopping {
            return Ok(state);
        }
        let executions = state
            .store()
            .parameters()
            .get(TOKEN_USAGE_PARAMETER)
            .and_then(|v| v.get("executions"))
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0)
            + 1;
        let value = json!({
            "total": state.usage(),
            "executions": executions,
            "last_execution": state.execution_usage(),
        });
        let store = state.store().with_parameter(TOKEN_USAGE_PARAMETER, value);
        Ok(state.with_store(store))
    }
}
