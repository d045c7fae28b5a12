//! `ServedAgent`: an agent and its session store, run on behalf of remote callers (the MCP
//! server's `ask` tool, the A2A endpoint). What both protocols share lives here:
//!
//! - a turn appends the caller's prompt to a stored conversation (a new one, or the one the
//!   caller names) and runs it to its end, each step committed;
//! - at most one turn per session and `max_runs` in all run at once; a further one is
//!   refused, not queued;
//! - each turn may cost at most the cost limit ([`ServedAgent::with_cost_limit`]);
//! - a cancelled turn stops at the next step boundary and commits its state, so the
//!   conversation stays valid and can be continued;
//! - a run that waits for approval comes back as [`Outcome::Waiting`] with each waiting
//!   call's fingerprint; a decision names the call and the fingerprint it was shown
//!   ([`ServedAgent::decide`]), and a call that changed since is refused as stale.

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use agents_core::{Agent, AgentEvent, AgentState, AgentStatus, StopReason};
use agents_sessions::{AgentSessionExt, Session, SessionError, SessionStore};
use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::fingerprint::fingerprint;

/// A turn that has its place and runs when polled (see [`ServedAgent::start_ask`]).
pub type TurnFuture =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Turn, TurnError>> + Send>>;

/// How many turns a served agent runs at once by default.
pub const DEFAULT_MAX_RUNS: usize = 4;
/// The longest prompt accepted: 100,000 characters.
pub const MAX_PROMPT_CHARS: usize = 100_000;

/// An agent served to remote callers over a session store.
#[derive(Debug)]
pub struct ServedAgent<S> {
    inner: Arc<Inner<S>>,
}

impl<S> Clone for ServedAgent<S> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

#[derive(Debug)]
struct Inner<S> {
    agent: Agent,
    store: S,
    max_runs: usize,
    cost_limit: Option<f64>,
    shutdown: CancellationToken,
    running: Mutex<HashMap<String, CancellationToken>>,
}

/// A call the run waits on, as a caller sees it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WaitingCall {
    /// The call's id.
    pub call_id: String,
    /// The tool it calls.
    pub tool: String,
    /// Its arguments.
    pub arguments: Value,
    /// The fingerprint a decision must quote (12 hex digits).
    pub fingerprint: String,
}

/// How a turn ended.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    /// The agent answered.
    Answered {
        /// The answer's text.
        text: String,
    },
    /// The run waits for a person to approve or reject these calls.
    Waiting {
        /// The calls, each with its fingerprint.
        calls: Vec<WaitingCall>,
    },
    /// The run stopped before answering (a limit, a guard, a cancellation).
    Stopped {
        /// Why, as a word (`user_requested`, `cost_limit`, `steps_limit`...).
        reason: String,
        /// The last text the agent wrote, if any.
        text: Option<String>,
    },
    /// The run failed.
    Failed {
        /// What went wrong.
        message: String,
    },
}

/// A finished turn: the session it ran on and how it ended.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Turn {
    /// The session (pass it back to continue the conversation).
    pub session: String,
    /// How the turn ended.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// What the turn's execution cost, in dollars (priced tokens only).
    pub cost_usd: f64,
}

impl Turn {
    /// The turn that `state` of `session` describes.
    pub fn of(session: &str, state: &AgentState) -> Self {
        Self {
            session: session.to_owned(),
            outcome: outcome(state),
            cost_usd: state.execution_cost().priced_usd(),
        }
    }
}

/// A decision on a waiting call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Run the call as it is.
    Approve,
    /// Do not run it; the model reads the reason.
    Reject(String),
}

/// Why a turn was not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TurnError {
    /// The prompt is empty.
    #[error("the prompt is empty")]
    EmptyPrompt,
    /// The prompt is too long.
    #[error("the prompt has {chars} characters; at most {MAX_PROMPT_CHARS} are accepted")]
    PromptTooLong {
        /// Its length.
        chars: usize,
    },
    /// This session runs a turn already.
    #[error("session {session:?} is running a turn already; wait for it or cancel it")]
    AlreadyRunning {
        /// The session.
        session: String,
    },
    /// As many turns run as may.
    #[error("the server runs as many turns as it may ({max}); retry in a moment")]
    Busy {
        /// The limit.
        max: usize,
    },
    /// The server is shutting down.
    #[error("the server is shutting down")]
    ShuttingDown,
    /// The session waits for decisions on its calls; a new prompt cannot start.
    #[error(
        "session {session:?} waits for approval of {} call(s): approve or reject them first",
        calls.len()
    )]
    WaitingForApproval {
        /// The session.
        session: String,
        /// The calls it waits on.
        calls: Vec<WaitingCall>,
    },
    /// The session does not exist.
    #[error("there is no session {session:?}")]
    NotFound {
        /// The session.
        session: String,
    },
    /// The call is not waiting (unknown, decided, or the run moved on).
    #[error("call {call_id:?} is not waiting for a decision in session {session:?}")]
    NotWaiting {
        /// The session.
        session: String,
        /// The call.
        call_id: String,
    },
    /// The call changed since its fingerprint was shown.
    #[error(
        "call {call_id:?} has fingerprint {current}, not {shown}: it changed since it was shown; \
         look at it again"
    )]
    Stale {
        /// The call.
        call_id: String,
        /// The fingerprint given.
        shown: String,
        /// The fingerprint now.
        current: String,
    },
    /// The session store or the loop failed.
    #[error(transparent)]
    Session(#[from] SessionError),
}

impl<S: SessionStore + Clone + Debug + 'static> ServedAgent<S> {
    /// `agent` serving the conversations in `store`.
    pub fn new(agent: Agent, store: S) -> Self {
        Self {
            inner: Arc::new(Inner {
                agent,
                store,
                max_runs: DEFAULT_MAX_RUNS,
                cost_limit: None,
                shutdown: CancellationToken::new(),
                running: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// At most `n` turns at once (at least 1).
    pub fn with_max_runs(self, n: usize) -> Self {
        self.rebuild(|inner| inner.max_runs = n.max(1))
    }

    /// Each turn stops once its priced cost reaches `usd` dollars.
    pub fn with_cost_limit(self, usd: f64) -> Self {
        self.rebuild(|inner| inner.cost_limit = Some(usd))
    }

    /// No turn starts, and running ones are cancelled, once `shutdown` is cancelled.
    pub fn with_shutdown(self, shutdown: CancellationToken) -> Self {
        self.rebuild(|inner| inner.shutdown = shutdown)
    }

    fn rebuild(self, change: impl FnOnce(&mut Inner<S>)) -> Self {
        let inner = Arc::try_unwrap(self.inner).unwrap_or_else(|shared| Inner {
            agent: shared.agent.clone(),
            store: shared.store.clone(),
            max_runs: shared.max_runs,
            cost_limit: shared.cost_limit,
            shutdown: shared.shutdown.clone(),
            running: Mutex::new(HashMap::new()),
        });
        let mut inner = inner;
        change(&mut inner);
        Self {
            inner: Arc::new(inner),
        }
    }

    /// The agent.
    pub fn agent(&self) -> &Agent {
        &self.inner.agent
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.inner.store
    }

    /// The shutdown token.
    pub fn shutdown(&self) -> &CancellationToken {
        &self.inner.shutdown
    }

    /// How many turns run now.
    pub fn running(&self) -> usize {
        self.lock().len()
    }

    /// Appends `prompt` to `session` (a new conversation when it does not exist) and runs
    /// the agent until it answers, stops, or waits for approval; `cancel` stops it at the
    /// next step boundary (the state is committed). `on_event` sees the run's events.
    ///
    /// # Errors
    /// [`TurnError`]: the prompt, the limits, a session that waits for approval, the store.
    pub async fn ask(
        &self,
        session: &str,
        prompt: &str,
        cancel: CancellationToken,
        on_event: impl Fn(&AgentEvent) + Send + Sync + 'static,
    ) -> Result<Turn, TurnError> {
        self.start_ask(session, prompt, cancel, on_event)
            .await?
            .await
    }

    /// [`ServedAgent::ask`] in two parts: the checks and the session's place among the
    /// running turns now (so a refusal is known before anything runs), the run in the
    /// future returned (which holds the place until it ends; spawn it to run it apart).
    ///
    /// # Errors
    /// As [`ServedAgent::ask`], before the run starts.
    pub async fn start_ask(
        &self,
        session: &str,
        prompt: &str,
        cancel: CancellationToken,
        on_event: impl Fn(&AgentEvent) + Send + Sync + 'static,
    ) -> Result<TurnFuture, TurnError> {
        let prompt = prompt.trim().to_owned();
        if prompt.is_empty() {
            return Err(TurnError::EmptyPrompt);
        }
        let chars = prompt.chars().count();
        if chars > MAX_PROMPT_CHARS {
            return Err(TurnError::PromptTooLong { chars });
        }
        validate_session(session)?;
        let slot = self.take_slot(session, &cancel)?;
        if let Some(state) = self.inner.store.load(session).await? {
            if state.status() == AgentStatus::Suspended {
                return Err(TurnError::WaitingForApproval {
                    session: session.to_owned(),
                    calls: waiting_calls(&state),
                });
            }
        }
        let (handle, guard) = self.session(session, cancel, on_event);
        let id = session.to_owned();
        Ok(Box::pin(async move {
            let _slot = slot;
            let _guard = guard;
            let state = handle.send(prompt).await?;
            Ok(Turn::of(&id, &state))
        }))
    }

    /// Records `verdict` on the waiting call `call_id` of `session`, after checking that its
    /// fingerprint is still `shown`; once every waiting call is decided, resumes the run
    /// (like [`ServedAgent::ask`]) and returns how it ended; until then, returns the calls
    /// still waiting.
    ///
    /// # Errors
    /// [`TurnError::NotFound`], [`TurnError::NotWaiting`], [`TurnError::Stale`], the limits,
    /// the store.
    pub async fn decide(
        &self,
        session: &str,
        call_id: &str,
        shown: &str,
        verdict: Verdict,
        cancel: CancellationToken,
        on_event: impl Fn(&AgentEvent) + Send + Sync + 'static,
    ) -> Result<Turn, TurnError> {
        validate_session(session)?;
        let _slot = self.take_slot(session, &cancel)?;
        let Some(state) = self.inner.store.load(session).await? else {
            return Err(TurnError::NotFound {
                session: session.to_owned(),
            });
        };
        let not_waiting = || TurnError::NotWaiting {
            session: session.to_owned(),
            call_id: call_id.to_owned(),
        };
        if state.status() != AgentStatus::Suspended {
            return Err(not_waiting());
        }
        let execution_id = execution_id(&state);
        let pending = state
            .pending_approvals()
            .into_iter()
            .find(|p| p.call_id() == call_id && !p.is_decided())
            .ok_or_else(not_waiting)?;
        let current = fingerprint(&execution_id, &pending);
        if current != shown.trim() {
            return Err(TurnError::Stale {
                call_id: call_id.to_owned(),
                shown: shown.to_owned(),
                current,
            });
        }
        let decision = match verdict {
            Verdict::Approve => pending.approve(),
            Verdict::Reject(reason) => pending.reject(reason),
        };
        let (handle, _guard) = self.session(session, cancel, on_event);
        let decided = handle.decide(decision).await?;
        if !decided.approvals_decided() {
            return Ok(Turn::of(session, &decided));
        }
        let state = handle.resume().await?;
        Ok(Turn::of(session, &state))
    }

    /// How `session` stands now (`None` when it does not exist).
    ///
    /// # Errors
    /// The store's.
    pub async fn status(&self, session: &str) -> Result<Option<Turn>, TurnError> {
        validate_session(session)?;
        Ok(self
            .inner
            .store
            .load(session)
            .await?
            .map(|state| Turn::of(session, &state)))
    }

    /// For a graceful stop: waits up to `grace` for the running turns to end, then cancels
    /// the rest (each stops at its next step boundary, its state committed) and waits up to
    /// `grace` again for them. No turn starts afterwards.
    pub async fn finish(&self, grace: std::time::Duration) {
        let all_done = || async {
            while self.running() > 0 {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        };
        if tokio::time::timeout(grace, all_done()).await.is_err() {
            tracing::warn!(
                running = self.running(),
                "cancelling the turns still running"
            );
        }
        self.inner.shutdown.cancel();
        if tokio::time::timeout(grace, all_done()).await.is_err() {
            tracing::warn!(
                running = self.running(),
                "turns still running after their cancellation"
            );
        }
    }

    /// Whether `session` runs a turn now.
    pub fn is_running(&self, session: &str) -> bool {
        self.lock().contains_key(session)
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, CancellationToken>> {
        self.inner
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Cancels the turn `session` runs, if it runs one (it stops at the next step boundary
    /// and commits its state); whether one was running.
    pub fn cancel(&self, session: &str) -> bool {
        match self.lock().get(session) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    fn take_slot(&self, session: &str, cancel: &CancellationToken) -> Result<Slot<S>, TurnError> {
        if self.inner.shutdown.is_cancelled() {
            return Err(TurnError::ShuttingDown);
        }
        let mut running = self.lock();
        if running.contains_key(session) {
            return Err(TurnError::AlreadyRunning {
                session: session.to_owned(),
            });
        }
        if running.len() >= self.inner.max_runs {
            return Err(TurnError::Busy {
                max: self.inner.max_runs,
            });
        }
        running.insert(session.to_owned(), cancel.clone());
        Ok(Slot {
            served: self.clone(),
            session: session.to_owned(),
        })
    }

    /// The session handle of one turn: the agent with the turn's listener and cost limit,
    /// cancelled by `cancel` or the shutdown. The guard ends the link to the shutdown.
    fn session(
        &self,
        session: &str,
        cancel: CancellationToken,
        on_event: impl Fn(&AgentEvent) + Send + Sync + 'static,
    ) -> (Session<S>, tokio_util::sync::DropGuard) {
        let mut agent = self.inner.agent.clone().on_event(on_event);
        if let Some(limit) = self.inner.cost_limit {
            agent = agent.with_cost_limit(limit);
        }
        let token = cancel.child_token();
        let shutdown = self.inner.shutdown.clone();
        let linked = token.clone();
        let watch = CancellationToken::new();
        let stop_watching = watch.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = shutdown.cancelled() => linked.cancel(),
                () = stop_watching.cancelled() => {}
            }
        });
        let handle = agent
            .session(&self.inner.store, session.to_owned())
            .with_cancellation(token);
        (handle, watch.drop_guard())
    }
}

/// A session's place among the running turns, given back when dropped.
struct Slot<S> {
    served: ServedAgent<S>,
    session: String,
}

impl<S> Drop for Slot<S> {
    fn drop(&mut self) {
        self.served
            .inner
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.session);
    }
}

fn execution_id(state: &AgentState) -> String {
    state
        .execution()
        .map(|e| e.id().to_owned())
        .unwrap_or_default()
}

/// Checks a session name a remote caller gave: the store's rules
/// ([`agents_sessions::validate_name`]), and at most 128 ASCII letters, digits, `-`, `_`,
/// `.`, `:` and `@`, starting with a letter or a digit. The name comes back in URLs, logs and
/// the console, so nothing path-like (`../x`, `a/b`), no spaces, quotes or markup.
///
/// # Errors
/// [`SessionError::InvalidName`] saying what is wrong.
pub fn validate_session(session: &str) -> Result<(), SessionError> {
    agents_sessions::validate_name(session)?;
    let invalid = |reason| SessionError::InvalidName {
        name: session.chars().take(60).collect(),
        reason,
    };
    if session.len() > 128 {
        return Err(invalid("a served session name has at most 128 characters"));
    }
    if !session.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Err(invalid(
            "a served session name starts with an ASCII letter or digit",
        ));
    }
    if !session
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':' | '@'))
    {
        return Err(invalid(
            "a served session name holds only ASCII letters, digits, '-', '_', '.', ':' and '@'",
        ));
    }
    Ok(())
}

/// A fresh session name: `prefix` and a time-ordered uuid.
pub fn new_session(prefix: &str) -> String {
    format!("{prefix}-{}", uuid::Uuid::now_v7())
}

/// The undecided calls `state` waits on, with their fingerprints.
pub fn waiting_calls(state: &AgentState) -> Vec<WaitingCall> {
    let execution_id = execution_id(state);
    state
        .pending_approvals()
        .into_iter()
        .filter(|p| !p.is_decided())
        .map(|p| WaitingCall {
            call_id: p.call_id().to_owned(),
            tool: p.tool_name().to_owned(),
            arguments: p.arguments().clone(),
            fingerprint: fingerprint(&execution_id, &p),
        })
        .collect()
}

fn outcome(state: &AgentState) -> Outcome {
    let text = state
        .final_response()
        .map(|m| m.text())
        .filter(|t| !t.is_empty());
    match state.status() {
        AgentStatus::Suspended => Outcome::Waiting {
            calls: waiting_calls(state),
        },
        // The loop finishes a cancelled run `Failed` with `user_requested`: for the caller
        // it stopped on request (A2A `canceled`, not `failed`), and the session goes on.
        AgentStatus::Failed if state.stop_reason() == Some(StopReason::UserRequested) => {
            Outcome::Stopped {
                reason: StopReason::UserRequested.as_str().to_owned(),
                text,
            }
        }
        AgentStatus::Failed => Outcome::Failed {
            message: state
                .steps()
                .rev()
                .flat_map(|step| step.error_messages())
                .next()
                .unwrap_or_else(|| "the run failed".to_owned()),
        },
        AgentStatus::Completed | AgentStatus::InProgress => match state.stop_reason() {
            Some(StopReason::Completed) | None => Outcome::Answered {
                text: text.unwrap_or_default(),
            },
            Some(reason) => Outcome::Stopped {
                reason: reason.as_str().to_owned(),
                text,
            },
        },
    }
}
