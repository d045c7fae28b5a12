//! [`StepOptions`]: what one run of a step gets besides the state.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

/// What one run of [`Agent::step_with`](crate::Agent::step_with) gets besides the state: a cancellation token and an
/// optional journal. Built with [`StepOptions::new`] and the `with_*` methods.
#[derive(Clone, Debug, Default)]
pub struct StepOptions {
    pub(super) cancellation: CancellationToken,
    pub(super) journal: Option<Arc<dyn crate::journal::StepJournal>>,
    pub(super) execution_id: Option<Arc<str>>,
}

impl StepOptions {
    /// No cancellation (a token nobody cancels) and no journal.
    pub fn new() -> Self {
        Self::default()
    }

    /// These options with this cancellation token.
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = token;
        self
    }

    /// These options with this journal.
    pub fn with_journal(mut self, journal: Arc<dyn crate::journal::StepJournal>) -> Self {
        self.journal = Some(journal);
        self
    }

    /// These options with the id an execution this step starts gets (default: one from the
    /// agent's [`IdSource`](crate::IdSource)). A durable store that re-runs an interrupted
    /// step passes the id the first run used, so that the execution, and every tool's
    /// [`idempotency key`](crate::ToolContext::idempotency_key), are the same.
    pub fn with_execution_id(mut self, id: impl Into<Arc<str>>) -> Self {
        self.execution_id = Some(id.into());
        self
    }
}
