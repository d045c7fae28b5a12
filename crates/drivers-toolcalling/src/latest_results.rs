//! The latest tool results of a conversation, and the request before them: what the running
//! execution's tools returned, which the rules for replies that are not answers read
//! (`copied_error`, `narration`).

use messages::{Messages, Role};

/// The texts of the latest tool results of `conversation`, newest first, and the text of the
/// user message before them (the request, in separated mode). Read backwards from the end to
/// that user message, so the cost is the execution's, not the whole history's (a conversation
/// that ends with a question gives the results before it). None at all: empty, no request.
pub(crate) fn latest_results(conversation: &Messages) -> (Vec<String>, Option<String>) {
    let mut results = Vec::new();
    for message in conversation.iter().rev() {
        match message.role() {
            Role::Tool => results.push(message.text()),
            Role::User if !results.is_empty() => return (results, Some(message.text())),
            _ => {}
        }
    }
    (results, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use messages::{Message, ToolCall};

    #[test]
    fn the_results_back_to_the_request_before_them() {
        let call = ToolCall::new("call_1", "read_file", serde_json::json!({}));
        let conversation = Messages::new()
            .appended(Message::user("old question"))
            .appended(Message::assistant_tool_calls([call.clone()]))
            .appended(Message::tool_result_for(&call, "old result"))
            .appended(Message::assistant("old answer"))
            .appended(Message::user("new question"))
            .appended(Message::assistant_tool_calls([call.clone()]))
            .appended(Message::tool_result_for(&call, "first"))
            .appended(Message::assistant_tool_calls([call.clone()]))
            .appended(Message::tool_result_for(&call, "second"));
        let (results, request) = latest_results(&conversation);
        assert_eq!(results, ["second", "first"]);
        assert_eq!(request.as_deref(), Some("new question"));
        assert_eq!(
            latest_results(&Messages::new().appended(Message::user("hi"))),
            (Vec::new(), None)
        );
    }
}
