//! How the calls a model wrote as text are shown back to it in the requests that follow.
//!
//! A call recovered from text is kept in the state as a native call with its tool result, like
//! any other (the trace, events and the saved conversation do not depend on this choice). What
//! changes is only the request: [`RecoveredCallsShown::AsWritten`] sends such a call back the
//! way the model wrote it, and its result the way a Qwen or Hermes chat template shows tool
//! output, so a model that does not call tools natively sees its own protocol, not a native
//! call it never made.

use std::collections::HashSet;
use std::sync::Arc;

use inference::lenient_json::json_values;
use messages::{Message, Messages, Role, ToolCall};
use serde_json::Value;

use crate::recover::{call_shapes, is_recovered_call};

/// How a call the model wrote as text (a recovered call) is shown to the model in the requests
/// after it. The state keeps it as a native call either way.
///
/// ```
/// use drivers_toolcalling::{RecoveredCallsShown, ToolCallingDriver};
/// use inference::ScriptedModel;
///
/// let driver = ToolCallingDriver::new(ScriptedModel::new([]))
///     .with_recovered_calls_shown(RecoveredCallsShown::AsWritten);
/// assert_eq!(driver.recovered_calls_shown(), RecoveredCallsShown::AsWritten);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RecoveredCallsShown {
    /// As native tool calls and tool-result messages, like any other call (the default): the
    /// server's chat template renders them in the model's tool-call format, after the text the
    /// model wrote.
    #[default]
    Native,
    /// As the model wrote them: the reply's text alone, with no native call (when the text was
    /// only the call, the call written as a fenced JSON object), and each result as a user
    /// message `<tool_response>\n…\n</tool_response>`, the form Qwen- and Hermes-style chat
    /// templates give tool output. One message in the request for each message of the
    /// conversation, so a cache breakpoint's index still holds.
    AsWritten,
}

impl RecoveredCallsShown {
    /// The name the CLI's `--show-recovered-calls` takes: `native` or `as-written`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Native => "native",
            Self::AsWritten => "as-written",
        }
    }

    /// Parses [`as_str`](Self::as_str)'s names.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "native" => Some(Self::Native),
            "as-written" => Some(Self::AsWritten),
            _ => None,
        }
    }

    /// `conversation` as the model is shown it: unchanged for [`Native`](Self::Native), and
    /// for a conversation without recovered calls.
    pub(crate) fn show(self, conversation: &Messages) -> Messages {
        match self {
            Self::Native => conversation.clone(),
            Self::AsWritten => as_written(conversation),
        }
    }
}

/// Every assistant message whose calls were all recovered from text becomes its text (or the
/// calls as fenced JSON), and the results of those calls become user messages; the rest is
/// shared as it is.
fn as_written(conversation: &Messages) -> Messages {
    let recovered = |message: &Message| {
        message.role() == Role::Assistant
            && message.has_tool_calls()
            && message.tool_calls().iter().all(is_recovered_call)
    };
    if !conversation.iter().any(recovered) {
        return conversation.clone();
    }
    let mut shown_ids: HashSet<&str> = HashSet::new();
    let mut shown: Vec<Arc<Message>> = Vec::with_capacity(conversation.len());
    for message in conversation.iter_shared() {
        if recovered(message) {
            shown_ids.extend(message.tool_calls().iter().map(ToolCall::id));
            shown.push(Arc::new(written_reply(message)));
        } else if message
            .tool_call_id()
            .is_some_and(|id| shown_ids.contains(id))
        {
            shown.push(Arc::new(Message::user(format!(
                "<tool_response>\n{}\n</tool_response>",
                message.text()
            ))));
        } else {
            shown.push(Arc::clone(message));
        }
    }
    Messages::new().extended_shared(shown)
}

/// The reply as the model wrote it: its text, with each call the text does not hold written
/// after it as a fenced JSON object `{"name": ..., "arguments": ...}` (the state keeps only the
/// prose of a call announced after prose, and nothing of a reply that was only the call).
fn written_reply(message: &Message) -> Message {
    let text = message.text();
    let written: Vec<(String, Value)> = json_values(&text)
        .iter()
        .filter_map(call_shapes)
        .flatten()
        .collect();
    let mut shown: Vec<String> = Vec::new();
    if !text.trim().is_empty() {
        shown.push(text.trim_end().to_owned());
    }
    for call in message.tool_calls() {
        let held = written
            .iter()
            .any(|(name, arguments)| name == call.name() && arguments == call.arguments());
        if !held {
            let name = Value::from(call.name());
            shown.push(format!(
                "```json\n{{\"name\": {name}, \"arguments\": {}}}\n```",
                call.arguments()
            ));
        }
    }
    Message::assistant(shown.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn conversation(call_id: &str, text: &str) -> Messages {
        let call = ToolCall::new(call_id, "read_file", json!({"path": "config.ini"}));
        Messages::new()
            .appended(Message::user("Which port is set in config.ini?"))
            .appended(Message::assistant_tool_calls([call.clone()]).with_content(text))
            .appended(Message::tool_result_for(&call, "port = 8472"))
    }

    #[test]
    fn a_recovered_call_is_shown_as_the_model_wrote_it_and_its_result_as_tool_output() {
        let text = "I'll read it:\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"config.ini\"}}\n```";
        let shown = RecoveredCallsShown::AsWritten.show(&conversation("recovered_0_1_1", text));
        let texts: Vec<(Role, String)> = shown.iter().map(|m| (m.role(), m.text())).collect();
        assert_eq!(
            texts,
            [
                (Role::User, "Which port is set in config.ini?".to_owned()),
                (Role::Assistant, text.to_owned()),
                (
                    Role::User,
                    "<tool_response>\nport = 8472\n</tool_response>".to_owned()
                ),
            ]
        );
        assert!(shown.iter().all(|m| !m.has_tool_calls()));
    }

    #[test]
    fn a_call_kept_with_only_its_prose_is_written_after_it() {
        let shown = RecoveredCallsShown::AsWritten
            .show(&conversation("recovered_0_1_1", "I'll read it:\n"));
        assert_eq!(
            shown.get(1).map(Message::text).as_deref(),
            Some("I'll read it:\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\":\"config.ini\"}}\n```")
        );
    }

    #[test]
    fn a_call_kept_without_its_text_is_written_as_fenced_json() {
        let shown = RecoveredCallsShown::AsWritten.show(&conversation("recovered_0_1_1", ""));
        assert_eq!(
            shown.get(1).map(Message::text).as_deref(),
            Some(
                "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\":\"config.ini\"}}\n```"
            )
        );
        assert_eq!(shown.len(), 3, "one message shown for each message kept");
    }

    #[test]
    fn native_calls_and_the_native_choice_leave_the_conversation_as_it_is() {
        let native = conversation("call_1", "");
        assert_eq!(RecoveredCallsShown::AsWritten.show(&native), native);
        let recovered = conversation("recovered_0_1_1", "");
        assert_eq!(RecoveredCallsShown::Native.show(&recovered), recovered);
    }

    #[test]
    fn names_round_trip() {
        for shown in [RecoveredCallsShown::Native, RecoveredCallsShown::AsWritten] {
            assert_eq!(RecoveredCallsShown::parse(shown.as_str()), Some(shown));
        }
        assert_eq!(RecoveredCallsShown::parse("text"), None);
    }
}
