//! A reply that claims a look-up or a change no tool made: "I called the `search_files` tool
//! ...", "I created a file named RELEASE.txt", "the workers have been changed from 4 to 6",
//! written when no tool has run in the execution. Issue 32's long conversations found it: in
//! separated mode the 1.5B model answered change requests this way, the files were untouched,
//! and the person was told they had been changed. The driver answers such a reply with one
//! nudge (with text-call recovery on: the local models that do this).

use agents_core::{ToolEffects, Tools};

use crate::plan_reply::names_a_tool;
use crate::recover::is_tool_call_text;
use crate::word_set::{at_word_boundaries, contains_word, WordSet};

/// What the model is told after a reply that claims a call or a change no tool made: once
/// per step.
pub(crate) const CLAIM_NUDGE: &str = "Your last reply says that a tool ran or that something \
was changed, but no tool has run for this request. Do not describe calls or changes you have \
not made: call the tool now, or answer without claiming that you did.";

/// What a reply written after tools ran claims that the execution's calls do not bear out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum UnmadeClaim {
    /// A call of these tools of the agent, none of which the execution called.
    Calls(Vec<String>),
    /// A change ("I created", "I have updated") when every tool the execution called only
    /// reads.
    Change,
    /// A change to these files the request asks to change, which no call that may change
    /// things and succeeded named (see `claimed_change`).
    ChangeTo(Vec<String>),
}

/// How far after a call claim ("I called") a tool's name counts as the one claimed: the rest
/// of the sentence, at most this many bytes.
const CLAIM_REACH: usize = 100;

/// What `content`, a reply written after the execution called the tools `called`, claims
/// beyond those calls: a call of another tool of the agent ("I called the `edit_file`
/// function ..." after only `read_file` ran), or a change in the first person ("I updated
/// config.ini") when every tool called only reads. Issue 32's 32-turn conversation: after
/// reading notes.md, the 1.5B model answered a change request with "I called the
/// `edit_file` function ... The result was a file with the updated content", and nothing had
/// changed; an answer that told of a `search_files` call that never ran was copied into five
/// later answers. A reply holding a call written as text is left to text-call recovery. `called` is asked for
/// only when the reply holds a word every claim holds (most replies hold none).
pub(crate) fn claim_beyond_calls<'c>(
    content: &str,
    tools: &Tools,
    called: impl FnOnce() -> Vec<&'c str>,
) -> Option<UnmadeClaim> {
    if !has_claim_word(content) || holds_a_call(content) {
        return None;
    }
    let called = called();
    let lower = content.to_lowercase();
    let claimed: Vec<String> = tools
        .names()
        .into_iter()
        .filter(|name| !called.contains(name))
        .filter(|name| claims_a_call_of(&lower, &name.to_lowercase()))
        .map(str::to_owned)
        .collect();
    if !claimed.is_empty() {
        return Some(UnmadeClaim::Calls(claimed));
    }
    let only_read = called.iter().all(|name| {
        tools
            .get(name)
            .is_some_and(|tool| tool.effects() == ToolEffects::ReadOnly)
    });
    (only_read && claims_a_change_in_first_person(&lower)).then_some(UnmadeClaim::Change)
}

/// Whether `content` holds a word every claim holds (a change verb, or the last word of a
/// call claim): most answers hold none, and are let go after one pass over their bytes,
/// without a lower-cased copy (as the plan check does).
pub(crate) fn has_claim_word(content: &str) -> bool {
    static CLAIMS: WordSet<'static> = WordSet::new(&CLAIM_WORDS);
    CLAIMS.in_text(content)
}

/// The words every claim holds: [`CHANGE_VERBS`] and the last words of [`CALL_CLAIMS`]
/// (a test keeps them so).
const CLAIM_WORDS: [&str; 13] = [
    "created", "added", "changed", "updated", "edited", "deleted", "removed", "renamed",
    "appended", "called", "used", "ran", "calling",
];
/// Whether `lower` names the tool `name` in the sentence after a call claim ("i called the
/// `name` function").
fn claims_a_call_of(lower: &str, name: &str) -> bool {
    CALL_CLAIMS.iter().any(|phrase| {
        lower
            .match_indices(phrase)
            .filter(|(at, _)| at_word_boundaries(lower, *at, phrase.len()))
            .any(|(at, _)| {
                let sentence = claim_sentence(&lower[at + phrase.len()..]);
                sentence.contains(&format!("`{name}`"))
                    || [" function", " tool", " command", "("]
                        .iter()
                        .any(|word| sentence.contains(&format!("{name}{word}")))
            })
    })
}

/// The rest of a claim's sentence in `after` (the text after the claim): up to its first
/// `.`, `!`, `?` or line break, within [`CLAIM_REACH`] bytes (cut at the first character
/// boundary at or past it).
fn claim_sentence(after: &str) -> &str {
    let mut reach = CLAIM_REACH.min(after.len());
    while !after.is_char_boundary(reach) {
        reach += 1;
    }
    after[..reach]
        .split(['.', '!', '?', '\n'])
        .next()
        .unwrap_or_default()
}

fn claims_a_change_in_first_person(lower: &str) -> bool {
    CHANGE_VERBS.iter().any(|verb| {
        ["i ", "i've ", "i have "]
            .iter()
            .any(|lead| contains_word(lower, &format!("{lead}{verb}")))
    })
}

/// Whether `content` holds a call written as text (`{` first: most replies hold none).
fn holds_a_call(content: &str) -> bool {
    content.contains('{') && is_tool_call_text(content)
}

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
/// no tool has run in the execution; a reply that holds a call written as text is left to
/// text-call recovery. Other JSON does not make a claim true: in issue 32's 32-turn
/// conversation (separated mode, 2026-12-05) the 1.5B model answered seven turns with "To
/// read the contents of RELEASE.txt, I called the `read_file` function with the path
/// "RELEASE.txt". The result was a JSON object with ... "result": {"lines": ["2023-04-23"]}}."
/// when no call had run, and each was saved.
pub(crate) fn claims_unmade_call(content: &str, tools: &Tools) -> bool {
    if !has_claim_word(content) || holds_a_call(content) {
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

pub(crate) fn claims_a_change(lower: &str) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tools::named_tools;

    #[test]
    fn the_claim_words_are_the_change_verbs_and_the_last_words_of_the_call_claims() {
        let mut expected: Vec<&str> = CHANGE_VERBS.to_vec();
        for phrase in CALL_CLAIMS {
            let last = phrase.rsplit(' ').next().unwrap();
            if !expected.contains(&last) {
                expected.push(last);
            }
        }
        assert_eq!(CLAIM_WORDS.to_vec(), expected);
    }

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
            // with a made-up result in JSON (separated mode, 2026-12-05, seven turns)
            "To read the contents of RELEASE.txt, I called the `read_file` function with the \
             path \"RELEASE.txt\". The result was a JSON object with the function name \
             \"read_file\" and the arguments {\"path\": \"RELEASE.txt\"}, \"result\": \
             {\"lines\": [\"2023-04-23\"]}}.",
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

    /// `read_file` and `search_files` only read; `edit_file` changes files.
    fn file_tools() -> Tools {
        use agents_core::FunctionTool;
        let tool = |name: &'static str, effects| {
            FunctionTool::new(name, "A file tool.", |_: serde_json::Value| async move {
                Ok::<_, String>(String::new())
            })
            .with_effects(effects)
        };
        Tools::new()
            .with(tool("read_file", ToolEffects::ReadOnly))
            .with(tool("search_files", ToolEffects::ReadOnly))
            .with(tool("edit_file", ToolEffects::SideEffecting))
    }

    #[test]
    fn after_tools_ran_a_claimed_call_of_another_tool_or_an_unmade_change_is_a_claim() {
        let tools = file_tools();
        // The 1.5B model's answers in the 32-turn conversation, after only read_file ran.
        let cases = [
            (
                "To change workers from 4 to 6, I called the `edit_file` function with the \
                 path \"src/utils.py\", the old_string \"workers = 4\", the new_string \
                 \"workers = 6\". The result was a file with the updated content.",
                UnmadeClaim::Calls(vec!["edit_file".to_owned()]),
            ),
            (
                "To find the owner of the release, I called the `search_files` function with \
                 the pattern \"release\" and the path \"notes.md\". The first line was \
                 \"Priya Raman owns the release\".",
                UnmadeClaim::Calls(vec!["search_files".to_owned()]),
            ),
            (
                "I have updated config.ini: workers is now 6.",
                UnmadeClaim::Change,
            ),
        ];
        for (reply, claim) in cases {
            assert_eq!(
                claim_beyond_calls(reply, &tools, || vec!["read_file"]),
                Some(claim),
                "{reply}"
            );
        }
    }

    #[test]
    fn claims_the_calls_bear_out_and_answers_are_not_claims() {
        let tools = file_tools();
        for (reply, called) in [
            (
                "I used the `read_file` function: the port is 8472.",
                &["read_file"][..],
            ),
            (
                "I called the edit_file tool and changed workers to 6.",
                &["read_file", "edit_file"],
            ),
            (
                "I have updated config.ini: workers is now 6.",
                &["edit_file"],
            ),
            // A tool named outside the claim's sentence, or only suggested.
            (
                "I used `read_file`. Next time, `search_files` finds lines faster.",
                &["read_file"],
            ),
            (
                "The port is 8472; search_files would also find it.",
                &["read_file"],
            ),
            // A change told of in the passive is what a file may say ("was added").
            ("Version 2.0 was added to the changelog.", &["read_file"]),
            // JSON is text-call recovery's to judge.
            (
                "I called {\"name\": \"edit_file\", \"arguments\": {}}",
                &["read_file"],
            ),
        ] {
            assert_eq!(
                claim_beyond_calls(reply, &tools, || called.to_vec()),
                None,
                "{reply}"
            );
        }
        // A claim's reach is its sentence, cut at a character boundary past 100 bytes.
        let long = format!("I called {} `edit_file`", "é".repeat(80));
        assert_eq!(
            claim_beyond_calls(&long, &tools, || vec!["read_file"]),
            None
        );
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
    fn a_claims_sentence_ends_at_its_stop_or_its_reach() {
        assert_eq!(
            claim_sentence(" the `edit_file` tool. Then"),
            " the `edit_file` tool"
        );
        assert_eq!(claim_sentence(" it\nand more"), " it");
        // Past the reach, cut at the next character boundary: 'é' is two bytes.
        let long = format!("a{}", "é".repeat(60));
        assert_eq!(claim_sentence(&long).len(), 101);
        assert_eq!(claim_sentence(""), "");
    }

    #[test]
    fn words_are_matched_whole() {
        assert!(contains_word("i ran it", "i ran"));
        assert!(!contains_word("i rang", "i ran"));
        assert!(!contains_word("hi ran", "i ran"));
        assert!(contains_word("so, i ran.", "i ran"));
    }
}
