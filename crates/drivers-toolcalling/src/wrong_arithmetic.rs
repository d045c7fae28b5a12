//! A reply whose own arithmetic is wrong: "120 + 340 + 215 + 95 = 890" (the column sums to
//! 770), "37 + 5 = 32". Small models add badly, and they often show the sum they did: the
//! 1.5B model answered the eval's CSV total with 890 and 1010 for 770, and "the number plus
//! 5" with 32 for 37 + 5 (issue 36, development tasks d15 and d25). The numbers are in the
//! reply itself, so the loop can check the arithmetic the way a calculator would, without
//! guessing what the model should have computed: a reply that writes an expression of
//! numbers and operators, then `=` (or "is", "equals" after a sum or a product) and a
//! number that is not its value, is asked about once, with the right value. Asked to compute
//! 123 * 45 with the shell, the 1.5B model ran a command that failed, then answered "The
//! result of `123 * 45` is `5415`." (a probe of issue 36's task kinds, 2026-12-07): a
//! product, in code spans.
//!
//! Only plain expressions are read: numbers (with a decimal point, or commas between groups
//! of three digits), `+`, `-`, `*`, `/`, `×`, `÷`, `−`, and `x` between spaces, evaluated
//! with `*` and `/` before `+` and `-`. Parentheses, units and code are not read (a code
//! span that holds only a number or an expression is): an expression next to a
//! parenthesis, a letter or a percent sign is left alone, never judged.
//! A result written with decimals is compared at its own precision (`10 / 3 = 3.33` holds).
//! One pass over the reply, linear in its length.

use crate::fenced::fenced_blocks;

/// Arithmetic a reply got wrong: the expression and result as the reply wrote them, and the
/// expression's value ([`wrong_arithmetic`]).
#[derive(Clone, Debug, PartialEq)]
pub struct WrongArithmetic {
    /// The expression and the wrong result, as read (`120 + 340 + 215 + 95 = 890`).
    pub written: String,
    /// The expression alone (`120 + 340 + 215 + 95`).
    pub expression: String,
    /// Its value, written as the inputs allow (`770`, `3.75`).
    pub value: String,
}

impl WrongArithmetic {
    /// What the model is told after a reply with this mistake.
    pub(crate) fn nudge(&self) -> String {
        format!(
            "Your last reply says {}, but {} = {}. Correct the arithmetic and answer the \
             request again with the right number.",
            self.written, self.expression, self.value
        )
    }
}

/// The first expression of `reply` (outside code blocks) whose written result is not its
/// value, if any: what the model is asked about when its arithmetic is wrong.
///
/// ```
/// use drivers_toolcalling::wrong_arithmetic;
///
/// let found = wrong_arithmetic("The total is 120 + 340 + 215 + 95 = 890.").unwrap();
/// assert_eq!(found.value, "770");
/// assert_eq!(wrong_arithmetic("17 + 25 = 42, so the sum is 42."), None);
/// assert_eq!(wrong_arithmetic("The sum of 17 and 25 is 43."), None); // no expression
/// ```
pub fn wrong_arithmetic(reply: &str) -> Option<WrongArithmetic> {
    // Cheap exits: no digit, or no `=` and no word that gives a sum's result.
    if !reply.bytes().any(|b| b.is_ascii_digit())
        || !(reply.contains('=') || reply.contains(" is ") || reply.contains("equals"))
    {
        return None;
    }
    let tokens = tokens(&outside_code(reply));
    let mut at = 0;
    while at < tokens.len() {
        if let Some((found, next)) = judged_chain(&tokens, at) {
            if found.is_some() {
                return found;
            }
            at = next.max(at + 1);
        } else {
            at += 1;
        }
    }
    None
}

/// The numbers `reply` writes outside code, each as its digits and decimal point (group
/// commas left out: `1,010` is `1010`), or `None` when it writes an expression (a number, an
/// operator, a number): a calculation shown, which [`wrong_arithmetic`] judges. Numbers glued
/// to a letter (`3rd`, `v2`) are not read. Used by `unshown_calculation`.
pub(crate) fn numbers_without_expression(reply: &str) -> Option<Vec<String>> {
    if !reply.bytes().any(|b| b.is_ascii_digit()) {
        return Some(Vec::new());
    }
    let tokens = tokens(&outside_code(reply));
    let mut numbers = Vec::new();
    for (at, token) in tokens.iter().enumerate() {
        if let Token::Number(_, _, written) = token {
            if let (Some(Token::Op(_)), Some(Token::Number(..))) =
                (tokens.get(at + 1), tokens.get(at + 2))
            {
                return None;
            }
            numbers.push(written.replace(',', ""));
        }
    }
    Some(numbers)
}

/// `reply` with its fenced code blocks and inline code spans blanked out (a block's lines
/// become line breaks, a span's characters `#`), so that nothing in code is judged.
fn outside_code(reply: &str) -> String {
    let mut text = String::with_capacity(reply.len());
    let mut at = 0;
    for block in fenced_blocks(reply) {
        blank_spans(&reply[at..block.start], &mut text);
        text.extend(std::iter::repeat_n(
            '\n',
            1 + block.body.matches('\n').count(),
        ));
        at = block.end;
    }
    blank_spans(&reply[at..], &mut text);
    text
}

/// `prose` pushed to `text` with its inline code spans (`` `x` ``) blanked, except a span
/// that holds only arithmetic ([`only_arithmetic`]: "The result of `123 * 45` is `5415`."
/// is read as written); a span does not run past its line.
fn blank_spans(prose: &str, text: &mut String) {
    for (n, line) in prose.split('\n').enumerate() {
        if n > 0 {
            text.push('\n');
        }
        // Pieces at odd places are inside a span (a last one unclosed runs to the line's end).
        for (k, piece) in line.split('`').enumerate() {
            if k > 0 {
                text.push(' ');
            }
            if k % 2 == 0 || only_arithmetic(piece) {
                text.push_str(piece);
            } else {
                text.extend(std::iter::repeat_n('#', piece.chars().count()));
            }
        }
    }
}

/// Whether a code span's text is a number or an expression and nothing else: digits, with
/// spaces, operators, decimal points and group commas. A span with `=` quotes a whole
/// equation (what a program printed) and is left out.
fn only_arithmetic(span: &str) -> bool {
    span.bytes().any(|b| b.is_ascii_digit())
        && span
            .chars()
            .all(|c| c.is_ascii_digit() || " +-*/.,×÷−".contains(c))
}

/// A piece of the text the check reads.
#[derive(Clone, Debug, PartialEq)]
enum Token {
    /// A number, its value, the decimals written, and the text.
    Number(f64, usize, String),
    /// `+`, `-`, `*` or `/`.
    Op(char),
    /// `=`.
    Equals,
    /// "is", "equals": a result after a sum.
    Is,
    /// Anything else: a word, punctuation, a line break.
    Break,
    /// A parenthesis, a percent sign, a letter glued to a number: what is around it is not
    /// judged.
    Foreign,
}

/// The tokens of `text`, in one pass.
fn tokens(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == ' ' || c == '\t' {
            i += 1;
        } else if c.is_ascii_digit() {
            let (token, next) = number(&chars, i);
            // A number glued to a letter (`3rd`, `v2`, `10ms`) is not arithmetic.
            let glued = |k: usize| {
                chars
                    .get(k)
                    .is_some_and(|c| c.is_alphanumeric() || *c == '_')
            };
            if glued(next) || (i > 0 && glued(i - 1)) {
                tokens.push(Token::Foreign);
            } else {
                tokens.push(token);
            }
            i = next;
        } else if c == '*' && chars.get(i + 1) == Some(&'*') {
            // Markdown bold, around a number or an expression.
            tokens.push(Token::Break);
            i += 2;
        } else if matches!(c, '+' | '-' | '*' | '/' | '×' | '÷' | '−') {
            tokens.push(Token::Op(match c {
                '×' => '*',
                '÷' => '/',
                '−' => '-',
                other => other,
            }));
            i += 1;
        } else if (c == 'x' || c == 'X')
            && i > 0
            && chars[i - 1] == ' '
            && chars.get(i + 1) == Some(&' ')
        {
            tokens.push(Token::Op('*'));
            i += 1;
        } else if c == '=' {
            tokens.push(Token::Equals);
            i += 1;
        } else if c.is_alphabetic() {
            let start = i;
            while i < chars.len() && chars[i].is_alphabetic() {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect::<String>().to_lowercase();
            tokens.push(if word == "is" || word == "equals" {
                Token::Is
            } else {
                Token::Break
            });
        } else if matches!(c, '(' | ')' | '%' | '^' | '[' | ']' | '$' | '€' | '£' | '#') {
            tokens.push(Token::Foreign);
            i += 1;
        } else {
            tokens.push(Token::Break);
            i += 1;
        }
    }
    tokens
}

/// The number starting at `chars[start]` (a digit): digits, groups of three after commas,
/// a decimal part; and the index after it.
fn number(chars: &[char], start: usize) -> (Token, usize) {
    let digit = |k: usize| chars.get(k).is_some_and(char::is_ascii_digit);
    let mut i = start;
    let mut text = String::new();
    while digit(i) {
        text.push(chars[i]);
        i += 1;
    }
    // `1,010`: a comma, then exactly three digits.
    while chars.get(i) == Some(&',') && (1..=3).all(|k| digit(i + k)) && !digit(i + 4) {
        text.extend(&chars[i + 1..i + 4]);
        i += 4;
    }
    let mut decimals = 0;
    if chars.get(i) == Some(&'.') && digit(i + 1) {
        text.push('.');
        i += 1;
        while digit(i) {
            text.push(chars[i]);
            decimals += 1;
            i += 1;
        }
    }
    let written: String = chars[start..i].iter().collect();
    match text.parse::<f64>() {
        Ok(value) => (Token::Number(value, decimals, written), i),
        Err(_) => (Token::Foreign, i),
    }
}

/// An expression read: its value, its text, the most decimals of its numbers, whether it
/// has an operator and whether all are `+` or `×`, and where it ends.
struct Expression {
    value: Option<f64>,
    /// The first number, signed, and its text: the result of the link before in a running
    /// sum (`120 + 340 = 460 + 215 = 675`).
    first: (f64, String),
    text: String,
    decimals: usize,
    operators: usize,
    /// Every operator is `+` or `×`: "is" after such an expression gives its result (`-`
    /// and `/` also write ranges and dates: "pages 10-20 is", "12/05 is").
    sums_and_products: bool,
    end: usize,
}

/// The expression starting at `tokens[at]`: a number, then operator-number pairs. A leading
/// `-` makes the first number negative where `signed` (a result: `7 - 9 = -2`); elsewhere it
/// is more often a list's bullet (`- 120 + 340 = 460`).
fn expression(tokens: &[Token], at: usize, signed: bool) -> Option<Expression> {
    let mut i = at;
    let negative = signed
        && tokens.get(i) == Some(&Token::Op('-'))
        && matches!(tokens.get(i + 1), Some(Token::Number(..)));
    if negative {
        i += 1;
    }
    let Some(Token::Number(first, decimals, written)) = tokens.get(i) else {
        return None;
    };
    let mut text = if negative {
        format!("-{written}")
    } else {
        written.clone()
    };
    let mut most_decimals = *decimals;
    // Sum of terms; `term` is the running product of the current term.
    let mut terms: Vec<f64> = Vec::new();
    let mut term = if negative { -first } else { *first };
    let mut operators = 0;
    let mut sums_and_products = true;
    let mut defined = true;
    i += 1;
    while let (Some(Token::Op(op)), Some(Token::Number(n, d, w))) =
        (tokens.get(i), tokens.get(i + 1))
    {
        operators += 1;
        sums_and_products &= matches!(op, '+' | '*');
        most_decimals = most_decimals.max(*d);
        text.push_str(&format!(" {} {w}", if *op == '*' { '×' } else { *op }));
        match op {
            '+' => {
                terms.push(term);
                term = *n;
            }
            '-' => {
                terms.push(term);
                term = -n;
            }
            '*' => term *= n,
            _ => {
                if *n == 0.0 {
                    defined = false;
                } else {
                    term /= n;
                }
            }
        }
        i += 2;
    }
    terms.push(term);
    let first_text = text.split(' ').next().unwrap_or_default().to_owned();
    Some(Expression {
        value: defined.then(|| terms.iter().sum()),
        first: (if negative { -first } else { *first }, first_text),
        text,
        decimals: most_decimals,
        operators,
        sums_and_products,
        end: i,
    })
}

/// Reads a chain `expression (= expression)+` at `tokens[at]` and judges each link; `None`
/// when none starts there. Returns the first wrong link, if any, and where the chain ends.
fn judged_chain(tokens: &[Token], at: usize) -> Option<(Option<WrongArithmetic>, usize)> {
    // An expression next to something foreign (a parenthesis, a unit) is left alone.
    if at > 0 && tokens[at - 1] == Token::Foreign {
        return None;
    }
    let mut left = expression(tokens, at, false)?;
    let mut end = left.end;
    loop {
        let link = tokens.get(end);
        let words = link == Some(&Token::Is);
        if link != Some(&Token::Equals) && !words {
            return Some((None, end));
        }
        let Some(right) = expression(tokens, end + 1, true) else {
            return Some((None, end + 1));
        };
        let foreign_after = tokens.get(right.end) == Some(&Token::Foreign);
        // "is"/"equals" only read a result after a sum or a product: "pages 10-20 is 11
        // pages" is no arithmetic; `=` is.
        let judged = !foreign_after
            && (left.operators > 0 || right.operators > 0)
            && (!words || (left.sums_and_products && left.operators > 0 && right.operators == 0));
        if judged {
            if let (Some(expected), Some(written)) = (left.value, right.value) {
                let decimals = left.decimals.max(right.decimals);
                // `460 + 215` after `120 + 340 =` is a running sum when it starts with the
                // value before it; otherwise the two sides must be equal.
                let running = right.operators > 0 && agrees(expected, right.first.0, decimals);
                if !running && !agrees(expected, written, right.decimals) {
                    let link_text = if words { "is" } else { "=" };
                    let result = if right.operators > 0 {
                        &right.first.1
                    } else {
                        &right.text
                    };
                    return Some((
                        Some(WrongArithmetic {
                            written: format!("{} {link_text} {result}", left.text),
                            expression: left.text,
                            value: shown(expected, decimals),
                        }),
                        right.end,
                    ));
                }
            }
        }
        if foreign_after {
            return Some((None, right.end));
        }
        end = right.end;
        left = right;
    }
}

/// Whether `written`, with `decimals` decimals, is `expected` at that precision.
fn agrees(expected: f64, written: f64, decimals: usize) -> bool {
    let step = 10f64.powi(-i32::try_from(decimals.min(12)).unwrap_or(12));
    (expected - written).abs() <= step / 2.0 + expected.abs() * 1e-12
}

/// `value` written with at most `decimals` decimals (at least two for a fraction of
/// integers), without trailing zeros.
fn shown(value: f64, decimals: usize) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        return format!("{value:.0}");
    }
    let text = format!("{value:.*}", decimals.max(2));
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn wrong(reply: &str) -> Option<(String, String)> {
        wrong_arithmetic(reply).map(|found| (found.written, found.value))
    }

    #[test]
    fn a_wrong_sum_is_found_with_its_value() {
        assert_eq!(
            wrong("The total is 120 + 340 + 215 + 95 = 890."),
            Some(("120 + 340 + 215 + 95 = 890".into(), "770".into()))
        );
        assert_eq!(
            wrong("37 + 5 = 32, so the answer is 32."),
            Some(("37 + 5 = 32".into(), "42".into()))
        );
        assert_eq!(
            wrong("The total of the amount column is **120 + 340 + 215 + 95 = 1,010**."),
            Some(("120 + 340 + 215 + 95 = 1,010".into(), "770".into()))
        );
        assert_eq!(
            wrong("Adding them: 120 + 340 + 215 + 95 is 890."),
            Some(("120 + 340 + 215 + 95 is 890".into(), "770".into()))
        );
    }

    #[test]
    fn a_product_given_with_is_and_in_code_spans_is_judged() {
        // The 1.5B model, asked to compute 123 * 45 with the shell, after its command failed.
        assert_eq!(
            wrong("The result of `123 * 45` is `5415`."),
            Some(("123 × 45 is 5415".into(), "5535".into()))
        );
        assert_eq!(
            wrong("6 × 7 is 41"),
            Some(("6 × 7 is 41".into(), "42".into()))
        );
        for right in [
            "The result of `123 * 45` is `5535`.",
            "3 x 4 is 12, and `1,200 + 30` is `1,230`.",
        ] {
            assert_eq!(wrong(right), None, "{right}");
        }
    }

    #[test]
    fn running_sums_and_other_operators_are_judged_link_by_link() {
        assert_eq!(
            wrong("120 + 340 = 460, 460 + 215 = 675, 675 + 95 = 770"),
            None
        );
        assert_eq!(
            wrong("120 + 340 = 460 + 215 = 665"),
            Some(("460 + 215 = 665".into(), "675".into()))
        );
        assert_eq!(
            wrong("3 x 4 = 12 and 12 × 2 = 24; 10 / 4 = 2.5; 7 - 9 = -2"),
            None
        );
        assert_eq!(
            wrong("2 + 3 × 4 = 20"),
            Some(("2 + 3 × 4 = 20".into(), "14".into()))
        );
        assert_eq!(wrong("7 − 9 = 2"), Some(("7 - 9 = 2".into(), "-2".into())));
    }

    #[test]
    fn decimals_are_compared_at_the_written_precision() {
        assert_eq!(wrong("10 / 3 = 3.33"), None);
        assert_eq!(wrong("1.5 + 2.25 = 3.75"), None);
        assert_eq!(
            wrong("1.5 + 2.25 = 3.5"),
            Some(("1.5 + 2.25 = 3.5".into(), "3.75".into()))
        );
        assert_eq!(wrong("1 / 0 = 5"), None);
    }

    #[test]
    fn prose_around_code_is_judged_and_the_code_is_not() {
        assert_eq!(
            wrong("```\nlet total = 120 + 340 = 1;\n```\nSo `a` is 17 + 25 = 43."),
            Some(("17 + 25 = 43".into(), "42".into()))
        );
        assert_eq!(wrong("`17 + 25 = 43` is what the test prints."), None);
    }

    #[test]
    fn text_that_is_not_arithmetic_is_left_alone() {
        for reply in [
            "The total is 770.",
            "The sum of 17 and 25 is 42.",
            "Pages 10-20 is 11 pages.",
            "The date 2023-04-23 is a Sunday.",
            "The date `2023-04-23` is 3 days away.",
            "The deadline 12/05 is 2 weeks off.",
            "Run `make -j 4` when `cargo` is 2 versions behind.",
            "Use `x = 1 + 1 = 3` in code.",
            "```\nlet total = 120 + 340 = 1;\n```",
            "The port is 8472 = the default.",
            "(2 + 3) × 4 = 20",
            "Version 1.4 + 0.1 = 1.5",
            "It costs 10 + 5 = 20% more.",
            "- 120 + 340 = 460",
            "Step - 120 + 340 = 460",
            "Set a = 3 and b = 4.",
            "3rd + 4 = 1",
            "",
        ] {
            assert_eq!(wrong(reply), None, "{reply}");
        }
    }

    #[test]
    fn the_nudge_names_the_mistake_and_the_value() {
        let found = wrong_arithmetic("So 17 + 25 = 43.").unwrap();
        assert_eq!(
            found.nudge(),
            "Your last reply says 17 + 25 = 43, but 17 + 25 = 42. Correct the arithmetic and \
             answer the request again with the right number."
        );
    }

    proptest! {
        /// A sum written with its right value is never judged wrong, and with a wrong one
        /// always is; any text is read without a panic.
        #[test]
        fn sums_of_integers_are_judged_by_their_value(
            terms in proptest::collection::vec(0u32..100_000, 2..8),
            off in 1u32..1000,
        ) {
            let total: u64 = terms.iter().map(|t| u64::from(*t)).sum();
            let expression = terms.iter().map(u32::to_string).collect::<Vec<_>>().join(" + ");
            let right = format!("The total is {expression} = {total}.");
            prop_assert_eq!(wrong_arithmetic(&right), None);
            let wrong_total = total + u64::from(off);
            let written = format!("The total is {expression} = {wrong_total}.");
            let found = wrong_arithmetic(&written);
            prop_assert_eq!(found.map(|f| f.value), Some(total.to_string()));
        }

        #[test]
        fn any_text_is_read_without_a_panic(text in "\\PC{0,200}") {
            let _ = wrong_arithmetic(&text);
        }
    }
}
