//! The serialized shapes of an [`AgentState`]: version 2, written, and version 1, still read.
//!
//! Version 1 wrote every message wherever it appeared, so each step repeated the conversation
//! it was given and a checkpoint grew with steps × history. Version 2 writes each message once:
//! the store's sections in full, then (`step_messages`) the messages of steps that are not in
//! the store; a step's message lists are runs `[first, count]` into that table (the store's
//! messages in section order, then `step_messages`). Reading shares the messages again, as in
//! the state that was written.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use inference::{FinishReason, InferenceResponse, Usage};
use messages::{Message, MessageStore, Messages, Metadata};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::agent_state::StateData;
use super::{AgentStatus, CachedContext, StateError};
use crate::{
    AgentState, AgentStep, ContinuationOutcome, CurrentExecution, StepError, StepExecution,
    StepExecutions, StepParts, StopReason, ToolExecutions,
};

/// The version [`AgentState::to_json`] writes.
pub const STATE_VERSION: u32 = 2;

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
        Some(2) => {
            let document: DocumentV2 = structured(value)?;
            document.into_state()
        }
        Some(1) => {
            let document: DocumentV1 = structured(value)?;
            Ok(document.into_state())
        }
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

/// The version 2 document of `state`.
pub(crate) fn write(state: &AgentState) -> DocumentV2 {
    DocumentV2::from_state(state)
}

// ----- version 2 ----------------------------------------------------------------------------

/// Version 2: every message once (see the module documentation).
#[derive(Serialize, Deserialize)]
pub(crate) struct DocumentV2 {
    version: u32,
    agent_id: Arc<str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    parent_agent_id: Option<Arc<str>>,
    status: AgentStatus,
    #[serde(default)]
    metadata: Metadata,
    message_store: MessageStore,
    /// Messages of steps that the store does not hold, each once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    step_messages: Vec<Arc<Message>>,
    #[serde(default)]
    usage: Usage,
    #[serde(default, skip_serializing_if = "is_empty_context")]
    cached_context: Arc<CachedContext>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    current_execution: Option<CurrentExecution>,
    /// The current step when it is not the last step execution's (an interrupted step).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    current_step: Option<StepRecord>,
    /// True when the current step is the last step execution's step (written once, there).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    current_step_recorded: bool,
    #[serde(default)]
    step_executions: Vec<ExecutionRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stop_reason: Option<StopReason>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

/// A step execution whose step refers to messages by position.
#[derive(Serialize, Deserialize)]
struct ExecutionRecord {
    id: Arc<str>,
    step_number: usize,
    step: StepRecord,
    outcome: ContinuationOutcome,
    started_at: DateTime<Utc>,
    completed_at: DateTime<Utc>,
}

/// A step whose message lists are runs into the document's message table.
#[derive(Serialize, Deserialize)]
struct StepRecord {
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
}

/// `[first, count]`: `count` consecutive messages of the table from position `first`.
type Run = [usize; 2];

impl DocumentV2 {
    fn from_state(state: &AgentState) -> Self {
        let data = state.data();
        let mut table = Table::of(&data.store);
        let step_executions = data
            .step_executions
            .iter()
            .map(|execution| ExecutionRecord {
                id: Arc::from(execution.id()),
                step_number: execution.step_number(),
                step: StepRecord::of(execution.step(), &mut table),
                outcome: execution.outcome().clone(),
                started_at: execution.started_at(),
                completed_at: execution.completed_at(),
            })
            .collect();
        let current_step_recorded = match (&data.current_step, data.step_executions.last()) {
            (Some(step), Some(last)) => Arc::ptr_eq(step, last.shared_step()),
            _ => false,
        };
        let current_step = data
            .current_step
            .as_deref()
            .filter(|_| !current_step_recorded)
            .map(|step| StepRecord::of(step, &mut table));
        Self {
            version: STATE_VERSION,
            agent_id: Arc::clone(&data.agent_id),
            parent_agent_id: data.parent_agent_id.clone(),
            status: data.status,
            metadata: data.metadata.clone(),
            message_store: data.store.clone(),
            step_messages: table.extra,
            usage: data.usage,
            cached_context: Arc::clone(&data.cached_context),
            current_execution: data.current_execution.clone(),
            current_step,
            current_step_recorded,
            step_executions,
            stop_reason: data.stop_reason,
            created_at: data.created_at,
            updated_at: data.updated_at,
        }
    }

    fn into_state(self) -> Result<AgentState, StateError> {
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
            let step = record
                .step
                .into_step(&table, &format!("step_executions[{i}].step"))?;
            executions.push(StepExecution::from_record(
                record.id,
                Arc::new(step),
                record.outcome,
                record.started_at,
                record.completed_at,
                record.step_number,
            ));
        }
        let step_executions: StepExecutions = executions.into_iter().collect();
        let current_step = match self.current_step {
            Some(record) => Some(Arc::new(record.into_step(&table, "current_step")?)),
            None if self.current_step_recorded => match step_executions.last() {
                Some(last) => Some(Arc::clone(last.shared_step())),
                None => {
                    return Err(StateError::InvalidField {
                        path: "current_step_recorded".into(),
                        message: "the current step is said to be recorded, but there are no \
                                  step executions"
                            .into(),
                    })
                }
            },
            None => None,
        };
        Ok(assemble(StateData {
            agent_id: self.agent_id,
            parent_agent_id: self.parent_agent_id,
            status: self.status,
            store: self.message_store,
            metadata: self.metadata,
            current_execution: self.current_execution,
            current_step,
            step_executions,
            usage: self.usage,
            cached_context: self.cached_context,
            stop_reason: self.stop_reason,
            created_at: self.created_at,
            updated_at: self.updated_at,
        }))
    }
}

fn is_empty_context(context: &Arc<CachedContext>) -> bool {
    context.is_empty()
}

impl StepRecord {
    fn of(step: &AgentStep, table: &mut Table) -> Self {
        Self {
            id: Arc::clone(step.shared_id()),
            input_messages: table.runs(step.input_messages()),
            trace_messages: table.runs(step.trace_messages()),
            response_messages: table.runs(step.response_messages()),
            inference_response: step.inference_response().cloned(),
            tool_executions: step.tool_executions().clone(),
            errors: step.errors().to_vec(),
            usage: step.usage(),
            finish_reason: step.finish_reason(),
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
            input_messages: resolve(&self.input_messages, "input_messages")?,
            trace_messages: resolve(&self.trace_messages, "trace_messages")?,
            response_messages: resolve(&self.response_messages, "response_messages")?,
            tool_executions: self.tool_executions,
            inference_response: self.inference_response,
            errors: self.errors,
        };
        Ok(AgentStep::from_record(
            self.id,
            parts,
            self.usage,
            self.finish_reason,
        ))
    }
}

/// The messages `runs` name in `table`; a message that says why when a run is out of range.
fn resolve_runs(runs: &[Run], table: &[Arc<Message>]) -> Result<Messages, String> {
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

/// Positions of messages while a document is written: the store's messages first, then every
/// other message a step holds, each once (the same shared message is the same position).
struct Table {
    positions: HashMap<*const Message, usize>,
    store_len: usize,
    extra: Vec<Arc<Message>>,
}

impl Table {
    fn of(store: &MessageStore) -> Self {
        let mut positions = HashMap::new();
        let mut store_len = 0;
        for message in store
            .sections()
            .iter()
            .flat_map(|section| section.messages().iter_shared())
        {
            positions.entry(Arc::as_ptr(message)).or_insert(store_len);
            store_len += 1;
        }
        Self {
            positions,
            store_len,
            extra: Vec::new(),
        }
    }

    /// `messages` as runs of positions, adding the messages the table does not hold yet.
    fn runs(&mut self, messages: &Messages) -> Vec<Run> {
        let mut runs: Vec<Run> = Vec::new();
        for message in messages.iter_shared() {
            let next = self.store_len + self.extra.len();
            let position = *self
                .positions
                .entry(Arc::as_ptr(message))
                .or_insert_with(|| next);
            if position == next {
                self.extra.push(Arc::clone(message));
            }
            match runs.last_mut() {
                Some([first, count]) if *first + *count == position => *count += 1,
                _ => runs.push([position, 1]),
            }
        }
        runs
    }
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
    cached_context: CachedContext,
    #[serde(default)]
    current_execution: Option<CurrentExecution>,
    #[serde(default)]
    current_step: Option<AgentStep>,
    #[serde(default)]
    step_executions: StepExecutions,
    #[serde(default)]
    stop_reason: Option<StopReason>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl DocumentV1 {
    fn into_state(self) -> AgentState {
        assemble(StateData {
            agent_id: self.agent_id,
            parent_agent_id: self.parent_agent_id,
            status: self.status,
            store: self.message_store,
            metadata: self.metadata,
            current_execution: self.current_execution,
            current_step: self.current_step.map(Arc::new),
            step_executions: self.step_executions,
            usage: self.usage,
            cached_context: Arc::new(self.cached_context),
            stop_reason: self.stop_reason,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// The state of `data`, its current step shared with the last step execution when they are
/// the same step (as in the state that was written).
fn assemble(mut data: StateData) -> AgentState {
    if let (Some(step), Some(last)) = (&data.current_step, data.step_executions.last()) {
        if **step == *last.step() {
            data.current_step = Some(Arc::clone(last.shared_step()));
        }
    }
    AgentState::from_data(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_merge_consecutive_positions_and_share_repeated_messages() {
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
        assert_eq!(table.extra.len(), 1);
        // The same shared message is the same position; a copy of it is another message.
        let again = extra.concat(&Messages::from(vec![Message::tool_result(
            "t1", "noop", "ok",
        )]));
        assert_eq!(table.runs(&again), [[3, 2]]);
        assert_eq!(table.extra.len(), 2);
        let mut backwards: Vec<Arc<Message>> = conversation.iter_shared().cloned().collect();
        backwards.reverse();
        let reversed = Messages::new().extended_shared(backwards);
        assert_eq!(table.runs(&reversed), [[2, 1], [1, 1], [0, 1]]);
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
