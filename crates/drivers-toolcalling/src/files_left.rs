//! Work a request still plainly asks for after calls have run: the files it names that no
//! call of the execution has used, or, for a request to change files, changed
//! ([`FilesLeft`]). A reply that stalls with such work left (a plan written again, a copy of
//! the instructions) is told which files, and to go on with only a call.

use agents_core::{ToolEffects, Tools};
use messages::{Message, Messages};

use crate::backticks::in_backticks_and;
use crate::change_request::asks_for_a_change;
use crate::latest_results::{execution_messages, request, text_of};
use crate::unread_file::files_no_call_used;

/// Work the request of the running execution still plainly asks for, when calls have run:
/// the files it names that no call of the execution has used ([`FilesLeft::of`]).
pub(crate) struct FilesLeft {
    /// The files, in the request's order, each once.
    pub(crate) files: Vec<String>,
    /// Whether the request asks to change them (`asks_for_a_change`): then only calls that
    /// are not read-only count, since a file read is not a file changed.
    change: bool,
}

impl FilesLeft {
    /// The files left in `conversation`, whose calls ran with `tools`; none when no call has
    /// run.
    pub(crate) fn of(conversation: &Messages, tools: &Tools) -> Self {
        let mut left = Self {
            files: Vec::new(),
            change: false,
        };
        let Some(request) = request(conversation).map(text_of) else {
            return left;
        };
        let mut calls = execution_messages(conversation)
            .flat_map(Message::tool_calls)
            .peekable();
        if calls.peek().is_none() {
            return left;
        }
        left.change = asks_for_a_change(&request);
        let change = left.change;
        left.files = files_no_call_used(
            &request,
            calls.filter(|call| !change || tools.effects(call.name()) != ToolEffects::ReadOnly),
        );
        left
    }

    /// What the model is told, after `head` (what was wrong with its last reply): go on with
    /// the files, with only a call. Told this, the 1.5B model, which had edited `a.txt` of
    /// two files, replied with only the call that edited `b.txt` (a probe of issue 36's task
    /// kinds, 2026-12-07). `None` when no file is left.
    pub(crate) fn nudge(&self, head: &str) -> Option<String> {
        if self.files.is_empty() {
            return None;
        }
        let (it, has) = if self.files.len() == 1 {
            ("it", "has")
        } else {
            ("them", "have")
        };
        let done = if self.change { "changed" } else { "used" };
        Some(format!(
            "{head} The request also names {}, which no tool call of yours {has} {done} yet: \
             call the tool the request needs for {it} now (reply with only the tool call), or \
             answer if the request is done.",
            in_backticks_and(&self.files)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tools::execution;
    use serde_json::json;

    #[test]
    fn the_files_left_are_those_no_call_used_or_for_a_change_changed() {
        let tools = crate::test_tools::reader_and_editor();
        let read = |path: &str| ("read_file", json!({ "path": path }));
        let edit = |path: &str| ("edit_file", json!({ "path": path }));
        // development task d22: `VERSION` changed, `about.txt` only read
        let change = "Change the version from 1.4.0 to 1.5.0 in both VERSION and about.txt.";
        let left = FilesLeft::of(
            &execution(change, &[edit("VERSION"), read("about.txt")]),
            &tools,
        );
        assert_eq!(left.files, ["about.txt"]);
        assert_eq!(
            left.nudge("Your last reply described the work instead of doing it.")
                .as_deref(),
            Some(
                "Your last reply described the work instead of doing it. The request also \
                 names `about.txt`, which no tool call of yours has changed yet: call the tool \
                 the request needs for it now (reply with only the tool call), or answer if \
                 the request is done."
            )
        );
        // a question: a file read is a file used
        let question = "a.txt and b.txt each hold a number. What is their sum?";
        let left = FilesLeft::of(&execution(question, &[read("a.txt")]), &tools);
        assert_eq!(left.files, ["b.txt"]);
        assert!(left
            .nudge("Head.")
            .unwrap()
            .contains("no tool call of yours has used yet"));
        let both = FilesLeft::of(
            &execution(question, &[read("a.txt"), read("b.txt")]),
            &tools,
        );
        assert_eq!(both.nudge("Head."), None);
        // before any call, nothing is left to go on with
        assert_eq!(
            FilesLeft::of(&execution(question, &[]), &tools).nudge("Head."),
            None
        );
    }
}
