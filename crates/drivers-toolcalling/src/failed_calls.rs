//! An answer given after every call of the execution failed, that says nothing of a failure:
//! no result told the model anything of what was asked, so what the answer states was made
//! up (issue 36). The 1.5B model, asked for the sum of the numbers in `a.txt` and `b.txt`,
//! read `data/a.txt` and `data/b.txt`, got "no such file or directory; did you mean
//! `a.txt`?" twice, and answered with the two files' contents and their sum, all invented
//! (development task d10). Such a reply to a request that names a file is asked about once,
//! with the paths the errors suggested; given again (the model did, d10), it is not an answer,
//! and the run answers on stop from what the calls returned. So is one to a request that
//! speaks of a file an error suggested ("the config file", told "did you mean
//! `config.dev.yaml`?", d26). (A request that names no file may need no tool: "What is the
//! capital of France?" is rightly answered after a search that failed.)

use messages::{Message, Messages, Role};

use crate::backticks::in_backticks;
use crate::latest_results::{
    every_result, execution_messages, request, text_of, without_last, TOOL_ERROR_PREFIX,
};
use crate::unread_file::{call_names_file, named_files};
use crate::word_set::WordSet;

/// Words of a reply that speaks of a failure or of something missing ("does not exist",
/// "I couldn't read", "no such file", "unable to", ...), or says the tools did not help.
static FAILURE_WORDS: WordSet<'static> = WordSet::new(&[
    "not ",
    "n't",
    "cannot",
    "unable",
    "no such",
    "missing",
    "fail",
    "error",
    "exist",
    "sorry",
    "apolog",
    "unfortunately",
    "no file",
    "none",
    "without",
]);

/// What the model is told after such a reply (the errors' suggestions follow it).
pub(crate) const FAILED_CALLS_NUDGE: &str = "Every tool call for this request failed (the \
errors are above), so no result tells you anything of what was asked, yet your last reply \
answers as if a call had worked. Do not state what a file holds or what a tool returned \
unless a result above shows it. Call the tool again, corrected as its error says, or tell \
the user what could not be done.";

/// Whether the running execution has tool results and every one of them is an error.
pub(crate) fn every_call_failed(conversation: &Messages) -> bool {
    every_result(execution_messages(conversation), true)
}

/// Whether the running execution made calls that name a file `request` names, and every
/// one of them failed: whatever else worked (a listing), no result showed what those files
/// hold. Asked for the sum of the numbers in `a.txt` and `b.txt`, the 1.5B model listed a
/// folder (which worked), read `data/a.txt` and `data/b.txt` (both failed: "did you mean
/// `a.txt`?"), and answered with contents and a sum it made up (development task d10,
/// 2026-12-07).
pub(crate) fn every_call_on_a_requested_file_failed(
    conversation: &Messages,
    request: &str,
) -> bool {
    let files: Vec<&str> = named_files(request).collect();
    if files.is_empty() {
        return false;
    }
    let mut failed: Vec<&str> = Vec::new();
    let mut any = false;
    for message in execution_messages(conversation) {
        if message.role() == Role::Tool {
            if text_of(message).starts_with(TOOL_ERROR_PREFIX) {
                failed.extend(message.tool_call_id());
            }
            continue;
        }
        for call in message.tool_calls() {
            if files.iter().any(|file| call_names_file(call, file)) {
                if !failed.contains(&call.id()) {
                    return false;
                }
                any = true;
            }
        }
    }
    any
}

/// Whether a tool result of the running execution is an error.
pub(crate) fn some_call_failed(conversation: &Messages) -> bool {
    execution_messages(conversation).any(|message| {
        message.role() == Role::Tool && text_of(message).starts_with(TOOL_ERROR_PREFIX)
    })
}

/// Whether `reply` answers as if a call had worked: it speaks of no failure, of nothing
/// missing, and asks nothing.
pub(crate) fn ignores_the_failures(reply: &str) -> bool {
    !reply.trim().is_empty() && !reply.contains('?') && !FAILURE_WORDS.in_text(reply)
}

/// What the model is told after such a reply when some calls worked but every call on the
/// files the request names failed ([`every_call_on_a_requested_file_failed`]).
pub(crate) const FAILED_FILE_CALLS_NUDGE: &str = "Every tool call on the files this request \
names failed (the errors are above), so no result shows what they hold, yet your last reply \
answers as if a call had worked. Do not state what a file holds or what a tool returned \
unless a result above shows it. Call the tool again, corrected as its error says, or tell the \
user what could not be done.";

/// The nudge for such a reply in `conversation`: [`FAILED_CALLS_NUDGE`] (or, when some call
/// worked, [`FAILED_FILE_CALLS_NUDGE`]), then the paths the execution's errors suggested
/// ("did you mean `a.txt`?"), in order, each once.
pub(crate) fn failed_calls_nudge(conversation: &Messages) -> String {
    let head = if every_call_failed(conversation) {
        FAILED_CALLS_NUDGE
    } else {
        FAILED_FILE_CALLS_NUDGE
    };
    let suggested = error_paths(conversation, false);
    if suggested.is_empty() {
        return head.to_owned();
    }
    format!(
        "{head} The errors suggest these paths: {}.",
        in_backticks(&suggested, ", ")
    )
}

/// Whether an error of the running execution suggested a file the request speaks of: a
/// path ("did you mean `config.dev.yaml`?") whose name, its extension left out, holds a
/// word of `request` of three letters or more ("the config file"). Asked "What port does
/// the config file set?", the 1.5B model searched `config`, was told of two such files, and
/// answered 8080, a port neither holds (development task d26). A suggestion the request
/// does not speak of ("What is the capital of France?" after a read of a file that is not
/// there) says nothing of what the request needs.
pub(crate) fn errors_suggest_a_requested_file(conversation: &Messages, request: &str) -> bool {
    let request = request.to_lowercase();
    let words: Vec<&str> = request
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| word.chars().count() >= 3)
        .collect();
    execution_messages(conversation)
        .filter(|message| message.role() == Role::Tool)
        .any(|message| {
            suggestions(&text_of(message)).any(|path| {
                let name = path.rsplit('/').next().unwrap_or(path).to_lowercase();
                let stem = name
                    .rsplit_once('.')
                    .map_or(name.as_str(), |(stem, _)| stem);
                stem.split(|c: char| !c.is_alphanumeric())
                    .any(|part| words.contains(&part))
            })
        })
}

/// The files `request` names that an error of the running execution in `conversation` shows
/// are there, as the error gives their paths (in order, each once): a "did you mean" that
/// names one, or what a folder holds ("the workspace's top folder holds `jan.txt`"). Asked
/// for the visits in `jan.txt` and `feb.txt`, the 1.5B model searched a folder `workspace`,
/// was told "the workspace's top folder holds `feb.txt`, `jan.txt`", and answered that the
/// top folder does not hold them (a probe of issue 36's task kinds, 2026-12-07); asked for
/// the timeout in `server.toml`, it searched `config` and answered that the file does not
/// exist. Such a reply gives up on a file the error says is there.
pub(crate) fn requested_files_shown(conversation: &Messages, request: &str) -> Vec<String> {
    let named: Vec<String> = named_files(request).map(str::to_lowercase).collect();
    if named.is_empty() {
        return Vec::new();
    }
    error_paths(conversation, true)
        .into_iter()
        .filter(|path| {
            let lower = path.to_lowercase();
            named.iter().any(|file| {
                lower == *file
                    || lower
                        .strip_suffix(file.as_str())
                        .is_some_and(|folder| folder.ends_with('/'))
            })
        })
        .collect()
}

/// Whether `reply`, asked for on a stop with `input` (the conversation, then the instruction
/// to answer), gives up on a file an error showed is there: every call of the execution
/// failed, the reply speaks of the failure, and [`requested_files_shown`] finds a file. The
/// 1.5B model, told "cannot list `data`: no such directory; the workspace's top folder holds
/// `a.txt`, `b.txt`", answered on stop "The files `a.txt` and `b.txt` do not exist in the
/// workspace." (development task d10, 2026-12-07).
pub(crate) fn gives_up_on_a_shown_file_on_stop(input: &Messages, reply: &str) -> bool {
    if ignores_the_failures(reply) {
        return false;
    }
    let before = without_last(input);
    let Some(request) = request(&before).map(text_of) else {
        return false;
    };
    every_call_failed(&before) && !requested_files_shown(&before, &request).is_empty()
}

/// Whether `reply`, asked for on a stop with `input` (the conversation, then the instruction
/// to answer), answers as if a call had worked when every call of the execution failed: it
/// owns no failure ([`ignores_the_failures`]), for a request that names a file. Asked to
/// remove the last line of `queue.txt`, the 1.5B model's calls were all refused (an append of
/// a line break; an edit written inside a plan, which does not run), and its answer on stop
/// was "The last line of queue.txt was removed." (a probe of issue 36's task kinds,
/// 2026-12-07): nothing had changed. The step asks about such a reply once; on a stop the
/// page of results is asked next, then the notice says what failed.
pub(crate) fn ignores_failures_on_stop(input: &Messages, reply: &str) -> bool {
    if !ignores_the_failures(reply) {
        return false;
    }
    let before = without_last(input);
    let names_a_file = request(&before)
        .map(text_of)
        .is_some_and(|request| named_files(&request).next().is_some());
    names_a_file && every_call_failed(&before)
}

/// What the model is told after a reply that gives up on the files in `shown` (see
/// [`requested_files_shown`]): with `read_file` among the tools and a request that asks for
/// no change, to call it with each path (a tool and a path, not a call's JSON: a call copied
/// from a message the model was sent is never run); otherwise to call the tool again with
/// the path the error shows.
pub(crate) fn shown_files_nudge(shown: &[String], read_file: bool) -> String {
    let (files, are, them) = match shown {
        [_] => ("file", "is", "it"),
        _ => ("files", "are", "them"),
    };
    let head = format!(
        "Your last reply says this could not be done, but an error above shows that the {files} \
         {} {are} in the workspace.",
        in_backticks(shown, ", ")
    );
    if !read_file {
        return format!("{head} Call the tool again with the path the error shows, then answer.");
    }
    let paths: Vec<String> = shown.iter().map(|path| format!("`{path}`")).collect();
    format!(
        "{head} Read {them} now: call `read_file` with the path {}, then answer from what {} \
         hold{}.",
        paths.join(", then with the path "),
        if shown.len() == 1 { "it" } else { "they" },
        if shown.len() == 1 { "s" } else { "" },
    )
}

/// The paths the running execution's tool results name, in the order they came, each
/// once: what an error's "did you mean" suggests, and with `held` what an error says a
/// folder holds.
fn error_paths(conversation: &Messages, held: bool) -> Vec<String> {
    let mut results: Vec<&Message> = execution_messages(conversation)
        .filter(|message| message.role() == Role::Tool)
        .collect();
    // execution_messages reads from the latest back
    results.reverse();
    let mut paths: Vec<String> = Vec::new();
    for message in results {
        let text = text_of(message);
        let held_paths = held.then(|| held_paths(&text)).into_iter().flatten();
        for path in suggestions(&text).map(str::to_owned).chain(held_paths) {
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
    }
    paths
}

/// The paths of what an error says a folder holds: "the workspace's top folder holds
/// `a.txt`, `docs/` and 3 more" gives `a.txt` and `docs/`; "`docs` holds `guide.md`" gives
/// `docs/guide.md`.
fn held_paths(error: &str) -> impl Iterator<Item = String> + '_ {
    let found = error.rsplit_once(" holds ").map(|(before, names)| {
        let folder = before
            .strip_suffix('`')
            .and_then(|inside| inside.rsplit_once('`'))
            .map(|(_, folder)| folder)
            .filter(|folder| !folder.is_empty() && *folder != ".");
        (folder, names)
    });
    found.into_iter().flat_map(|(folder, names)| {
        names
            .split(", ")
            .filter_map(|name| {
                let name = name.split(" and ").next()?.trim_end_matches(['.', ';']);
                name.strip_prefix('`')?.strip_suffix('`')
            })
            .filter(|name| !name.is_empty())
            .map(move |name| match folder {
                Some(folder) => format!("{folder}/{name}"),
                None => name.to_owned(),
            })
    })
}

/// The paths an error's "did you mean `x`, `y`?" names.
fn suggestions(error: &str) -> impl Iterator<Item = &str> {
    error
        .split_once("did you mean ")
        .and_then(|(_, rest)| rest.split_once('?'))
        .map(|(names, _)| names)
        .into_iter()
        .flat_map(|names| names.split(", "))
        .filter_map(|name| name.strip_prefix('`')?.strip_suffix('`'))
        .filter(|name| !name.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use messages::{Message, ToolCall};
    use serde_json::json;

    fn execution(results: &[&str]) -> Messages {
        let old = ToolCall::new("old", "read_file", json!({"path": "x"}));
        let mut messages = Messages::new()
            .appended(Message::user("Earlier request"))
            .appended(Message::assistant_tool_calls([old.clone()]))
            .appended(Message::tool_result_for(
                &old,
                "Error: an earlier execution's error",
            ))
            .appended(Message::assistant("Earlier answer"))
            .appended(Message::user(
                "a.txt and b.txt each hold a number. What is their sum?",
            ));
        for (n, result) in results.iter().enumerate() {
            let call = ToolCall::new(format!("call_{n}"), "read_file", json!({"path": "a"}));
            messages = messages
                .appended(Message::assistant_tool_calls([call.clone()]))
                .appended(Message::tool_result_for(&call, *result));
        }
        messages
    }

    #[test]
    fn a_suggested_file_counts_when_the_request_speaks_of_it() {
        let conversation = Messages::new()
            .appended(Message::user("What port does the config file set?"))
            .appended(Message::tool_result_for(
                &ToolCall::new("c1", "search_files", json!({"pattern": "port"})),
                "Error: cannot search `config`: no such file or directory; did you mean \
                 `config.dev.yaml`, `config.prod.yaml`?",
            ));
        let asks = |request| errors_suggest_a_requested_file(&conversation, request);
        assert!(asks("What port does the config file set?"));
        assert!(asks("Which PORT is in the CONFIG?"));
        // a request that does not speak of the suggested files, or only of their extension
        assert!(!asks("What is the capital of France?"));
        assert!(!asks("Summarize the yaml"));
        // no suggestion at all
        let plain = execution(&["Error: cannot read `data/a.txt`: no such file or directory"]);
        assert!(!errors_suggest_a_requested_file(
            &plain,
            "What is in a.txt?"
        ));
    }

    #[test]
    fn only_an_execution_whose_every_result_is_an_error_failed() {
        let failed = execution(&[
            "Error: cannot read `data/a.txt`: no such file or directory; did you mean `a.txt`?",
            "Error: cannot read `data/b.txt`: no such file or directory; did you mean `b.txt`?",
        ]);
        assert!(every_call_failed(&failed));
        let one_worked = execution(&["Error: cannot list `data`: no such directory", "17"]);
        assert!(!every_call_failed(&one_worked));
        // no call yet: nothing failed (the earlier execution's error does not count)
        assert!(!every_call_failed(&execution(&[])));
    }

    #[test]
    fn an_answer_that_owns_the_failure_or_asks_is_no_invention() {
        // development task d10's answer, every call having failed
        assert!(ignores_the_failures(
            "The contents of `a.txt` are:\n```\n10\n20\n30\n```\nThe contents of `b.txt` \
             are:\n```\n40\n50\n60\n```\nThe sum of the numbers in `a.txt` and `b.txt` is:\n\
             ```\n100\n```"
        ));
        assert!(ignores_the_failures("The sum is 42."));
        for owned in [
            "The file report.txt does not exist.",
            "I couldn't read a.txt.",
            "I cannot find the files a.txt and b.txt in the workspace.",
            "There is no such file.",
            "Unfortunately the files are missing.",
            "Where are the files a.txt and b.txt?",
            "I was unable to read them: the read failed.",
            "",
        ] {
            assert!(!ignores_the_failures(owned), "{owned}");
        }
    }

    #[test]
    fn the_requested_files_an_error_shows_are_found_in_a_suggestion_or_a_folder_it_lists() {
        let shown =
            |results: &[&str], request: &str| requested_files_shown(&execution(results), request);
        let top = "Error: cannot search `config`: no such file or directory; the workspace's \
                   top folder holds `docs/`, `server.toml`";
        assert_eq!(
            shown(&[top], "How many seconds is the timeout in server.toml?"),
            ["server.toml"]
        );
        let below = "Error: cannot read `guide.md`: no such file or directory; `docs` holds \
                     `Guide.md`, `faq.md` and 3 more";
        assert_eq!(
            shown(&[below], "What does guide.md say?"),
            ["docs/Guide.md"]
        );
        let meant = "Error: cannot read `data/a.txt`: no such file or directory; did you mean \
                     `a.txt`?";
        assert_eq!(shown(&[meant, meant], "What is in a.txt?"), ["a.txt"]);
        // not a file the request names, or a request that names none
        assert!(shown(&[top], "What does report.txt say?").is_empty());
        assert!(shown(&[top], "What is the timeout?").is_empty());
        // the earlier execution's error is not this one's
        assert!(shown(&[], "What is in x?").is_empty());
    }

    #[test]
    fn every_call_on_a_requested_file_failing_counts_when_a_listing_worked() {
        // development task d10 at 6841cbb: the listing worked, both reads failed
        let request = "a.txt and b.txt each hold a number. What is their sum?";
        let step = |conversation: Messages, id: &str, name: &str, path: &str, result: &str| {
            let call = ToolCall::new(id, name, json!({ "path": path }));
            conversation
                .appended(Message::assistant_tool_calls([call.clone()]))
                .appended(Message::tool_result_for(&call, result))
        };
        let listed = step(
            Messages::new().appended(Message::user(request)),
            "c1",
            "list_dir",
            "data",
            "(no directory is named `data`; listed the workspace's top folder instead)",
        );
        let missed = step(
            step(
                listed.clone(),
                "c2",
                "read_file",
                "data/a.txt",
                "Error: cannot read `data/a.txt`: no such file or directory; did you mean `a.txt`?",
            ),
            "c3",
            "read_file",
            "data/b.txt",
            "Error: cannot read `data/b.txt`: no such file or directory; did you mean `b.txt`?",
        );
        assert!(!every_call_failed(&missed));
        assert!(every_call_on_a_requested_file_failed(&missed, request));
        assert!(failed_calls_nudge(&missed)
            .starts_with("Every tool call on the files this request names failed"));
        // one read worked; no read of the files at all; a request that names none
        let one_read = step(missed.clone(), "c4", "read_file", "a.txt", "17");
        assert!(!every_call_on_a_requested_file_failed(&one_read, request));
        assert!(!every_call_on_a_requested_file_failed(&listed, request));
        assert!(!every_call_on_a_requested_file_failed(
            &missed,
            "What is the sum?"
        ));
    }

    #[test]
    fn an_answer_on_stop_that_owns_no_failure_after_every_call_failed_is_found() {
        let asked = |results: &[&str]| {
            execution(results).appended(Message::user("You have to stop now. My request was: ..."))
        };
        let failed = [
            "Error: invalid arguments for `append_file`: content holds only line \
                       breaks or spaces: nothing was added.",
        ];
        let claimed = "The last line of a.txt was removed.";
        assert!(ignores_failures_on_stop(&asked(&failed), claimed));
        // an answer that says what failed, or asks; a call that worked
        for reply in [
            "I could not remove it: the call failed.",
            "Which line do you mean?",
        ] {
            assert!(!ignores_failures_on_stop(&asked(&failed), reply), "{reply}");
        }
        assert!(!ignores_failures_on_stop(
            &asked(&[failed[0], "17"]),
            claimed
        ));
        // no call at all is another check's (nothing failed)
        assert!(!ignores_failures_on_stop(&asked(&[]), claimed));
    }

    #[test]
    fn an_answer_on_stop_that_gives_up_on_a_shown_file_is_found() {
        // development task d10: the files are at the top, and the error says so
        let listed = "Error: cannot list `data`: no such directory; the workspace's top folder \
                      holds `a.txt`, `b.txt`";
        let asked = |results: &[&str]| {
            execution(results).appended(Message::user("You have to stop now. My request was: ..."))
        };
        let gave_up = "The files `a.txt` and `b.txt` do not exist in the workspace.";
        assert!(gives_up_on_a_shown_file_on_stop(&asked(&[listed]), gave_up));
        // an answer that owns no failure is another check's; a call that worked: no give-up
        assert!(!gives_up_on_a_shown_file_on_stop(
            &asked(&[listed]),
            "The sum is 42."
        ));
        assert!(!gives_up_on_a_shown_file_on_stop(
            &asked(&[listed, "17"]),
            gave_up
        ));
        // an error that shows other files
        assert!(!gives_up_on_a_shown_file_on_stop(
            &asked(&[
                "Error: cannot list `data`: no such directory; the workspace's top \
                      folder holds `c.txt`"
            ]),
            gave_up
        ));
    }

    #[test]
    fn the_nudge_for_a_shown_file_names_its_paths() {
        assert_eq!(
            shown_files_nudge(&["server.toml".to_owned()], true),
            "Your last reply says this could not be done, but an error above shows that the \
             file `server.toml` is in the workspace. Read it now: call `read_file` with the path \
             `server.toml`, then answer from what it holds."
        );
        assert_eq!(
            shown_files_nudge(&["server.toml".to_owned()], false),
            "Your last reply says this could not be done, but an error above shows that the \
             file `server.toml` is in the workspace. Call the tool again with the path the error \
             shows, then answer."
        );
    }

    #[test]
    fn the_nudge_names_the_paths_the_errors_suggested_once_each_in_order() {
        let failed = execution(&[
            "Error: cannot list `data`: no such directory",
            "Error: cannot read `data/a.txt`: no such file or directory; did you mean `a.txt`?",
            "Error: cannot read `data/b.txt`: no such file or directory; did you mean `b.txt`, `sub/b.txt`?",
            "Error: cannot read `data/a.txt`: no such file or directory; did you mean `a.txt`?",
        ]);
        assert_eq!(
            failed_calls_nudge(&failed),
            format!(
                "{FAILED_CALLS_NUDGE} The errors suggest these paths: `a.txt`, `b.txt`, `sub/b.txt`."
            )
        );
        let without = execution(&["Error: cannot list `data`: no such directory"]);
        assert_eq!(failed_calls_nudge(&without), FAILED_CALLS_NUDGE);
    }
}
