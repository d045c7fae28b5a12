//! `HistoryView`: how the persistent conversation is shown to the model in a request.

use messages::{Message, Messages, Role};
use serde::{Deserialize, Serialize};

/// How the exchanges before the current request reach the model (configuration, held in the
/// agent's [`CachedContext`](crate::CachedContext); the state always keeps them as turns).
///
/// Issue 32's long conversations showed the need: in the separated modes the conversation
/// holds questions and answers without the tool calls behind them, and a small model that sees
/// turn after turn of a question answered directly answers the next one directly too, from
/// nothing (32 turns of the 1.5B model: one tool turn in 27 looked anything up). Shown as
/// context instead, every request has the shape of the first turn: the system prompt, what was
/// said before, the request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HistoryView {
    /// As chat turns, the way the state holds them (the default).
    #[default]
    Turns,
    /// The exchanges before the current request as one system message after the agent's
    /// system prompt ([`EARLIER_CONVERSATION_HEADER`], then `User:`/`You:` lines), followed
    /// by the current request and the execution's own messages as turns. Nothing changes
    /// before the first exchange. The message only grows between executions, at its end, so a
    /// prompt cache keeps serving everything before it.
    Context,
}

impl HistoryView {
    /// True for the default view.
    pub fn is_turns(&self) -> bool {
        *self == HistoryView::Turns
    }
}

/// The first line of the system message that holds the earlier exchanges in
/// [`HistoryView::Context`].
pub const EARLIER_CONVERSATION_HEADER: &str = "Earlier in this conversation (the user's requests \
and your answers; the tool calls behind them are not shown and their results are gone, so look \
again for anything no answer states):";

/// `input` (the state's messages for inference, perhaps with a note of the loop after them)
/// shown as `view` says. `persistent` is how many of its first messages persist beyond the
/// execution (the summary, buffer and conversation sections); the current request is the last
/// of them when it is a user message. `None` when the view changes nothing.
pub fn viewed(view: HistoryView, input: &Messages, persistent: usize) -> Option<Messages> {
    if view.is_turns() {
        return None;
    }
    let persistent = persistent.min(input.len());
    let current = persistent
        .checked_sub(1)
        .filter(|&i| input.get(i).is_some_and(|m| m.role() == Role::User))
        .unwrap_or(persistent);
    if current == 0 {
        return None;
    }
    let earlier = input.head(current);
    let note = Message::system(format!(
        "{EARLIER_CONVERSATION_HEADER}\n{}",
        transcript(&earlier)
    ));
    let rest = input.iter_shared().skip(current).cloned();
    Some(
        std::iter::once(std::sync::Arc::new(note))
            .chain(rest)
            .collect(),
    )
}

/// One line per message: `User:` and `You:` for text, the names of the tools called, and a
/// tool result's first line (digest excerpts), so ids and values found earlier stay visible.
fn transcript(messages: &Messages) -> String {
    let mut lines = Vec::with_capacity(messages.len());
    for message in messages.iter() {
        let text = one_line(&message.text());
        match message.role() {
            Role::User if !text.is_empty() => lines.push(format!("User: {text}")),
            Role::Assistant => {
                let calls: Vec<&str> = message.tool_calls().iter().map(|c| c.name()).collect();
                if !calls.is_empty() {
                    lines.push(format!("(You looked this up with: {})", calls.join(", ")));
                }
                if !text.is_empty() {
                    lines.push(format!("You: {text}"));
                }
            }
            Role::Tool if !text.is_empty() => lines.push(format!("(It showed: {text})")),
            Role::System | Role::Developer if !text.is_empty() => {
                lines.push(format!("(Note: {text})"));
            }
            _ => {}
        }
    }
    lines.join("\n")
}

/// `text` on one line (line breaks become spaces).
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use messages::ToolCall;
    use serde_json::json;

    fn conversation() -> Messages {
        Messages::from(vec![
            Message::user("Which port does config.ini set?"),
            Message::assistant("It sets port 8472."),
            Message::user("How many ERROR lines are in the log?"),
        ])
    }

    #[test]
    fn the_turns_view_and_the_first_request_are_left_alone() {
        let input = conversation();
        assert_eq!(viewed(HistoryView::Turns, &input, 3), None);
        let first = Messages::from(vec![Message::user("hi")]);
        assert_eq!(viewed(HistoryView::Context, &first, 1), None);
    }

    #[test]
    fn earlier_exchanges_become_one_system_message_before_the_current_request() {
        let call = ToolCall::new("c1", "search_files", json!({"pattern": "ERROR"}));
        let buffer = [
            Message::assistant_tool_calls([call.clone()]),
            Message::tool_result_for(&call, "34 matches"),
        ];
        let input = conversation().extended(buffer.iter().cloned());
        let Some(shown) = viewed(HistoryView::Context, &input, 3) else {
            panic!("the view changes a conversation with earlier exchanges");
        };
        insta::assert_snapshot!(shown.to_transcript(), @r#"
        system: Earlier in this conversation (the user's requests and your answers; the tool calls behind them are not shown and their results are gone, so look again for anything no answer states):
            User: Which port does config.ini set?
            You: It sets port 8472.
        user: How many ERROR lines are in the log?
        assistant -> search_files {"pattern":"ERROR"} [c1]
        tool search_files [c1]: 34 matches
        "#);
    }

    #[test]
    fn digest_calls_and_excerpts_stay_visible_as_text() {
        let call = ToolCall::new("digest_1_0", "read_file", json!({"path": "config.ini"}));
        let input = Messages::from(vec![
            Message::user("Which port?"),
            Message::assistant_tool_calls([call.clone()]),
            Message::tool_result_for(&call, "[server]\nport = 8472"),
            Message::assistant("8472."),
            Message::user("And the host?"),
        ]);
        let shown = viewed(HistoryView::Context, &input, 5).unwrap_or_default();
        let note = shown.get(0).map(|m| m.text()).unwrap_or_default();
        assert!(
            note.ends_with(
                "User: Which port?\n(You looked this up with: read_file)\n\
             (It showed: [server] port = 8472)\nYou: 8472."
            ),
            "{note}"
        );
        assert_eq!(shown.len(), 2, "the note and the current request");
    }

    #[test]
    fn without_a_current_request_every_persistent_message_is_earlier() {
        // A run resumed without a new user message: the whole conversation is context.
        let input = Messages::from(vec![Message::user("a"), Message::assistant("b")]);
        let shown = viewed(HistoryView::Context, &input, 2).unwrap_or_default();
        assert_eq!(shown.len(), 1);
        assert_eq!(viewed(HistoryView::Context, &Messages::new(), 0), None);
    }
}
