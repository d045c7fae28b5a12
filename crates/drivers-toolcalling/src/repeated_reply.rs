//! A reply that repeats, word for word, a reply of the same execution whose call already ran.
//!
//! At temperature 0 a small model that has written a reply and a call once tends to write
//! the same reply and call again after the result, and again after that: its own earlier
//! reply is the best continuation it sees. Each copy that enters the conversation makes the
//! next one likelier. The 1.5B model wrote "To determine if debug mode is enabled in
//! `config.yaml`, you can use the `search_files` function ..." and the same search five
//! times (development task d18, whose search had answered "no line contains
//! `debug_mode: true`"); told in the call's result that the result was already there, it
//! wrote the reply once more. In replays of such requests (docs/eval.md, session 19), a user
//! message after the result, with the repeated reply left out of the request, got a new reply.
//! So the driver asks once, in the same step, without showing the copy back
//! ([`Nudge::shows_reply`](crate::reply_nudge::Nudge::shows_reply)).

use messages::Messages;

use crate::latest_results::execution_messages;

use crate::plan_steps::next_step;

/// The fewest characters of an earlier reply's text (its words joined by single spaces) that
/// count as a repeat: a short lead-in ("Let me check.") is said again for good reasons.
const MIN_REPEATED_CHARS: usize = 30;

/// The earlier reply `reply` repeats: an assistant message since the conversation's last user
/// message (the running execution) that made calls, whose text of at least
/// [`MIN_REPEATED_CHARS`] the reply starts with, word for word (whitespace aside), and whose
/// first call's tool the rest of the reply names (or that text holds the call's JSON: a reply
/// whose calls were refused is kept whole). Returns that reply's text, as written, and
/// the name of its first call's tool.
pub(crate) fn repeated_reply<'a>(
    conversation: &'a Messages,
    reply: &str,
) -> Option<(String, &'a str)> {
    // The reply's words are gathered only once an earlier reply is long enough to compare.
    let mut reply_words: Option<String> = None;
    execution_messages(conversation).find_map(|message| {
        let call = message.tool_calls().first()?;
        let text = message.text();
        // (`words` never lengthens a text: a shorter one cannot hold enough words.)
        if text.len() < MIN_REPEATED_CHARS {
            return None;
        }
        let earlier = words(&text);
        let reply = reply_words.get_or_insert_with(|| words(reply));
        // The rest names the tool, or the earlier text holds the call itself (a reply whose
        // calls were refused is kept whole, its JSON included).
        (earlier.len() >= MIN_REPEATED_CHARS
            && reply.strip_prefix(earlier.as_str()).is_some_and(|rest| {
                rest.contains(call.name()) || earlier.contains(&format!("\"{}\"", call.name()))
            }))
        .then(|| (text, call.name()))
    })
}

/// What the model is told after a reply that repeats `earlier`, whose call to `tool` ran:
/// the plan's next step when `earlier` holds a numbered plan whose step the call did, else to
/// answer from what the call returned (a result or an error) or make a different call.
pub(crate) fn repeated_reply_nudge(earlier: &str, tool: &str) -> String {
    let what_now = match next_step(earlier, tool) {
        Some(next) => format!("Do the next step of your plan now: {next}"),
        None => "Answer the user's question from that result now; only if it does not hold \
                 the answer, make a different call for what is missing."
            .to_owned(),
    };
    format!(
        "You already sent that reply, and its `{tool}` call ran: what it returned is above. \
         Do not send it again. {what_now}"
    )
}

/// `text` with its words joined by single spaces.
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use messages::{Message, ToolCall};
    use serde_json::json;

    const LEAD_IN: &str = "To determine if debug mode is enabled in `config.yaml`, you can use \
                           the `search_files` function to search for the string `debug_mode: \
                           true` within the file. Here's how you can do it:";
    const CALL: &str = r#"{"name": "search_files", "arguments": {"pattern": "debug_mode: true", "path": "config.yaml"}}"#;

    fn execution(lead_in: &str) -> Messages {
        let call = ToolCall::new(
            "call_1",
            "search_files",
            json!({"pattern": "debug_mode: true", "path": "config.yaml"}),
        );
        Messages::new()
            .appended(Message::user("Is debug mode enabled in config.yaml?"))
            .appended(Message::assistant(lead_in).with_tool_calls([call.clone()]))
            .appended(Message::tool_result_for(
                &call,
                "(no line of `config.yaml` contains `debug_mode: true`)",
            ))
    }

    #[test]
    fn a_reply_that_starts_with_an_earlier_reply_and_names_its_tool_repeats_it() {
        // Development task d18: the same reply and search, five times.
        let conversation = execution(LEAD_IN);
        for reply in [
            format!("{LEAD_IN}\n\n```json\n{CALL}\n```"),
            format!("{}\n{CALL}\n\n", LEAD_IN.replace(' ', "\n ")),
        ] {
            let (earlier, tool) = repeated_reply(&conversation, &reply).unwrap();
            assert_eq!(tool, "search_files");
            assert!(earlier.starts_with("To determine if debug mode"));
        }
        let nudge = repeated_reply_nudge(LEAD_IN, "search_files");
        assert!(nudge.starts_with("You already sent that reply, and its `search_files` call ran"));
        assert!(nudge.ends_with("make a different call for what is missing."));
    }

    #[test]
    fn a_reply_kept_whole_with_its_calls_is_repeated_by_the_same_reply() {
        // Development task d22: a plan with two edits, the first refused as done; the reply
        // is kept whole, and the next reply is the same.
        let whole = format!("To change the version, use `edit_file` twice:\n```json\n{CALL}\n```\nThen both are done.");
        let call = ToolCall::new("c1", "search_files", json!({}));
        let conversation = Messages::new()
            .appended(Message::user("Change the version."))
            .appended(Message::assistant(whole.as_str()).with_tool_calls([call.clone()]))
            .appended(Message::tool_result_for(&call, "not run again"));
        assert!(repeated_reply(&conversation, &format!("{whole}\n")).is_some());
    }

    #[test]
    fn new_replies_short_lead_ins_and_other_executions_are_not_repeats() {
        let conversation = execution(LEAD_IN);
        for reply in [
            // an answer, another call after the same words, the lead-in alone
            "No: config.yaml has no line `debug_mode: true`.".to_owned(),
            format!(
                "{LEAD_IN}\n{}",
                r#"{"name": "read_file", "arguments": {"path": "config.yaml"}}"#
            ),
            LEAD_IN.to_owned(),
        ] {
            assert_eq!(repeated_reply(&conversation, &reply), None, "{reply}");
        }
        let short = execution("Let me check.");
        assert_eq!(
            repeated_reply(&short, &format!("Let me check. {CALL}")),
            None
        );
        // A reply of an earlier execution is not this execution's.
        let later = execution(LEAD_IN)
            .appended(Message::assistant("No."))
            .appended(Message::user("And is verbose mode enabled?"));
        assert_eq!(repeated_reply(&later, &format!("{LEAD_IN} {CALL}")), None);
    }

    #[test]
    fn a_repeated_plan_is_told_its_next_step() {
        // Development task d11: the plan, and its first step's call, again.
        let plan = "To answer this question, I'll need to:\n1. List all files in the workspace.\n\
                    2. Search for the word \"error\" in app.log.\n3. Count the lines.\n\n\
                    1. **List all files in the workspace**:";
        let nudge = repeated_reply_nudge(plan, "list_dir");
        assert!(
            nudge.ends_with(
                "Do the next step of your plan now: Search for the word \"error\" in app.log."
            ),
            "{nudge}"
        );
    }
}
