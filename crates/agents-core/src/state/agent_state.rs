//! `AgentState`: the immutable value the agent loop moves from step to step.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use inference::Usage;
use messages::{Message, MessageStore, Messages, Metadata};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{AgentStatus, CachedContext, StateError};
use crate::step::final_assistant_message;
use crate::{
    AgentStep, ContinuationOutcome, CurrentExecution, StepExecution, StepExecutions, StopReason,
    ToolContext, BUFFER_SECTION, DEFAULT_SECTION, EXECUTION_BUFFER_SECTION, SUMMARY_SECTION,
};

/// Everything an agent knows: its conversation (a sectioned [`MessageStore`]), metadata, the
/// steps of the running execution, usage and timing.
///
/// An immutable value: every change returns a new state. Cloning is cheap (message lists and
/// step records are shared), so the loop can hand out every intermediate state.
///
/// Serializes (serde) to a JSON document with `"version": 2` ([`STATE_VERSION`](crate::STATE_VERSION)), in which
/// every message is written once, and reads it back losslessly (version 1 documents too).
#[derive(Clone, PartialEq)]
pub struct AgentState {
    /// One shared allocation: clones and moves are a pointer, changes copy the fields once.
    data: Arc<StateData>,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct StateData {
    pub(super) agent_id: Arc<str>,
    pub(super) parent_agent_id: Option<Arc<str>>,
    pub(super) status: AgentStatus,
    pub(super) store: MessageStore,
    pub(super) metadata: Metadata,
    pub(super) current_execution: Option<CurrentExecution>,
    pub(super) current_step: Option<Arc<AgentStep>>,
    pub(super) step_executions: StepExecutions,
    pub(super) usage: Usage,
    pub(super) cached_context: Arc<CachedContext>,
    pub(super) stop_reason: Option<StopReason>,
    pub(super) created_at: DateTime<Utc>,
    pub(super) updated_at: DateTime<Utc>,
}

impl Default for AgentState {
    fn default() -> Self {
        Self::new()
    }
}

impl AgentState {
    /// The persistent conversation section (`messages`).
    pub const DEFAULT_SECTION: &'static str = DEFAULT_SECTION;
    /// The tool trace of the running execution (`execution_buffer`).
    pub const EXECUTION_BUFFER_SECTION: &'static str = EXECUTION_BUFFER_SECTION;
    /// Summaries of older conversation (`summary`).
    pub const SUMMARY_SECTION: &'static str = SUMMARY_SECTION;
    /// Older messages set aside before summarization (`buffer`).
    pub const BUFFER_SECTION: &'static str = BUFFER_SECTION;

    /// A fresh state with a new agent id (uuid v4).
    pub fn new() -> Self {
        let now = crate::clock::now();
        Self::from_data(StateData {
            agent_id: crate::id::new_id(),
            parent_agent_id: None,
            status: AgentStatus::InProgress,
            store: MessageStore::new(),
            metadata: Metadata::new(),
            current_execution: None,
            current_step: None,
            step_executions: StepExecutions::new(),
            usage: Usage::default(),
            cached_context: Arc::default(),
            stop_reason: None,
            created_at: now,
            updated_at: now,
        })
    }

    pub(super) fn from_data(data: StateData) -> Self {
        Self {
            data: Arc::new(data),
        }
    }

    /// The fields (for the serialized documents).
    pub(super) fn data(&self) -> &StateData {
        &self.data
    }

    // ----- conversation -----------------------------------------------------------------

    /// Appends a user message to `messages` and starts a new execution
    /// ([`AgentState::for_continuation`]: clears the execution state and `execution_buffer`).
    pub fn with_user_message(&self, message: impl Into<Message>) -> Self {
        self.with_user_message_keep_execution(message)
            .for_continuation()
    }

    /// Appends a user message to `messages` without resetting the execution state.
    pub fn with_user_message_keep_execution(&self, message: impl Into<Message>) -> Self {
        self.changed(|data| {
            data.store = self
                .data
                .store
                .section(DEFAULT_SECTION)
                .append(message.into());
            data.status = AgentStatus::InProgress;
        })
    }

    /// The state ready for a new execution: status `InProgress`; no current execution, current
    /// step, step executions, cached context or stop reason; `execution_buffer` emptied.
    /// Messages, metadata, usage totals and ids are kept.
    pub fn for_continuation(&self) -> Self {
        self.changed(|data| {
            data.status = AgentStatus::InProgress;
            data.current_execution = None;
            data.current_step = None;
            data.step_executions = StepExecutions::new();
            data.cached_context = Arc::default();
            data.stop_reason = None;
            data.store = self.data.store.section(EXECUTION_BUFFER_SECTION).clear();
        })
    }

    /// The persistent conversation (the `messages` section).
    pub fn messages(&self) -> Messages {
        self.data.store.section(DEFAULT_SECTION).messages()
    }

    /// The message store.
    pub fn store(&self) -> &MessageStore {
        &self.data.store
    }

    /// A copy with another store.
    pub fn with_store(&self, store: MessageStore) -> Self {
        self.changed(|data| {
            data.store = store;
        })
    }

    /// This state with another store, taken by value: changed in place when nothing else
    /// shares the state (a processor's `after` gets its state by value, so the chain copies
    /// nothing).
    ///
    /// Unlike [`with_store`](Self::with_store) it keeps [`updated_at`](Self::updated_at): it is
    /// how processors adjust the store as part of the step the loop is running, which the loop
    /// stamps when the step begins and when it is recorded, so the edit reads no clock.
    pub fn replace_store(self, store: MessageStore) -> Self {
        self.edited(|data| data.store = store)
    }

    /// This state, taken by value, with its store changed in place by `edit` (through
    /// [`MessageStore::section_mut`]): like [`replace_store`](Self::replace_store), keeps
    /// `updated_at`, and copies neither the state nor the store's list of sections when
    /// nothing else shares them, so several processors changing the store in one step copy
    /// them once.
    ///
    /// ```
    /// use agents_core::{AgentState, EXECUTION_BUFFER_SECTION};
    /// use messages::Message;
    ///
    /// let state = AgentState::new()
    ///     .edit_store(|store| store.section_mut(EXECUTION_BUFFER_SECTION).append(Message::assistant("thinking")));
    /// assert_eq!(state.messages_for_inference().len(), 1);
    /// ```
    pub fn edit_store(self, edit: impl FnOnce(&mut MessageStore)) -> Self {
        self.edited(|data| edit(&mut data.store))
    }

    /// A copy with the `messages` section replaced.
    pub fn with_messages(&self, messages: impl Into<Messages>) -> Self {
        self.with_store(self.data.store.section(DEFAULT_SECTION).set(messages))
    }

    /// What the model sees: `summary`, `buffer`, `messages` and `execution_buffer`, in that order.
    pub fn messages_for_inference(&self) -> Messages {
        // The same as `SelectedSections::new([..]).compile(..)`, without building the list.
        [
            SUMMARY_SECTION,
            BUFFER_SECTION,
            DEFAULT_SECTION,
            EXECUTION_BUFFER_SECTION,
        ]
        .iter()
        .fold(Messages::new(), |compiled, name| {
            compiled.concat(&self.data.store.section(name).messages())
        })
    }

    /// What a driver sends: the cached prefix (system prompt) followed by
    /// [`messages_for_inference`](Self::messages_for_inference).
    pub fn prompt_messages(&self) -> Messages {
        self.data
            .cached_context
            .messages
            .concat(&self.messages_for_inference())
    }

    /// The agent's answer: the last assistant message with text and no tool calls, from the
    /// last step's response, else from `messages`.
    pub fn final_response(&self) -> Option<Message> {
        let last_step = self
            .data
            .current_step
            .as_deref()
            .or_else(|| self.data.step_executions.steps().next_back());
        if let Some(message) = last_step.and_then(AgentStep::final_response) {
            return Some(message.clone());
        }
        final_assistant_message(&self.messages()).cloned()
    }

    // ----- identity and metadata ----------------------------------------------------------

    /// The agent's id (uuid v4).
    pub fn agent_id(&self) -> &str {
        &self.data.agent_id
    }

    /// The parent agent's id, for subagents.
    pub fn parent_agent_id(&self) -> Option<&str> {
        self.data.parent_agent_id.as_deref()
    }

    pub(crate) fn shared_agent_id(&self) -> &Arc<str> {
        &self.data.agent_id
    }

    pub(crate) fn shared_parent_agent_id(&self) -> Option<&Arc<str>> {
        self.data.parent_agent_id.as_ref()
    }

    /// A copy with a parent agent id.
    pub fn with_parent_agent_id(&self, parent: impl Into<String>) -> Self {
        self.changed(|data| {
            data.parent_agent_id = Some(Arc::from(parent.into()));
        })
    }

    /// A copy with another agent id.
    pub fn with_agent_id(&self, id: impl Into<String>) -> Self {
        self.changed(|data| {
            data.agent_id = Arc::from(id.into());
        })
    }

    /// Free metadata.
    pub fn metadata(&self) -> &Metadata {
        &self.data.metadata
    }

    /// A copy with one metadata entry set.
    pub fn with_metadata(&self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.changed(|data| {
            data.metadata = self.data.metadata.clone().with(key, value);
        })
    }

    /// A copy with the whole metadata replaced.
    pub fn with_metadata_map(&self, metadata: Metadata) -> Self {
        self.changed(|data| {
            data.metadata = metadata;
        })
    }

    /// When the state was created.
    pub fn created_at(&self) -> DateTime<Utc> {
        self.data.created_at
    }

    /// When the state last changed.
    pub fn updated_at(&self) -> DateTime<Utc> {
        self.data.updated_at
    }

    // ----- status -----------------------------------------------------------------------

    /// The status: stored `Failed` is `Failed`; otherwise, once the execution stopped (the last
    /// outcome says stop, or it was interrupted), `Failed` when it stopped on an error and
    /// `Completed` otherwise; else the stored status.
    pub fn status(&self) -> AgentStatus {
        if self.data.status == AgentStatus::Failed {
            return AgentStatus::Failed;
        }
        match self.stop_reason() {
            Some(StopReason::Error) => AgentStatus::Failed,
            Some(_) => AgentStatus::Completed,
            None => self.data.status,
        }
    }

    /// The stored status (as set by [`AgentState::with_status`]).
    pub fn stored_status(&self) -> AgentStatus {
        self.data.status
    }

    /// A copy with the stored status set.
    pub fn with_status(&self, status: AgentStatus) -> Self {
        self.changed(|data| {
            data.status = status;
        })
    }

    /// [`with_status`](Self::with_status) on an owned state: in place when it is not shared.
    pub(crate) fn into_status(self, status: AgentStatus) -> Self {
        self.edited_at(crate::clock::now(), |data| data.status = status)
    }

    /// Why the execution stopped: the interruption reason if it was interrupted (e.g.
    /// cancelled), else the last outcome's stop reason; `None` while it goes on.
    pub fn stop_reason(&self) -> Option<StopReason> {
        self.data
            .stop_reason
            .or_else(|| self.continuation_outcome().and_then(|o| o.stop_reason()))
    }

    /// A copy marked as stopped for `reason` outside the criteria (e.g. `UserRequested`).
    pub fn with_stop_reason(&self, reason: StopReason) -> Self {
        self.changed(|data| {
            data.stop_reason = Some(reason);
        })
    }

    // ----- steps ------------------------------------------------------------------------

    /// The step that ran last (set by `record_step`, kept by `record_step_execution`).
    pub fn current_step(&self) -> Option<&AgentStep> {
        self.data.current_step.as_deref()
    }

    pub(crate) fn current_step_shared(&self) -> Option<&Arc<AgentStep>> {
        self.data.current_step.as_ref()
    }

    /// The running step's execution record.
    pub fn current_execution(&self) -> Option<&CurrentExecution> {
        self.data.current_execution.as_ref()
    }

    /// The recorded steps of this execution, in order.
    pub fn steps(&self) -> impl DoubleEndedIterator<Item = &AgentStep> + ExactSizeIterator {
        self.data.step_executions.steps()
    }

    /// Number of recorded steps in this execution.
    pub fn step_count(&self) -> usize {
        self.data.step_executions.len()
    }

    /// Recorded steps plus the current step when it is not recorded yet (what limits count).
    pub fn transient_step_count(&self) -> usize {
        self.step_count() + usize::from(self.has_unrecorded_step())
    }

    /// True when the current step is the last recorded one.
    pub fn is_current_step_recorded(&self) -> bool {
        match (&self.data.current_step, self.data.step_executions.last()) {
            (Some(current), Some(last)) => {
                Arc::ptr_eq(current, last.shared_step()) || current.id() == last.step().id()
            }
            _ => false,
        }
    }

    fn has_unrecorded_step(&self) -> bool {
        self.data.current_step.is_some() && !self.is_current_step_recorded()
    }

    /// The step executions of this execution.
    pub fn step_executions(&self) -> &StepExecutions {
        &self.data.step_executions
    }

    /// The last step execution's outcome.
    pub fn continuation_outcome(&self) -> Option<&ContinuationOutcome> {
        self.data.step_executions.last_outcome()
    }

    /// Starts a step: a new [`CurrentExecution`] numbered `step_count + 1` and no current step.
    /// A no-op while a step is already running.
    pub fn begin_step_execution(&self) -> Self {
        if self.data.current_execution.is_some() {
            return self.clone();
        }
        self.with_begun_execution(CurrentExecution::new(self.step_count() + 1))
    }

    /// [`begin_step_execution`](Self::begin_step_execution) on an owned state: in place when
    /// nothing else shares it.
    pub(crate) fn into_begun(self) -> Self {
        if self.data.current_execution.is_some() {
            return self;
        }
        let execution = CurrentExecution::new(self.step_count() + 1);
        self.edited_at(execution.started_at, |data| {
            data.current_execution = Some(execution);
            data.current_step = None;
        })
    }

    /// A copy running `execution` (begun earlier) with no current step: what
    /// [`begin_step_execution`](Self::begin_step_execution) gave when `execution` started.
    pub(crate) fn with_begun_execution(&self, execution: CurrentExecution) -> Self {
        self.clone().edited_at(execution.started_at, |data| {
            data.current_execution = Some(execution);
            data.current_step = None;
        })
    }

    /// A copy without a current execution.
    pub fn clear_current_execution(&self) -> Self {
        if self.data.current_execution.is_none() {
            return self.clone();
        }
        self.changed(|data| {
            data.current_execution = None;
        })
    }

    /// Sets the current step (not yet recorded: criteria see it through `current_step`).
    pub fn record_step(&self, step: impl Into<Arc<AgentStep>>) -> Self {
        self.clone().into_step_recorded(step, crate::clock::now())
    }

    /// [`record_step`](Self::record_step) on an owned state at a time the caller already read
    /// from the clock: in place when nothing else shares it (the loop's case).
    pub(crate) fn into_step_recorded(
        self,
        step: impl Into<Arc<AgentStep>>,
        now: DateTime<Utc>,
    ) -> Self {
        let step = step.into();
        if let Some(execution) = &self.data.current_execution {
            step.adopt_id(&execution.id);
        }
        self.edited_at(now, |data| data.current_step = Some(step))
    }

    /// Records a finished step: appends it, makes its step current, ends the current execution
    /// and adds its usage to the totals.
    pub fn record_step_execution(&self, execution: StepExecution) -> Self {
        self.clone().into_recorded(execution)
    }

    /// [`record_step_execution`](Self::record_step_execution) on an owned state: changes it in
    /// place when nothing else shares it (the loop's case), so recording copies nothing.
    pub(crate) fn into_recorded(self, execution: StepExecution) -> Self {
        self.edited_at(execution.completed_at(), |data| {
            data.usage += execution.step().usage();
            data.current_step = Some(Arc::clone(execution.shared_step()));
            data.current_execution = None;
            data.step_executions = data.step_executions.appended(execution);
        })
    }

    // ----- usage and context --------------------------------------------------------------

    /// Tokens used by this agent over all its executions (including an unrecorded current step).
    pub fn usage(&self) -> Usage {
        self.data.usage + self.unrecorded_usage()
    }

    /// Tokens used by the running execution (recorded steps plus an unrecorded current step).
    pub fn execution_usage(&self) -> Usage {
        self.data.step_executions.total_usage() + self.unrecorded_usage()
    }

    fn unrecorded_usage(&self) -> Usage {
        match &self.data.current_step {
            Some(step) if self.has_unrecorded_step() => step.usage(),
            _ => Usage::default(),
        }
    }

    /// The cached request context.
    pub fn cached_context(&self) -> &CachedContext {
        &self.data.cached_context
    }

    /// A copy with another cached context.
    pub fn with_cached_context(&self, context: CachedContext) -> Self {
        self.with_shared_cached_context(Arc::new(context))
    }

    /// A copy with a shared cached context (no copy of the context).
    pub fn with_shared_cached_context(&self, context: Arc<CachedContext>) -> Self {
        self.changed(|data| {
            data.cached_context = context;
        })
    }

    /// A [`ToolContext`] for the running step (no cancellation; the loop supplies its own).
    pub fn tool_context(&self) -> ToolContext {
        self.tool_context_with(tokio_util::sync::CancellationToken::new())
    }

    /// A [`ToolContext`] for the running step carrying `cancellation`.
    pub fn tool_context_with(
        &self,
        cancellation: tokio_util::sync::CancellationToken,
    ) -> ToolContext {
        ToolContext {
            agent_id: Arc::clone(&self.data.agent_id),
            parent_agent_id: self.data.parent_agent_id.clone(),
            step_number: self
                .data
                .current_execution
                .as_ref()
                .map_or(self.step_count() + 1, |c| c.step_number),
            metadata: self.data.metadata.clone(),
            cancellation,
        }
    }

    // ----- serialization ----------------------------------------------------------------

    /// The state as a JSON document (`"version": 2`, [`STATE_VERSION`](crate::STATE_VERSION)): every message is
    /// written once, so the document grows with the conversation, not with steps × history
    /// (see `state/document.rs` for the shape).
    ///
    /// # Errors
    /// [`StateError::Serialize`] if a value cannot be written (not expected for valid states).
    pub fn to_json(&self) -> Result<String, StateError> {
        serde_json::to_string_pretty(self).map_err(|e| StateError::Serialize(e.to_string()))
    }

    /// Reads a state written by [`AgentState::to_json`] (or by serde), in the current version
    /// or in version 1.
    ///
    /// # Errors
    /// [`StateError::Syntax`] for text that is not JSON, [`StateError::MissingVersion`] and
    /// [`StateError::UnsupportedVersion`] for foreign or newer documents, and
    /// [`StateError::InvalidField`] naming the path of a missing or malformed field (or of a
    /// message reference that points nowhere).
    pub fn from_json(text: &str) -> Result<Self, StateError> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| StateError::Syntax(e.to_string()))?;
        super::document::read(&value)
    }

    /// A copy changed by `edit`, stamped now. The fields are cloned straight into the copy's
    /// allocation (`Arc::make_mut`), not built on the stack and moved there.
    fn changed(&self, edit: impl FnOnce(&mut StateData)) -> Self {
        self.clone().edited_at(crate::clock::now(), edit)
    }

    /// This state changed by `edit` at `now`: in place when nothing else shares it, else on a
    /// copy of the fields (what the owned `into_*`/`replace_*` methods have in common).
    fn edited_at(self, now: DateTime<Utc>, edit: impl FnOnce(&mut StateData)) -> Self {
        self.edited(|data| {
            data.updated_at = now.max(data.updated_at);
            edit(data);
        })
    }

    /// This state changed by `edit`, keeping `updated_at`: in place when nothing else shares it.
    fn edited(mut self, edit: impl FnOnce(&mut StateData)) -> Self {
        edit(Arc::make_mut(&mut self.data));
        self
    }
}

impl std::fmt::Debug for AgentState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let data = &self.data;
        f.debug_struct("AgentState")
            .field("agent_id", &data.agent_id)
            .field("parent_agent_id", &data.parent_agent_id)
            .field("status", &data.status)
            .field("store", &data.store)
            .field("metadata", &data.metadata)
            .field("current_execution", &data.current_execution)
            .field("current_step", &data.current_step)
            .field("step_executions", &data.step_executions)
            .field("usage", &data.usage)
            .field("cached_context", &data.cached_context)
            .field("stop_reason", &data.stop_reason)
            .field("created_at", &data.created_at)
            .field("updated_at", &data.updated_at)
            .finish()
    }
}

impl Serialize for AgentState {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        super::document::write(self).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for AgentState {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Through a JSON value, which any self-describing format gives: the version decides
        // the shape.
        let value = Value::deserialize(deserializer)?;
        super::document::read(&value).map_err(serde::de::Error::custom)
    }
}
