//! `Session`: an agent running on a stored conversation, committed after every step.

use std::sync::Arc;

use agents_core::incremental::StateEncoder;
use agents_core::{Agent, AgentState, JournalError, StepJournal, StepOptions, ToolExecution};
use async_trait::async_trait;
use inference::InferenceResponse;
use messages::Message;
use tokio_util::sync::CancellationToken;

use crate::lease::{HeldLease, LeasePolicy};
use crate::{Commit, SessionError, SessionStore};

/// `agent.session(&store, "chat-42")`: the [`Session`] of `agent` on the conversation `id` in
/// `store`. (A trait because sessions build on `agents-core`, not the other way round; the
/// `agents` facade re-exports it in its prelude.)
pub trait AgentSessionExt {
    /// The session `id` of this agent in `store` (nothing is read until it is used).
    fn session<S: SessionStore + Clone + std::fmt::Debug + 'static>(
        &self,
        store: &S,
        id: impl Into<String>,
    ) -> Session<S>;
}

impl AgentSessionExt for Agent {
    fn session<S: SessionStore + Clone + std::fmt::Debug + 'static>(
        &self,
        store: &S,
        id: impl Into<String>,
    ) -> Session<S> {
        Session {
            agent: self.clone(),
            store: store.clone(),
            id: id.into(),
            cancellation: CancellationToken::new(),
            stop: CancellationToken::new(),
            lease: LeasePolicy::default(),
        }
    }
}

/// An agent on a stored conversation: every step is loaded, run with
/// [`Agent::step_with`] and committed (one version per step) before the next begins, by one
/// runner at a time (each run takes the session's lease; a second runner gets
/// [`SessionError::Busy`]).
///
/// Each step runs with a journal in the store: the model reply, each call's intent before it
/// runs and its result when it finishes are recorded as they happen, so a step re-run after a
/// crash ([`Session::resume`]) reuses the reply and the finished calls. What a crash cannot
/// repeat: tools are run **effectively once when read-only or idempotent** (a call interrupted
/// while it ran runs again, with the same
/// [`idempotency key`](agents_core::ToolContext::idempotency_key)) and **at most once, then
/// asked about, otherwise** (the model is told the interrupted call may or may not have taken
/// effect; a call that needed approval is asked for again). See `docs/sessions.md`.
#[derive(Clone, Debug)]
pub struct Session<S> {
    agent: Agent,
    store: S,
    id: String,
    cancellation: CancellationToken,
    stop: CancellationToken,
    lease: LeasePolicy,
}

impl<S: SessionStore + Clone + std::fmt::Debug + 'static> Session<S> {
    /// A handle on the session `id` in `store` that records decisions
    /// ([`Session::decide`]) without an agent (a person approving from another tool or
    /// process); running it ([`Session::send`], `resume`, `step`) fails with an
    /// [`SessionError::Agent`] saying so.
    pub fn for_decisions(store: &S, id: impl Into<String>) -> Self {
        Agent::new(Undriven).session(store, id)
    }
}

/// The driver of a [`Session::for_decisions`] handle: it runs nothing.
struct Undriven;

#[async_trait]
impl agents_core::AgentDriver for Undriven {
    async fn next_step(
        &self,
        _state: &AgentState,
        _tools: &agents_core::Tools,
        _executor: &dyn agents_core::ToolExecutor,
        _context: &agents_core::StepContext<'_>,
    ) -> Result<agents_core::AgentStep, agents_core::AgentError> {
        Err(agents_core::AgentError::driver(
            "this session handle only records decisions; open it with agent.session(..) to run it",
        ))
    }
}

/// Where a writer is: the state, its version, the encoder that continues from it.
struct Position {
    state: AgentState,
    version: u64,
    encoder: StateEncoder,
}

impl<S: SessionStore + Clone + std::fmt::Debug + 'static> Session<S> {
    /// The session's name.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// This session, stopping its runs when `token` is cancelled.
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = token;
        self
    }

    /// This session, stopping gracefully when `token` is cancelled (on SIGTERM, say): the step
    /// in progress finishes and is committed, the lease is given back, and the run is left
    /// `InProgress` for [`Session::resume`] (unlike [`Session::with_cancellation`], which ends
    /// the run as cancelled).
    pub fn with_graceful_stop(mut self, token: CancellationToken) -> Self {
        self.stop = token;
        self
    }

    /// How long this session's lease lasts unless renewed (default
    /// [`DEFAULT_LEASE_TTL`](crate::DEFAULT_LEASE_TTL), 30 s; renewed every third of it while a
    /// step runs). A runner that dies is taken over after this long by a runner on another
    /// host, at once by one on the same host.
    pub fn with_lease_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.lease.ttl = ttl;
        self
    }

    /// Whether a runner that finds the session busy (another runner holds its lease) waits for
    /// it instead of failing with [`SessionError::Busy`] (default: it fails).
    pub fn waiting_for_lease(mut self, wait: bool) -> Self {
        self.lease.wait = wait;
        self
    }

    /// Takes the session's lease (see [`SessionStore::acquire_lease`]).
    async fn take_lease(&self) -> Result<HeldLease<S>, SessionError> {
        crate::validate_name(&self.id)?;
        HeldLease::take(&self.store, &self.id, self.agent.clock(), &self.lease).await
    }

    /// Loads the conversation (a new one when the session does not exist), appends `message`
    /// as a user message (committed), runs the agent step by step, committing after every
    /// step, and returns the final state.
    ///
    /// # Errors
    /// [`SessionError::Conflict`] when another writer advanced the session meanwhile (reload
    /// and decide); the store's errors; [`SessionError::Agent`] when the loop cannot run the
    /// state.
    pub async fn send(&self, message: impl Into<Message>) -> Result<AgentState, SessionError> {
        let lease = self.take_lease().await?;
        let token = lease.token();
        lease
            .run(async {
                let position = self.load_or_new().await?;
                let state = position.state.clone().with_user_message(message);
                let position = self.commit(position, state, token).await?;
                self.drive(position, token).await
            })
            .await
    }

    /// Continues a run that a crash (or a stop) left `InProgress`, or a suspended run whose
    /// waiting calls are all decided ([`Session::decide`]), step by step, and returns the
    /// final state; a finished run, or one still waiting for a decision, comes back unchanged.
    /// An approved call runs at most once: its intent is journaled before it runs and its
    /// result before the commit, so a crash after it finished reuses the result, and a crash
    /// while it ran suspends the run on it again (the person decides again) unless its tool is
    /// read-only or idempotent.
    ///
    /// # Errors
    /// [`SessionError::NotFound`] when the session does not exist; otherwise as
    /// [`Session::send`].
    pub async fn resume(&self) -> Result<AgentState, SessionError> {
        let lease = self.take_lease().await?;
        let token = lease.token();
        lease
            .run(async {
                let position = self.load().await?;
                self.drive(position, token).await
            })
            .await
    }

    /// Advances the session by exactly one step (load, [`Agent::step_with`], commit) and
    /// returns the committed state: the unit of work for a worker pool or a durable-execution
    /// engine. A finished run comes back unchanged.
    ///
    /// # Errors
    /// As [`Session::resume`]; on [`SessionError::Conflict`] another worker took the step.
    pub async fn step(&self) -> Result<AgentState, SessionError> {
        let lease = self.take_lease().await?;
        let token = lease.token();
        lease
            .run(async {
                let position = self.load().await?;
                if !position.state.is_runnable() {
                    return Ok(position.state);
                }
                Ok(self.step_once(position, token).await?.state)
            })
            .await
    }

    /// Records a person's decision on a call the suspended run waits on (made on a
    /// [`PendingApproval`](agents_core::PendingApproval) read from this session) and commits
    /// it; [`Session::resume`] then runs it. Returns the committed state.
    ///
    /// # Errors
    /// [`SessionError::Approval`] when the state refuses the decision (unknown or already
    /// decided call, arguments changed since it was shown, edited arguments that do not fit);
    /// [`SessionError::NotFound`], [`SessionError::Conflict`] and the store's errors.
    pub async fn decide(
        &self,
        decision: agents_core::ApprovalDecision,
    ) -> Result<AgentState, SessionError> {
        let lease = self.take_lease().await?;
        let token = lease.token();
        lease
            .run(async {
                let position = self.load().await?;
                let state = position.state.clone().decide(decision).map_err(|source| {
                    SessionError::Approval {
                        session: self.id.clone(),
                        source,
                    }
                })?;
                Ok(self.commit(position, state, token).await?.state)
            })
            .await
    }

    /// Like [`Session::decide`], but the decision is made by `make` on the waiting call
    /// `call_id` (a [key](agents_core::PendingApproval::key)) as the session stores it when
    /// this runner holds the lease. With `expect`, the fingerprint the person was shown
    /// ([`AgentState::approval_fingerprint`]), a call that changed meanwhile is refused rather
    /// than decided on.
    ///
    /// # Errors
    /// [`SessionError::Approval`] with [`UnknownCall`](agents_core::ApprovalError::UnknownCall)
    /// when the session waits on no such call, or
    /// [`Changed`](agents_core::ApprovalError::Changed) when its fingerprint is not `expect`;
    /// otherwise as [`Session::decide`].
    pub async fn decide_with(
        &self,
        call_id: &str,
        expect: Option<&str>,
        make: impl FnOnce(&agents_core::PendingApproval) -> agents_core::ApprovalDecision,
    ) -> Result<AgentState, SessionError> {
        let lease = self.take_lease().await?;
        let token = lease.token();
        lease
            .run(async {
                let position = self.load().await?;
                let refused = |source| SessionError::Approval {
                    session: self.id.clone(),
                    source,
                };
                let pending = position
                    .state
                    .pending_approvals()
                    .into_iter()
                    .find(|p| p.key() == call_id)
                    .ok_or_else(|| {
                        refused(agents_core::ApprovalError::UnknownCall {
                            call_id: call_id.to_owned(),
                        })
                    })?;
                if let Some(fingerprint) = expect {
                    position
                        .state
                        .check_fingerprint(call_id, fingerprint)
                        .map_err(refused)?;
                }
                let state = position
                    .state
                    .clone()
                    .decide(make(&pending))
                    .map_err(refused)?;
                Ok(self.commit(position, state, token).await?.state)
            })
            .await
    }

    async fn load(&self) -> Result<Position, SessionError> {
        match self.store.load_latest(&self.id).await? {
            Some(loaded) => Ok(Position {
                state: loaded.state,
                version: loaded.version,
                encoder: loaded.encoder,
            }),
            None => Err(SessionError::NotFound {
                session: self.id.clone(),
            }),
        }
    }

    async fn load_or_new(&self) -> Result<Position, SessionError> {
        match self.load().await {
            Err(SessionError::NotFound { .. }) => Ok(Position {
                state: self.agent.new_state(),
                version: 0,
                encoder: StateEncoder::new(),
            }),
            other => other,
        }
    }

    /// Steps and commits while the run can go on (and no graceful stop was asked for).
    async fn drive(&self, mut position: Position, lease: u64) -> Result<AgentState, SessionError> {
        while position.state.is_runnable() && !self.stop.is_cancelled() {
            position = self.step_once(position, lease).await?;
        }
        Ok(position.state)
    }

    /// One step with the store's journal for the version it will commit, then the commit.
    async fn step_once(&self, position: Position, lease: u64) -> Result<Position, SessionError> {
        let journal = Arc::new(StoreJournal {
            store: self.store.clone(),
            id: self.id.clone(),
            version: position.version + 1,
            lease,
        });
        let mut options = StepOptions::new().with_cancellation(self.cancellation.clone());
        if position.state.execution().is_none() {
            // The step starts an execution: its id is journaled, so that a re-run of the step
            // starts the same execution and tools get the same idempotency keys.
            let version = position.version + 1;
            let id = match self
                .store
                .journal_get(&self.id, version, "execution")
                .await?
            {
                Some(id) => id,
                None => {
                    let id = uuid::Uuid::now_v7().to_string();
                    self.store
                        .journal_put(&self.id, version, "execution", &id, Some(lease))
                        .await?;
                    id
                }
            };
            options = options.with_execution_id(id);
        }
        let options = options.with_journal(journal);
        let next = self
            .agent
            .step_with(position.state.clone(), &options)
            .await?;
        self.commit(position, next, lease).await
    }

    /// Commits `state` after `position`. A commit whose acknowledgement was lost (the write
    /// failed or conflicted, but the version it would have made is this commit's) counts as
    /// done.
    async fn commit(
        &self,
        mut position: Position,
        state: AgentState,
        lease: u64,
    ) -> Result<Position, SessionError> {
        let delta = position
            .encoder
            .encode(&state)
            .map_err(|source| SessionError::Encode {
                session: self.id.clone(),
                source,
            })?;
        let commit = Commit {
            committed_at: self.agent.clock().now(),
            lease: Some(lease),
            ..Commit::new(&state, delta)
        };
        let expected = position.version;
        match self.store.write(&self.id, expected, &commit).await {
            Ok(version) => position.version = version,
            Err(error) => {
                let ours = self
                    .store
                    .commit_id(&self.id, expected + 1)
                    .await
                    .ok()
                    .flatten()
                    .is_some_and(|id| id == commit.commit_id);
                if !ours {
                    return Err(error);
                }
                tracing::info!(
                    session = %self.id,
                    version = expected + 1,
                    "the commit's acknowledgement was lost, but the commit is stored"
                );
                position.version = expected + 1;
            }
        }
        position.state = state;
        Ok(position)
    }
}

/// The journal of the step that will become `version` of session `id`, kept in the store.
#[derive(Debug)]
struct StoreJournal<S> {
    store: S,
    id: String,
    version: u64,
    /// The lease's fencing token: an entry is written only while the lease is held.
    lease: u64,
}

impl<S: SessionStore> StoreJournal<S> {
    async fn get<T: serde::de::DeserializeOwned>(
        &self,
        key: &str,
    ) -> Result<Option<T>, JournalError> {
        let Some(body) = self
            .store
            .journal_get(&self.id, self.version, key)
            .await
            .map_err(JournalError::read)?
        else {
            return Ok(None);
        };
        serde_json::from_str(&body)
            .map(Some)
            .map_err(JournalError::read)
    }

    async fn put<T: serde::Serialize>(&self, key: &str, value: &T) -> Result<(), JournalError> {
        let body = serde_json::to_string(value).map_err(JournalError::write)?;
        self.store
            .journal_put(&self.id, self.version, key, &body, Some(self.lease))
            .await
            .map_err(JournalError::write)
    }
}

#[async_trait]
impl<S: SessionStore + std::fmt::Debug> StepJournal for StoreJournal<S> {
    async fn recorded_reply(&self, key: &str) -> Result<Option<InferenceResponse>, JournalError> {
        self.get(&format!("reply:{key}")).await
    }

    async fn record_reply(&self, key: &str, reply: &InferenceResponse) -> Result<(), JournalError> {
        self.put(&format!("reply:{key}"), reply).await
    }

    async fn recorded_intent(
        &self,
        key: &str,
    ) -> Result<Option<agents_core::CallIntent>, JournalError> {
        self.get(&format!("intent:{key}")).await
    }

    async fn record_intent(&self, intent: &agents_core::CallIntent) -> Result<(), JournalError> {
        self.put(&format!("intent:{}", intent.key()), intent).await
    }

    async fn recorded_tool_result(&self, key: &str) -> Result<Option<ToolExecution>, JournalError> {
        self.get(&format!("tool:{key}")).await
    }

    async fn record_tool_result(
        &self,
        key: &str,
        execution: &ToolExecution,
    ) -> Result<(), JournalError> {
        self.put(&format!("tool:{key}"), execution).await
    }
}
