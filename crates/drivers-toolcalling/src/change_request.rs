//! A request for a change answered without one (issue 32). In the 32-turn conversation "In
//! config.ini, change workers from 4 to 6." got, in every run of separated mode, a read of
//! `config.ini` and then "The port in config.ini is 8472.": no claim of a change (which the
//! claim rules ask about), no plan, just another fact, saved as the answer; the file was never
//! changed. Such a reply gets one nudge that says nothing has changed yet; whatever the model
//! replies to it stands (the change may rightly be impossible, or already made).

use std::collections::HashSet;

use agents_core::Tools;
use messages::{Message, Messages, Role, ToolCall};

use crate::latest_results::{execution_messages, text_of, TOOL_ERROR_PREFIX};
use crate::unread_file::names_a_file;
use crate::word_set::WordSet;

/// What the model is told after a reply to a request for a change when no tool has run. It
/// asks for the call alone and names no excuse: told "no tool has run for it ... If it cannot
/// be made, say why", the 1.5B model answered "I cannot make the change because the tool has
/// not been run yet", and the next turn copied that.
pub(crate) const NO_CHANGE_NUDGE: &str = "Nothing has changed yet: the request asks for a \
change. Make it now: reply with only the tool call that makes the change.";

/// What the model is told after a reply to a request for a change when only tools that read
/// have run.
pub(crate) const ONLY_READ_NUDGE: &str = "Nothing has changed yet: the request asks for a \
change, and the tools that ran only read. Make the change now: reply with only the tool call \
that makes it, using what you read above.";

/// What the model is told after a reply to a request to run something ([`asks_to_run`]) when
/// only tools that read have run. Asked "Run wc -w on story.txt and tell me how many words
/// it has.", the 1.5B model read the file and answered 10 (the file has 13 words; a probe of
/// issue 36's task kinds, 2026-12-07): what was to run gives the answer, not the model's
/// count.
pub(crate) const NOT_RUN_NUDGE: &str = "Nothing has run yet: the request asks to run \
something, and the tools that ran only read; reading again will not run it. Run it now with \
the `bash` tool: reply with only a call of `bash` whose `command` is what the request asks to \
run.";

/// [`NOT_RUN_NUDGE`] for a set of tools without `bash`.
pub(crate) const NOT_RUN_NO_BASH_NUDGE: &str = "Nothing has run yet: the request asks to run \
something, and the tools that ran only read. Run it now: reply with only the tool call that \
runs it, then answer from its output.";

/// What the model is told after a plan written, after the tools ran, for a request for a change
/// that no call has made: make it, not answer in plain text. Told "Answer the user's question
/// now, in plain text, using the tool results above", the 1.5B model asked to change a version
/// in two files wrote its plan again ("you need to read the current content of `about.txt`,
/// replace the version number, and then write the updated content back"), which ended the run
/// with neither file changed (issue 36, development task d22, 2026-12-06).
pub(crate) const CHANGE_PLAN_NUDGE: &str = "Your last reply described the change instead of \
making it, and nothing has changed yet. Do not describe tools or calls: make the change now. \
Reply with only the tool call that makes it, using what you read above.";

/// Verbs that open a request for a change, in the imperative.
const CHANGE_VERBS: [&str; 16] = [
    "change", "set", "add", "append", "replace", "rename", "move", "delete", "remove", "create",
    "write", "edit", "update", "insert", "fix", "make",
];

/// Words a request may open with before its verb: "Please add ...", "Can you create ...".
const LEAD_INS: [&str; 6] = [
    "please ",
    "can you ",
    "could you ",
    "would you ",
    "now ",
    "also ",
];

/// How far into a request a leading place ("In config.ini, ") may reach, in bytes.
const MAX_PLACE_BYTES: usize = 80;

/// Words that say a request is about files, when it names none.
static FILE_WORDS: WordSet<'static> = WordSet::new(&["file", "folder", "directory", "line"]);

/// Whether `request` asks for a change to files: it opens, after lead-ins ("Please", "Can
/// you") and a leading place ("In config.ini,"), with a verb of change in the imperative, and
/// names a file or speaks of one ("file", "folder", "directory", "line"): "In config.ini,
/// change workers from 4 to 6.", "Create a file named RELEASE.txt that holds ...", "Add the
/// line ... at the end of notes.md". A question about a change ("Did the build change?",
/// "What changed?") does not open with the verb; "Write a haiku" and "Add 37 and 5" ask for
/// text, not a change.
///
/// ```
/// use drivers_toolcalling::asks_for_a_change;
///
/// assert!(asks_for_a_change("In config.ini, change workers from 4 to 6."));
/// assert!(asks_for_a_change("Please add the line gamma to the end of list.txt."));
/// assert!(!asks_for_a_change("What changed in config.ini?"));
/// assert!(!asks_for_a_change("Write a haiku about rust."));
/// ```
pub fn asks_for_a_change(request: &str) -> bool {
    let (verb, rest) = opening_verb(request);
    CHANGE_VERBS
        .iter()
        .any(|known| known.eq_ignore_ascii_case(verb))
        && !adds_numbers(verb, rest)
        && (names_a_file(request) || FILE_WORDS.in_text(request))
}

/// Whether a request opening with `verb`, then `rest`, asks to add numbers up ("Add up the
/// cost column of expenses.csv", "Add together ..."), not to add something to a file: the
/// 1.5B model that had answered such a request right (50) was told it had not made the change
/// (a probe of issue 36's kinds, d103, 2026-12-07).
fn adds_numbers(verb: &str, rest: &str) -> bool {
    verb.eq_ignore_ascii_case("add")
        && ["up ", "together "]
            .iter()
            .any(|word| strip_prefix_ignoring_ascii_case(rest.trim_start(), word).is_some())
}

/// Verbs that open a request to run something, in the imperative.
const RUN_VERBS: [&str; 2] = ["run", "execute"];

/// Words that say what a request to run something runs, when it names no file.
static RUN_WORDS: WordSet<'static> =
    WordSet::new(&["script", "command", "program", "test", "binary"]);

/// Whether `request` asks to run something: it opens, after lead-ins and a leading place as
/// for [`asks_for_a_change`], with "run" or "execute", and names a file or speaks of a
/// script, command, program, test or binary: "Run the script greet.sh with sh and tell me
/// exactly what it prints.", "Please run the tests." A tool that only reads cannot have run
/// it: the ReAct driver asks about an answer given when every call that succeeded only read
/// (the 1.5B model read `greet.sh` and answered with the script's text, development task
/// d28). "Run" in a question ("How long does the job run?") does not open it.
///
/// ```
/// use drivers_toolcalling::asks_to_run;
///
/// assert!(asks_to_run("Run the script greet.sh with sh and tell me what it prints."));
/// assert!(asks_to_run("Can you execute the tests?"));
/// assert!(!asks_to_run("How long does the nightly job run?"));
/// assert!(!asks_to_run("Run a mile."));
/// ```
pub fn asks_to_run(request: &str) -> bool {
    opens_with_one_of(request, &RUN_VERBS) && (names_a_file(request) || RUN_WORDS.in_text(request))
}

/// Whether the first word of `request` after its lead-ins ("Please", "Can you") and a leading
/// place ("In config.ini,"), the verb of a request in the imperative, is one of `verbs` (any
/// case).
fn opens_with_one_of(request: &str, verbs: &[&str]) -> bool {
    let verb = opening_verb(request).0;
    verbs.iter().any(|known| known.eq_ignore_ascii_case(verb))
}

/// The first word of `request` after its lead-ins and a leading place (see
/// [`opens_with_one_of`]), and what follows it.
fn opening_verb(request: &str) -> (&str, &str) {
    // Case is ignored by comparing ASCII prefixes in place: most requests are let go at their
    // first word, without a lower-cased copy.
    let mut rest = strip_lead_ins(request.trim_start());
    if let Some(place) = strip_prefix_ignoring_ascii_case(rest, "in ")
        .or_else(|| strip_prefix_ignoring_ascii_case(rest, "inside "))
    {
        let reach = &place[..place.floor_char_boundary(MAX_PLACE_BYTES)];
        if let Some(comma) = reach.find(", ") {
            rest = strip_lead_ins(&place[comma + 2..]);
        }
    }
    let end = rest
        .find(|c: char| c.is_whitespace() || matches!(c, ',' | '.' | ':' | ';' | '!' | '?'))
        .unwrap_or(rest.len());
    rest.split_at(end)
}

/// `text` without the lead-ins it opens with (any case).
fn strip_lead_ins(mut text: &str) -> &str {
    while let Some(rest) = LEAD_INS
        .iter()
        .find_map(|lead| strip_prefix_ignoring_ascii_case(text, lead))
    {
        text = rest;
    }
    text
}

/// `text` after `prefix` (ASCII, any case), if it opens with it.
fn strip_prefix_ignoring_ascii_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    text.get(..prefix.len())
        .filter(|start| start.eq_ignore_ascii_case(prefix))
        .map(|_| &text[prefix.len()..])
}

/// Whether `tools` can change something (one of them is not read-only) and every call of the
/// running execution in `conversation` is of a tool that only reads (none at all included)
/// (see [`nothing_changed_by`]).
pub(crate) fn nothing_changed_yet(conversation: &Messages, tools: &Tools) -> bool {
    nothing_changed_by(
        execution_messages(conversation).flat_map(Message::tool_calls),
        tools,
    )
}

/// Whether `tools` can change something and no call of the running execution in
/// `conversation` of a tool that may change something has succeeded (a call whose result is
/// an error, or has none yet, changed nothing): [`nothing_changed_by`] of the calls whose
/// results worked, as the ReAct driver asks it of its executions. Linear in the execution:
/// the ids of the results that worked are gathered first.
pub(crate) fn no_change_succeeded(conversation: &Messages, tools: &Tools) -> bool {
    nothing_changed_by(calls_that_worked(conversation), tools)
}

/// The calls of the running execution in `conversation` whose results worked (a result that
/// is no error), in order. Linear in the execution: the ids of those results are gathered
/// first.
pub(crate) fn calls_that_worked(conversation: &Messages) -> Vec<&ToolCall> {
    let worked: HashSet<&str> = execution_messages(conversation)
        .filter(|message| {
            message.role() == Role::Tool && !text_of(message).starts_with(TOOL_ERROR_PREFIX)
        })
        .filter_map(Message::tool_call_id)
        .collect();
    execution_messages(conversation)
        .flat_map(Message::tool_calls)
        .filter(|call| worked.contains(call.id()))
        .collect()
}

/// Whether `tools` can change something (one of them is not read-only) and every one of
/// `calls` is of a tool that only reads (none at all included): then nothing has changed,
/// and something could have. A call of a tool with effects counts whatever its result: the
/// model tried. With [`asks_for_a_change`], a reply to a request for a change that no call
/// could have made: the drivers ask about it once.
///
/// ```
/// use agents_core::{FunctionTool, ToolEffects, Tools};
/// use drivers_toolcalling::nothing_changed_by;
/// use messages::ToolCall;
/// use serde_json::json;
///
/// let tool = |name: &'static str, effects| {
///     FunctionTool::new(name, "A file tool.", |_: serde_json::Value| async { Ok::<_, String>("ok") })
///         .with_effects(effects)
/// };
/// let tools = Tools::new()
///     .with(tool("read_file", ToolEffects::ReadOnly))
///     .with(tool("edit_file", ToolEffects::SideEffecting));
/// let read = ToolCall::new("call_1", "read_file", json!({"path": "greeting.txt"}));
/// let edit = ToolCall::new("call_2", "edit_file", json!({"path": "greeting.txt"}));
/// assert!(nothing_changed_by([&read], &tools));
/// assert!(!nothing_changed_by([&read, &edit], &tools));
/// ```
pub fn nothing_changed_by<'a>(
    calls: impl IntoIterator<Item = &'a ToolCall>,
    tools: &Tools,
) -> bool {
    tools
        .names()
        .iter()
        .any(|name| !tools.effects(name).is_read_only())
        && calls
            .into_iter()
            .all(|call| tools.effects(call.name()).is_read_only())
}

#[cfg(test)]
mod tests {
    use super::*;
    use agents_core::{FunctionTool, ToolEffects};
    use messages::ToolCall;

    #[test]
    fn imperatives_of_change_are_change_requests() {
        for request in [
            // The 32-turn conversation's change requests.
            "In config.ini, change workers from 4 to 6.",
            "Create a file named RELEASE.txt that holds only the release date from notes.md.",
            "Add the line 'Deploy checklist reviewed.' at the end of notes.md, keeping the rest.",
            "Please rename a.txt to b.txt",
            "Can you delete the second line of list.txt?",
            "In src/app.py, please fix the typo in the greeting.",
            "  SET debug to true in config.yaml",
            "Add upload_dir to config.ini.",
            "Add a line up top in notes.md: Draft.",
        ] {
            assert!(asks_for_a_change(request), "{request}");
        }
    }

    #[test]
    fn questions_about_changes_are_not_change_requests() {
        for request in [
            "What changed in the last release?",
            "Did the build change the port?",
            "How do I add a line to notes.md?",
            "Which port does config.ini set?",
            "In config.ini, which port is set?",
            "Settings: what is the port?",
            "Make-believe is not a verb here?",
            // Text, not a change to files.
            "Write a haiku about Rust.",
            "Write a lot",
            "Add 37 and 5.",
            // Arithmetic over a file, not an addition to it (probe task d103).
            "Add up the cost column of expenses.csv. What is the sum?",
            "Please add together the numbers in a.txt and b.txt.",
            "",
        ] {
            assert!(!asks_for_a_change(request), "{request}");
        }
    }

    #[test]
    fn only_calls_of_tools_that_read_leave_nothing_changed() {
        let tools = crate::test_tools::reader_and_editor();
        let request = Messages::new().appended(Message::user("In config.ini, change workers."));
        assert!(nothing_changed_yet(&request, &tools));
        // An agent whose tools only read cannot make the change: nothing to ask for.
        let readers = Tools::new().with(
            FunctionTool::new("read_file", "Reads.", |_: serde_json::Value| async move {
                Ok::<_, String>(String::new())
            })
            .with_effects(ToolEffects::ReadOnly),
        );
        assert!(!nothing_changed_yet(&request, &readers));
        let call = |id: &str, name: &str| ToolCall::new(id, name, serde_json::json!({}));
        let read = call("c1", "read_file");
        let after_read = request
            .appended(Message::assistant_tool_calls([read.clone()]))
            .appended(Message::tool_result_for(&read, "workers = 4"));
        assert!(nothing_changed_yet(&after_read, &tools));
        let edit = call("c2", "edit_file");
        let after_edit = after_read
            .appended(Message::assistant_tool_calls([edit.clone()]))
            .appended(Message::tool_result_for(
                &edit,
                "Error: old_string not found",
            ));
        assert!(!nothing_changed_yet(&after_edit, &tools));
        // A tool nobody registered may have changed anything.
        let unknown = call("c3", "mystery");
        assert!(!nothing_changed_yet(
            &request.appended(Message::assistant_tool_calls([unknown])),
            &tools
        ));
    }
}
