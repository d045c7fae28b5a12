//! A reply that claims a look-up or a change no tool made: "I called the `search_files` tool
//! ...", "I created a file named RELEASE.txt", "the workers have been changed from 4 to 6",
//! written when no tool has run in the execution. Issue 32's long conversations found it: in
//! separated mode the 1.5B model answered change requests this way, the files were untouched,
//! and the person was told they had been changed. The driver answers such a reply with one
//! nudge (with text-call recovery on: the local models that do this).

use agents_core::Tools;

use crate::plan_reply::{contains_ignoring_ascii_case, names_a_tool};

/// What the model is told after a reply that claims a call or a change no tool made: once
/// per step.
pub(crate) const CLAIM_NUDGE: &str = "Your last reply says that a tool ran or that something \
was changed, but no tool has run for this request. Do not describe calls or changes you have \
not made: call the tool now, or answer without claiming that you did.";

/// Past-tense claims of having called a tool; they count when a tool of the agent is named.
const CALL_CLAIMS: [&str; 8] = [
    "i called",
    "i've called",
    "i have called",
    "i used",
    "i've used",
    "i have used",
    "i ran",
    "after calling",
];

/// Verbs of a change to files or data, in the forms a claim takes.
const CHANGE_VERBS: [&str; 9] = [
    "created", "added", "changed", "updated", "edited", "deleted", "removed", "renamed", "appended",
];

/// Whether `content` claims that one of `tools` was called ("I called the `read_file` tool")
/// or that something was changed ("I created", "has been updated"). The caller asks only when
/// no tool has run in the execution; a reply that holds JSON (perhaps a call written as text)
/// is left to text-call recovery.
pub(crate) fn claims_unmade_call(content: &str, tools: &Tools) -> bool {
    // Every claim holds one of these words (a change verb, or the last word of a call claim):
    // most answers hold none, and are let go after one pass over their bytes per word,
    // without a lower-cased copy (as the plan check does).
    let has_claim_word = CHANGE_VERBS
        .iter()
        .copied()
        .chain(
            CALL_CLAIMS
                .iter()
                .filter_map(|phrase| phrase.rsplit(' ').next()),
        )
        .any(|word| contains_ignoring_ascii_case(content, word));
    if content.contains('{') || !has_claim_word {
        return false;
    }
    let lower = content.to_lowercase();
    claims_a_change(&lower) || (claims_a_call(&lower) && names_a_tool(&lower, tools))
}

fn claims_a_call(lower: &str) -> bool {
    CALL_CLAIMS
        .iter()
        .any(|phrase| contains_word(lower, phrase))
}

fn claims_a_change(lower: &str) -> bool {
    CHANGE_VERBS.iter().any(|verb| {
        [
            "i ",
            "i've ",
            "i have ",
            "has been ",
            "have been ",
            "was ",
            "were ",
        ]
        .iter()
        .any(|lead| contains_word(lower, &format!("{lead}{verb}")))
    })
}

/// Whether `phrase` occurs in `text` starting and ending at word boundaries.
fn contains_word(text: &str, phrase: &str) -> bool {
    text.match_indices(phrase).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + phrase.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tools::named_tools;

    fn tools() -> Tools {
        named_tools(&["read_file", "search_files", "edit_file"])
    }

    #[test]
    fn claims_of_calls_and_changes_are_claims() {
        // Replies the 1.5B model gave in the 32-turn conversation without calling anything.
        for reply in [
            "To list the Python files in the `src` directory, I called the `search_files` tool with the pattern `*.py`.",
            "I used the read_file function on config.ini: the port is 8472.",
            "The workers in config.ini have been changed from 4 to 6.",
            "I created a file named RELEASE.txt with the content: 2023-04-15.",
            "I added the line 'Deploy checklist reviewed.' at the end of notes.md.",
            "Done. The file was updated.",
            "I've renamed the file.",
        ] {
            assert!(claims_unmade_call(reply, &tools()), "{reply}");
        }
    }

    #[test]
    fn answers_plans_and_calls_written_as_text_are_not_claims() {
        for reply in [
            "The port configured for the server in config.ini is 8472.",
            "There are 34 lines that contain ERROR.",
            // A plan with a call written as text: text-call recovery runs the call.
            "To find it, I'll use the `read_file` function: {\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}",
            // A call claim that names no tool of the agent, and words that only contain a verb.
            "I called my mother yesterday.",
            "The uncreated world; he was addedly happy.",
        ] {
            assert!(!claims_unmade_call(reply, &tools()), "{reply}");
        }
    }

    #[test]
    fn a_change_in_the_passive_is_a_claim_whoever_made_it() {
        // Broad on purpose: a reply about what "was added" costs one nudge, and the model can
        // answer again unchanged; a change claimed without a call is never let through.
        assert!(claims_unmade_call(
            "Version 2.0 was added to the changelog.",
            &tools()
        ));
    }

    #[test]
    fn words_are_matched_whole() {
        assert!(contains_word("i ran it", "i ran"));
        assert!(!contains_word("i rang", "i ran"));
        assert!(!contains_word("hi ran", "i ran"));
        assert!(contains_word("so, i ran.", "i ran"));
    }
}
