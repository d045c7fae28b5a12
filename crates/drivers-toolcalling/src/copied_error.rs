//! A reply that copies a tool's error is not an answer (issue 36). Small models paste the
//! error a tool returned ("Error: There is no tool named `rename_file` ...") as their reply,
//! and it used to be saved as the answer. Such a reply gets one nudge; the nudge's text is
//! here, the decision in `reply_nudge`.

use std::collections::HashSet;

use messages::Messages;

use crate::latest_results::{latest_results, TOOL_ERROR_PREFIX};
use crate::plan_reply::{after_send_offs, YOU};
use crate::reply_prefix::compared_prefix;

/// What the model is told after a reply that copies a tool error.
pub(crate) const COPIED_ERROR_NUDGE: &str = "That is the text of a tool's error message, not \
an answer. Answer the user's question now, in plain text and in your own words, using the tool \
results above: if a tool failed, say what went wrong; if you need another tool, call it.";

/// Words in a row a reply must share with a tool error to count as copying it. A shorter
/// error repeated in a reply is relayed, not pasted: "slowpoke: the agent did not answer within
/// 2 seconds" is an answer.
const COPIED_WORDS: usize = 12;

/// The failed tool results among the latest tool results in `conversation` (tool messages that
/// read `Error: ...`, how a failure is shown to the model), each as its words, lowercased.
/// Read backwards from the end to the user message before the last tool results: the
/// running execution's, when a tool ran in it, so the cost is the execution's, not the whole
/// history's.
pub(crate) fn tool_errors(conversation: &Messages) -> Vec<Vec<String>> {
    latest_results(conversation)
        .0
        .iter()
        .filter_map(|text| text.strip_prefix(TOOL_ERROR_PREFIX))
        .map(words)
        .collect()
}

/// Whether `reply` copies one of `errors` (see [`tool_errors`]): it starts with `Error:`, or it
/// repeats [`COPIED_WORDS`] words in a row of an error. Nothing counts when no tool failed.
/// `errors` is asked for only when the reply could be a copy (most answers are too short).
pub(crate) fn copies_a_tool_error<'e>(
    reply: &str,
    errors: impl FnOnce() -> &'e [Vec<String>],
) -> bool {
    // Only the start of a long reply is compared: a copy is at its start.
    let reply = compared_prefix(reply);
    let starts_with_error = reply
        .trim_start()
        .get(..6)
        .is_some_and(|start| start.eq_ignore_ascii_case("error:"));
    if starts_with_error {
        return !errors().is_empty();
    }
    // Counted before any word is copied: most answers are shorter than a copy.
    if word_slices(reply).take(COPIED_WORDS).count() < COPIED_WORDS {
        return false;
    }
    let reply_words = words(reply);
    let errors = errors();
    let windows: HashSet<&[String]> = reply_words.windows(COPIED_WORDS).collect();
    errors.iter().any(|error| {
        error
            .windows(COPIED_WORDS)
            .any(|window| windows.contains(window))
    })
}

/// Whether `reply` copies one of `errors`, the texts of failed tool results (with or without
/// their `Error: ` prefix): it starts with `Error:`, or it repeats twelve words in a row of
/// one. The ReAct driver judges its answer on stop so, from its trace's observations.
///
/// ```
/// use drivers_toolcalling::copies_a_tool_error_of;
///
/// let error = "Error: old_string was not found in `about.txt`; the line most like it is line \
///              1: `Widget 1.4.0`. Copy the text exactly as the file has it";
/// let copy = "Observation: Error: old_string was not found in `about.txt`; the line most \
///             like it is line 1: `Widget 1.4.0`.";
/// assert!(copies_a_tool_error_of(copy, &[error]));
/// assert!(!copies_a_tool_error_of("The version is now 1.5.0 in VERSION only.", &[error]));
/// assert!(!copies_a_tool_error_of(copy, &[]));
/// ```
pub fn copies_a_tool_error_of(reply: &str, errors: &[&str]) -> bool {
    let errors: Vec<Vec<String>> = errors
        .iter()
        .map(|error| words(error.strip_prefix(TOOL_ERROR_PREFIX).unwrap_or(error)))
        .collect();
    copies_a_tool_error(reply, || &errors)
}

/// Phrases of the fix-it texts that the drivers' and tools' errors hold (an unknown tool's
/// list of tools, the shape of a call): an answer that holds one that an error of the
/// execution holds passes that error on, however few of its words it copies.
const FIX_IT_PHRASES: [&str; 7] = [
    "there is no tool named",
    "the tools are:",
    "a call looks like:",
    "arguments schema of",
    "this tool call was not executed",
    "could not be read: ",
    "must be one json object",
];

/// Whether `answer`, asked for on a stop, copies one of `errors` (the texts of the
/// execution's failed calls, with or without their `Error: ` prefix): it starts with
/// `Error`, it repeats twelve words in a row of one ([`copies_a_tool_error_of`]), or it
/// holds a fix-it phrase of one ("There is no tool named `rename_file`. The tools are:
/// ..."). Both drivers judge their answer on stop so, from the errors in view and the
/// execution's calls (the loop's last request on a stop is a page of the results as text).
/// Nothing counts when no call failed.
///
/// ```
/// use drivers_toolcalling::copies_an_error_on_stop;
///
/// let error = "Error: There is no tool named `rename_file`. The tools are: `read_file`, \
///              `write_file`, `move_file`.";
/// assert!(copies_an_error_on_stop("I could not: there is no tool named rename_file.", &[error]));
/// assert!(copies_an_error_on_stop("Error renaming the file.", &[error]));
/// assert!(!copies_an_error_on_stop("notes.txt is now called todo.txt.", &[error]));
/// assert!(!copies_an_error_on_stop("Error renaming the file.", &[]));
/// ```
pub fn copies_an_error_on_stop(answer: &str, errors: &[&str]) -> bool {
    if errors.is_empty() {
        return false;
    }
    let start = answer.trim_start();
    let starts_with_error = start.get(..6).is_some_and(|start| {
        start.eq_ignore_ascii_case("error:") || start.eq_ignore_ascii_case("error ")
    });
    if starts_with_error || copies_a_tool_error_of(answer, errors) {
        return true;
    }
    let answer = compared_prefix(answer).to_lowercase();
    FIX_IT_PHRASES.iter().any(|phrase| {
        answer.contains(phrase)
            && errors
                .iter()
                .any(|error| error.to_lowercase().contains(phrase))
    })
}

/// [`copies_an_error_on_stop`] with the errors among the latest tool results of `input` and
/// `earlier` (the execution's failed calls' texts, `PreviousCalls::errors`).
pub(crate) fn copies_an_error_of_the_execution(
    answer: &str,
    input: &Messages,
    earlier: &[String],
) -> bool {
    let (latest, _) = latest_results(input);
    let errors: Vec<&str> = latest
        .iter()
        .filter(|result| result.starts_with(TOOL_ERROR_PREFIX))
        .chain(earlier)
        .map(String::as_str)
        .collect();
    copies_an_error_on_stop(answer, &errors)
}

/// What the model is told after a reply that passes a tool error's advice on to the person.
pub(crate) const RELAYED_ADVICE_NUDGE: &str = "Your last reply told the user to do what a \
tool's error told you to do. That advice is for you: follow it now with a tool call (for \
example, read the file, then call the tool again with corrected arguments), then answer.";

/// Words after a send-off shorter than this are not advice ("not", "be", "go").
const MIN_VERB_BYTES: usize = 4;

/// Words after a send-off that are not the advice itself ("you need to have", "you should
/// also ...").
const NOT_ADVICE: [&str; 6] = ["have", "also", "then", "just", "still", "make"];

/// Whether `reply` passes the advice of one of `errors` (see [`tool_errors`]) on to the person:
/// it tells them what they "need to" or "should" do ([`SEND_OFF`](crate::plan_reply::SEND_OFF)), and that verb is a word of
/// the error. In issue 32's 32-turn conversation, `edit_file` failed with "old_string was not
/// found in `src/utils.py`; read the file and copy the text exactly", and the 1.5B model
/// answered "To fix this, you need to copy the text exactly from `src/utils.py` ..."; four
/// later turns copied that answer. In the eval (development task d14), after `write_file`
/// refused to replace a file "that you have not read", it answered "you need to read the
/// current content of the file first". Fewer than [`COPIED_WORDS`] words in a row: not a copy,
/// but not an answer either. Nothing counts when no tool failed.
pub(crate) fn relays_error_advice<'e>(
    reply: &str,
    errors: impl FnOnce() -> &'e [Vec<String>],
) -> bool {
    if !YOU.in_text(reply) {
        return false;
    }
    let lower = compared_prefix(reply)
        .to_lowercase()
        .replace('\u{2019}', "'");
    let lower = lower.as_str();
    let verbs: Vec<&str> = after_send_offs(lower)
        .filter_map(|advice| word_slices(advice).next())
        .filter(|verb| verb.len() >= MIN_VERB_BYTES && !NOT_ADVICE.contains(verb))
        .collect();
    if verbs.is_empty() {
        return false;
    }
    errors()
        .iter()
        .any(|error| error.iter().any(|word| verbs.contains(&word.as_str())))
}

fn words(text: &str) -> Vec<String> {
    word_slices(text).map(str::to_lowercase).collect()
}

fn word_slices(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '\''))
        .filter(|word| !word.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use messages::{Message, ToolCall};
    use serde_json::json;

    fn conversation(results: &[&str]) -> Messages {
        let mut messages = Messages::new().appended(Message::user("Rename draft.txt."));
        for (n, result) in results.iter().enumerate() {
            let call = ToolCall::new(format!("call_{n}"), "rename_file", json!({}));
            messages = messages
                .appended(Message::assistant_tool_calls([call.clone()]))
                .appended(Message::tool_result_for(&call, *result));
        }
        messages
    }

    const UNKNOWN: &str = "Error: There is no tool named `rename_file`. The tools are: \
                           `read_file`, `write_file`, `edit_file`, `list_dir`, `bash`.";

    #[test]
    fn a_reply_that_pastes_a_tool_error_copies_it() {
        let errors = tool_errors(&conversation(&[UNKNOWN]));
        // Issue 36's run: the fix-it text saved as the answer.
        assert!(copies_a_tool_error(UNKNOWN, || &errors));
        assert!(copies_a_tool_error(
            "I could not do it. There is no tool named rename_file. The tools are: read_file, \
             write_file, edit_file, list_dir, bash.",
            || &errors
        ));
        let short = tool_errors(&conversation(&["Error: no such file: report.txt"]));
        assert!(copies_a_tool_error(
            "Error: no such file: report.txt",
            || &short
        ));
    }

    #[test]
    fn answers_and_errors_told_in_other_words_are_not_copies() {
        let errors = tool_errors(&conversation(&[UNKNOWN, "Error: no such file: report.txt"]));
        for answer in [
            "There is no tool to rename files, so I could not rename draft.txt.",
            "The file report.txt does not exist.",
            "The port is 8472.",
            // A short error relayed in its own words is an answer.
            "Sorry: no such file: report.txt",
            "they said: turn 1 | Error: the agent did not answer within 2 seconds",
        ] {
            assert!(!copies_a_tool_error(answer, || &errors), "{answer}");
        }
    }

    #[test]
    fn only_the_latest_results_are_read() {
        let earlier = conversation(&[UNKNOWN])
            .appended(Message::assistant("There is no rename tool."))
            .appended(Message::user("What is in notes.md?"));
        let call = ToolCall::new("call_9", "read_file", json!({}));
        let running = earlier
            .appended(Message::assistant_tool_calls([call.clone()]))
            .appended(Message::tool_result_for(
                &call,
                "Error: no such file: notes.md",
            ))
            .appended(Message::user("Answer from what was found."));
        assert_eq!(
            tool_errors(&running),
            [vec!["no", "such", "file", "notes", "md"]],
            "the earlier execution's error is not read; a request after the results \
             (answer on stop) is passed over"
        );
    }

    #[test]
    fn advice_of_a_tool_error_told_to_the_person_is_relayed() {
        let errors = vec![
            words("old_string was not found in `src/utils.py`; read the file and copy the text exactly"),
            words("`list.txt` was not changed: it holds 12 bytes that you have not read in this task"),
        ];
        for reply in [
            // The 32-turn conversation, turn 12, after the failed edit.
            "To fix this, you need to copy the text exactly from `src/utils.py` and try again.",
            // Development task d14, after the refused overwrite.
            "To do this, you need to read the current content of the file first.",
            "You should first read list.txt.",
        ] {
            assert!(relays_error_advice(reply, || &errors), "{reply}");
        }
        for reply in [
            // Advice that is not the error's.
            "You need to restart the server.",
            "You can use port 8472.",
            "You should not worry: the file is fine.",
            "You need to have the file open.",
            // No advice to the person.
            "The edit failed: the text was not found in src/utils.py.",
            "I read the file and copied the text.",
        ] {
            assert!(!relays_error_advice(reply, || &errors), "{reply}");
        }
        // With no failed tool there is nothing to relay.
        assert!(!relays_error_advice(
            "You need to copy the text exactly.",
            || &[]
        ));
    }

    #[test]
    fn nothing_is_a_copy_when_no_tool_failed() {
        let fine = tool_errors(&conversation(&["     1\tError: disk full on /var"]));
        assert!(fine.is_empty(), "a file's line is not a failure");
        assert!(!copies_a_tool_error("Error: disk full on /var", || &fine));
    }

    #[test]
    fn a_huge_reply_is_compared_on_its_start_only() {
        let errors = tool_errors(&conversation(&[UNKNOWN]));
        let reply = format!("{} {}", "word ".repeat(100_000), &UNKNOWN[7..]);
        assert!(!copies_a_tool_error(&reply, || &errors));
    }

    #[test]
    fn the_errors_are_read_only_for_a_reply_that_could_copy_one() {
        let unread = || -> &[Vec<String>] { panic!("the errors were read for a short answer") };
        assert!(!copies_a_tool_error("The tool said ok.", unread));
        let errors = tool_errors(&conversation(&["Error: no such file: report.txt"]));
        assert!(copies_a_tool_error("ERROR: no such file", || &errors));
        assert!(!copies_a_tool_error("Error: but no tool failed", || &[]));
    }
}
