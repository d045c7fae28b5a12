//! `ApplyCachedContext`: a request prefix for the steps of one layer of the chain.

use std::sync::Arc;

use agents_core::{AgentError, AgentState, CachedContext, Next, StateProcessor};
use async_trait::async_trait;

/// Sends the inner steps with this [`CachedContext`] (system prompt, tool schemas, tool choice,
/// response format) instead of the agent's own.
///
/// The prefix is configuration, so it never enters the state: it travels with the step
/// through [`Next::with_cached_context`], and a state saved and restored into another agent
/// uses that agent's prefix. The usual way to give an agent a system prompt is
/// `Agent::with_cached_context` (or the facade builder's `with_system_prompt`); this layer is
/// for a prefix that only some steps should see (put a `can_process` condition on a wrapper).
#[derive(Clone, Debug, Default)]
pub struct ApplyCachedContext {
    context: Arc<CachedContext>,
}

impl ApplyCachedContext {
    /// A layer sending `context` with the inner steps.
    pub fn new(context: CachedContext) -> Self {
        Self {
            context: Arc::new(context),
        }
    }
}

#[async_trait]
impl StateProcessor for ApplyCachedContext {
    async fn process(&self, state: AgentState, next: Next<'_>) -> Result<AgentState, AgentError> {
        next.with_cached_context(Arc::clone(&self.context))
            .run(state)
            .await
    }
}
