//! `AppendFinalResponse`: separated mode, only the final answer persists.

use std::sync::Arc;

use agents_core::{AgentError, AgentState, DEFAULT_SECTION};

use crate::retention::execution_digest;
use agents_core::InlineProcessor;

use crate::TraceRetention;

/// Post-step: appends to `messages` only the final answer of a step that made no tool calls
/// (the last assistant message of its response with text and no tool calls).
///
/// With [`TraceRetention::Digest`], a bounded digest of the execution's tool calls (calls and
/// result excerpts, see [`execution_digest`]) is persisted right before the answer (or alone, when the execution stops without an answer, e.g. on a
/// step limit). [`TraceRetention::Full`] is legacy mode and belongs to
/// [`AppendStepMessages`](crate::AppendStepMessages); here it behaves like `Ephemeral`.
#[derive(Clone, Debug, Default)]
pub struct AppendFinalResponse {
    retention: TraceRetention,
}

impl AppendFinalResponse {
    /// Appends final answers only (ephemeral trace).
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends final answers with the given retention of the trace.
    pub fn with_retention(retention: TraceRetention) -> Self {
        Self { retention }
    }
}

impl InlineProcessor for AppendFinalResponse {
    fn after(&self, state: AgentState) -> Result<AgentState, AgentError> {
        let Some(step) = state.current_step() else {
            return Ok(state);
        };
        let answer = if step.has_tool_calls() {
            None
        } else {
            step.final_response_shared().cloned()
        };
        let stopping = state.is_stopping();
        let digest = match &self.retention {
            TraceRetention::Digest(config) if answer.is_some() || stopping => {
                execution_digest(&state, config)
            }
            _ => Vec::new(),
        };
        if digest.is_empty() && answer.is_none() {
            return Ok(state);
        }
        let conversation = state.store().section(DEFAULT_SECTION).messages();
        let appended = conversation.extended_shared(digest.into_iter().map(Arc::new).chain(answer));
        Ok({
            let store = state.store().section(DEFAULT_SECTION).set(appended);
            state.with_store(store)
        })
    }
}
