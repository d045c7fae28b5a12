//! An answer that names the file holding some words when no tool result holds them. Asked
//! "Which file in the notes directory mentions a zeppelin?", the 1.5B model listed the
//! directory (three names and sizes), then answered "The file in the notes directory that
//! mentions "zeppelin" is `alpha.txt`." (issue 36, development task d3, 2026-12-06): no file
//! was opened or searched, so the answer is a guess (`bravo.txt` holds the word). The
//! listing shows names, not contents; an answer read from a file would have the words in a
//! result above it.
//!
//! After the tools ran, for a request that asks which file mentions or contains something
//! (a word of [`CONTENT_VERBS`]), an answer that names a file, says no "none" or "not", and
//! comes after tool results none of which holds any of the words the request asks about
//! (those after the verb, short and common words left out) is asked about once: search the
//! files or read them. Linear in the request, the answer and the results.

use messages::{Messages, Role};

use crate::backticks::in_backticks;
use crate::latest_results::{execution_messages, request, text_of};
use crate::plan_steps::without_step_note;
use crate::unread_file::named_files;
use crate::word_set::WordSet;

/// What a request asks a file's contents with, as whole words.
const CONTENT_VERBS: [&str; 10] = [
    "mentions",
    "mention",
    "contains",
    "contain",
    "includes",
    "include",
    "references",
    "reference",
    "says",
    "talks",
];

/// Words after the verb that are not what the request looks for.
const FILLER: [&str; 24] = [
    "the", "word", "words", "text", "line", "lines", "string", "term", "phrase", "any", "some",
    "about", "that", "this", "with", "from", "file", "files", "name", "value", "and", "for",
    "mention", "anything",
];

/// The most bytes after the verb read for the words asked about: the rest of the sentence.
const ASKED_BYTES: usize = 80;

/// What says, in an answer, that no file holds the words: then it names no file as holding
/// them.
static NONE_WORDS: WordSet<'static> = WordSet::new(&[
    "none", "not ", "n't", "no file", "no such", "nothing", "cannot",
]);

/// What the model is told after such an answer: the words, and what to do.
pub(crate) fn unseen_terms_nudge(terms: &[String]) -> String {
    let terms = in_backticks(terms, ", ");
    format!(
        "No tool result above contains {terms}, so no file was seen to hold it: your answer \
         names a file without having looked inside it. Search the files for it or read them \
         now: reply with only the tool call."
    )
}

/// The words the request asks a file to hold: those after its first content verb, up to
/// the end of the sentence, lower-cased, filler and words under three letters left out.
fn asked_terms(request: &str) -> Vec<String> {
    let lower = request.to_lowercase();
    let is_word_char = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    let Some(verb) = lower
        .split(|c: char| !is_word_char(c))
        .find(|word| CONTENT_VERBS.contains(word))
    else {
        return Vec::new();
    };
    // Where the verb ends in `lower` (`verb` is a slice of it).
    let after = verb.as_ptr() as usize - lower.as_ptr() as usize + verb.len();
    let rest = &lower[after..];
    let rest = &rest[..rest.floor_char_boundary(ASKED_BYTES.min(rest.len()))];
    let sentence = rest.split(['?', '.', '!', '\n']).next().unwrap_or("");
    sentence
        .split(|c: char| !is_word_char(c))
        .filter(|word| word.chars().count() >= 3 && !FILLER.contains(word))
        .map(str::to_owned)
        .collect()
}

/// The words the request of the running execution in `conversation` asks a file to hold,
/// when `answer` names a file as holding them and no tool result of the execution holds any
/// of them (see the module's documentation). `None` when no tool has returned.
pub(crate) fn unseen_terms(answer: &str, conversation: &Messages) -> Option<Vec<String>> {
    // Most answers name no file: then the request is not read (issue 35: every answer pays
    // this).
    named_files(answer).next()?;
    let request = text_of(request(conversation)?);
    let results = execution_messages(conversation)
        .filter(|message| message.role() == Role::Tool)
        .map(text_of);
    terms_no_result_holds(answer, &request, results)
}

/// The words `request` asks a file to hold ("Which file mentions a zeppelin?": `zeppelin`),
/// when `answer` names a file as holding them and none of `results` (the texts of the
/// execution's tool results) holds any of them: a file named without having looked inside
/// it. `None` when there is no result, when the answer names no file or says that none holds
/// them, or when the request asks no file's contents. The tool-calling driver asks such an
/// answer to search or read the files, once, and the ReAct driver a `final_answer`.
///
/// ```
/// use drivers_toolcalling::terms_no_result_holds;
///
/// let request = "Which file in the notes directory mentions a zeppelin?";
/// let listing = ["[file] alpha.txt (26 bytes)\n[file] bravo.txt (49 bytes)"];
/// let found = terms_no_result_holds("alpha.txt", request, listing);
/// assert_eq!(found, Some(vec!["zeppelin".to_owned()]));
/// let searched = ["notes/bravo.txt:1: We saw a zeppelin over the harbour."];
/// assert_eq!(terms_no_result_holds("bravo.txt", request, searched), None);
/// ```
pub fn terms_no_result_holds<R: AsRef<str>>(
    answer: &str,
    request: &str,
    results: impl IntoIterator<Item = R>,
) -> Option<Vec<String>> {
    if named_files(answer).next().is_none() || NONE_WORDS.in_text(answer) {
        return None;
    }
    let terms = asked_terms(request);
    if terms.is_empty() {
        return None;
    }
    let mut any_result = false;
    for result in results {
        any_result = true;
        let result = without_step_note(result.as_ref()).to_lowercase();
        if terms.iter().any(|term| result.contains(term.as_str())) {
            return None;
        }
    }
    any_result.then_some(terms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tools::after_one_call;
    use messages::Message;
    use proptest::prelude::*;
    use serde_json::json;

    const D3: &str = "Which file in the notes directory mentions a zeppelin?";

    fn after(request: &str, tool: &str, result: &str) -> Messages {
        after_one_call(request, tool, json!({"path": "notes"}), result)
    }

    const LISTING: &str = "[file] alpha.txt (26 bytes)\n[file] bravo.txt (49 bytes, the \
                           largest)\n[file] charlie.txt (30 bytes)\nIn all: 3 files (3 .txt \
                           files).";

    #[test]
    fn a_file_named_after_a_listing_alone_is_a_guess_about_its_contents() {
        let answer = "The file in the notes directory that mentions \"zeppelin\" is `alpha.txt`.";
        let found = unseen_terms(answer, &after(D3, "list_dir", LISTING));
        assert_eq!(found, Some(vec!["zeppelin".to_owned()]));
        assert!(unseen_terms_nudge(&found.unwrap_or_default()).starts_with(
            "No tool result above contains `zeppelin`, so no file was seen to hold it"
        ));
    }

    #[test]
    fn an_answer_after_a_result_that_holds_the_words_is_not_asked_about() {
        let searched = after(
            D3,
            "search_files",
            "notes/bravo.txt:1: We saw a zeppelin over the harbour this morning.",
        );
        assert_eq!(unseen_terms("It is `notes/bravo.txt`.", &searched), None);
        // The next step of the model's plan, appended to a listing, is not a result.
        let noted = format!(
            "{LISTING}\n\nThis step of your plan is done: its result is above. Do the next \
             step of your plan now: Search for the word \"zeppelin\" in each file."
        );
        let listed = after(D3, "list_dir", &noted);
        assert!(unseen_terms("alpha.txt mentions a zeppelin.", &listed).is_some());
        // A search that found nothing names the pattern in its note: the answer may say so.
        let none = after(D3, "search_files", "(no line contains `zeppelin`)");
        assert_eq!(unseen_terms("alpha.txt", &none), None);
    }

    #[test]
    fn answers_naming_no_file_or_saying_none_and_other_requests_are_not_judged() {
        let listed = after(D3, "list_dir", LISTING);
        for answer in [
            "None of the files mentions a zeppelin.",
            "I could not find it: alpha.txt does not mention one.",
            "The notes directory holds three files.",
        ] {
            assert_eq!(unseen_terms(answer, &listed), None, "{answer}");
        }
        let largest = after("Which file in notes is the largest?", "list_dir", LISTING);
        assert_eq!(unseen_terms("bravo.txt (49 bytes).", &largest), None);
        let nothing_asked = after("Which file mentions it?", "list_dir", LISTING);
        assert_eq!(unseen_terms("alpha.txt", &nothing_asked), None);
        // No tool has returned.
        let asked = Messages::new().appended(Message::user(D3));
        assert_eq!(unseen_terms("alpha.txt", &asked), None);
    }

    #[test]
    fn the_words_asked_about_are_those_after_the_verb_in_its_sentence() {
        assert_eq!(asked_terms(D3), ["zeppelin"]);
        assert_eq!(
            asked_terms("Which log contains the word TIMEOUT? Then tell me the line."),
            ["timeout"]
        );
        assert_eq!(
            asked_terms("Find the file that mentions the release date"),
            ["release", "date"]
        );
        assert!(asked_terms("Which file is the largest?").is_empty());
        // "Mentioned" is not the verb.
        assert!(asked_terms("the file mentioned earlier").is_empty());
    }

    proptest! {
        #[test]
        fn any_request_and_answer_are_judged_without_panic(
            request in "\\PC{0,120}",
            answer in "\\PC{0,80}",
        ) {
            let _ = unseen_terms(&answer, &after(&request, "list_dir", LISTING));
            let _ = asked_terms(&request);
        }
    }
}
