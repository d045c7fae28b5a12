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
//!
//! The opposite slip is asked about the same way: a request that names an operation and its
//! operand ("What is the number in count.txt times 3?", "that number plus 5") answered with
//! only numbers the results or the request already hold, and no calculation. Asked the
//! first, the 1.5B model read `12` and answered "12" (a probe of issue 36's task kinds,
//! 2026-12-07): an input of the calculation, not its result ([`operand_answer`]).

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

/// Words that name an operation when a number follows them (`times 3`, `plus 5`,
/// `divided by 2`).
static OPERATION_WORDS: WordSet<'static> = WordSet::new(&[
    "plus",
    "minus",
    "times",
    "multiplied",
    "divided",
    "add",
    "subtract",
    "+",
    "-",
    "*",
    "/",
    "x",
    "×",
    "÷",
]);

/// An answer without a calculation to a request for one: numbers no result shows, or only
/// the operands ([`unshown_calculation`]).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Uncalculated {
    /// The answer's numbers that nothing shows ([`uncalculated_numbers`]).
    Unshown(Vec<String>),
    /// The answer gives only numbers of the calculation's inputs ([`operand_answer`]).
    Operand(OperandAnswer),
}

impl Uncalculated {
    /// What the model is told after such an answer: the numbers, and what to do.
    pub(crate) fn nudge(&self) -> String {
        match self {
            Uncalculated::Unshown(numbers) => format!(
                "Your last reply gives {}, which no tool result above shows, without the \
                 calculation that gives it. Write the calculation out with the numbers from \
                 the tool results (for example `12 + 30 = 42`), then the answer.",
                in_backticks(numbers, ", ")
            ),
            Uncalculated::Operand(found) => found.nudge(),
        }
    }
}

/// An answer that gives only operands of the calculation its request asks for
/// ([`operand_answer`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperandAnswer {
    /// The operation as the request wrote it (`times 3`).
    pub operation: String,
    /// The answer's numbers, each of which the results or the request hold.
    pub numbers: Vec<String>,
}

impl OperandAnswer {
    /// What the model is told after such an answer.
    pub fn nudge(&self) -> String {
        format!(
            "The request asks for a calculation (`{}`), but your last reply gives only {}, \
             which the tool results or the request already hold: a number to calculate with, \
             not the result. Write the calculation out with the numbers from the tool results \
             (for example `12 + 30 = 42`), then the answer.",
            self.operation,
            in_backticks(&self.numbers, ", ")
        )
    }
}

/// What the answer of the running execution in `conversation` lacks when the request asks
/// for arithmetic and the answer writes no calculation: numbers no result shows
/// ([`uncalculated_numbers`]), or only operands ([`operand_answer`]); see the module's
/// documentation. `None` when no tool has returned a result that is not an error, or when
/// there is nothing to ask.
pub(crate) fn unshown_calculation(answer: &str, conversation: &Messages) -> Option<Uncalculated> {
    // Most answers hold no digit: nothing to read then (issue 35: every answer pays this).
    if !answer.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    let request = text_of(request(conversation)?);
    let results: Vec<Cow<'_, str>> =
        worked_result_texts(execution_messages(conversation)).collect();
    let results = || results.iter().map(|result| &**result);
    uncalculated_numbers(answer, &request, results())
        .map(Uncalculated::Unshown)
        .or_else(|| operand_answer(answer, &request, results()).map(Uncalculated::Operand))
}

/// The operation `request` names with its operand, as written (`times 3`, `plus 5`,
/// `divided by 2`, `+ 5`): an operation word of [`OPERATION_WORDS`], then (after `by`) a
/// number. The first one, if any. A `-` or `x` between two numbers is a range or a size
/// (`lines 1 - 10`, `1920 x 1080`), not an operation on a value to find.
fn operation_in(request: &str) -> Option<String> {
    let words: Vec<&str> = request
        .split_whitespace()
        .map(|word| {
            word.trim_matches(|c: char| matches!(c, '?' | '!' | ',' | ';' | ':' | '"'))
                .trim_end_matches('.')
        })
        .collect();
    words.iter().enumerate().find_map(|(at, word)| {
        if !OPERATION_WORDS.holds(word.as_bytes()) {
            return None;
        }
        let range_or_size = matches!(*word, "-" | "x" | "X")
            && at
                .checked_sub(1)
                .and_then(|before| words.get(before))
                .is_some_and(|before| is_number(before));
        if range_or_size {
            return None;
        }
        let mut next = at + 1;
        if words
            .get(next)
            .is_some_and(|w| w.eq_ignore_ascii_case("by"))
        {
            next += 1;
        }
        let operand = words.get(next)?;
        is_number(operand).then(|| words[at..=next].join(" "))
    })
}

/// Whether `word` is a number as a request writes an operand (`3`, `2.5`).
fn is_number(word: &str) -> bool {
    word.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && word.bytes().next().is_some_and(|b| b.is_ascii_digit())
}

/// The numbers of `answer` when `request` names an operation with its operand (`times 3`,
/// `plus 5`, `divided by 2`), `answer` writes no calculation, and every number it gives is
/// one that `request` or one of `results` (the texts of the execution's tool results that
/// worked) holds: an input of the calculation given as its result. `None` when there is no
/// result, or nothing to ask. The tool-calling driver asks such an answer for its
/// calculation once, and the ReAct driver a `final_answer`.
///
/// ```
/// use drivers_toolcalling::operand_answer;
///
/// let request = "What is the number in count.txt times 3?";
/// let results = ["     1\t12"];
/// let found = operand_answer("12", request, results).map(|found| found.numbers);
/// assert_eq!(found, Some(vec!["12".to_owned()]));
/// assert_eq!(operand_answer("12 * 3 = 36", request, results), None);
/// assert_eq!(operand_answer("It is 36.", request, results), None);
/// assert_eq!(operand_answer("12", "What number does count.txt hold?", results), None);
/// ```
pub fn operand_answer<'r>(
    answer: &str,
    request: &str,
    results: impl IntoIterator<Item = &'r str>,
) -> Option<OperandAnswer> {
    let numbers = numbers_without_expression(answer)?;
    if numbers.is_empty() {
        return None;
    }
    let operation = operation_in(request)?;
    let mut seen: HashSet<String> = numbers_in(request).collect();
    let mut any_result = false;
    for result in results {
        any_result = true;
        seen.extend(numbers_in(result));
    }
    let mut given: Vec<String> = Vec::new();
    for number in numbers {
        if !seen.contains(&number) {
            return None;
        }
        if !given.contains(&number) {
            given.push(number);
        }
    }
    any_result.then_some(OperandAnswer {
        operation,
        numbers: given,
    })
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
        assert_eq!(found, Some(Uncalculated::Unshown(vec!["890".to_owned()])));
        assert!(found
            .map(|found| found.nudge())
            .unwrap_or_default()
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
            Some(Uncalculated::Unshown(vec!["42".into()]))
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
    fn an_operand_given_as_the_result_is_asked_about() {
        // Probe d122: "12" read, "times 3" asked, "12" answered.
        let times = after_one_call(
            "What is the number in count.txt times 3?",
            "read_file",
            json!({"path": "count.txt"}),
            "     1\t12",
        );
        let found = unshown_calculation("12", &times);
        let expected = OperandAnswer {
            operation: "times 3".into(),
            numbers: vec!["12".into()],
        };
        assert_eq!(found, Some(Uncalculated::Operand(expected)));
        assert!(found
            .map(|found| found.nudge())
            .unwrap_or_default()
            .starts_with(
            "The request asks for a calculation (`times 3`), but your last reply gives only `12`"
        ));
        // The operand alone, or both operands without their result.
        let found = unshown_calculation("The number is 12 and the factor 3.", &times);
        assert!(matches!(found, Some(Uncalculated::Operand(ref o)) if o.numbers == ["12", "3"]));
        // The result, given alone or with its calculation, is not asked about.
        for answer in [
            "36",
            "12 * 3 = 36",
            "It is 12 x 3 = 36.",
            "No number is there.",
        ] {
            assert_eq!(unshown_calculation(answer, &times), None, "{answer}");
        }
    }

    #[test]
    fn an_operation_is_a_word_or_sign_then_a_number() {
        for (request, operation) in [
            ("Read n.txt and tell me that number plus 5.", Some("plus 5")),
            ("What is the count divided by 2?", Some("divided by 2")),
            ("Give me the value + 10", Some("+ 10")),
            ("What is the port TIMES 2.5?", Some("TIMES 2.5")),
            // "times" as in "how often", or a word after the operation: none.
            ("How many times does ERROR appear in app.log?", None),
            ("Add the numbers in a.txt and b.txt.", None),
            ("What is 2 times the port?", None),
            ("Count the lines of a-b.txt", None),
            // A range or a size between two numbers: none; a sign after a word still is.
            ("Show lines 1 - 10 of app.log and count the errors.", None),
            ("Which image in pics is 1920 x 1080?", None),
            ("What is the count x 4?", Some("x 4")),
        ] {
            assert_eq!(operation_in(request).as_deref(), operation, "{request}");
        }
        // No operation: an answer from the file is the answer.
        let read = after_one_call(
            "What number does count.txt hold?",
            "read_file",
            json!({"path": "count.txt"}),
            "     1\t12",
        );
        assert_eq!(unshown_calculation("12", &read), None);
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
            if let Some(Uncalculated::Unshown(numbers)) = unshown_calculation(&answer, &conversation) {
                prop_assert!(!numbers.is_empty());
                for number in &numbers {
                    prop_assert!(!numbers_in(&result).any(|seen| &seen == number));
                }
            }
        }
    }
}
