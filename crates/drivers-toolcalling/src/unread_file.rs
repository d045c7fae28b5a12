//! An answer about a file that no tool looked at. Issue 32's long conversations found the
//! first kind: "How many lines of app.log contain ERROR?" answered "There are 10" without
//! opening app.log (it holds 34); in separated mode the 1.5B model looked things up on the
//! first turn and answered from memory from then on, inventing counts, dates and names.
//! Issue 36's eval found the second: asked for the sum of the numbers in `a.txt` and `b.txt`,
//! the model read `a.txt` (17) and answered 18, never opening `b.txt`. The driver answers
//! such a reply with one nudge to look at the file: when no tool has run
//! ([`UNREAD_FILE_NUDGE`]), or when tools ran and no call named a file the request names
//! ([`unread_files_nudge`]).

use messages::{Message, Messages, ToolCall};
use serde_json::Value;

use crate::backticks::in_backticks_and;
use crate::latest_results::{execution_messages, request, text_of};

/// What the model is told after answering a request that names a file when no tool has run:
/// once per step.
pub(crate) const UNREAD_FILE_NUDGE: &str = "No tool has run for this request, and it names a \
file, so your answer was not read from the file. Call a tool to read it now: reply with only \
the tool call. If the request needs no file, repeat your answer.";

/// Extensions of the files people ask an agent about: text, data, configuration and source.
const EXTENSIONS: [&str; 30] = [
    "txt", "md", "csv", "tsv", "log", "ini", "cfg", "conf", "toml", "yaml", "yml", "json", "jsonl",
    "xml", "html", "css", "js", "ts", "py", "rs", "go", "java", "c", "h", "cpp", "rb", "sh", "sql",
    "env", "lock",
];

/// Argument names whose value is a shell command: its words are read one by one for a file
/// (`cat a.txt b.txt`). Any other string argument names a file only as a whole (`"path":
/// "a.txt"`), so a search for the text `a.txt b.txt` reads neither file.
const COMMAND_ARGUMENTS: [&str; 3] = ["command", "cmd", "script"];

/// Whether `request` names a file: a word like `notes.md` or `src/app.py`, whose extension
/// is one of [`EXTENSIONS`] (any case). Numbers ("3.5"), abbreviations ("e.g."), host names
/// ("example.com") and extensions alone ("an .ini file") are not files.
pub(crate) fn names_a_file(request: &str) -> bool {
    named_files(request).next().is_some()
}

/// The files `request` names (see [`names_a_file`]), in order, repeats included.
pub(crate) fn named_files(request: &str) -> impl Iterator<Item = &str> {
    // A file's name holds a dot before the first letter or digit of its extension: a text
    // without one names no file, which one search for dots decides (most replies and
    // requests), without splitting it into words.
    let may_name_one = request.match_indices('.').any(|(at, _)| {
        request
            .as_bytes()
            .get(at + 1)
            .is_some_and(u8::is_ascii_alphanumeric)
    });
    let text = if may_name_one { request } else { "" };
    files_among_words(text)
}

/// The files `text` names, found by splitting it into words (see [`named_files`]).
fn files_among_words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/')))
        .map(|word| word.trim_end_matches('.'))
        .filter(|word| {
            word.rsplit_once('.').is_some_and(|(stem, extension)| {
                stem.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                    && EXTENSIONS
                        .iter()
                        .any(|known| known.eq_ignore_ascii_case(extension))
            })
        })
}

/// The files the request (the last user message of `conversation`) names that no call made
/// since it names (see [`files_no_call_used`]).
pub(crate) fn unread_files(conversation: &Messages) -> Vec<String> {
    let Some(request) = request(conversation).map(text_of) else {
        return Vec::new();
    };
    // Most requests name no file: then no call needs collecting.
    if named_files(&request).next().is_none() {
        return Vec::new();
    }
    files_no_call_used(
        &request,
        execution_messages(conversation).flat_map(Message::tool_calls),
    )
}

/// The files `request` names that none of `calls` names, each once, in the request's order:
/// the files the execution's tools have not looked at. A request names a file with a word
/// like `notes.md` or `src/app.py` whose extension is one people ask an agent about (text,
/// data, configuration, source); a call names it when one of its string arguments is that
/// file's path (`a.txt`, `./a.txt`, `notes/a.txt` for `a.txt`; any case), or, for a shell
/// command, one of its words is. A file the model wrote, moved or failed to read counts as
/// looked at: its call named it.
///
/// An answer to such a request is not from the file: the tool-calling driver asks about it
/// once (with text-call recovery on), and so does the ReAct driver. Issue 36's eval: asked for
/// the sum of the numbers in `a.txt` and `b.txt`, the 1.5B model read `a.txt` (17) and
/// answered 18.
///
/// ```
/// use drivers_toolcalling::files_no_call_used;
/// use messages::ToolCall;
/// use serde_json::json;
///
/// let read_a = ToolCall::new("call_1", "read_file", json!({"path": "./a.txt"}));
/// let request = "a.txt and b.txt each hold a number. What is their sum?";
/// assert_eq!(files_no_call_used(request, [&read_a]), ["b.txt"]);
/// assert!(files_no_call_used("What is 17 + 25?", []).is_empty());
/// ```
pub fn files_no_call_used<'a>(
    request: &str,
    calls: impl IntoIterator<Item = &'a ToolCall>,
) -> Vec<String> {
    let mut files = named_files(request).peekable();
    if files.peek().is_none() {
        return Vec::new();
    }
    let calls: Vec<&ToolCall> = calls.into_iter().collect();
    let mut unread: Vec<String> = Vec::new();
    for file in files {
        if !unread.iter().any(|known| known == file)
            && !calls.iter().any(|call| call_names_file(call, file))
        {
            unread.push(file.to_owned());
        }
    }
    unread
}

/// What the model is told after an answer, given when tools ran, to a request that names
/// `files` that no call looked at.
pub(crate) fn unread_files_nudge(files: &[String]) -> String {
    let named = if files.is_empty() {
        "a file".to_owned()
    } else {
        in_backticks_and(files)
    };
    let (it, them) = if files.len() > 1 {
        ("them", "those files")
    } else {
        ("it", "that file")
    };
    format!(
        "The request names {named}, and no tool call of yours has used {it}, so your answer \
         did not come from {it}. If the request needs {them}, call the tool it needs now (read \
         {it}, or change {it} as asked): reply with only the tool call. If it does not, \
         repeat your answer."
    )
}

/// Whether `call` names `file` (see [`unread_files`]).
pub(crate) fn call_names_file(call: &ToolCall, file: &str) -> bool {
    let Value::Object(arguments) = call.arguments() else {
        return false;
    };
    arguments.iter().any(|(key, value)| match value {
        Value::String(text) if COMMAND_ARGUMENTS.contains(&key.as_str()) => text
            .split(|c: char| c.is_whitespace() || "\"'`;|&<>()".contains(c))
            .any(|word| is_path_of(word, file)),
        Value::String(text) => is_path_of(text, file),
        Value::Array(items) => items
            .iter()
            .any(|item| item.as_str().is_some_and(|text| is_path_of(text, file))),
        _ => false,
    })
}

/// Whether `value` is a path to `file`: the same path, or a longer one ending in `/file`
/// (any case, a leading `./` and surrounding quotes aside).
pub(crate) fn is_path_of(value: &str, file: &str) -> bool {
    let trim = |path: &str| -> String {
        let path = path.trim().trim_matches(|c| matches!(c, '"' | '\'' | '`'));
        path.strip_prefix("./").unwrap_or(path).to_ascii_lowercase()
    };
    let (value, file) = (trim(value), trim(file));
    !file.is_empty()
        && (value == file
            || value
                .strip_suffix(&file)
                .is_some_and(|head| head.ends_with('/')))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tools::execution;
    use serde_json::json;

    #[test]
    fn requests_that_name_a_file_are_recognised() {
        // Requests of issue 32's conversation and issue 36's eval.
        for request in [
            "When is the next release planned, according to notes.md?",
            "How many lines in logs/app.log contain ERROR?",
            "What port does `config.ini` set?",
            "Sum the amount column of sales.CSV.",
            "Is debug mode enabled in settings.yaml (true or false)?",
            "Where is parse_line defined in src/parser.py?",
            "Create a file named RELEASE.txt that holds only the release date.",
        ] {
            assert!(names_a_file(request), "{request}");
        }
    }

    #[test]
    fn a_file_the_request_names_is_unread_until_a_call_names_its_path() {
        // Issue 36, development task d10: `a.txt` read, `b.txt` never opened; the search
        // for the text "a.txt b.txt" read neither.
        let request = "a.txt and b.txt each hold a number. What is their sum?";
        let searched = (
            "search_files",
            json!({"pattern": "a.txt b.txt", "path": null}),
        );
        let read_a = ("read_file", json!({"path": "a.txt"}));
        let unread = unread_files(&execution(request, &[searched.clone(), read_a.clone()]));
        assert_eq!(unread, ["b.txt"]);
        let message = unread_files_nudge(&unread);
        assert!(message.starts_with("The request names `b.txt`, and no tool call"));
        assert!(message.contains("call the tool it needs now (read it, or change it as asked)"));
        assert_eq!(
            unread_files(&execution(request, &[searched])),
            ["a.txt", "b.txt"]
        );
        assert!(
            unread_files_nudge(&["a.txt".into(), "b.txt".into()]).starts_with(
                "The request names `a.txt` and `b.txt`, and no tool call of yours has used them"
            )
        );
        // A path in any argument, a longer path, a list of paths, a shell command's words.
        for calls in [
            vec![read_a.clone(), ("read_file", json!({"path": "./B.TXT"}))],
            vec![
                ("read_file", json!({"path": "data/a.txt"})),
                ("read_file", json!({"path": "data/b.txt"})),
            ],
            vec![("read_files", json!({"paths": ["a.txt", "b.txt"]}))],
            vec![(
                "bash",
                json!({"command": "cat a.txt 'b.txt' | paste -sd+ | bc"}),
            )],
        ] {
            assert!(
                unread_files(&execution(request, &calls)).is_empty(),
                "{calls:?}"
            );
        }
        // A file written, moved or missing counts: its call named it.
        let moved = ("move_file", json!({"from": "draft.txt", "to": "final.txt"}));
        assert!(unread_files(&execution("Rename draft.txt to final.txt.", &[moved])).is_empty());
        // Not a path: a longer name, a word of a non-command argument.
        for arguments in [json!({"path": "ab.txt"}), json!({"pattern": "grep b.txt"})] {
            let calls = [read_a.clone(), ("read_file", arguments)];
            assert_eq!(unread_files(&execution(request, &calls)), ["b.txt"]);
        }
        // Only the latest request counts, and an earlier execution's calls do not.
        assert!(unread_files(&execution("What is 17 times 3?", &[])).is_empty());
        assert_eq!(
            unread_files(&execution("Is config.ini still the same?", &[])),
            ["config.ini"]
        );
        assert!(unread_files(&Messages::new()).is_empty());
    }

    #[test]
    fn other_requests_do_not() {
        for request in [
            "What is 17 times 3?",
            "Remind me: who owns the release?",
            "Which port did you find before?",
            "Is version 3.5 newer than 3.10?",
            "Name a fruit, e.g. an apple.",
            "Open example.com in a browser.",
            "What is an .ini file for?",
            "",
        ] {
            assert!(!names_a_file(request), "{request}");
        }
    }

    proptest::proptest! {
        #[test]
        fn the_search_for_dots_finds_every_file_the_words_name(
            text in "[a-zA-Z0-9 ./_-]{0,12}(txt|md|csv|ini|py|\\.|)[ .]{0,2}",
        ) {
            proptest::prop_assert_eq!(
                named_files(&text).collect::<Vec<_>>(),
                files_among_words(&text).collect::<Vec<_>>()
            );
        }
    }
}
