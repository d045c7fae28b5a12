//! An answer that says a file was changed when no call changed it. Asked "Change the version
//! from 1.4.0 to 1.5.0 in both VERSION and about.txt.", the 1.5B model with the ReAct driver
//! edited `VERSION`, read `about.txt`, and answered "The version in about.txt has been changed
//! from 1.4.0 to 1.5.0." (issue 36, development task d22, at deb58ba): `about.txt` still said
//! 1.4.0, and the person would have been told it was done. The checks that a change was made
//! at all (`change_request`) let it pass: one call had changed a file.
//!
//! For a request that asks for a change ([`asks_for_a_change`]), an answer that claims a
//! change ("has been changed", "I updated", "was renamed": the change verbs of
//! `claimed_call`) and names a file the request names as one to change is asked about once
//! when no call of a tool that may change things, among the calls that succeeded, names that
//! file. A file the request names after "from" is where something comes from, not one to
//! change ("Create RELEASE.txt with the date from notes.md"). Linear in the request, the answer
//! and the calls.

use agents_core::Tools;
use messages::ToolCall;

use crate::change_request::asks_for_a_change;
use crate::claimed_call::{claims_a_change, has_claim_word};
use crate::unread_file::{call_names_file, is_path_of, named_files};

/// The files `answer` says were changed that `request` asks to change and that no call of
/// `succeeded` (the execution's calls whose results worked) of a tool that may change things
/// names, each once, in the request's order. Empty when the request asks for no change, the
/// answer claims none, or every file it claims changed was named by such a call. The
/// tool-calling driver asks such an answer to make the change, once, and the ReAct driver a
/// `final_answer`.
///
/// ```
/// use agents_core::{FunctionTool, ToolEffects, Tools};
/// use drivers_toolcalling::files_claimed_changed;
/// use messages::ToolCall;
/// use serde_json::json;
///
/// let tool = |name: &str, effects| {
///     FunctionTool::untyped(name, "", json!({"type": "object"}), |_, _| async {
///         Ok::<_, agents_core::ToolError>("ok".to_owned())
///     })
///     .with_effects(effects)
/// };
/// let tools = Tools::new()
///     .with(tool("read_file", ToolEffects::ReadOnly))
///     .with(tool("edit_file", ToolEffects::SideEffecting));
/// let request = "Change the version from 1.4.0 to 1.5.0 in both app.toml and about.txt.";
/// let edit = ToolCall::new("call_1", "edit_file", json!({"path": "app.toml"}));
/// let read = ToolCall::new("call_2", "read_file", json!({"path": "about.txt"}));
/// let answer = "The version in about.txt has been changed from 1.4.0 to 1.5.0.";
/// assert_eq!(files_claimed_changed(answer, request, [&edit, &read], &tools), ["about.txt"]);
/// let answer = "The version in app.toml has been changed to 1.5.0.";
/// assert!(files_claimed_changed(answer, request, [&edit, &read], &tools).is_empty());
/// ```
pub fn files_claimed_changed<'a>(
    answer: &str,
    request: &str,
    succeeded: impl IntoIterator<Item = &'a ToolCall>,
    tools: &Tools,
) -> Vec<String> {
    // Most answers hold no change verb: let go after one pass over their bytes.
    if !has_claim_word(answer) || !claims_a_change(&answer.to_lowercase()) {
        return Vec::new();
    }
    let mut claimed: Vec<&str> = Vec::new();
    for file in files_to_change(request) {
        let in_answer = named_files(answer).any(|named| is_path_of(named, file));
        if in_answer && !claimed.iter().any(|known| known.eq_ignore_ascii_case(file)) {
            claimed.push(file);
        }
    }
    if claimed.is_empty() || !asks_for_a_change(request) {
        return Vec::new();
    }
    let changing: Vec<&ToolCall> = succeeded
        .into_iter()
        .filter(|call| !tools.effects(call.name()).is_read_only())
        .collect();
    claimed
        .into_iter()
        .filter(|file| !changing.iter().any(|call| call_names_file(call, file)))
        .map(str::to_owned)
        .collect()
}

/// The files `request` names, but those it names after "from": where something is taken
/// from, not what is to change.
fn files_to_change(request: &str) -> impl Iterator<Item = &str> {
    named_files(request).filter(move |file| {
        // `file` is a slice of `request`.
        let at = file.as_ptr() as usize - request.as_ptr() as usize;
        let before = request[..at].trim_end_matches(|c: char| !c.is_alphanumeric());
        let last_word = before
            .rsplit(|c: char| !c.is_alphanumeric())
            .next()
            .unwrap_or("");
        !last_word.eq_ignore_ascii_case("from")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tools::named_tools;
    use proptest::prelude::*;
    use serde_json::json;

    const D22: &str = "Change the version from 1.4.0 to 1.5.0 in both VERSION and about.txt.";

    /// `read_file`, which only reads; `edit_file`, `write_file` and `bash`, which declare
    /// nothing and so may change anything.
    fn file_tools() -> Tools {
        named_tools(&["edit_file", "write_file", "bash"]).with(
            agents_core::FunctionTool::new("read_file", "Reads.", |_: serde_json::Value| async {
                Ok::<_, String>(String::new())
            })
            .with_effects(agents_core::ToolEffects::ReadOnly),
        )
    }

    fn call(id: &str, name: &str, path: &str) -> ToolCall {
        ToolCall::new(id, name, json!({"path": path}))
    }

    #[test]
    fn a_file_said_changed_that_only_a_read_named_is_claimed_unchanged() {
        let edit = call("c1", "edit_file", "VERSION");
        let read = call("c2", "read_file", "about.txt");
        let answer = "The version in about.txt has been changed from 1.4.0 to 1.5.0.";
        assert_eq!(
            files_claimed_changed(answer, D22, [&edit, &read], &file_tools()),
            ["about.txt"]
        );
        // In the first person, in backticks, with a path: the same claim.
        let answer = "I updated `./about.txt` to 1.5.0.";
        assert_eq!(
            files_claimed_changed(answer, D22, [&edit, &read], &file_tools()),
            ["about.txt"]
        );
    }

    #[test]
    fn a_file_a_change_call_named_is_no_false_claim() {
        let edit = call("c1", "edit_file", "about.txt");
        let answer = "The version in about.txt has been changed to 1.5.0.";
        assert!(files_claimed_changed(answer, D22, [&edit], &file_tools()).is_empty());
        // A shell command that names it counts too.
        let sed = ToolCall::new(
            "c2",
            "bash",
            json!({"command": "sed -i 's/1.4.0/1.5.0/' about.txt"}),
        );
        assert!(files_claimed_changed(answer, D22, [&sed], &file_tools()).is_empty());
    }

    #[test]
    fn answers_that_claim_no_change_and_requests_for_none_are_not_judged() {
        let read = call("c1", "read_file", "about.txt");
        for answer in [
            "about.txt says 1.4.0.",
            "I could not change about.txt: it is read-only.",
            "The version is 1.4.0 in about.txt.",
        ] {
            assert!(
                files_claimed_changed(answer, D22, [&read], &file_tools()).is_empty(),
                "{answer}"
            );
        }
        let question = "Has the version in about.txt been changed to 1.5.0?";
        let answer = "No: about.txt has been changed only once, to 1.4.0.";
        assert!(files_claimed_changed(answer, question, [&read], &file_tools()).is_empty());
    }

    #[test]
    fn a_file_named_after_from_is_a_source_not_a_target() {
        let request = "Create RELEASE.txt that holds only the release date from notes.md.";
        let read = call("c1", "read_file", "notes.md");
        let write = call("c2", "write_file", "RELEASE.txt");
        let answer = "I created RELEASE.txt with the date from notes.md.";
        assert!(files_claimed_changed(answer, request, [&read, &write], &file_tools()).is_empty());
        // Without the write, the file to create is claimed and not made.
        assert_eq!(
            files_claimed_changed(answer, request, [&read], &file_tools()),
            ["RELEASE.txt"]
        );
    }

    #[test]
    fn a_change_call_that_failed_changed_nothing() {
        // The caller passes the calls whose results worked: a refused write is left out.
        let read = call("c1", "read_file", "about.txt");
        let answer = "about.txt was updated to 1.5.0.";
        assert_eq!(
            files_claimed_changed(answer, D22, [&read], &file_tools()),
            ["about.txt"]
        );
    }

    proptest! {
        /// Whatever the answer says, a file that a successful change call named is never
        /// claimed unchanged, and the function never panics on odd text.
        #[test]
        fn files_a_change_call_named_are_never_reported(answer in "\\PC{0,120}") {
            let request = "Update a.txt and b.txt, then rename c.md.";
            let calls = [
                call("c1", "write_file", "a.txt"),
                call("c2", "edit_file", "b.txt"),
                call("c3", "edit_file", "c.md"),
            ];
            let text = format!("{answer} a.txt, b.txt and c.md have been updated.");
            prop_assert!(files_claimed_changed(&text, request, &calls, &file_tools()).is_empty());
        }
    }
}
