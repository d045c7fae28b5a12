//! The `StateProcessor` trait: one layer of middleware around a step.

use agents_core::{AgentError, AgentState, Next};
use async_trait::async_trait;

/// Middleware around each step of the agent loop, like a `tower` layer.
///
/// `process` receives the state and `next`, the rest of the chain (the inner processors and,
/// at the centre, the step itself: driver, continuation evaluation, recording). A processor can
/// act before calling `next` (pre-step), after it (post-step), or both. A processor that does
/// not call `next` cuts the step off: no driver call, no recording, and the inner processors do
/// not run (useful for guards; the loop then sees the state it returned).
///
/// `can_process` is asked on the state *before* `next` runs, so it only sees what existed
/// before the step. Post-step processors keep the default `true` and inspect the new state
/// (current step, continuation outcome) inside `process`, after `next`.
#[async_trait]
pub trait StateProcessor: Send + Sync {
    /// A short name for logs and tests.
    fn name(&self) -> &str {
        short_type_name(std::any::type_name::<Self>())
    }

    /// Whether this layer runs for `state`; when false, the chain skips straight to `next`.
    fn can_process(&self, _state: &AgentState) -> bool {
        true
    }

    /// Runs this layer.
    ///
    /// # Errors
    /// Whatever the layer or the rest of the chain reports; the loop treats it like a driver
    /// error and applies the error policy.
    async fn process(&self, state: AgentState, next: Next) -> Result<AgentState, AgentError>;

    /// This processor's synchronous form, when all its work happens right before and/or right
    /// after the step (most built-ins). The chain then runs it inline, without boxing a future
    /// per layer; `process` must behave the same (see [`run_inline`]).
    fn as_inline(&self) -> Option<&dyn InlineProcessor> {
        None
    }
}

/// A processor whose work is synchronous and wraps the step: [`before`](Self::before) the
/// rest of the chain runs, [`after`](Self::after) it returned. Like tower's `map_request` and
/// `map_response` layers.
///
/// Every `InlineProcessor` is a [`StateProcessor`] (a blanket implementation supplies
/// `process` through [`run_inline`] and `as_inline`), so implementing this trait is all it
/// takes; the chain then runs it without a future of its own.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use std::sync::Arc;
///
/// use agents_core::{AgentError, AgentState, Next};
/// use agents_processing::{InlineProcessor, StateProcessor, StateProcessors};
///
/// /// Marks every state that comes out of a step.
/// struct MarkStepped;
///
/// impl InlineProcessor for MarkStepped {
///     fn after(&self, state: AgentState) -> Result<AgentState, AgentError> {
///         Ok(state.with_metadata("stepped", true))
///     }
/// }
///
/// let chain = StateProcessors::new([Arc::new(MarkStepped) as Arc<dyn StateProcessor>]);
/// let step: Next = Box::new(|state| Box::pin(async move { Ok(state) }));
/// let state = chain.apply(AgentState::new(), step).await.unwrap();
/// assert!(state.metadata().contains_key("stepped"));
/// assert_eq!(chain.names(), ["MarkStepped"]);
/// # });
/// ```
pub trait InlineProcessor: Send + Sync {
    /// A short name for logs and tests.
    fn name(&self) -> &str {
        short_type_name(std::any::type_name::<Self>())
    }

    /// Whether this layer runs for `state` (asked before `before`, as for any processor).
    fn can_process(&self, _state: &AgentState) -> bool {
        true
    }

    /// Pre-step work, on the state as it reaches this layer.
    ///
    /// # Errors
    /// An error stops the step: the inner layers and the step do not run.
    fn before(&self, state: AgentState) -> Result<AgentState, AgentError> {
        Ok(state)
    }

    /// Post-step work, on the state the inner layers returned.
    ///
    /// # Errors
    /// Reaches the loop like a driver error.
    fn after(&self, state: AgentState) -> Result<AgentState, AgentError> {
        Ok(state)
    }
}

#[async_trait]
impl<P: InlineProcessor> StateProcessor for P {
    fn name(&self) -> &str {
        InlineProcessor::name(self)
    }

    fn can_process(&self, state: &AgentState) -> bool {
        InlineProcessor::can_process(self, state)
    }

    async fn process(&self, state: AgentState, next: Next) -> Result<AgentState, AgentError> {
        run_inline(self, state, next).await
    }

    fn as_inline(&self) -> Option<&dyn InlineProcessor> {
        Some(self)
    }
}

/// `process` for an [`InlineProcessor`]: `before`, the rest of the chain, `after`.
///
/// # Errors
/// Whatever `before`, the rest of the chain or `after` reports.
pub async fn run_inline(
    processor: &dyn InlineProcessor,
    state: AgentState,
    next: Next,
) -> Result<AgentState, AgentError> {
    let state = processor.before(state)?;
    let state = next(state).await?;
    processor.after(state)
}

fn short_type_name(full: &str) -> &str {
    let without_generics = full.split('<').next().unwrap_or(full);
    without_generics
        .rsplit("::")
        .next()
        .unwrap_or(without_generics)
}
