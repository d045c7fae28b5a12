//! `AgentState`: the conversation and the run, as one immutable value.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use inference::Usage;
use messages::{Message, MessageStore, Messages, Metadata, Section};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::records::agent_status::AgentStatus;
use crate::records::agent_step::{final_assistant_message, AgentStep};
use crate::records::cost::RunCost;
use crate::records::decision::StopReason;
use crate::records::outcome::ContinuationOutcome;
use crate::records::step_execution::{StepExecution, StepExecutions};
use crate::state::sections::{
    BUFFER_SECTION, DEFAULT_SECTION, EXECUTION_BUFFER_SECTION, SUMMARY_SECTION,
};

/// What an agent knows: its conversation (a sectioned [`MessageStore`]), metadata, and the run:
/// the steps of the running (or last) execution, usage, status and timing.
///
/// An immutable value: every `with_*` method takes the state and returns the changed state
/// (changed in place when nothing else holds it; clone first to keep the old one, which is
/// cheap: the fields live behind one `Arc` and message lists are shared).
///
/// A state holds no configuration: the system prompt, tools and limits belong to the
/// [`Agent`](crate::Agent), so a state saved under one agent and resumed by a newer one runs
/// with the newer configuration.
///
/// Serializes (serde) to a JSON document with `"version": 5`
/// ([`STATE_VERSION`](crate::STATE_VERSION)), in which every message is written once, and reads
/// versions 1 to 5 back.
#[derive(Clone, PartialEq)]
pub struct AgentState {
    data: Arc<StateData>,
}

#[derive(Debug, PartialEq)]
pub(super) struct StateData {
    pub(super) agent_id: Arc<str>,
    pub(super) parent_agent_id: Option<Arc<str>>,
    pub(super) status: AgentStatus,
    pub(super) stop_reason: Option<StopReason>,
    pub(super) store: MessageStore,
    pub(super) metadata: Metadata,
    /// Tokens of every recorded step of every execution.
    pub(super) usage: Usage,
    /// What every recorded step of every execution cost.
    pub(super) cost: RunCost,
    pub(super) execution: Option<Execution>,
    pub(super) step_executions: StepExecutions,
    /// The calls a suspended run waits on (empty otherwise).
    pub(super) approvals: Vec<crate::state::pending_approval::PendingApproval>,
    pub(super) created_at: DateTime<Utc>,
    pub(super) updated_at: DateTime<Utc>,
}

/// A copy owns its id strings. `Arc::make_mut` copies the data only when another state shares
/// it, as when many runs start from one shared state; each run then clones its id into the
/// tool contexts and events of its steps, and those clones would all count on the shared
/// state's one id, written to by every core. One small allocation per copy instead.
impl Clone for StateData {
    fn clone(&self) -> Self {
        Self {
            agent_id: Arc::from(&*self.agent_id),
            parent_agent_id: self.parent_agent_id.as_deref().map(Arc::from),
            status: self.status,
            stop_reason: self.stop_reason,
            store: self.store.clone(),
            metadata: self.metadata.clone(),
            usage: self.usage,
            cost: self.cost,
            execution: self.execution.clone(),
            step_executions: self.step_executions.clone(),
            approvals: self.approvals.clone(),
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }
}

/// One execution: the run of steps from a user message until the agent stops.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Execution {
    id: Arc<str>,
    started_at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "is_zero")]
    stop_vetoes: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Execution {
    pub(crate) fn new(id: Arc<str>, started_at: DateTime<Utc>) -> Self {
        Self {
            id,
            started_at,
            stop_vetoes: 0,
        }
    }

    /// The execution's id (a uuid v7).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The id itself, shared (a tool's context holds it without a copy).
    pub(crate) fn shared_id(&self) -> &Arc<str> {
        &self.id
    }

    /// When it started (by the agent's clock).
    pub fn started_at(&self) -> DateTime<Utc> {
        self.started_at
    }

    /// How many times a stop hook kept it going.
    pub fn stop_vetoes(&self) -> u32 {
        self.stop_vetoes
    }
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

    /// A fresh state with a new agent id (uuid v7), created now (system time). The library
    /// itself starts conversations with [`Agent::new_state`](crate::agent::agent::Agent::new_state),
    /// which reads the agent's clock.
    pub fn new() -> Self {
        Self::new_at(Utc::now())
    }

    /// A fresh state with a new agent id (uuid v7), created at `now`.
    pub fn new_at(now: DateTime<Utc>) -> Self {
        Self::from_data(StateData {
            agent_id: crate::ids::new_id(),
            parent_agent_id: None,
            status: AgentStatus::InProgress,
            stop_reason: None,
            store: MessageStore::new(),
            metadata: Metadata::new(),
            usage: Usage::default(),
            cost: RunCost::zero(),
            execution: None,
            step_executions: StepExecutions::new(),
            approvals: Vec::new(),
            created_at: now,
            updated_at: now,
        })
    }

    pub(super) fn from_data(data: StateData) -> Self {
        Self {
            data: Arc::new(data),
        }
    }

    pub(super) fn data(&self) -> &StateData {
        &self.data
    }

    /// This state changed by `edit`: in place when nothing else holds it, else on a copy of
    /// the fields (the one way every change is made).
    pub(super) fn edit(mut self, edit: impl FnOnce(&mut StateData)) -> Self {
        edit(Arc::make_mut(&mut self.data));
        self
    }

    // ----- the conversation -----------------------------------------------------------------

    /// Appends a user message to `messages` and starts a new execution
    /// ([`for_continuation`](Self::for_continuation)).
    pub fn with_user_message(self, message: impl Into<Message>) -> Self {
        self.with_user_message_keep_execution(message)
            .for_continuation()
    }

    /// Appends a user message to `messages`; the execution goes on (status `InProgress`, its
    /// steps and limits kept). On a suspended state, the waiting calls are closed first
    /// ([`cancel_pending`](Self::cancel_pending)).
    pub fn with_user_message_keep_execution(self, message: impl Into<Message>) -> Self {
        let was_suspended = self.status() == AgentStatus::Suspended;
        let this = self.cancel_pending();
        let store = this.store().section(DEFAULT_SECTION).append(message.into());
        this.edit(|data| {
            data.store = store;
            data.status = AgentStatus::InProgress;
            if was_suspended {
                // The cancellation ended nothing: the execution goes on with the message.
                data.stop_reason = None;
            }
        })
    }

    /// The state ready for a new execution: status `InProgress`; no execution, step
    /// executions or stop reason; `execution_buffer` emptied. The conversation, metadata,
    /// usage totals and ids are kept.
    pub fn for_continuation(self) -> Self {
        let store = self.store().section(EXECUTION_BUFFER_SECTION).clear();
        self.edit(|data| {
            data.status = AgentStatus::InProgress;
            data.stop_reason = None;
            data.execution = None;
            data.step_executions = StepExecutions::new();
            data.store = store;
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

    /// This state with another store.
    pub fn with_store(self, store: MessageStore) -> Self {
        self.edit(|data| data.store = store)
    }

    /// This state with the `messages` section replaced.
    pub fn with_messages(self, messages: impl Into<Messages>) -> Self {
        let store = self.store().section(DEFAULT_SECTION).set(messages);
        self.with_store(store)
    }

    /// What the model sees: `summary`, `buffer`, `messages` and `execution_buffer`, in that
    /// order.
    pub fn messages_for_inference(&self) -> Messages {
        let sections = self.data.store.sections();
        // Borrowed, and the empty ones left out: most steps show one or two sections, and a
        // single one is shared as it is.
        let mut shown = [
            SUMMARY_SECTION,
            BUFFER_SECTION,
            DEFAULT_SECTION,
            EXECUTION_BUFFER_SECTION,
        ]
        .into_iter()
        .filter_map(|name| {
            sections
                .iter()
                .find(|section| section.name() == name)
                .map(Section::messages)
                .filter(|messages| !messages.is_empty())
        });
        let Some(first) = shown.next() else {
            return Messages::new();
        };
        shown.fold(first.clone(), |compiled, next| compiled.concat(next))
    }

    /// The agent's answer: the last assistant message with text and no tool calls, from the
    /// last step's response, else from `messages`.
    pub fn final_response(&self) -> Option<Message> {
        if let Some(message) = self.current_step().and_then(AgentStep::final_response) {
            return Some(message.clone());
        }
        final_assistant_message(&self.messages()).cloned()
    }

    // ----- identity and metadata ------------------------------------------------------------

    /// The agent's id.
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

    /// This state with a parent agent id (subagents).
    pub fn with_parent_agent_id(self, parent: impl Into<String>) -> Self {
        let parent: Arc<str> = Arc::from(parent.into());
        self.edit(|data| data.parent_agent_id = Some(parent))
    }

    /// This state with another agent id.
    pub fn with_agent_id(self, id: impl Into<String>) -> Self {
        let id: Arc<str> = Arc::from(id.into());
        self.edit(|data| data.agent_id = id)
    }

    /// Free metadata (the facade shows it to the model once per change).
    pub fn metadata(&self) -> &Metadata {
        &self.data.metadata
    }

    /// This state with one metadata entry set.
    pub fn with_metadata(self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        let metadata = self.data.metadata.clone().with(key, value);
        self.with_metadata_map(metadata)
    }

    /// This state with the whole metadata replaced.
    pub fn with_metadata_map(self, metadata: Metadata) -> Self {
        self.edit(|data| data.metadata = metadata)
    }

    /// When the state was created.
    pub fn created_at(&self) -> DateTime<Utc> {
        self.data.created_at
    }

    /// When the loop last changed it (by the agent's clock): the start of the execution or
    /// the end of its last step.
    pub fn updated_at(&self) -> DateTime<Utc> {
        self.data.updated_at
    }

    // ----- the run ----------------------------------------------------------------------------

    /// Where the execution stands: `InProgress` until the loop finishes it.
    pub fn status(&self) -> AgentStatus {
        self.data.status
    }

    /// Why the execution stopped; `None` while it goes on.
    pub fn stop_reason(&self) -> Option<StopReason> {
        self.data.stop_reason
    }

    /// The running (or last) execution; `None` before the first step of a new execution.
    pub fn execution(&self) -> Option<&Execution> {
        self.data.execution.as_ref()
    }

    /// The last recorded step of this execution.
    pub fn current_step(&self) -> Option<&AgentStep> {
        self.data.step_executions.last().map(StepExecution::step)
    }

    /// The recorded steps of this execution, in order.
    pub fn steps(&self) -> impl DoubleEndedIterator<Item = &AgentStep> + ExactSizeIterator {
        self.data.step_executions.steps()
    }

    /// Number of recorded steps in this execution.
    pub fn step_count(&self) -> usize {
        self.data.step_executions.len()
    }

    /// The 1-based number of the step that runs next (the one a driver is producing): what
    /// step records, events, tool contexts and journal keys call it.
    pub fn next_step_number(&self) -> usize {
        self.step_count() + 1
    }

    /// The step executions of this execution.
    pub fn step_executions(&self) -> &StepExecutions {
        &self.data.step_executions
    }

    /// The verdict recorded after the last step.
    pub fn continuation_outcome(&self) -> Option<&ContinuationOutcome> {
        self.data.step_executions.last_outcome()
    }

    /// True when the last step's recorded verdict is to stop.
    pub fn is_stopping(&self) -> bool {
        self.continuation_outcome()
            .is_some_and(|outcome| !outcome.should_continue())
    }

    /// Tokens used over all executions.
    pub fn usage(&self) -> Usage {
        self.data.usage
    }

    /// Tokens used by this execution.
    pub fn execution_usage(&self) -> Usage {
        self.data.step_executions.total_usage()
    }

    /// What every execution of the conversation cost: the sum of every recorded step's
    /// cost (and of answers synthesized on stop), each priced by the agent that ran it.
    /// Unknown when some inference's model has no price ([`RunCost::usd`] is `None`).
    pub fn cost(&self) -> RunCost {
        self.data.cost
    }

    /// What this execution cost: the sum of its steps' costs.
    pub fn execution_cost(&self) -> RunCost {
        self.data.step_executions.steps().map(AgentStep::cost).sum()
    }

    // ----- the loop's transitions (see `agent/step.rs`) ----------------------------------------

    /// Starts an execution at `now`.
    pub(crate) fn started(self, execution: Execution) -> Self {
        self.edit(|data| {
            data.updated_at = execution.started_at;
            data.execution = Some(execution);
            data.status = AgentStatus::InProgress;
            data.stop_reason = None;
        })
    }

    /// Records a finished step (its verdict comes next, from [`judged`](Self::judged)).
    pub(crate) fn recorded(self, execution: StepExecution) -> Self {
        self.edit(|data| {
            data.updated_at = execution.completed_at();
            data.usage += execution.step().usage();
            data.cost += execution.step().cost();
            data.step_executions = data.step_executions.clone().appended(execution);
        })
    }

    /// Records the verdict on the last step.
    pub(crate) fn judged(self, outcome: ContinuationOutcome) -> Self {
        self.edit(|data| {
            data.step_executions =
                std::mem::take(&mut data.step_executions).with_last_outcome(outcome)
        })
    }

    /// Adds tokens spent outside a step (the answer synthesized on a stop).
    pub(crate) fn with_added_usage(self, usage: Usage, cost: RunCost) -> Self {
        if usage.is_empty() && cost.is_zero() {
            return self;
        }
        self.edit(|data| {
            data.usage += usage;
            data.cost += cost;
        })
    }

    /// This state with another status (the approval transitions).
    pub(super) fn with_status(self, status: AgentStatus) -> Self {
        self.edit(|data| data.status = status)
    }

    /// This state with its waiting calls changed by `change`.
    pub(super) fn edit_approvals(
        self,
        change: impl FnOnce(&mut Vec<crate::state::pending_approval::PendingApproval>),
    ) -> Self {
        self.edit(|data| change(&mut data.approvals))
    }

    /// This state with the last step replaced (its calls were decided).
    pub(super) fn with_last_step(self, step: AgentStep) -> Self {
        self.edit(|data| {
            data.step_executions = std::mem::take(&mut data.step_executions).with_last_step(step)
        })
    }

    /// Counts a stop hook's veto.
    pub(crate) fn vetoed(self) -> Self {
        self.edit(|data| {
            if let Some(execution) = &mut data.execution {
                execution.stop_vetoes = execution.stop_vetoes.saturating_add(1);
            }
        })
    }

    /// Finishes the execution.
    pub(crate) fn finished(self, status: AgentStatus, reason: StopReason) -> Self {
        self.edit(|data| {
            data.status = status;
            data.stop_reason = Some(reason);
        })
    }
}

impl std::fmt::Debug for AgentState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.data, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_copy_of_a_shared_state_owns_its_ids() {
        let shared = AgentState::new().with_parent_agent_id("parent");
        let run = shared.clone().with_user_message("hi");
        assert_eq!(run.agent_id(), shared.agent_id());
        assert_eq!(run.parent_agent_id(), Some("parent"));
        assert!(!Arc::ptr_eq(
            run.shared_agent_id(),
            shared.shared_agent_id()
        ));
        let (Some(a), Some(b)) = (
            run.shared_parent_agent_id(),
            shared.shared_parent_agent_id(),
        ) else {
            panic!("both have a parent");
        };
        assert!(!Arc::ptr_eq(a, b));
        // A state nobody else holds is changed in place: its id stays.
        let id = Arc::clone(run.shared_agent_id());
        let again = run.with_user_message("more");
        assert_eq!(Arc::strong_count(&id), 2, "no copy of the id was made");
        assert!(Arc::ptr_eq(again.shared_agent_id(), &id));
    }
}
