//! `Session`: an agent running on a stored conversation, committed after every step.

use std::sync::Arc;

use agents_core::incremental::StateEncoder;
use agents_core::{Agent, AgentState, JournalError, StepJournal, StepOptions, ToolExecution};
use async_trait::async_trait;
use inference::InferenceResponse;
use messages::Message;
use tokio_util::sync::CancellationToken;

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
        }
    }
}

/// An agent on a stored conversation: every step is loaded, run with
/// [`Agent::step_with`] and committed (one version per step) before the next begins.
///
/// Each step runs with a journal in the store: the model reply and every finished tool call
/// are recorded as they happen, so a step re-run after a crash ([`Session::resume`]) reuses
/// the reply and runs only the calls that had not finished.
#[derive(Debug)]
pub struct Session<S> {
    agent: Agent,
    store: S,
    id: String,
    cancellation: CancellationToken,
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
        _context: &agents_core::StepContext,
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

    /// Loads the conversation (a new one when the session does not exist), appends `message`
    /// as a user message (committed), runs the agent step by step, committing after every
    /// step, and returns the final state.
    ///
    /// # Errors
    /// [`SessionError::Conflict`] when another writer advanced the session meanwhile (reload
    /// and decide); the store's errors; [`SessionError::Agent`] when the loop cannot run the
    /// state.
    pub async fn send(&self, message: impl Into<Message>) -> Result<AgentState, SessionError> {
        crate::validate_name(&self.id)?;
        let position = self.load_or_new().await?;
        let state = position.state.clone().with_user_message(message);
        let position = self.commit(position, state).await?;
        self.drive(position).await
    }

    /// Continues a run that a crash (or a stop) left `InProgress`, or a suspended run whose
    /// waiting calls are all decided ([`Session::decide`]), step by step, and returns the
    /// final state; a finished run, or one still waiting for a decision, comes back unchanged.
    /// An approved call runs exactly once: its result is journaled before the commit, so a
    /// crash after it ran reuses the result.
    ///
    /// # Errors
    /// [`SessionError::NotFound`] when the session does not exist; otherwise as
    /// [`Session::send`].
    pub async fn resume(&self) -> Result<AgentState, SessionError> {
        let position = self.load().await?;
        self.drive(position).await
    }

    /// Advances the session by exactly one step (load, [`Agent::step_with`], commit) and
    /// returns the committed state: the unit of work for a worker pool or a durable-execution
    /// engine. A finished run comes back unchanged.
    ///
    /// # Errors
    /// As [`Session::resume`]; on [`SessionError::Conflict`] another worker took the step.
    pub async fn step(&self) -> Result<AgentState, SessionError> {
        let position = self.load().await?;
        if !position.state.is_runnable() {
            return Ok(position.state);
        }
        Ok(self.step_once(position).await?.state)
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
        let position = self.load().await?;
        let state =
            position
                .state
                .clone()
                .decide(decision)
                .map_err(|source| SessionError::Approval {
                    session: self.id.clone(),
                    source,
                })?;
        Ok(self.commit(position, state).await?.state)
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
                state: AgentState::new(),
                version: 0,
                encoder: StateEncoder::new(),
            }),
            other => other,
        }
    }

    async fn drive(&self, mut position: Position) -> Result<AgentState, SessionError> {
        while position.state.is_runnable() {
            position = self.step_once(position).await?;
        }
        Ok(position.state)
    }

    /// One step with the store's journal for the version it will commit, then the commit.
    async fn step_once(&self, position: Position) -> Result<Position, SessionError> {
        let journal = Arc::new(StoreJournal {
            store: self.store.clone(),
            id: self.id.clone(),
            version: position.version + 1,
        });
        let options = StepOptions::new()
            .with_cancellation(self.cancellation.clone())
            .with_journal(journal);
        let next = self
            .agent
            .step_with(position.state.clone(), &options)
            .await?;
        self.commit(position, next).await
    }

    /// Commits `state` after `position`. A commit whose acknowledgement was lost (the write
    /// failed or conflicted, but the version it would have made is this commit's) counts as
    /// done.
    async fn commit(
        &self,
        mut position: Position,
        state: AgentState,
    ) -> Result<Position, SessionError> {
        let delta = position
            .encoder
            .encode(&state)
            .map_err(|source| SessionError::Encode {
                session: self.id.clone(),
                source,
            })?;
        let commit = Commit::new(&state, delta);
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
            .journal_put(&self.id, self.version, key, &body)
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

    async fn recorded_tool_result(
        &self,
        call_id: &str,
    ) -> Result<Option<ToolExecution>, JournalError> {
        self.get(&format!("tool:{call_id}")).await
    }

    async fn record_tool_result(&self, execution: &ToolExecution) -> Result<(), JournalError> {
        self.put(&format!("tool:{}", execution.call().id()), execution)
            .await
    }
}
