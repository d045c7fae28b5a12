//! The messages a ReAct step leaves in the conversation: the action note and the observations.
//!
//! ReAct tool traffic is plain text, not provider tool calls: the action is an assistant
//! message and each observation a user message. Both carry the metadata key [`REACT_KEY`]
//! (`"action"` or `"observation"`) so that processors can recognise them as tool trace (for
//! example to keep them in the execution buffer rather than in the persistent conversation).

use agents_core::{ToolExecution, ToolExecutions};
use messages::{Message, Messages, Role, ToolCall};

/// Metadata key marking ReAct trace messages.
pub const REACT_KEY: &str = "react";
/// [`REACT_KEY`] value of the assistant message recording an action.
pub const REACT_ACTION: &str = "action";
/// [`REACT_KEY`] value of a user message carrying a tool's result.
pub const REACT_OBSERVATION: &str = "observation";

/// The assistant message recording a tool call:
/// `Thought: ...\nAction: <tool>\nAction Input: <json>` (no `Thought` line when it is empty),
/// with metadata `react: "action"` and the call id under `tool_call_id`.
///
/// ```
/// use drivers_react::action_message;
/// use messages::ToolCall;
/// use serde_json::json;
///
/// let message = action_message("I need the sum.", &ToolCall::new("react_1", "add", json!({"a": 1, "b": 2})));
/// assert_eq!(message.text(), "Thought: I need the sum.\nAction: add\nAction Input: {\"a\":1,\"b\":2}");
/// ```
pub fn action_message(thought: &str, call: &ToolCall) -> Message {
    let mut text = String::new();
    if !thought.trim().is_empty() {
        text.push_str(&format!("Thought: {}\n", thought.trim()));
    }
    text.push_str(&format!(
        "Action: {}\nAction Input: {}",
        call.name(),
        call.arguments()
    ));
    Message::assistant(text)
        .with_metadata(REACT_KEY, REACT_ACTION)
        .with_metadata("tool_call_id", call.id())
}

/// The user message carrying one execution's result: `Observation: <result>` (failures read
/// `Observation: Error: <message>`), with metadata `react: "observation"`, `tool_call_id` and
/// `tool_name`.
pub fn observation_message(execution: &ToolExecution) -> Message {
    Message::user(format!("{OBSERVATION_PREFIX}{}", execution.result_text()))
        .with_metadata(REACT_KEY, REACT_OBSERVATION)
        .with_metadata("tool_call_id", execution.id())
        .with_metadata("tool_name", execution.name())
}

/// How an observation message begins, before the result.
const OBSERVATION_PREFIX: &str = "Observation: ";

/// The results the observations among `messages` carry (each without its `Observation: `),
/// in order: what the answer checks compare an answer with. A failed call's reads
/// `Error: <message>`.
pub(crate) fn observed_results(messages: &Messages) -> impl Iterator<Item = String> + '_ {
    messages
        .iter()
        .filter(|message| message.role() == Role::User && is_react_trace(message))
        .map(|message| {
            let text = message.text();
            text.strip_prefix(OBSERVATION_PREFIX)
                .map_or_else(|| text.clone(), str::to_owned)
        })
}

/// One observation message per execution, in order.
pub fn observation_messages(executions: &ToolExecutions) -> Vec<Message> {
    executions.iter().map(observation_message).collect()
}

/// True for ReAct trace messages (actions and observations).
pub fn is_react_trace(message: &Message) -> bool {
    message
        .metadata()
        .get(REACT_KEY)
        .and_then(|v| v.as_str())
        .is_some_and(|v| v == REACT_ACTION || v == REACT_OBSERVATION)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agents_core::ToolFailureKind;
    use chrono::Utc;
    use messages::Role;
    use serde_json::json;

    #[test]
    fn action_without_thought_has_no_thought_line() {
        let message = action_message(" ", &ToolCall::new("r1", "search", json!({"query": "x"})));
        assert_eq!(
            message.text(),
            "Action: search\nAction Input: {\"query\":\"x\"}"
        );
        assert_eq!(message.role(), Role::Assistant);
        assert!(is_react_trace(&message));
        assert!(!message.is_tool_trace(), "not a provider tool call");
    }

    #[test]
    fn observations_are_marked_user_messages_with_results_or_errors() {
        let now = Utc::now();
        let call = ToolCall::new("r1", "add", json!({"a": 1}));
        let executions = ToolExecutions::from(vec![
            ToolExecution::success(call.clone(), "3", now, now),
            ToolExecution::failure(
                call,
                ToolFailureKind::InvalidArguments,
                "b is missing",
                now,
                now,
            ),
        ]);
        let messages = observation_messages(&executions);
        let texts: Vec<String> = messages.iter().map(Message::text).collect();
        assert_eq!(
            texts,
            vec!["Observation: 3", "Observation: Error: b is missing"]
        );
        assert!(messages
            .iter()
            .all(|m| m.role() == Role::User && is_react_trace(m)));
        assert_eq!(messages[0].metadata().get("tool_name"), Some(&json!("add")));
        assert!(!is_react_trace(&Message::user(
            "Observation: typed by a user"
        )));
    }
}
