//! The incremental form of the state document, for stores that commit a state after every
//! step and must write only what the step added.
//!
//! A session's messages live in one append-only table (each distinct content once, positions
//! chosen by content as in the version 3 document). Each commit of a state writes a
//! [`StateDelta`]:
//!
//! - `messages`: the table entries this state added, from position `first_message` on;
//! - `steps`: the step records that are new or changed since the previous commit, by their
//!   index in the state's step executions (a step record names its messages as `[first,
//!   count]` runs into the table);
//! - `head`: a small document with the run's fields (status, stop reason, usage, execution,
//!   timestamps, metadata), the store's section layout as runs into the table and its
//!   parameters, and how many step records the state holds.
//!
//! [`StateEncoder::encode`] produces the delta and remembers what it wrote, so the next call
//! writes only what came after. [`decode`] reassembles a state from the rows of a version (all
//! table entries written up to it, the newest record of each step index up to it, and its
//! head) and returns the encoder that continues from it. `AgentState::to_json` is unaffected:
//! the full document stays the interchange format.
//!
//! ```
//! use agents_core::{incremental, AgentState};
//!
//! let mut encoder = incremental::StateEncoder::new();
//! let first = AgentState::new().with_user_message("hello");
//! let delta = encoder.encode(&first).unwrap();
//! assert_eq!((delta.first_message, delta.messages.len()), (0, 1));
//!
//! let second = first.clone().with_user_message("again");
//! let next = encoder.encode(&second).unwrap();
//! assert_eq!((next.first_message, next.messages.len()), (1, 1)); // only the new message
//!
//! let messages: Vec<&str> = delta.messages.iter().chain(&next.messages).map(String::as_str).collect();
//! let (loaded, _encoder) = incremental::decode(&messages, &[], &next.head).unwrap();
//! assert_eq!(loaded, second);
//! ```

use std::sync::Arc;

use chrono::{DateTime, Utc};
use inference::Usage;
use messages::{Message, MessageStore, Metadata, Section};
use serde::{Deserialize, Serialize};

use crate::records::agent_status::AgentStatus;
use crate::records::cost::RunCost;
use crate::records::decision::StopReason;
use crate::records::step_execution::{StepExecution, StepExecutions};
use crate::state::agent_state::{AgentState, Execution, StateData};
use crate::state::document::{resolve_runs, ExecutionRecord, Run, Table};
use crate::state::state_error::StateError;

/// The version of the head and record formats [`StateEncoder`] writes (the state document's
/// version: the records are version 3's).
pub const INCREMENTAL_VERSION: u32 = super::document::STATE_VERSION;

/// What one commit of a state writes: the new table entries, the new or changed step records
/// and the head. Every string is a JSON document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateDelta {
    /// The table position of `messages[0]` (the table size before this delta).
    pub first_message: usize,
    /// The table entries this state added, each a serialized [`Message`].
    pub messages: Vec<String>,
    /// The step records that are new or changed, as `(index, record)`: the record of the
    /// state's `index`-th step execution.
    pub steps: Vec<(usize, String)>,
    /// The head: the run's small fields, the section layout, and the number of steps.
    pub head: String,
    /// How many step records the state holds (also in the head); records at this index or
    /// beyond, from earlier commits, are not part of this state.
    pub step_count: usize,
}

impl StateDelta {
    /// The bytes this delta writes (messages, step records and head).
    pub fn byte_len(&self) -> usize {
        self.messages.iter().map(String::len).sum::<usize>()
            + self.steps.iter().map(|(_, s)| s.len()).sum::<usize>()
            + self.head.len()
    }
}

/// Encodes successive states of one session as [`StateDelta`]s, each holding only what the
/// previous one did not (see the [module documentation](self)).
///
/// If a delta is not stored (the commit failed), drop the encoder and start again from
/// [`decode`] of what the store holds: the encoder assumes every delta it produced was kept.
#[derive(Clone, Debug, Default)]
pub struct StateEncoder {
    table: Table,
    /// The step executions of the last encoded state, to find the ones that changed (a
    /// shared copy: keeping it costs nothing per step).
    steps: StepExecutions,
}

impl StateEncoder {
    /// An encoder for a session that has stored nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many messages the session's table holds.
    pub fn message_count(&self) -> usize {
        self.table.entries().len()
    }

    /// The delta from the last encoded state to `state`; the encoder then continues from
    /// `state`.
    ///
    /// # Errors
    /// [`StateError::Serialize`] when a part of the state cannot be serialized; the encoder is
    /// then unchanged, and nothing should be written.
    pub fn encode(&mut self, state: &AgentState) -> Result<StateDelta, StateError> {
        let table_len = self.table.entries().len();
        let result = self.encode_in_place(state);
        if result.is_err() {
            self.table.truncate(table_len);
        }
        result
    }

    fn encode_in_place(&mut self, state: &AgentState) -> Result<StateDelta, StateError> {
        let data = state.data();
        let first_message = self.table.entries().len();
        let sections: Vec<SectionLayout> = data
            .store
            .sections()
            .iter()
            .map(|section| SectionLayout {
                name: section.name().to_owned(),
                runs: self.table.runs(section.messages()),
            })
            .collect();

        let mut steps = Vec::new();
        for (index, execution) in data.step_executions.iter().enumerate() {
            if self
                .steps
                .get(index)
                .is_some_and(|previous| same_execution(previous, execution))
            {
                continue;
            }
            let record = ExecutionRecord::of(execution, &mut self.table);
            steps.push((index, to_json(&record)?));
        }

        let head = Head {
            version: INCREMENTAL_VERSION,
            agent_id: Arc::clone(&data.agent_id),
            parent_agent_id: data.parent_agent_id.clone(),
            status: data.status,
            stop_reason: data.stop_reason,
            metadata: data.metadata.clone(),
            sections,
            parameters: data.store.parameters().clone(),
            usage: data.usage,
            cost: data.cost,
            execution: data.execution.clone(),
            step_count: data.step_executions.len(),
            approvals: data.approvals.clone(),
            created_at: data.created_at,
            updated_at: data.updated_at,
        };
        let head = to_json(&head)?;
        let messages = self.table.entries()[first_message..]
            .iter()
            .map(|message| to_json(message.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        self.steps = data.step_executions.clone();
        Ok(StateDelta {
            first_message,
            messages,
            steps,
            head,
            step_count: data.step_executions.len(),
        })
    }
}

/// Reassembles the state a commit wrote, from its rows: `messages`, every table entry written
/// up to it in position order; `steps`, for each index below the head's step count, the newest
/// record written up to it; and its `head`. Returns the state and the encoder that continues
/// from it.
///
/// # Errors
/// [`StateError::InvalidField`] naming the row (`messages[3]`, `steps[0].step.input_messages`,
/// `head.sections[1]`) when a row is not what the encoder wrote or refers to a message the
/// table does not hold; [`StateError::UnsupportedVersion`] for a head of another version.
pub fn decode(
    messages: &[&str],
    steps: &[&str],
    head: &str,
) -> Result<(AgentState, StateEncoder), StateError> {
    #[derive(Deserialize)]
    struct Versioned {
        version: serde_json::Value,
    }
    // The version first: a head of another format need not have this one's fields.
    if let Ok(Versioned { version }) = serde_json::from_str::<Versioned>(head) {
        if version != INCREMENTAL_VERSION {
            return Err(StateError::UnsupportedVersion {
                found: version.to_string(),
                expected: INCREMENTAL_VERSION,
            });
        }
    }
    let head: Head = parse(head, "head")?;
    if steps.len() != head.step_count {
        return Err(StateError::InvalidField {
            path: "head.step_count".into(),
            message: format!(
                "the head names {} steps but {} step records were given",
                head.step_count,
                steps.len()
            ),
        });
    }
    let table = messages
        .iter()
        .enumerate()
        .map(|(i, text)| parse::<Message>(text, &format!("messages[{i}]")).map(Arc::new))
        .collect::<Result<Vec<_>, _>>()?;

    let mut sections = Vec::with_capacity(head.sections.len());
    for (i, layout) in head.sections.iter().enumerate() {
        let resolved =
            resolve_runs(&layout.runs, &table).map_err(|message| StateError::InvalidField {
                path: format!("head.sections[{i}].runs"),
                message,
            })?;
        sections.push(Section::new(layout.name.clone(), resolved));
    }
    let store = MessageStore::from_sections(sections)
        .map_err(|error| StateError::InvalidField {
            path: "head.sections".into(),
            message: error.to_string(),
        })?
        .with_parameters(head.parameters);

    let mut executions = Vec::with_capacity(steps.len());
    for (i, text) in steps.iter().enumerate() {
        let path = format!("steps[{i}]");
        let record: ExecutionRecord = parse(text, &path)?;
        executions.push(record.into_execution(&table, &path)?);
    }
    let executions: StepExecutions = executions.into_iter().collect();
    crate::state::pending_approval::check_decisions(&head.approvals, "head.approvals")?;
    let encoder = StateEncoder {
        table: Table::with_entries(table),
        steps: executions.clone(),
    };
    let state = AgentState::from_data(StateData {
        agent_id: head.agent_id,
        parent_agent_id: head.parent_agent_id,
        status: head.status,
        stop_reason: head.stop_reason,
        store,
        metadata: head.metadata,
        usage: head.usage,
        cost: head.cost,
        execution: head.execution,
        step_executions: executions,
        approvals: head.approvals,
        created_at: head.created_at,
        updated_at: head.updated_at,
    });
    Ok((state, encoder))
}

/// The small part of a commit: everything but messages and step records.
#[derive(Serialize, Deserialize)]
struct Head {
    version: u32,
    agent_id: Arc<str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    parent_agent_id: Option<Arc<str>>,
    status: AgentStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stop_reason: Option<StopReason>,
    #[serde(default, skip_serializing_if = "Metadata::is_empty")]
    metadata: Metadata,
    sections: Vec<SectionLayout>,
    #[serde(default, skip_serializing_if = "Metadata::is_empty")]
    parameters: Metadata,
    #[serde(default)]
    usage: Usage,
    #[serde(default, skip_serializing_if = "RunCost::is_zero")]
    cost: RunCost,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    execution: Option<Execution>,
    step_count: usize,
    /// The calls a suspended run waits on (absent when none waits; older heads have none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    approvals: Vec<crate::state::pending_approval::PendingApproval>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

/// A section of the store as runs into the session's message table.
#[derive(Serialize, Deserialize)]
struct SectionLayout {
    name: String,
    runs: Vec<Run>,
}

/// The same record: the step is the same value (shared), and the verdict and times agree.
fn same_execution(a: &StepExecution, b: &StepExecution) -> bool {
    Arc::ptr_eq(a.shared_step(), b.shared_step())
        && a.id() == b.id()
        && a.step_number() == b.step_number()
        && a.started_at() == b.started_at()
        && a.completed_at() == b.completed_at()
        && a.outcome() == b.outcome()
}

fn to_json<T: Serialize + ?Sized>(value: &T) -> Result<String, StateError> {
    serde_json::to_string(value).map_err(|error| StateError::Serialize(error.to_string()))
}

fn parse<T: serde::de::DeserializeOwned>(text: &str, path: &str) -> Result<T, StateError> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let inner = error.path().to_string();
        StateError::InvalidField {
            path: if inner == "." {
                path.to_owned()
            } else {
                format!("{path}.{inner}")
            },
            message: error.into_inner().to_string(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;
    use proptest::prelude::*;

    /// Stores deltas as a database would: table entries appended, step records by index
    /// (newest wins), heads by version.
    #[derive(Default)]
    struct Rows {
        messages: Vec<String>,
        steps: Vec<String>,
        heads: Vec<(String, usize)>,
    }

    impl Rows {
        fn apply(&mut self, delta: &StateDelta) {
            assert_eq!(delta.first_message, self.messages.len());
            self.messages.extend(delta.messages.iter().cloned());
            for (index, record) in &delta.steps {
                if *index >= self.steps.len() {
                    assert_eq!(*index, self.steps.len(), "step records come in order");
                    self.steps.push(record.clone());
                } else {
                    self.steps[*index] = record.clone();
                }
            }
            self.steps.truncate(delta.step_count);
            self.heads.push((delta.head.clone(), delta.step_count));
        }

        fn load(&self) -> (AgentState, StateEncoder) {
            let messages: Vec<&str> = self.messages.iter().map(String::as_str).collect();
            let steps: Vec<&str> = self.steps.iter().map(String::as_str).collect();
            let (head, _) = self.heads.last().unwrap();
            decode(&messages, &steps, head).unwrap()
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Any sequence of states, each committed as a delta, loads back equal, from the
        /// rows alone, in a fresh encoder or the continuing one.
        #[test]
        fn successive_states_round_trip(states in proptest::collection::vec(testing::agent_state(), 1..4)) {
            let mut encoder = StateEncoder::new();
            let mut rows = Rows::default();
            for state in &states {
                let delta = encoder.encode(state).unwrap();
                rows.apply(&delta);
                let (loaded, mut continued) = rows.load();
                prop_assert_eq!(&loaded, state);
                // The full document is unchanged by loading through rows.
                prop_assert_eq!(loaded.to_json().unwrap(), state.to_json().unwrap());
                // Encoding the same state again from the loaded encoder writes no message
                // and no step record.
                let again = continued.encode(&loaded).unwrap();
                prop_assert!(again.messages.is_empty());
                prop_assert!(again.steps.is_empty());
                prop_assert_eq!(again.head, delta.head);
            }
        }
    }

    /// What happens to a long history between two commits.
    #[derive(Clone, Debug)]
    enum Edit {
        /// A message appended (the common case the encoder makes cheap).
        Append,
        /// The message at this index (wrapped) replaced by a new one with the same text.
        Replace(usize),
        /// The history cut to this many messages (wrapped), as a summarizer does.
        Cut(usize),
        /// A step recorded whose input is the history.
        Step,
    }

    fn edit() -> impl Strategy<Value = Edit> {
        prop_oneof![
            4 => Just(Edit::Append),
            1 => (0usize..200).prop_map(Edit::Replace),
            1 => (0usize..200).prop_map(Edit::Cut),
            2 => Just(Edit::Step),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Long histories (where the encoder reuses what it wrote for the shared start of a
        /// list) round-trip whatever is edited in between: appends, messages replaced in the
        /// middle, cuts, steps.
        #[test]
        fn long_histories_round_trip_through_edits(
            len in 32usize..120,
            edits in proptest::collection::vec(edit(), 1..12),
        ) {
            let history: Vec<Message> = (0..len).map(|i| Message::user(format!("m{i}"))).collect();
            let mut state = AgentState::new().with_messages(history);
            let mut encoder = StateEncoder::new();
            let mut rows = Rows::default();
            rows.apply(&encoder.encode(&state).unwrap());
            for (n, edit) in edits.into_iter().enumerate() {
                // The same message objects, so that the start of the list is shared.
                let mut list: Vec<Arc<Message>> = state.messages().iter_shared().cloned().collect();
                state = match edit {
                    Edit::Append => state.with_user_message(format!("new {n}")),
                    Edit::Replace(i) if !list.is_empty() => {
                        let i = i % list.len();
                        list[i] = Arc::new(Message::assistant(format!("replaced {n}")));
                        state.with_messages(list.into_iter().collect::<messages::Messages>())
                    }
                    Edit::Cut(k) => {
                        list.truncate(k % (list.len() + 1));
                        state.with_messages(list.into_iter().collect::<messages::Messages>())
                    }
                    Edit::Replace(_) | Edit::Step => {
                        let step = crate::records::agent_step::AgentStep::from_parts(crate::records::agent_step::StepParts {
                            input_messages: state.messages_for_inference(),
                            response_messages: messages::Messages::from(vec![Message::assistant(
                                format!("answer {n}"),
                            )]),
                            ..Default::default()
                        });
                        testing::with_recorded_step(state, step)
                    }
                };
                rows.apply(&encoder.encode(&state).unwrap());
                let (loaded, _) = rows.load();
                prop_assert_eq!(&loaded, &state);
            }
        }
    }

    #[test]
    fn a_step_added_writes_only_its_messages_and_record() {
        let mut encoder = StateEncoder::new();
        let mut state = AgentState::new().with_user_message("start");
        let mut sizes = Vec::new();
        for i in 0..200 {
            let step = crate::records::agent_step::AgentStep::from_parts(
                crate::records::agent_step::StepParts {
                    input_messages: state.messages_for_inference(),
                    response_messages: messages::Messages::from(vec![Message::assistant(format!(
                        "answer {i}"
                    ))]),
                    ..Default::default()
                },
            );
            state = testing::with_recorded_step(state, step);
            let delta = encoder.encode(&state).unwrap();
            assert_eq!(delta.steps.len(), 1, "only the new step's record");
            assert_eq!(delta.steps[0].0, i);
            sizes.push(delta.byte_len());
        }
        // The commit size does not grow with history: the step's input is a few runs.
        let (first, last) = (sizes[1], sizes[199]);
        assert!(last < first * 2, "commit bytes grew from {first} to {last}");
    }

    #[test]
    fn a_bad_row_is_an_error_naming_it() {
        let mut encoder = StateEncoder::new();
        let state = AgentState::new().with_user_message("a");
        let delta = encoder.encode(&state).unwrap();
        let error = decode(&["{\"role\": 7}"], &[], &delta.head).unwrap_err();
        assert!(
            matches!(&error, StateError::InvalidField { path, .. } if path.starts_with("messages[0]")),
            "{error:?}"
        );
        let error = decode(&[], &[], &delta.head).unwrap_err();
        assert!(
            matches!(&error, StateError::InvalidField { path, .. } if path == "head.sections[0].runs"),
            "{error:?}"
        );
        let error = decode(&[], &[], "{\"version\": 99}").unwrap_err();
        assert!(matches!(
            error,
            StateError::InvalidField { .. } | StateError::UnsupportedVersion { .. }
        ));
        let error = decode(&[], &["{}"], &delta.head).unwrap_err();
        assert!(
            matches!(&error, StateError::InvalidField { path, .. } if path == "head.step_count"),
            "{error:?}"
        );
    }
}
