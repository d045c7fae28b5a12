//! The web console: sessions, their executions step by step, what the model saw, charts of
//! tokens and cost, approvals, and (with an agent) chat with streamed answers.
//!
//! Every page is rendered on the server by `maud`, which escapes every value it interpolates:
//! model, tool and file text reaches a page only as escaped text. Pages carry a strict
//! Content-Security-Policy (scripts and styles from this server only, nothing inline), and the
//! one script is vendored (`assets/console.js`) and writes text with `textContent` only.
//! State-changing requests (`POST`) need the console's CSRF token.

mod approvals;
mod assets;
mod chart;
mod chat;
mod context;
mod csrf;
mod format;
mod layout;
mod list;
mod runs;
mod session;
mod state;

use std::fmt::Debug;
use std::sync::Arc;

use agents_core::Agent;
use agents_sessions::SessionStore;
use axum::routing::{get, post};
use axum::Router;
use tokio_util::sync::CancellationToken;

use crate::console::csrf::CsrfToken;
use crate::console::runs::Runs;
use crate::console::state::ConsoleState;

/// How many turns the console runs at once by default.
pub const DEFAULT_MAX_RUNS: usize = 4;

/// The console over a session store; with an agent ([`Console::with_agent`]) it also runs
/// turns: chat, and resuming a run after its calls were decided.
#[derive(Debug)]
pub struct Console<S> {
    store: S,
    agent: Option<Agent>,
    max_runs: usize,
    trace_url: Option<String>,
    shutdown: CancellationToken,
}

impl<S: SessionStore + Clone + Debug + 'static> Console<S> {
    /// A read-and-decide console over `store`.
    pub fn new(store: S) -> Self {
        Self {
            store,
            agent: None,
            max_runs: DEFAULT_MAX_RUNS,
            trace_url: None,
            shutdown: CancellationToken::new(),
        }
    }

    /// Runs turns with `agent`: a message from the page starts one, and a run whose waiting
    /// calls were decided on the page resumes in the server.
    pub fn with_agent(mut self, agent: Agent) -> Self {
        self.agent = Some(agent);
        self
    }

    /// At most `n` turns at once (at least 1); a message beyond gets `503`.
    pub fn with_max_runs(mut self, n: usize) -> Self {
        self.max_runs = n.max(1);
        self
    }

    /// Links each execution to its trace: `template` with `{trace_id}` replaced (for example
    /// `http://localhost:16686/trace/{trace_id}` for Jaeger).
    pub fn with_trace_url(mut self, template: impl Into<String>) -> Self {
        self.trace_url = Some(template.into());
        self
    }

    /// Event streams end, and no new turn starts, once `shutdown` is cancelled.
    pub fn with_shutdown(mut self, shutdown: CancellationToken) -> Self {
        self.shutdown = shutdown;
        self
    }

    /// The console's routes (put [`Access::protect`](crate::Access::protect) in front of
    /// them) and the handle that finishes its running turns at shutdown.
    pub fn build(self) -> (Router, RunningTurns) {
        let runs = Runs::new(self.max_runs);
        let state = Arc::new(ConsoleState {
            store: self.store,
            agent: self.agent,
            runs: runs.clone(),
            csrf: CsrfToken::random(),
            trace_url: self.trace_url,
            shutdown: self.shutdown,
        });
        let router = Router::new()
            .route("/", get(list::page::<S>))
            .route("/health", get(|| async { "ok\n" }))
            .route("/static/console.css", get(assets::css))
            .route("/static/console.js", get(assets::js))
            .route("/sessions", post(chat::start_session::<S>))
            .route("/sessions/{id}", get(session::page::<S>))
            .route("/sessions/{id}/context", get(context::page::<S>))
            .route("/sessions/{id}/approvals", post(approvals::decide::<S>))
            .route("/sessions/{id}/messages", post(chat::send::<S>))
            .route("/sessions/{id}/events", get(chat::events::<S>))
            .route("/sessions/{id}/cancel", post(chat::cancel::<S>))
            .fallback(layout::not_found)
            .with_state(state);
        (router, RunningTurns { runs })
    }
}

/// The console's running turns, for a graceful shutdown.
#[derive(Clone, Debug)]
pub struct RunningTurns {
    runs: Runs,
}

impl RunningTurns {
    /// How many turns are running.
    pub fn count(&self) -> usize {
        self.runs.count()
    }

    /// Waits up to `grace` for the running turns to finish; then cancels the rest (a
    /// cancelled turn still commits its state: every step is a checkpoint) and waits for
    /// them to stop.
    pub async fn finish(&self, grace: std::time::Duration) {
        if tokio::time::timeout(grace, self.runs.all_done())
            .await
            .is_err()
        {
            tracing::warn!(
                running = self.runs.count(),
                "cancelling the turns still running"
            );
            self.runs.cancel_all();
            self.runs.all_done().await;
        }
    }
}
