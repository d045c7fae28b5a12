//! An answer to a request for a sum, a total or a difference that gives a number no tool
//! result shows and writes no calculation. Asked "What is the total of the amount column in
//! sales.csv?", the 1.5B model read the file (120, 340, 215 and 95) and answered "The total of
//! the amount column in sales.csv is 890." (issue 36, development task d15, 2026-12-06; the
//! column sums to 770). When a small model writes its sum out, `wrong_arithmetic` can check
//! it the way a calculator would; when it writes only a result, nothing can. So such an
//! answer is asked about once: write the calculation out with the numbers from the results.
//! The reply is then judged again, its arithmetic included.
//!
//! After the tools ran, for a request with a word that asks for arithmetic
//! ([`ARITHMETIC_WORDS`], as whole words), an answer that writes no expression (a number, an
//! operator, a number) and a number that neither the request nor any tool result of the
//! execution holds is asked about. Linear in the request, the answer and the results.

use std::borrow::Cow;
use std::collections::HashSet;

use messages::Messages;

use crate::backticks::in_backticks;
use crate::latest_results::{execution_messages, request, text_of, worked_result_texts};
use crate::word_set::WordSet;
use crate::wrong_arithmetic::numbers_without_expression;

/// Words of a request that asks for a number computed from others.
static ARITHMETIC_WORDS: WordSet<'static> = WordSet::new(&[
    "total",
    "totals",
    "sum",
    "add",
    "added",
    "adding",
    "plus",
    "combined",
    "altogether",
    "difference",
    "average",
    "subtract",
    "minus",
    "multiply",
    "multiplied",
]);

/// What the model is told after such an answer: the numbers no result shows, and what to do.
pub(crate) fn unshown_calculation_nudge(numbers: &[String]) -> String {
    let numbers = in_backticks(numbers, ", ");
    format!(
        "Your last reply gives {numbers}, which no tool result above shows, without the \
         calculation that gives it. Write the calculation out with the numbers from the tool \
         results (for example `12 + 30 = 42`), then the answer."
    )
}

/// The numbers of `answer` that neither the request of the running execution in
/// `conversation` nor any of its tool results holds, when the request asks for arithmetic
/// and `answer` writes no calculation (see the module's documentation). `None` when no tool
/// has returned a result that is not an error, or when there is nothing to ask.
pub(crate) fn unshown_calculation(answer: &str, conversation: &Messages) -> Option<Vec<String>> {
    // Most answers hold no digit: nothing to read then (issue 35: every answer pays this).
    if !answer.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    let request = text_of(request(conversation)?);
    let results: Vec<Cow<'_, str>> =
        worked_result_texts(execution_messages(conversation)).collect();
    uncalculated_numbers(answer, &request, results.iter().map(|result| &**result))
}

/// The numbers `answer` gives that neither `request` nor any of `results` (the texts of the
/// execution's tool results that worked) holds, when `request` asks for arithmetic (a word
/// such as "total", "sum", "plus", "difference", "average") and `answer` writes no
/// calculation: a computed number that nothing can check. `None` when there is no result,
/// or nothing to ask. The tool-calling driver asks such an answer for its calculation once,
/// and the ReAct driver a `final_answer`; the calculation is then judged by
/// [`wrong_arithmetic`](crate::wrong_arithmetic).
///
/// ```
/// use drivers_toolcalling::uncalculated_numbers;
///
/// let request = "What is the total of the amount column in sales.csv?";
/// let results = ["1\tregion,amount\n2\tnorth,120\n3\tsouth,340\n4\teast,215\n5\twest,95"];
/// let found = uncalculated_numbers("The total is 890.", request, results);
/// assert_eq!(found, Some(vec!["890".to_owned()]));
/// assert_eq!(uncalculated_numbers("120 + 340 + 215 + 95 = 770", request, results), None);
/// assert_eq!(uncalculated_numbers("The total is 890.", "Which port is set?", results), None);
/// ```
pub fn uncalculated_numbers<'r>(
    answer: &str,
    request: &str,
    results: impl IntoIterator<Item = &'r str>,
) -> Option<Vec<String>> {
    let numbers = numbers_without_expression(answer)?;
    if numbers.is_empty() {
        return None;
    }
    let asks = request
        .split(|c: char| !c.is_ascii_alphabetic())
        .any(|word| ARITHMETIC_WORDS.holds(word.as_bytes()));
    if !asks {
        return None;
    }
    let mut seen: HashSet<String> = numbers_in(request).collect();
    let mut any_result = false;
    for result in results {
        any_result = true;
        seen.extend(numbers_in(result));
    }
    // In the answer's order, each once; `seen` grows with the numbers named (linear).
    let mut unseen: Vec<String> = Vec::new();
    for number in numbers {
        if !seen.contains(&number) {
            seen.insert(number.clone());
            unseen.push(number);
        }
    }
    (any_result && !unseen.is_empty()).then_some(unseen)
}

/// The numbers `text` holds, each as its digits and decimal point: every run of digits
/// (with a decimal part), and runs joined by commas between groups of three (`1,010` gives
/// `1`, `010` and `1010`; a CSV line's `120,340` gives `120`, `340` and `120340`).
fn numbers_in(text: &str) -> impl Iterator<Item = String> + '_ {
    let bytes = text.as_bytes();
    let mut at = 0;
    let mut pending: Vec<String> = Vec::new();
    std::iter::from_fn(move || loop {
        if let Some(number) = pending.pop() {
            return Some(number);
        }
        while at < bytes.len() && !bytes[at].is_ascii_digit() {
            at += 1;
        }
        if at >= bytes.len() {
            return None;
        }
        let mut joined = String::new();
        loop {
            let start = at;
            while at < bytes.len() && bytes[at].is_ascii_digit() {
                at += 1;
            }
            if bytes.get(at) == Some(&b'.') && bytes.get(at + 1).is_some_and(u8::is_ascii_digit) {
                at += 1;
                while at < bytes.len() && bytes[at].is_ascii_digit() {
                    at += 1;
                }
            }
            let run = &text[start..at];
            pending.push(run.to_owned());
            joined.push_str(run);
            let group = bytes.get(at) == Some(&b',')
                && bytes
                    .get(at + 1..at + 4)
                    .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
                && !bytes.get(at + 4).is_some_and(u8::is_ascii_digit);
            if !group {
                break;
            }
            at += 1;
        }
        if pending.len() > 1 {
            pending.push(joined);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tools::after_one_call;
    use messages::Message;
    use proptest::prelude::*;
    use serde_json::json;

    const D15: &str = "What is the total of the amount column in sales.csv?";
    const SALES: &str = "     1\tregion,amount\n     2\tnorth,120\n     3\tsouth,340\n     \
                         4\teast,215\n     5\twest,95";

    fn after(request: &str, result: &str) -> Messages {
        after_one_call(request, "read_file", json!({"path": "sales.csv"}), result)
    }

    #[test]
    fn a_total_no_result_shows_without_its_calculation_is_asked_about() {
        let found = unshown_calculation(
            "The total of the amount column in sales.csv is 890.",
            &after(D15, SALES),
        );
        assert_eq!(found, Some(vec!["890".to_owned()]));
        assert!(unshown_calculation_nudge(&found.unwrap_or_default())
            .starts_with("Your last reply gives `890`, which no tool result above shows"));
        // A right total written alone is asked about too: the loop cannot tell.
        let plus = after_one_call(
            "Read n.txt and tell me that number plus 5.",
            "read_file",
            json!({"path": "n.txt"}),
            "     1\t37",
        );
        assert_eq!(
            unshown_calculation("It is 42.", &plus),
            Some(vec!["42".into()])
        );
    }

    #[test]
    fn a_calculation_written_out_or_numbers_in_view_are_not_asked_about() {
        let sales = after(D15, SALES);
        for answer in [
            // Written out: `wrong_arithmetic` judges it.
            "120 + 340 + 215 + 95 = 890",
            "The total is 770 (120+340+215+95).",
            // Only numbers of the results and the request.
            "The amounts are 120, 340, 215 and 95.",
            "Line 5 holds the last amount.",
            "I could not add them.",
        ] {
            assert_eq!(unshown_calculation(answer, &sales), None, "{answer}");
        }
        // A request that asks for no arithmetic.
        let port = after_one_call(
            "Which port does config.ini set?",
            "read_file",
            json!({"path": "config.ini"}),
            "     1\t[server]\n     2\tport = 8080",
        );
        assert_eq!(unshown_calculation("It sets 9090.", &port), None);
        // No tool has returned, or only errors.
        let asked = Messages::new().appended(Message::user(D15));
        assert_eq!(unshown_calculation("It is 890.", &asked), None);
        let failed = after(
            D15,
            "Error: cannot read `sales.csv`: no such file or directory",
        );
        assert_eq!(unshown_calculation("It is 890.", &failed), None);
        // "sum" inside a longer word asks for nothing.
        let summary = after("Give me a summary of sales.csv.", SALES);
        assert_eq!(
            unshown_calculation("It has 4 rows and 2 columns.", &summary),
            None
        );
    }

    #[test]
    fn numbers_are_read_as_digits_with_their_groups_and_decimals() {
        let read = |text: &str| {
            let mut numbers: Vec<String> = numbers_in(text).collect();
            numbers.sort();
            numbers
        };
        assert_eq!(read("north,120,340 x"), ["120", "120340", "340"]);
        assert_eq!(read("1,010.5 and 3.25."), ["010.5", "1", "1010.5", "3.25"]);
        assert_eq!(read("v2 build 12."), ["12", "2"]);
        assert!(read("no digits").is_empty());
        let total = after("What is the total?", "The total was 1,010 last year.");
        assert_eq!(unshown_calculation("It is 1,010.", &total), None);
    }

    proptest! {
        #[test]
        fn any_request_answer_and_result_are_judged_without_panic(
            request in "\\PC{0,60}",
            answer in "\\PC{0,80}",
            result in "[0-9,.a-z ]{0,80}",
        ) {
            let conversation = after(&request, &result);
            if let Some(numbers) = unshown_calculation(&answer, &conversation) {
                prop_assert!(!numbers.is_empty());
                for number in &numbers {
                    prop_assert!(!numbers_in(&result).any(|seen| &seen == number));
                }
            }
        }
    }
}
