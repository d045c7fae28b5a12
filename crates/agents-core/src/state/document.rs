//! The serialized shapes of an [`AgentState`]: version 5, written; versions 4, 3, 2 and 1,
//! still read.
//!
//! Version 1 wrote every message wherever it appeared, so each step repeated the conversation
//! it was given and a checkpoint grew with steps × history. Versions 2 and 3 write each
//! message once: the store's sections in full, then (`step_messages`) the messages of steps
//! that are not in the store; a step's message lists are runs `[first, count]` into that table
//! (the store's messages in section order, then `step_messages`). Reading shares the messages
//! again.
//!
//! Which position a step's message takes is decided by content, never by address: the writer
//! follows the structure (a step's messages are mostly a run of the table, so it checks the
//! position after the previous one first) and otherwise looks the message up by its content.
//! Two equal messages are one table entry; the document is the same however the messages were
//! shared in memory.
//!
//! Version 3 holds no configuration (version 2's `cached_context` is ignored on reading) and
//! no half-run step (steps are recorded whole); it records the execution (`execution`) and the
//! final status and stop reason as the loop set them. Version 4 adds `approvals`, the calls a
//! suspended run waits on (a version 3 document is a version 4 document without them).
//! Version 5 (the third wave's one change) keeps a waiting subagent's state in `approvals`
//! only: a tool execution no longer carries it (version 4's `suspended` field of a failed
//! execution is ignored on reading, since `approvals` holds the same state).

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use inference::{FinishReason, InferenceResponse, Usage};
use messages::{Message, MessageStore, Messages, Metadata};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::records::agent_status::AgentStatus;
use crate::records::agent_step::{AgentStep, StepParts};
use crate::records::cost::RunCost;
use crate::records::decision::StopReason;
use crate::records::outcome::ContinuationOutcome;
use crate::records::step_error::StepError;
use crate::records::step_execution::{StepExecution, StepExecutions};
use crate::records::tool_execution::ToolExecutions;
use crate::state::agent_state::{AgentState, Execution, StateData};
use crate::state::pending_approval::PendingApproval;
use crate::state::state_error::StateError;

/// The version [`AgentState::to_json`] writes.
pub const STATE_VERSION: u32 = 5;

/// Reads a state document of any supported version from a parsed JSON value.
pub(crate) fn read(value: &Value) -> Result<AgentState, StateError> {
    let Some(object) = value.as_object() else {
        return Err(StateError::InvalidField {
            path: ".".into(),
            message: "expected a JSON object".into(),
        });
    };
    let version = match object.get("version") {
        None | Some(Value::Null) => {
            return Err(StateError::MissingVersion {
                expected: STATE_VERSION,
            })
        }
        Some(Value::Number(n)) => n.as_u64(),
        Some(_) => None,
    };
    match version {
        Some(3..=5) => structured::<Document>(value)?.into_state(),
        Some(2) => structured::<Document>(value)?
            .upgraded_from_v2()
            .into_state(),
        Some(1) => Ok(structured::<DocumentV1>(value)?.into_state()),
        _ => Err(StateError::UnsupportedVersion {
            found: object
                .get("version")
                .map(Value::to_string)
                .unwrap_or_default(),
            expected: STATE_VERSION,
        }),
    }
}

/// `value` as a document, with the path of the first field that does not fit.
fn structured<T: serde::de::DeserializeOwned>(value: &Value) -> Result<T, StateError> {
    serde_path_to_error::deserialize(value).map_err(|e| StateError::InvalidField {
        path: e.path().to_string(),
        message: e.inner().to_string(),
    })
}

/// The version 5 document of `state`.
pub(crate) fn write(state: &AgentState) -> Document {
    Document::from_state(state)
}

// ----- versions 5, 4, 3 and 2 ---------------------------------------------------------------

/// Versions 5, 4 and 3 (and, read with [`Document::upgraded_from_v2`], version 2, whose extra fields are
/// ignored).
#[derive(Serialize, Deserialize)]
pub(crate) struct Document {
    version: u32,
    agent_id: Arc<str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    parent_agent_id: Option<Arc<str>>,
    status: AgentStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stop_reason: Option<StopReason>,
    #[serde(default)]
    metadata: Metadata,
    message_store: MessageStore,
    /// Messages of steps that the store does not hold, each once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    step_messages: Vec<Arc<Message>>,
    #[serde(default)]
    usage: Usage,
    #[serde(default, skip_serializing_if = "RunCost::is_zero")]
    cost: RunCost,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    execution: Option<Execution>,
    #[serde(default)]
    step_executions: Vec<ExecutionRecord>,
    /// The calls a suspended run waits on (version 4; absent when none waits).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    approvals: Vec<PendingApproval>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

/// A step execution whose step refers to messages by position.
#[derive(Serialize, Deserialize)]
pub(super) struct ExecutionRecord {
    id: Arc<str>,
    step_number: usize,
    step: StepRecord,
    outcome: ContinuationOutcome,
    started_at: DateTime<Utc>,
    completed_at: DateTime<Utc>,
}

/// A step whose message lists are runs into the document's message table.
#[derive(Serialize, Deserialize)]
pub(super) struct StepRecord {
    id: Arc<str>,
    #[serde(default)]
    input_messages: Vec<Run>,
    #[serde(default)]
    trace_messages: Vec<Run>,
    #[serde(default)]
    response_messages: Vec<Run>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    inference_response: Option<InferenceResponse>,
    #[serde(default, skip_serializing_if = "ToolExecutions::is_empty")]
    tool_executions: ToolExecutions,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    errors: Vec<StepError>,
    #[serde(default)]
    usage: Usage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    finish_reason: Option<FinishReason>,
    #[serde(default, skip_serializing_if = "RunCost::is_zero")]
    cost: RunCost,
}

/// `[first, count]`: `count` consecutive messages of the table from position `first`.
pub(super) type Run = [usize; 2];

impl Document {
    fn from_state(state: &AgentState) -> Self {
        let data = state.data();
        let mut table = Table::of(&data.store);
        let step_executions = data
            .step_executions
            .iter()
            .map(|execution| ExecutionRecord::of(execution, &mut table))
            .collect();
        Self {
            version: STATE_VERSION,
            agent_id: Arc::clone(&data.agent_id),
            parent_agent_id: data.parent_agent_id.clone(),
            status: data.status,
            stop_reason: data.stop_reason,
            metadata: data.metadata.clone(),
            message_store: data.store.clone(),
            step_messages: table.into_extra(),
            usage: data.usage,
            cost: data.cost,
            execution: data.execution.clone(),
            step_executions,
            approvals: data.approvals.clone(),
            created_at: data.created_at,
            updated_at: data.updated_at,
        }
    }

    /// A version 2 document in version 3's terms: the status and stop reason it implied
    /// (version 2 derived them from the last outcome), and the execution its steps ran in.
    fn upgraded_from_v2(mut self) -> Self {
        let last_reason = self
            .step_executions
            .last()
            .and_then(|record| record.outcome.stop_reason());
        let reason = self.stop_reason.or(last_reason);
        self.status = upgraded_status(self.status, reason);
        if self.status != AgentStatus::InProgress {
            self.stop_reason = reason;
        }
        self.execution = self
            .step_executions
            .first()
            .map(|first| Execution::new(crate::ids::new_id(), first.started_at));
        self.version = STATE_VERSION;
        self
    }

    fn into_state(self) -> Result<AgentState, StateError> {
        crate::state::pending_approval::check_decisions(&self.approvals, "approvals")?;
        // The table: the store's messages in section order (shared with the store), then the
        // step messages.
        let mut table: Vec<Arc<Message>> = self
            .message_store
            .sections()
            .iter()
            .flat_map(|section| section.messages().iter_shared().cloned())
            .collect();
        table.extend(self.step_messages);

        let mut executions = Vec::with_capacity(self.step_executions.len());
        for (i, record) in self.step_executions.into_iter().enumerate() {
            executions.push(record.into_execution(&table, &format!("step_executions[{i}]"))?);
        }
        Ok(AgentState::from_data(StateData {
            agent_id: self.agent_id,
            parent_agent_id: self.parent_agent_id,
            status: self.status,
            stop_reason: self.stop_reason,
            store: self.message_store,
            metadata: self.metadata,
            usage: self.usage,
            cost: self.cost,
            execution: self.execution,
            step_executions: executions.into_iter().collect(),
            approvals: self.approvals,
            created_at: self.created_at,
            updated_at: self.updated_at,
        }))
    }
}

impl ExecutionRecord {
    /// `execution` with its messages as runs into `table` (which gains the ones it lacks).
    pub(super) fn of(execution: &StepExecution, table: &mut Table) -> Self {
        Self {
            id: Arc::from(execution.id()),
            step_number: execution.step_number(),
            step: StepRecord::of(execution.step(), table),
            outcome: execution.outcome().clone(),
            started_at: execution.started_at(),
            completed_at: execution.completed_at(),
        }
    }

    /// The step execution, its messages resolved in `table`; `path` names it in errors.
    pub(super) fn into_execution(
        self,
        table: &[Arc<Message>],
        path: &str,
    ) -> Result<StepExecution, StateError> {
        let step = self.step.into_step(table, &format!("{path}.step"))?;
        Ok(StepExecution::from_record(
            self.id,
            Arc::new(step),
            self.outcome,
            self.started_at,
            self.completed_at,
            self.step_number,
        ))
    }
}

/// The status versions 1 and 2 implied: stored `Failed`, or an execution that stopped on an
/// error, is `Failed`; any other stop is `Completed`.
fn upgraded_status(stored: AgentStatus, reason: Option<StopReason>) -> AgentStatus {
    match (stored, reason) {
        (AgentStatus::Failed, _) | (_, Some(StopReason::Error)) => AgentStatus::Failed,
        (_, Some(_)) => AgentStatus::Completed,
        (stored, None) => stored,
    }
}

impl StepRecord {
    fn of(step: &AgentStep, table: &mut Table) -> Self {
        Self {
            id: Arc::from(step.id()),
            input_messages: table.runs(step.input_messages()),
            trace_messages: table.runs(step.trace_messages()),
            response_messages: table.runs(step.response_messages()),
            inference_response: step.inference_response().cloned(),
            tool_executions: step.tool_executions().clone(),
            errors: step.errors().to_vec(),
            usage: step.usage(),
            finish_reason: step.finish_reason(),
            cost: step.cost(),
        }
    }

    fn into_step(self, table: &[Arc<Message>], path: &str) -> Result<AgentStep, StateError> {
        let resolve = |runs: &[Run], field: &str| {
            resolve_runs(runs, table).map_err(|message| StateError::InvalidField {
                path: format!("{path}.{field}"),
                message,
            })
        };
        let parts = StepParts {
            id: Some(self.id),
            input_messages: resolve(&self.input_messages, "input_messages")?,
            trace_messages: resolve(&self.trace_messages, "trace_messages")?,
            response_messages: resolve(&self.response_messages, "response_messages")?,
            tool_executions: self.tool_executions,
            inference_response: self.inference_response,
            errors: self.errors,
        };
        Ok(AgentStep::from_record(parts, self.usage, self.finish_reason).with_cost(self.cost))
    }
}

/// The messages `runs` name in `table`; a message that says why when a run is out of range.
pub(super) fn resolve_runs(runs: &[Run], table: &[Arc<Message>]) -> Result<Messages, String> {
    let mut messages = Messages::new();
    for &[first, count] in runs {
        let Some(run) = first
            .checked_add(count)
            .and_then(|end| table.get(first..end))
        else {
            return Err(format!(
                "message run [{first}, {count}] is out of range: the document holds {} messages \
                 (the store's, then `step_messages`)",
                table.len()
            ));
        };
        messages = messages.extended_shared(run.iter().cloned());
    }
    Ok(messages)
}

/// The message table while a document is written: the store's messages, then every other
/// message a step holds, each distinct content once.
#[derive(Clone, Debug, Default)]
pub(super) struct Table {
    entries: Vec<Arc<Message>>,
    store_len: usize,
    /// Positions by content hash, built on the first message that is not where the structure
    /// says it should be.
    by_content: Option<HashMap<u64, Vec<usize>>>,
    /// The longest lists written lately with their runs, newest first: a list that extends
    /// one of them (the next step's input, a section that grew) reuses its runs for the
    /// shared part, so writing it costs what was added, not the whole history.
    recent: Vec<(Messages, Vec<Run>)>,
}

/// How many written lists [`Table`] remembers.
const RECENT_LISTS: usize = 8;
/// Lists shorter than this are written message by message, not remembered.
const REMEMBER_FROM: usize = 32;

impl Table {
    fn of(store: &MessageStore) -> Self {
        let entries: Vec<Arc<Message>> = store
            .sections()
            .iter()
            .flat_map(|section| section.messages().iter_shared().cloned())
            .collect();
        Self {
            store_len: entries.len(),
            entries,
            by_content: None,
            recent: Vec::new(),
        }
    }

    /// A table holding `entries` (in this order) and nothing of a store.
    pub(super) fn with_entries(entries: Vec<Arc<Message>>) -> Self {
        Self {
            entries,
            store_len: 0,
            by_content: None,
            recent: Vec::new(),
        }
    }

    /// Forgets the entries from position `len` on.
    pub(super) fn truncate(&mut self, len: usize) {
        self.entries.truncate(len);
        self.recent.clear();
        if let Some(index) = &mut self.by_content {
            for positions in index.values_mut() {
                positions.retain(|&p| p < len);
            }
        }
    }

    /// The entries, in position order.
    pub(super) fn entries(&self) -> &[Arc<Message>] {
        &self.entries
    }

    /// `messages` as runs of positions, adding the contents the table does not hold yet.
    pub(super) fn runs(&mut self, messages: &Messages) -> Vec<Run> {
        let (mut runs, done) = self.remembered_prefix(messages);
        for message in messages.iter_shared().skip(done) {
            let expected = runs.last().map(|[first, count]| first + count);
            let position = self.position_of(message, expected);
            match runs.last_mut() {
                Some([first, count]) if *first + *count == position => *count += 1,
                _ => runs.push([position, 1]),
            }
        }
        if messages.len() >= REMEMBER_FROM {
            self.recent.insert(0, (messages.clone(), runs.clone()));
            self.recent.truncate(RECENT_LISTS);
        }
        runs
    }

    /// The runs of the longest start of `messages` shared (same message objects) with a list
    /// written lately, and that start's length.
    fn remembered_prefix(&self, messages: &Messages) -> (Vec<Run>, usize) {
        let Some(first) = messages.iter_shared().next() else {
            return (Vec::new(), 0);
        };
        let best = self
            .recent
            .iter()
            .filter(|(list, _)| {
                list.iter_shared()
                    .next()
                    .is_some_and(|f| Arc::ptr_eq(f, first))
            })
            .map(|(list, runs)| (list.common_prefix_len(messages), runs))
            .max_by_key(|(shared, _)| *shared);
        let Some((shared, runs)) = best else {
            return (Vec::new(), 0);
        };
        let mut prefix = Vec::new();
        let mut left = shared;
        for &[first, count] in runs {
            if left == 0 {
                break;
            }
            let take = count.min(left);
            prefix.push([first, take]);
            left -= take;
        }
        (prefix, shared)
    }

    /// The position of `message`'s content: `expected` when the entry there is equal, else
    /// the first equal entry, else a new entry.
    fn position_of(&mut self, message: &Arc<Message>, expected: Option<usize>) -> usize {
        if let Some(position) = expected {
            if self
                .entries
                .get(position)
                .is_some_and(|entry| same(entry, message))
            {
                return position;
            }
        }
        let entries = &self.entries;
        let index = self.by_content.get_or_insert_with(|| {
            let mut index: HashMap<u64, Vec<usize>> = HashMap::new();
            for (position, entry) in entries.iter().enumerate() {
                index.entry(content_hash(entry)).or_default().push(position);
            }
            index
        });
        let positions = index.entry(content_hash(message)).or_default();
        if let Some(&found) = positions.iter().find(|&&p| same(&entries[p], message)) {
            return found;
        }
        let position = entries.len();
        positions.push(position);
        self.entries.push(Arc::clone(message));
        position
    }

    /// The entries that are not the store's.
    fn into_extra(self) -> Vec<Arc<Message>> {
        let mut entries = self.entries;
        entries.split_off(self.store_len)
    }
}

/// Equal content (the pointer check only saves comparing a message with itself).
fn same(a: &Arc<Message>, b: &Arc<Message>) -> bool {
    Arc::ptr_eq(a, b) || a == b
}

/// A hash of a message's serialized content (stable within a process; used only to find
/// equal messages while writing).
fn content_hash(message: &Message) -> u64 {
    let mut hasher = DefaultHasher::new();
    match serde_json::to_vec(message) {
        Ok(bytes) => bytes.hash(&mut hasher),
        Err(_) => message.text().hash(&mut hasher),
    }
    hasher.finish()
}

// ----- version 1 ----------------------------------------------------------------------------

/// Version 1: every message written wherever it appears.
#[derive(Deserialize)]
struct DocumentV1 {
    agent_id: Arc<str>,
    #[serde(default)]
    parent_agent_id: Option<Arc<str>>,
    status: AgentStatus,
    #[serde(default)]
    metadata: Metadata,
    message_store: MessageStore,
    #[serde(default)]
    usage: Usage,
    #[serde(default)]
    step_executions: StepExecutions,
    #[serde(default)]
    stop_reason: Option<StopReason>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl DocumentV1 {
    /// The state it describes; its cached context (configuration) and a step it was in the
    /// middle of are left behind, as in version 2.
    fn into_state(self) -> AgentState {
        let reason = self.stop_reason.or_else(|| {
            self.step_executions
                .last_outcome()
                .and_then(ContinuationOutcome::stop_reason)
        });
        let status = upgraded_status(self.status, reason);
        let execution = self
            .step_executions
            .iter()
            .next()
            .map(|first| Execution::new(crate::ids::new_id(), first.started_at()));
        AgentState::from_data(StateData {
            agent_id: self.agent_id,
            parent_agent_id: self.parent_agent_id,
            stop_reason: reason.filter(|_| status != AgentStatus::InProgress),
            status,
            store: self.message_store,
            metadata: self.metadata,
            usage: self.usage,
            cost: RunCost::zero(),
            execution,
            step_executions: self.step_executions,
            approvals: Vec::new(),
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

impl AgentState {
    // ----- serialization ----------------------------------------------------------------------

    /// The state as a JSON document (`"version": 5`): every message written once, so the
    /// document grows with the conversation, not with steps × history (see
    /// `state/document.rs` for the shape).
    ///
    /// # Errors
    /// [`StateError::Serialize`] if a value cannot be written (not expected for valid states).
    pub fn to_json(&self) -> Result<String, StateError> {
        serde_json::to_string_pretty(self).map_err(|e| StateError::Serialize(e.to_string()))
    }

    /// Reads a state written by [`AgentState::to_json`] (or by serde), in version 1 to 5.
    ///
    /// # Errors
    /// [`StateError::Syntax`] for text that is not JSON, [`StateError::MissingVersion`] and
    /// [`StateError::UnsupportedVersion`] for foreign or newer documents, and
    /// [`StateError::InvalidField`] naming the path of a missing or malformed field (or of a
    /// message reference that points nowhere).
    pub fn from_json(text: &str) -> Result<Self, StateError> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| StateError::Syntax(e.to_string()))?;
        read(&value)
    }
}

impl Serialize for AgentState {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        write(self).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for AgentState {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Through a JSON value, which any self-describing format gives: the version decides
        // the shape.
        let value = Value::deserialize(deserializer)?;
        read(&value).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_follow_the_structure_and_equal_contents_share_one_position() {
        let store = MessageStore::new().section("messages").set(vec![
            Message::user("a"),
            Message::assistant("b"),
            Message::user("c"),
        ]);
        let mut table = Table::of(&store);
        let conversation = store.section("messages").messages();
        let extra = Messages::from(vec![Message::tool_result("t1", "noop", "ok")]);
        let input = conversation.concat(&extra);
        assert_eq!(table.runs(&input), [[0, 4]]);
        assert_eq!(table.entries.len() - table.store_len, 1);
        // A separately made message with the same content is the same entry: the document
        // depends on content, not on how messages were shared in memory.
        let again = extra.concat(&Messages::from(vec![Message::tool_result(
            "t1", "noop", "ok",
        )]));
        assert_eq!(table.runs(&again), [[3, 1], [3, 1]]);
        assert_eq!(table.entries.len() - table.store_len, 1);
        let mut backwards: Vec<Arc<Message>> = conversation.iter_shared().cloned().collect();
        backwards.reverse();
        let reversed = Messages::new().extended_shared(backwards);
        assert_eq!(table.runs(&reversed), [[2, 1], [1, 1], [0, 1]]);
        let copies = Messages::from(vec![Message::user("a"), Message::assistant("b")]);
        assert_eq!(table.runs(&copies), [[0, 2]]);
    }

    #[test]
    fn runs_out_of_range_are_refused_with_the_table_size() {
        let table = vec![Arc::new(Message::user("only"))];
        assert_eq!(resolve_runs(&[[0, 1]], &table).unwrap().len(), 1);
        let error = resolve_runs(&[[0, 2]], &table).unwrap_err();
        assert!(
            error.contains("[0, 2]") && error.contains("holds 1 messages"),
            "{error}"
        );
        assert!(resolve_runs(&[[usize::MAX, 2]], &table).is_err());
    }
}
