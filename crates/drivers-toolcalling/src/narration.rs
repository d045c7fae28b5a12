//! A reply that tells which tool was used instead of what it found: "To list the files in the
//! fruits directory, I used the `list_dir` function with the path "fruits". The function
//! returned the names and sizes of the files in the directory." (the 1.5B model on the eval's
//! development half, d6, saved as the answer). It names a tool, says it was used, and gives
//! nothing the tools returned. The driver answers such a reply with one nudge (`reply_nudge`).

use std::collections::HashSet;

use agents_core::Tools;
use messages::Messages;

use crate::latest_results::{latest_results, TOOL_ERROR_PREFIX};
use crate::plan_reply::names_a_tool;
use crate::reply_prefix::compared_prefix;
use crate::word_set::{has_curly_apostrophe, WordSet};

/// What the model is told after a reply that narrates a tool's use: once per step.
pub(crate) const NARRATION_NUDGE: &str = "Your last reply said which tool you used, not what \
it found. Answer the user's question now, in plain text, with the facts from the tool results \
above.";

/// Phrases that tell a tool's use (lower case).
const USE: [&str; 9] = [
    "i used ",
    "i called ",
    "i ran ",
    "i have used ",
    "i've used ",
    "function returned",
    "tool returned",
    "command returned",
    "which returned",
];

/// The phrases of [`USE`], looked for ignoring case.
static USE_WORDS: WordSet<'static> = WordSet::new(&USE);

/// What the tools returned in the running execution, as words: the successful tool results
/// back to the user message before them, less the words of that message (the request), which
/// a reply may repeat without having read anything.
#[derive(Debug, Default)]
pub(crate) struct ResultWords {
    words: HashSet<String>,
    /// Whether a tool succeeded at all (a run of failures gave nothing to tell).
    any: bool,
}

impl ResultWords {
    /// The words of the latest successful tool results of `conversation` not in the request.
    pub(crate) fn of(conversation: &Messages) -> Self {
        let (results, request) = latest_results(conversation);
        let found = results
            .iter()
            .filter(|text| !text.starts_with(TOOL_ERROR_PREFIX));
        let mut words: HashSet<String> = found
            .clone()
            .flat_map(|text| telling_words(compared_prefix(text)))
            .collect();
        for word in telling_words(request.as_deref().unwrap_or_default()) {
            words.remove(&word);
        }
        Self {
            words,
            any: found.count() > 0,
        }
    }
}

/// Whether `content` narrates the use of one of `tools` ("I used the `list_dir` function")
/// and holds no word the tools returned (see [`ResultWords`]): it says a tool ran, not what
/// it found. A reply that tells the use and gives a fact ("I used `read_file`: the port is
/// 8472") is an answer. `results` is asked for only when the reply tells a tool's use.
pub(crate) fn narrates_without_results<'r>(
    content: &str,
    tools: &Tools,
    results: impl FnOnce() -> &'r ResultWords,
) -> bool {
    let content = compared_prefix(content);
    // Most replies tell no use: decided without a lower-cased copy (only a typographic
    // apostrophe, as in "I’ve used", needs the copy to be seen).
    if !has_curly_apostrophe(content) && !USE_WORDS.in_text(content) {
        return false;
    }
    let lower = content.to_lowercase().replace('\u{2019}', "'");
    if !USE.iter().any(|phrase| lower.contains(phrase)) || !names_a_tool(&lower, tools) {
        return false;
    }
    let results = results();
    if !results.any {
        return false;
    }
    let gives_a_fact = telling_words(&lower).any(|word| results.words.contains(&word));
    !gives_a_fact
}

/// The words of `text` that can carry a fact, lowercased: numbers, and words of three or more
/// letters (`_`, `-` and `'` kept inside a word).
fn telling_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-' || c == '\''))
        .filter(|word| word.chars().count() >= 3 || word.chars().all(|c| c.is_ascii_digit()))
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tools::named_tools;
    use messages::{Message, ToolCall};

    fn results(request: &str, result: &str) -> ResultWords {
        let call = ToolCall::new("call_1", "list_dir", serde_json::json!({"path": "fruits"}));
        ResultWords::of(
            &Messages::new()
                .appended(Message::user(request))
                .appended(Message::assistant_tool_calls([call.clone()]))
                .appended(Message::tool_result_for(&call, result)),
        )
    }

    const LISTING: &str = "[file] apple.txt (4 bytes)\n[file] banana.md (7 bytes)";

    #[test]
    fn telling_which_tool_ran_without_its_result_is_narration() {
        let tools = named_tools(&["list_dir", "read_file"]);
        let found = results("List the files in the fruits directory.", LISTING);
        for reply in [
            // The 1.5B model's reply on the development half (d6).
            "To list the files in the fruits directory, I used the `list_dir` function with \
             the path \"fruits\". The function returned the names and sizes of the files in \
             the directory.",
            "I called the list_dir tool on fruits, which returned the listing.",
        ] {
            assert!(
                narrates_without_results(reply, &tools, || &found),
                "{reply}"
            );
        }
    }

    #[test]
    fn a_reply_with_something_the_tools_returned_is_an_answer() {
        let tools = named_tools(&["list_dir", "read_file"]);
        let found = results("List the files in the fruits directory.", LISTING);
        for reply in [
            "I used the `list_dir` function: the files are apple.txt and banana.md.",
            "The fruits directory holds apple.txt and banana.md.",
            "I used the `list_dir` function; it holds 2 files, one of 4 bytes.",
            // No tool named, no use told: not this rule's (a plan or an answer).
            "The function returned the names of the files.",
            "",
        ] {
            assert!(
                !narrates_without_results(reply, &tools, || &found),
                "{reply}"
            );
        }
        // Nothing returned (only errors): nothing to give, nothing judged.
        let failed = results("List the files.", "Error: no such directory");
        let narration = "I used the `list_dir` function, which returned an error.";
        assert!(!narrates_without_results(narration, &tools, || &failed));
    }

    #[test]
    fn words_of_the_request_do_not_count_as_found() {
        let tools = named_tools(&["search_files"]);
        // d1: the search returned the file name the request already gave.
        let found = results("Which port is configured in config.ini?", "config.ini");
        let reply = "I used the `search_files` tool to find config.ini.";
        assert!(narrates_without_results(reply, &tools, || &found));
    }

    #[test]
    fn a_typographic_apostrophe_is_read_and_a_reply_telling_no_use_reads_no_results() {
        let tools = named_tools(&["list_dir", "read_file"]);
        let found = results("List the files in the fruits directory.", LISTING);
        assert!(narrates_without_results(
            "I\u{2019}ve used the list_dir tool, which returned the listing.",
            &tools,
            || &found
        ));
        // The results are read only for a reply that tells a tool's use.
        let unread = || -> &ResultWords { panic!("the results were read for a plain answer") };
        assert!(!narrates_without_results(
            "The tool said ok.",
            &tools,
            unread
        ));
    }
}
