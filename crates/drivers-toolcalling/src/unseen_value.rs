//! An answer that gives a value nothing the model was shown holds: an email address, or a
//! number of two digits or more, that no tool result, no request and no earlier message of
//! the conversation holds. Tried on new tasks of the eval's kinds (issue 36, 2026-12-07), the
//! 1.5B model, asked for the support desk's address in `team.md`, searched for the file's
//! name (a result that shows no line of it) and answered `support@example.com` (the file
//! says `help@acme.io`); asked whether a price went up or down from `old.txt` (`price 19`)
//! to `new.txt`, whose read did not run, it answered "The price went down from 19 to 18."
//! Neither value was ever in view: the model made it up.
//!
//! After the tools ran, an answer of at most 600 bytes is asked about once when it holds
//! such a value, unless the request asks for a count or a computed number ("how many",
//! "count", "total", "average", an expression such as `123 * 45`): those give numbers that
//! nothing shows, and `unshown_calculation` asks for their calculation instead. A number
//! is a run of digits (with its decimal part) that no letter touches (`utf8`, `h264` and
//! `v2` are names); one digit alone is left out (a small count or an ordinal is often
//! derived). A value counts as shown when a source holds it as text (any ASCII case for an
//! address). Linear in the answer and the sources: at most [`MAX_VALUES`] values are looked
//! up.

use std::borrow::Cow;

use messages::{Message, Messages, Role};

use crate::backticks::in_backticks;
use crate::latest_results::{execution_messages, request, text_of};
use crate::unread_file::files_no_call_used;
use crate::word_set::WordSet;

/// The longest answer judged: a value is given in a sentence or two.
const MAX_ANSWER_BYTES: usize = 600;

/// The most values of one answer looked up in the sources.
const MAX_VALUES: usize = 8;

/// Phrases of a request that asks for a count or a computed number.
static COMPUTING_PHRASES: WordSet<'static> = WordSet::new(&[
    "how many",
    "how much",
    "how long",
    "how old",
    "how far",
    "number of",
]);

/// Words of a request (whole words) that ask for a count or a computed number.
static COMPUTING_WORDS: WordSet<'static> = WordSet::new(&[
    "count",
    "counts",
    "total",
    "sum",
    "add",
    "plus",
    "combined",
    "together",
    "altogether",
    "difference",
    "average",
    "mean",
    "subtract",
    "minus",
    "multiply",
    "times",
    "divide",
    "percent",
    "percentage",
    "ratio",
    "calculate",
    "compute",
]);

/// What the model is told after an answer that gives `values`, which nothing shows: to read
/// `unread` (files the request names that no `read_file` call read) with `read_file`, when
/// there are some, or else to answer from the results.
pub(crate) fn unseen_values_nudge(values: &[String], unread: &[String]) -> String {
    let head = format!(
        "Your last reply gives {}, which no tool result above shows.",
        in_backticks(values, ", ")
    );
    match unread {
        [] => format!(
            "{head} Give only values the results show: if what was asked is not there, say so."
        ),
        [file] => format!(
            "{head} Read `{file}` now: call `read_file` with the path `{file}`, then answer \
             from what it holds."
        ),
        files => format!(
            "{head} Read {} now: call `read_file` with each path, then answer from what they \
             hold.",
            in_backticks(files, ", ")
        ),
    }
}

/// The files the request of `conversation` names that no `read_file` call of the running
/// execution read (a search that only matched the name shows no line of it).
pub(crate) fn files_not_read(conversation: &Messages) -> Vec<String> {
    let Some(request) = request(conversation).map(text_of) else {
        return Vec::new();
    };
    let reads = execution_messages(conversation)
        .flat_map(Message::tool_calls)
        .filter(|call| call.name() == "read_file");
    files_no_call_used(&request, reads)
}

/// The values of `answer` that nothing of `conversation` holds (see [`unseen_values`]): the
/// sources are the running execution's tool results (errors too: one may name a value),
/// then the messages before its request; the model's own text of the execution is none.
/// `None` when no tool has returned in the execution.
pub(crate) fn unseen_values_in(answer: &str, conversation: &Messages) -> Option<Vec<String>> {
    // Most answers hold no digit and no address: nothing to read then (issue 35).
    if !answer.bytes().any(|b| b.is_ascii_digit() || b == b'@') {
        return None;
    }
    let request = text_of(request(conversation)?);
    let execution = execution_messages(conversation).count();
    let results: Vec<Cow<'_, str>> = execution_messages(conversation)
        .filter(|message| message.role() == Role::Tool)
        .map(text_of)
        .collect();
    if results.is_empty() {
        return None;
    }
    // The messages before the request (read only for a value the results do not hold).
    let earlier = conversation
        .iter()
        .take(conversation.len().saturating_sub(execution + 1))
        .map(text_of);
    unseen_values(answer, &request, results.into_iter().chain(earlier))
}

/// The values of `answer` (email addresses, numbers of two digits or more) that neither
/// `request` nor any of `sources` (the tool results, then the rest of the conversation)
/// holds, in the answer's order, each once; `None` when there is none, the answer is long,
/// or the request asks for a count or a computed number (see the module's documentation).
/// The tool-calling driver asks such an answer about them once, after the tools ran.
///
/// ```
/// use drivers_toolcalling::unseen_values;
///
/// let request = "What is the email address of the support desk, according to team.md?";
/// let results = ["1 file matches `team.md`:\nteam.md"];
/// let found = unseen_values("It is support@example.com.", request, results);
/// assert_eq!(found, Some(vec!["support@example.com".to_owned()]));
/// let shown = ["1\t# Team\n2\tSupport desk: help@acme.io"];
/// assert_eq!(unseen_values("It is help@acme.io.", request, shown), None);
/// ```
pub fn unseen_values<S: AsRef<str>>(
    answer: &str,
    request: &str,
    sources: impl IntoIterator<Item = S>,
) -> Option<Vec<String>> {
    if answer.len() > MAX_ANSWER_BYTES {
        return None;
    }
    let mut values = values_in(answer);
    if values.is_empty() || asks_to_compute(request) {
        return None;
    }
    values.retain(|value| !holds(request, value));
    for source in sources {
        if values.is_empty() {
            return None;
        }
        values.retain(|value| !holds(source.as_ref(), value));
    }
    (!values.is_empty()).then_some(values)
}

/// Whether `request` asks for a count or a computed number: a phrase of
/// [`COMPUTING_PHRASES`], a word of [`COMPUTING_WORDS`], or an expression (a digit, an
/// operator, a digit: `123 * 45`, `7+5`).
fn asks_to_compute(request: &str) -> bool {
    if COMPUTING_PHRASES.in_text(request)
        || request
            .split(|c: char| !c.is_ascii_alphabetic())
            .any(|word| COMPUTING_WORDS.holds(word.as_bytes()))
    {
        return true;
    }
    let bytes = request.as_bytes();
    let mut last_digit = false;
    let mut operator = false;
    for &b in bytes {
        match b {
            b'0'..=b'9' if operator => return true,
            b'0'..=b'9' => last_digit = true,
            b'+' | b'*' | b'/' | b'x' | b'-' if last_digit => operator = true,
            b' ' => {}
            _ => {
                last_digit = false;
                operator = false;
            }
        }
    }
    false
}

/// Whether `source` holds `value`: as it is written, or, for an address, in any ASCII case.
fn holds(source: &str, value: &str) -> bool {
    if !value.contains('@') {
        return source.contains(value);
    }
    let (hay, needle) = (source.as_bytes(), value.as_bytes());
    hay.windows(needle.len())
        .any(|window| window.eq_ignore_ascii_case(needle))
}

/// The email addresses (lower-cased) and numbers of two digits or more that `answer` holds,
/// each once, at most [`MAX_VALUES`].
fn values_in(answer: &str) -> Vec<String> {
    let bytes = answer.as_bytes();
    let mut values: Vec<String> = Vec::new();
    let mut at = 0;
    while at < bytes.len() && values.len() < MAX_VALUES {
        let start = at;
        while at < bytes.len() && is_address_byte(bytes[at]) {
            at += 1;
        }
        if at == start {
            at += 1;
            continue;
        }
        let word = answer[start..at].trim_end_matches('.');
        let value = if is_address(word) {
            Some(word.to_ascii_lowercase())
        } else {
            None
        };
        let found = value.into_iter().chain(numbers_of(word).map(str::to_owned));
        for value in found {
            if !values.contains(&value) && values.len() < MAX_VALUES {
                values.push(value);
            }
        }
    }
    values
}

/// Bytes of a word that may be an address or a number: letters, digits and `._%+-@`.
fn is_address_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'%' | b'+' | b'-' | b'@')
}

/// Whether `word` is an email address: one `@` with text before it and a domain after it
/// that holds a dot with letters after the last one.
fn is_address(word: &str) -> bool {
    let Some((user, domain)) = word.split_once('@') else {
        return false;
    };
    !user.is_empty()
        && !domain.contains('@')
        && domain.rsplit_once('.').is_some_and(|(name, top)| {
            !name.is_empty() && top.len() >= 2 && top.bytes().all(|b| b.is_ascii_alphabetic())
        })
}

/// The numbers of `word` (not an address): its runs of digits and dots between non-letters,
/// of two digits or more. `19`, `2.5` and `2026` are numbers; `utf8`, `v2` and `x86` are not.
fn numbers_of(word: &str) -> impl Iterator<Item = &str> {
    let skip = word.contains('@');
    word.split(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
        .filter(move |_| !skip)
        .map(|part| part.trim_matches('.'))
        .filter(|part| {
            part.bytes().all(|b| b.is_ascii_digit() || b == b'.')
                && part.bytes().filter(u8::is_ascii_digit).count() >= 2
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const TEAM: &str = "What is the email address of the support desk, according to team.md?";
    const PRICES: &str = "Did the price go up or down from old.txt to new.txt?";

    #[test]
    fn an_address_or_a_number_nothing_holds_is_found() {
        let searched = ["1 file matches `team.md`:\nteam.md"];
        assert_eq!(
            unseen_values(
                "The email address of the support desk is Support@Example.com.",
                TEAM,
                searched
            ),
            Some(vec!["support@example.com".to_owned()])
        );
        let old = ["     1\tprice 19"];
        assert_eq!(
            unseen_values("The price went down from 19 to 18.", PRICES, old),
            Some(vec!["18".to_owned()])
        );
    }

    #[test]
    fn values_in_view_names_and_small_numbers_are_not_judged() {
        let both = ["     1\tprice 19", "     1\tprice 24"];
        assert_eq!(
            unseen_values("The price went up from 19 to 24.", PRICES, both),
            None
        );
        // in the request, or an address in another case
        assert_eq!(
            unseen_values("Port 8080 it is.", "Is port 8080 open in a.conf?", ["open"]),
            None
        );
        assert_eq!(
            unseen_values("It is help@acme.io.", TEAM, ["Support: HELP@ACME.IO"]),
            None
        );
        // names, versions written with letters, one digit, a file name
        for answer in [
            "It is encoded in utf8 with h264 video on x86.",
            "Step 3 of the plan is done.",
            "See notes_v2.md for it.",
        ] {
            assert_eq!(unseen_values(answer, PRICES, ["nothing"]), None, "{answer}");
        }
    }

    #[test]
    fn a_request_for_a_count_or_a_computed_number_is_not_judged() {
        for request in [
            "How many lines of app.log contain error?",
            "What is the total of the amount column in sales.csv?",
            "Use the shell to compute 123 * 45 and tell me the result.",
            "What is 7+5?",
            "What is the average score?",
            "Add up the cost column.",
        ] {
            assert_eq!(
                unseen_values("It is 5535.", request, ["1\tx"]),
                None,
                "{request}"
            );
        }
        // words that hold such a word are not it ("address", "summary")
        assert!(unseen_values("It is 55.", "Which address is in the summary?", ["x"]).is_some());
        // a number with a dash is no expression
        assert!(unseen_values("It is 55.", "Which port is set in a-1.conf?", ["x"]).is_some());
    }

    #[test]
    fn a_long_answer_is_not_judged_and_values_are_counted_once() {
        let long = format!("{} 99", "word ".repeat(130));
        assert_eq!(unseen_values(&long, PRICES, ["x"]), None);
        assert_eq!(
            unseen_values("18, 18 and 2.50.", PRICES, ["x"]),
            Some(vec!["18".to_owned(), "2.50".to_owned()])
        );
    }

    proptest! {
        #[test]
        fn any_answer_request_and_sources_are_judged_without_panic(
            answer in "[a-z0-9@. ,*+-]{0,200}",
            request in "[a-z0-9@. *+-]{0,80}",
            source in "[a-z0-9@. ]{0,200}",
        ) {
            if let Some(values) = unseen_values(&answer, &request, [source.as_str()]) {
                prop_assert!(!values.is_empty() && values.len() <= MAX_VALUES);
                for value in &values {
                    prop_assert!(!source.contains(value.as_str()));
                }
            }
        }
    }
}
