//! `MaskOldObservations`: observation masking, old tool results become short placeholders.

use std::sync::Arc;

use agents_core::{AgentError, AgentState, InlineProcessor, DEFAULT_SECTION};
use messages::{Message, Messages, Role};

/// Metadata key marking a tool result whose output was replaced by a placeholder.
pub const OBSERVATION_MASKED_KEY: &str = "observation_masked";

/// Post-step, when an execution stops: every tool result in `messages` older than the last
/// `keep` executions (the one that just stopped included) is replaced by a one-line
/// placeholder naming the tool and the size of what was hidden.
///
/// Calls and results stay where they were (the conversation keeps its shape: every call has its
/// result, ids and tool names unchanged, so every provider accepts it); only the old outputs
/// go. This is "observation masking" (JetBrains Research, 2025): the model still sees *that* it
/// looked something up and where, and can call the tool again. Runs after
/// [`AppendStepMessages`](crate::AppendStepMessages) (it is the outer layer), in legacy-style
/// persistence.
///
/// An execution is the run from one user message to the next (the loop's own notes to the
/// model do not start one); tool results are `tool`-role messages and ReAct observations
/// (user messages with metadata `react: "observation"`).
/// Masking happens once per execution, when it stops, so the request prefix changes at one
/// point per turn (what prompt caches see), never between the steps of an execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaskOldObservations {
    keep: usize,
}

impl MaskOldObservations {
    /// Keeps the outputs of the last `keep` executions; `0` behaves as `1` (the execution that
    /// just stopped keeps its results until the next one stops).
    pub fn new(keep: usize) -> Self {
        Self { keep: keep.max(1) }
    }

    /// How many executions keep their outputs.
    pub fn keep(&self) -> usize {
        self.keep
    }
}

impl InlineProcessor for MaskOldObservations {
    fn after(&self, state: AgentState) -> Result<AgentState, AgentError> {
        if !state.is_stopping() {
            return Ok(state);
        }
        let conversation = state.store().section(DEFAULT_SECTION).messages();
        let Some(masked) = masked_conversation(&conversation, self.keep) else {
            return Ok(state);
        };
        let store = state.store().section(DEFAULT_SECTION).set(masked);
        Ok(state.with_store(store))
    }
}

/// `conversation` with the outputs older than the last `keep` executions masked, or `None`
/// when there is nothing (new) to mask.
///
/// Only the suffix from the first output that needs masking is rebuilt: masked outputs stay
/// masked, so after the first pass that is the previous execution's part.
pub fn masked_conversation(conversation: &Messages, keep: usize) -> Option<Messages> {
    let cutoff = start_of_last_executions(conversation, keep.max(1))?;
    let first = (0..cutoff).find(|&i| {
        conversation
            .get(i)
            .is_some_and(|m| is_observation(m) && !is_masked(m))
    })?;
    let head = conversation.head(first);
    let rest = conversation
        .iter_shared()
        .enumerate()
        .skip(first)
        .map(|(i, message)| {
            if i < cutoff && is_observation(message) && !is_masked(message) {
                Arc::new(placeholder(message))
            } else {
                Arc::clone(message)
            }
        });
    Some(head.extended_shared(rest))
}

/// The index of the user message that starts the `keep`-th last execution, or `None` when
/// the conversation holds no more than `keep` executions.
fn start_of_last_executions(conversation: &Messages, keep: usize) -> Option<usize> {
    let mut seen = 0;
    for (index, message) in conversation.iter().enumerate().rev() {
        if is_execution_start(message) {
            seen += 1;
            if seen == keep {
                return Some(index);
            }
        }
    }
    None
}

/// A user message the user sent: not a ReAct observation, and not the loop's own note to the
/// model after a withheld reply (drivers-toolcalling's `FORGED_REPLY_KEY`, spelled out here
/// because this crate sits below the drivers).
fn is_execution_start(message: &Message) -> bool {
    message.role() == Role::User
        && !is_react_observation(message)
        && !message.metadata().contains_key("forged_reply_refused")
}

/// A tool's output as the model saw it: a `tool` message, or a ReAct observation.
pub fn is_observation(message: &Message) -> bool {
    message.role() == Role::Tool || is_react_observation(message)
}

fn is_react_observation(message: &Message) -> bool {
    message.role() == Role::User
        && message
            .metadata()
            .get("react")
            .and_then(|v| v.as_str())
            .is_some_and(|v| v == "observation")
}

fn is_masked(message: &Message) -> bool {
    message
        .metadata()
        .get(OBSERVATION_MASKED_KEY)
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false)
}

/// The placeholder: same role, call id, name and metadata; the content a short note.
fn placeholder(message: &Message) -> Message {
    let tool = message
        .tool_name()
        .or_else(|| message.metadata().get("tool_name").and_then(|v| v.as_str()))
        .unwrap_or("the tool")
        .to_owned();
    let chars = message.text().chars().count();
    let note = format!(
        "(output of {tool} omitted: {chars} characters from an earlier turn; call the tool \
         again if you need it)"
    );
    let note = if is_react_observation(message) {
        format!("Observation: {note}")
    } else {
        note
    };
    message
        .clone()
        .with_content(note)
        .with_metadata(OBSERVATION_MASKED_KEY, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use messages::ToolCall;
    use serde_json::json;

    fn turn(question: &str, tool: &str, output: &str, answer: &str) -> Vec<Message> {
        let call = ToolCall::new(format!("call_{question}"), tool, json!({}));
        vec![
            Message::user(question),
            Message::assistant_tool_calls([call.clone()]),
            Message::tool_result_for(&call, output),
            Message::assistant(answer),
        ]
    }

    fn conversation(turns: usize) -> Messages {
        Messages::from(
            (0..turns)
                .flat_map(|i| turn(&format!("q{i}"), "read_file", &"x".repeat(100 + i), "a"))
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn outputs_older_than_the_last_executions_become_placeholders() {
        let masked = masked_conversation(&conversation(4), 2).unwrap();
        assert_eq!(masked.len(), 16, "no message is added or removed");
        let outputs: Vec<String> = masked
            .iter()
            .filter(|m| m.role() == Role::Tool)
            .map(Message::text)
            .collect();
        assert!(outputs[0].starts_with("(output of read_file omitted: 100 characters"));
        assert!(outputs[1].starts_with("(output of read_file omitted: 101 characters"));
        assert_eq!(outputs[2], "x".repeat(102));
        assert_eq!(outputs[3], "x".repeat(103));
        // Call ids and names are kept: every call still has its result.
        let original = conversation(4);
        for (before, after) in original.iter().zip(masked.iter()) {
            assert_eq!(before.role(), after.role());
            assert_eq!(before.tool_call_id(), after.tool_call_id());
            assert_eq!(before.tool_calls(), after.tool_calls());
        }
    }

    #[test]
    fn nothing_to_mask_is_none_and_masking_is_idempotent() {
        assert!(masked_conversation(&conversation(2), 2).is_none());
        assert!(masked_conversation(&Messages::new(), 1).is_none());
        let once = masked_conversation(&conversation(3), 1).unwrap();
        assert!(masked_conversation(&once, 1).is_none());
        assert_eq!(
            once.iter().filter(|m| is_masked(m)).count(),
            2,
            "the last execution keeps its output"
        );
    }

    #[test]
    fn react_observations_are_masked_and_do_not_start_executions() {
        let observation = Message::user("Observation: port = 8472")
            .with_metadata("react", "observation")
            .with_metadata("tool_name", "read_file");
        let conversation = Messages::from(vec![
            Message::user("q1"),
            Message::assistant("Action: read_file"),
            observation,
            Message::assistant("8472"),
            Message::user("q2"),
            Message::assistant("ok"),
        ]);
        let masked = masked_conversation(&conversation, 1).unwrap();
        let text = masked.get(2).unwrap().text();
        assert!(
            text.starts_with("Observation: (output of read_file omitted"),
            "{text}"
        );
        assert_eq!(masked.get(4).unwrap().text(), "q2");
    }

    #[test]
    fn the_loops_note_after_a_withheld_reply_does_not_start_an_execution() {
        let mut messages = turn("q1", "read_file", "port = 8472", "8472");
        messages.insert(
            1,
            Message::user("Your last reply was not shown")
                .with_metadata("forged_reply_refused", true),
        );
        messages.extend(turn("q2", "read_file", "workers = 4", "4"));
        let masked = masked_conversation(&Messages::from(messages), 2);
        assert!(masked.is_none(), "two executions, both kept");
    }
}
