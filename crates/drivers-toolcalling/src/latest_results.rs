//! The running execution in a conversation: its messages back to the request, the request,
//! and what its tools returned. The rules for replies that are not answers read them
//! (`copied_error`, `narration`, `reply_nudge`, `unread_file`, `repeated_reply`,
//! `forged_evidence`); each walks back from the end, so its cost is the execution's, not the
//! whole history's.

use std::borrow::Cow;

use messages::{Message, Messages, Role};

/// How a failed tool result begins in the conversation (`ToolExecution::result_text` of
/// agents-core writes `Error: {message}`).
pub(crate) const TOOL_ERROR_PREFIX: &str = "Error: ";

/// The running execution's messages, newest first: those after the conversation's last user
/// message, the request (in separated mode the execution's calls and results; nudges are
/// not in it).
pub(crate) fn execution_messages(conversation: &Messages) -> impl Iterator<Item = &Message> {
    conversation
        .iter()
        .rev()
        .take_while(|message| message.role() != Role::User)
}

/// `input` without its last message, the rest shared (reference counts, no copy of a
/// message): on a stop, the conversation before the loop's instruction to answer, which the
/// checks of an answer on stop read (`predicted_answer`, `failed_calls`, `plan_reply`, the
/// driver's `answer_without_tools`).
pub(crate) fn without_last(input: &Messages) -> Messages {
    input
        .iter_shared()
        .take(input.len().saturating_sub(1))
        .cloned()
        .collect()
}

/// The conversation's last user message: the running execution's request.
pub(crate) fn request(conversation: &Messages) -> Option<&Message> {
    conversation
        .iter()
        .rev()
        .find(|message| message.role() == Role::User)
}

/// The text of `message` ([`Message::text`]), borrowed when it is one text part (the common
/// case: no copy), joined otherwise.
pub(crate) fn text_of(message: &Message) -> Cow<'_, str> {
    match message.content().parts() {
        [part] => part
            .as_text()
            .map_or_else(|| Cow::Owned(message.text()), Cow::Borrowed),
        _ => Cow::Owned(message.text()),
    }
}

/// The texts of the tool results among `messages` that worked (not errors), in their order:
/// what the answer checks compare an answer with (`execution_messages` for the running
/// execution's, newest first).
pub(crate) fn worked_result_texts<'m>(
    messages: impl Iterator<Item = &'m Message>,
) -> impl Iterator<Item = Cow<'m, str>> {
    messages
        .filter(|message| message.role() == Role::Tool)
        .map(text_of)
        .filter(|result| !result.starts_with(TOOL_ERROR_PREFIX))
}

/// Whether `execution` (an execution's messages, in any order) holds a tool result and each
/// of them is an error (`failed`) or none is (`!failed`).
pub(crate) fn every_result<'m>(execution: impl Iterator<Item = &'m Message>, failed: bool) -> bool {
    let mut any = false;
    for message in execution.filter(|message| message.role() == Role::Tool) {
        if text_of(message).starts_with(TOOL_ERROR_PREFIX) != failed {
            return false;
        }
        any = true;
    }
    any
}

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
    use messages::ToolCall;

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
        let (results, asked) = latest_results(&conversation);
        assert_eq!(results, ["second", "first"]);
        assert_eq!(asked.as_deref(), Some("new question"));
        assert_eq!(
            request(&conversation).map(Message::text).as_deref(),
            Some("new question")
        );
        // The execution: two calls and their results, nothing of the earlier turn.
        assert_eq!(execution_messages(&conversation).count(), 4);
        assert_eq!(
            execution_messages(&conversation)
                .flat_map(Message::tool_calls)
                .count(),
            2
        );
        assert_eq!(
            latest_results(&Messages::new().appended(Message::user("hi"))),
            (Vec::new(), None)
        );
    }
}
