//! `ApplyCachedContext`: the agent's fixed request prefix (system prompt, tools).

use std::sync::Arc;

use agents_core::{AgentError, AgentState, CachedContext};

use crate::InlineProcessor;

/// Pre-step: puts the configured [`CachedContext`] (system prompt, tool schemas, tool choice,
/// response format) into the state, by default only when the state has none yet (so a state
/// restored from a checkpoint keeps its own).
#[derive(Clone, Debug, Default)]
pub struct ApplyCachedContext {
    context: Arc<CachedContext>,
    only_when_empty: bool,
}

impl ApplyCachedContext {
    /// Applies `context` to states that have no cached context.
    pub fn new(context: CachedContext) -> Self {
        Self {
            context: Arc::new(context),
            only_when_empty: true,
        }
    }

    /// Applies `context` before every step, replacing what the state has.
    pub fn always(context: CachedContext) -> Self {
        Self {
            context: Arc::new(context),
            only_when_empty: false,
        }
    }
}

impl InlineProcessor for ApplyCachedContext {
    fn can_process(&self, state: &AgentState) -> bool {
        !self.context.is_empty() && (!self.only_when_empty || state.cached_context().is_empty())
    }

    fn before(&self, state: AgentState) -> Result<AgentState, AgentError> {
        Ok(state.with_shared_cached_context(Arc::clone(&self.context)))
    }
}
