//! `CallableProcessor`: a processor from an async closure.

use std::future::Future;
use std::sync::Arc;

use agents_core::{AgentError, AgentState, Next, StateProcessor};
use async_trait::async_trait;
use futures::future::BoxFuture;

type StateFn =
    Arc<dyn Fn(AgentState) -> BoxFuture<'static, Result<AgentState, AgentError>> + Send + Sync>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Timing {
    Before,
    After,
}

/// A processor that runs an async closure before the step (`before`) or after it (`after`).
///
/// ```
/// use agents_processing::CallableProcessor;
///
/// let tag = CallableProcessor::after("tag", |state| async move {
///     Ok(state.with_metadata("seen", true))
/// });
/// # let _ = tag;
/// ```
#[derive(Clone)]
pub struct CallableProcessor {
    name: String,
    timing: Timing,
    function: StateFn,
}

impl CallableProcessor {
    /// Runs `function` on the state before the step.
    pub fn before<F, Fut>(name: impl Into<String>, function: F) -> Self
    where
        F: Fn(AgentState) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<AgentState, AgentError>> + Send + 'static,
    {
        Self::new(name, Timing::Before, function)
    }

    /// Runs `function` on the state after the step (and after the inner processors).
    pub fn after<F, Fut>(name: impl Into<String>, function: F) -> Self
    where
        F: Fn(AgentState) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<AgentState, AgentError>> + Send + 'static,
    {
        Self::new(name, Timing::After, function)
    }

    fn new<F, Fut>(name: impl Into<String>, timing: Timing, function: F) -> Self
    where
        F: Fn(AgentState) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<AgentState, AgentError>> + Send + 'static,
    {
        Self {
            name: name.into(),
            timing,
            function: Arc::new(move |state| Box::pin(function(state))),
        }
    }
}

impl std::fmt::Debug for CallableProcessor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallableProcessor")
            .field("name", &self.name)
            .field("timing", &self.timing)
            .finish()
    }
}

#[async_trait]
impl StateProcessor for CallableProcessor {
    fn name(&self) -> &str {
        &self.name
    }

    async fn process(&self, state: AgentState, next: Next<'_>) -> Result<AgentState, AgentError> {
        match self.timing {
            Timing::Before => next.run((self.function)(state).await?).await,
            Timing::After => (self.function)(next.run(state).await?).await,
        }
    }
}
