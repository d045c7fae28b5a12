//! What every handler of the console shares.

use agents_core::Agent;
use tokio_util::sync::CancellationToken;

use crate::console::csrf::CsrfToken;
use crate::console::runs::Runs;

/// The store, the agent (if any), the running turns, the CSRF token, the trace link and the
/// shutdown signal.
#[derive(Debug)]
pub(crate) struct ConsoleState<S> {
    pub(crate) store: S,
    pub(crate) agent: Option<Agent>,
    pub(crate) runs: Runs,
    pub(crate) csrf: CsrfToken,
    pub(crate) trace_url: Option<String>,
    pub(crate) shutdown: CancellationToken,
}
