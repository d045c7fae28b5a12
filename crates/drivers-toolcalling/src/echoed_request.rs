//! A reply that only restates the request, after the tools ran: "Which port is configured in
//! config.ini?" answered "The port is configured in config.ini." (the 1.5B model on the eval's
//! development half, d1, after a `search_files` call that found the file and read nothing).
//! Every word of it is the request's, or a word like "the" or "is": it tells the person
//! nothing they did not say. The driver answers such a reply with one nudge (`reply_nudge`);
//! the reply to it stands, whatever it is.
//!
//! A yes/no question is left alone: "Is debug mode enabled?" is rightly answered "Debug mode
//! is enabled." when it is.

use crate::word_set::WordSet;

/// What the model is told after a reply that only restates the request: once per step.
pub(crate) const ECHO_NUDGE: &str = "Your last reply only repeats the request; it does not \
answer it. Answer it now with the facts from the tool results above. If you have not read \
what the answer needs yet, call a tool to read it.";

/// Words an answer adds to the request's without adding a fact (lower case, sorted).
const FILLER: [&str; 32] = [
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "file", "files", "for", "from", "here",
    "i", "in", "is", "it", "its", "of", "on", "or", "s", "that", "the", "there", "these", "this",
    "those", "to", "was", "with",
];

/// The fewest words of the request, other than [`FILLER`], that an echo repeats: a reply
/// of filler alone ("It is done.") restates nothing.
const MIN_REPEATED_WORDS: usize = 2;

/// First words of a question answered yes or no (lower case, sorted).
const YES_NO: [&str; 18] = [
    "are", "can", "could", "did", "do", "does", "had", "has", "have", "is", "may", "might", "must",
    "shall", "should", "was", "were", "will",
];

/// A reply longer than this many times the request's length plus a few words is no echo,
/// and is not read word by word.
const MAX_ECHO_GROWTH: usize = 2;

/// A reply longer than this (bytes) is never an echo: the request is not even looked up.
pub(crate) const MAX_ECHO_BYTES: usize = 512;

/// [`FILLER`] and [`YES_NO`], looked up ignoring ASCII case.
static FILLER_SET: WordSet<'static> = WordSet::new(&FILLER);
static YES_NO_SET: WordSet<'static> = WordSet::new(&YES_NO);

/// Whether `reply` only restates `request`: each of its words (see [`words`]; ASCII case
/// ignored) is a word of the request or a [`FILLER`] word, and at least
/// [`MIN_REPEATED_WORDS`] are the request's own. A request that opens like a yes/no question
/// never counts as restated.
pub(crate) fn echoes_request(reply: &str, request: &str) -> bool {
    if reply.len() > MAX_ECHO_BYTES || reply.len() > request.len() * MAX_ECHO_GROWTH + 32 {
        return false;
    }
    let (reply, request) = (reply.as_bytes(), request.as_bytes());
    if words(request)
        .next()
        .is_none_or(|first| YES_NO_SET.holds(first))
    {
        return false;
    }
    let mut repeated = 0;
    for word in words(reply) {
        if FILLER_SET.holds(word) {
            continue;
        }
        if !words(request).any(|known| known.eq_ignore_ascii_case(word)) {
            return false;
        }
        repeated += 1;
    }
    repeated >= MIN_REPEATED_WORDS
}

/// The words of `text`: the runs of bytes between ASCII spaces and punctuation (so letters
/// and digits; a non-ASCII character stays inside its word). Split on bytes, without a copy:
/// checking a reply allocates nothing and decodes no character.
fn words(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    text.split(|byte| byte.is_ascii() && !byte.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_word_lists_are_lower_case_and_hold_no_word_twice() {
        for list in [&FILLER[..], &YES_NO[..]] {
            assert!(list.windows(2).all(|pair| pair[0] < pair[1]), "{list:?}");
            assert!(list.iter().all(|word| word.to_lowercase() == *word));
        }
    }

    #[test]
    fn words_compare_ignoring_case() {
        assert!(echoes_request(
            "THE PORT is CONFIGURED in Config.INI.",
            "Which port is configured in config.ini?"
        ));
        assert!(!echoes_request("IS debug mode on.", "is debug mode on?"));
        // words of other scripts are whole words too
        assert!(echoes_request(
            "Le café est fermé.",
            "Pourquoi le café est fermé ?"
        ));
        assert!(!echoes_request(
            "Le café est ouvert.",
            "Pourquoi le café est fermé ?"
        ));
    }

    #[test]
    fn a_reply_made_of_the_requests_words_is_an_echo() {
        // The 1.5B model on the eval's d1, after `search_files` found the file.
        assert!(echoes_request(
            "The port is configured in config.ini.",
            "Which port is configured in config.ini?"
        ));
        assert!(echoes_request(
            "The largest file in the data folder.",
            "Which file in the data folder is the largest?"
        ));
        assert!(echoes_request(
            "Rename draft.txt to final.txt.",
            "Rename draft.txt to final.txt."
        ));
    }

    #[test]
    fn a_reply_with_one_new_word_is_an_answer() {
        for (reply, request) in [
            (
                "The port is 8472.",
                "Which port is configured in config.ini?",
            ),
            (
                "The port configured in config.ini is 8472.",
                "Which port is configured in config.ini?",
            ),
            (
                "Renamed draft.txt to final.txt.",
                "Rename draft.txt to final.txt.",
            ),
            ("Paris", "What is the capital of France?"),
            (
                "There are 3.",
                "How many lines of app.log contain the word error?",
            ),
            (
                "beta.log is the largest file in the data folder.",
                "Which file in the data folder is the largest?",
            ),
        ] {
            assert!(!echoes_request(reply, request), "{reply}");
        }
    }

    #[test]
    fn yes_no_questions_empty_replies_and_long_replies_are_not_echoes() {
        assert!(!echoes_request(
            "Debug mode is enabled in config.yaml.",
            "Is debug mode enabled in config.yaml?"
        ));
        assert!(!echoes_request(
            "Yes, it does.",
            "Does the README mention a licence?"
        ));
        assert!(!echoes_request("...", "Which port is set?"));
        // filler alone, or one word of the request, restates nothing
        assert!(!echoes_request("It was done.", "Look it up."));
        assert!(!echoes_request(
            "Here it is: the port.",
            "Which port is set?"
        ));
        assert!(!echoes_request("The port.", ""));
        let long = "the port ".repeat(40);
        assert!(!echoes_request(&long, "Which port is set?"));
    }
}
