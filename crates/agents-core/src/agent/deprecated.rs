//! The run methods retired in this release, kept for one release: each is its `_with` form
//! with a cancellation token in [`StepOptions`].

use futures::Stream;
use tokio_util::sync::CancellationToken;

use crate::agent::agent::Agent;
use crate::agent::step_options::StepOptions;
use crate::records::agent_error::AgentError;
use crate::state::agent_state::AgentState;

impl Agent {
    /// [`Agent::step`] that gives up when `token` is cancelled.
    ///
    /// # Errors
    /// As [`Agent::step`].
    #[deprecated(
        since = "0.2.0",
        note = "use `step_with(state, &StepOptions::new().with_cancellation(token))`"
    )]
    pub async fn step_cancellable(
        &self,
        state: AgentState,
        token: &CancellationToken,
    ) -> Result<AgentState, AgentError> {
        self.step_with(state, &StepOptions::new().with_cancellation(token.clone()))
            .await
    }

    /// [`Agent::iterate`] that gives up when `token` is cancelled.
    #[deprecated(
        since = "0.2.0",
        note = "use `iterate_with(state, StepOptions::new().with_cancellation(token))`"
    )]
    pub fn iterate_cancellable(
        &self,
        state: AgentState,
        token: CancellationToken,
    ) -> impl Stream<Item = Result<AgentState, AgentError>> + Send + 'static {
        self.iterate_with(state, StepOptions::new().with_cancellation(token))
    }

    /// [`Agent::execute`] that gives up when `token` is cancelled.
    ///
    /// # Errors
    /// As [`Agent::step`].
    #[deprecated(
        since = "0.2.0",
        note = "use `execute_with(state, &StepOptions::new().with_cancellation(token))`"
    )]
    pub async fn execute_cancellable(
        &self,
        state: AgentState,
        token: CancellationToken,
    ) -> Result<AgentState, AgentError> {
        self.execute_with(state, &StepOptions::new().with_cancellation(token))
            .await
    }
}
