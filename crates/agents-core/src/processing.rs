//! The step-processing contract: middleware around each step.

use async_trait::async_trait;
use futures::future::BoxFuture;

use crate::{AgentError, AgentState};

/// The future of a step (or of the rest of a middleware chain).
pub type StepFuture = BoxFuture<'static, Result<AgentState, AgentError>>;

/// The rest of the chain: call it with the state to run the step (driver, `record_step`,
/// continuation evaluation, `record_step_execution`). `'static`, so a chain can move it into
/// its own futures.
pub type Next = Box<dyn FnOnce(AgentState) -> StepFuture + Send>;

/// Wraps each step of the loop. `agents-processing` implements it with its processor chain;
/// [`PassThrough`] runs the step alone.
///
/// The terminal never fails for driver errors: it records a failure step and an outcome
/// instead. An `Err` from `apply` (a failing processor) is handled by the loop like a driver
/// error.
#[async_trait]
pub trait StepProcessing: Send + Sync {
    /// Runs `terminal` on `state`, with whatever happens around it.
    ///
    /// # Errors
    /// Whatever a processor or the terminal reports.
    async fn apply(&self, state: AgentState, terminal: Next) -> Result<AgentState, AgentError>;
}

/// No processing: the step alone.
#[derive(Clone, Copy, Debug, Default)]
pub struct PassThrough;

#[async_trait]
impl StepProcessing for PassThrough {
    async fn apply(&self, state: AgentState, terminal: Next) -> Result<AgentState, AgentError> {
        terminal(state).await
    }
}
