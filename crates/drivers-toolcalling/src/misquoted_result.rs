//! A reply that quotes, as what a call returned, lines no result holds. Asked "Is debug mode
//! enabled in config.yaml?", the 1.5B model searched the file for `debug_mode: true`, was
//! told "(no line of `config.yaml` contains `debug_mode: true`; ...)", and answered "The
//! `search_files` call returned the following lines from `config.yaml`:" with a code block
//! holding `debug_mode: true`, and "This indicates that debug mode is enabled." (issue 36,
//! development task d18; the file says `debug: false`). After the tools ran, a reply whose
//! code block is introduced as a result ("returned", "the output", "the following lines",
//! ...) and none of whose lines any result of the execution holds is asked about once
//! (`reply_nudge`); given again after that (the model did, d18), it is not an answer, and an
//! answer on stop that misquotes is no answer either (the page of results is asked).
//!
//! The same holds for a result written as JSON. In issue 32's long conversation the 1.5B
//! model, after a real `read_file` call, answered "To read the file docs/deploy.md, I called
//! the `read_file` function ... The result was a JSON object ... "result": {"lines": [...]}"
//! with lines the file does not have, five times in one run, and later turns read them as
//! fact. A reply that tells of a call or its result and holds a JSON `"result"` or `"output"`
//! field none of whose values any result of the execution holds misquotes a result too.

use messages::{Message, Messages, Role};

use crate::fenced::fenced_blocks;
use crate::latest_results::{execution_messages, text_of};
use crate::word_set::WordSet;

/// What introduces a code block as a tool's output, in the text just before it.
static RESULT_WORDS: WordSet<'static> = WordSet::new(&[
    "returned",
    "returns",
    "the output",
    "the result",
    "following lines",
    "following line",
    "following content",
    "following output",
    "shows the following",
    "contains the following",
    "as follows",
]);

/// The most bytes before a block that are read for [`RESULT_WORDS`]: the sentence that
/// introduces it.
const INTRODUCTION_BYTES: usize = 160;

/// What the model is told after such a reply.
pub(crate) const MISQUOTED_RESULT_NUDGE: &str = "Your last reply quotes lines or values as \
what a tool returned, but no tool result above holds them. Read the results above again and \
answer in plain words from what they actually say; if they do not hold the answer, say so.";

/// The JSON fields a model writes a made-up tool result under.
const RESULT_FIELDS: [&str; 2] = ["\"result\"", "\"output\""];

/// What tells, before a JSON result field, that the reply reports a call: [`RESULT_WORDS`] or
/// these.
static CALL_WORDS: WordSet<'static> = WordSet::new(&["called", "i used", "i ran", "calling"]);

/// The most bytes of a JSON field's value that are read for its values.
const JSON_VALUE_BYTES: usize = 2_000;

/// The lines of each code block of `reply` that is introduced as a tool's output, trimmed,
/// empty lines left out.
fn quoted_blocks(reply: &str) -> Vec<Vec<&str>> {
    let mut blocks = Vec::new();
    let mut before_start = 0;
    for block in fenced_blocks(reply) {
        let before = &reply[before_start..block.start];
        let introduction =
            &before[before.floor_char_boundary(before.len().saturating_sub(INTRODUCTION_BYTES))..];
        if RESULT_WORDS.in_text(introduction) {
            let lines: Vec<&str> = block
                .body
                .lines()
                .map(str::trim)
                .filter(|line| !line.is_empty())
                .collect();
            if !lines.is_empty() {
                blocks.push(lines);
            }
        }
        before_start = block.end;
    }
    blocks
}

/// The values of each JSON `"result"` or `"output"` field of `reply` that follows words
/// telling of a call or its result ([`RESULT_WORDS`], [`CALL_WORDS`]) anywhere before it in
/// the reply: the strings and bare numbers or words in the field's value that are not keys.
/// A field whose value holds none is left out.
fn quoted_json_values(reply: &str) -> Vec<Vec<&str>> {
    let mut fields = Vec::new();
    for field in RESULT_FIELDS {
        let mut from = 0;
        // Whether the reply told of a call before `from` (read once, in pieces: linear).
        let mut told = false;
        while let Some(found) = find_ignoring_ascii_case(&reply[from..], field) {
            let key_start = from + found;
            let key_end = key_start + field.len();
            let before = &reply[from..key_start];
            told = told || RESULT_WORDS.in_text(before) || CALL_WORDS.in_text(before);
            from = key_end;
            let Some(value) = reply[key_end..].trim_start().strip_prefix(':') else {
                continue;
            };
            if !told {
                continue;
            }
            let value = value.trim_start();
            let value = &value[..value.floor_char_boundary(JSON_VALUE_BYTES.min(value.len()))];
            let leaves = json_leaves(value);
            if !leaves.is_empty() {
                fields.push(leaves);
            }
        }
    }
    fields
}

/// Where `needle` (ASCII) first occurs in `haystack`, ignoring ASCII case.
fn find_ignoring_ascii_case(haystack: &str, needle: &str) -> Option<usize> {
    haystack
        .as_bytes()
        .windows(needle.len())
        .position(|window| window.eq_ignore_ascii_case(needle.as_bytes()))
}

/// The values in the JSON value that starts `text` (which may run on past it, or be cut
/// short): the contents of its strings that are not keys, and its bare numbers and words
/// (`true`, `null`), up to where the value ends.
fn json_leaves(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut leaves = Vec::new();
    let mut depth = 0usize;
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                if depth <= 1 {
                    break;
                }
                depth -= 1;
            }
            b'"' => {
                let start = at + 1;
                let mut end = start;
                while end < bytes.len() && bytes[end] != b'"' {
                    end += if bytes[end] == b'\\' { 2 } else { 1 };
                }
                let end = end.min(bytes.len());
                let is_key = text[end.saturating_add(1).min(text.len())..]
                    .trim_start()
                    .starts_with(':');
                if !is_key && end > start {
                    leaves.push(&text[start..end]);
                }
                at = end;
                if depth == 0 {
                    break;
                }
            }
            b',' | b'\n' if depth == 0 => break,
            byte if byte.is_ascii_alphanumeric() || byte == b'-' => {
                let start = at;
                while at < bytes.len()
                    && (bytes[at].is_ascii_alphanumeric()
                        || matches!(bytes[at], b'-' | b'.' | b'_'))
                {
                    at += 1;
                }
                leaves.push(&text[start..at]);
                if depth == 0 {
                    break;
                }
                continue;
            }
            _ => {}
        }
        at += 1;
    }
    leaves
}

/// `text` lower-cased with runs of whitespace made one space.
fn normalized(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The lines of a tool result, normalized, each without the numbering the file tools put
/// before it (`     2\t`, `2: `, `src/config.rs:3: `).
pub(crate) fn result_lines(result: &str) -> Vec<String> {
    result
        .lines()
        .map(|line| normalized(unnumbered(line)))
        .filter(|line| !line.is_empty())
        .collect()
}

/// `line` without a leading line number (`     2\t`, `2: `) or `path:number: `.
pub(crate) fn unnumbered(line: &str) -> &str {
    let trimmed = line.trim_start();
    let digits = trimmed.len()
        - trimmed
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .len();
    if digits > 0 {
        let rest = &trimmed[digits..];
        if let Some(rest) = rest.strip_prefix('\t').or_else(|| rest.strip_prefix(": ")) {
            return rest;
        }
    }
    // `path:number: text`
    if let Some((path, rest)) = trimmed.split_once(':') {
        if !path.contains(' ') {
            let numbered = rest.trim_start_matches(|c: char| c.is_ascii_digit());
            if numbered.len() < rest.len() {
                if let Some(text) = numbered.strip_prefix(": ") {
                    return text;
                }
            }
        }
    }
    line
}

/// Whether the quoted `line` (normalized) is one of `lines`: most of a result line, in it. A
/// pattern named inside a tool's note ("(no line of `config.yaml` contains `debug_mode:
/// true`; ...)") is not that line quoted.
fn quotes_a_line(line: &str, lines: &[String]) -> bool {
    lines
        .iter()
        .any(|result| result.contains(line) && line.len() * 2 >= result.len())
}

/// Whether `reply` quotes a code block as a tool's output none of whose lines is a line of a
/// tool result of the running execution in `conversation` (compared ignoring case, spacing
/// and line numbers). `false` when no tool has returned.
pub(crate) fn misquotes_a_result(reply: &str, conversation: &Messages) -> bool {
    misquotes_a_result_of(reply, execution_messages(conversation))
}

/// [`misquotes_a_result`] for the messages of an execution, given in any order (the answer
/// on stop reads those before its instruction).
pub(crate) fn misquotes_a_result_of<'m>(
    reply: &str,
    execution: impl Iterator<Item = &'m Message>,
) -> bool {
    let blocks = if reply.contains("```") {
        quoted_blocks(reply)
    } else {
        Vec::new()
    };
    let json = if reply.contains('"') {
        quoted_json_values(reply)
    } else {
        Vec::new()
    };
    if blocks.is_empty() && json.is_empty() {
        return false;
    }
    let lines: Vec<String> = execution
        .filter(|message| message.role() == Role::Tool)
        .flat_map(|message| result_lines(&text_of(message)))
        .collect();
    if lines.is_empty() {
        return false;
    }
    let misquoted_block = blocks.iter().any(|quoted| {
        quoted
            .iter()
            .map(|line| normalized(unnumbered(line)))
            .all(|line| !line.is_empty() && !quotes_a_line(&line, &lines))
    });
    misquoted_block
        || json
            .iter()
            .any(|values| values.iter().all(|value| !holds_a_value(value, &lines)))
}

/// Whether a line of `lines` holds the JSON string `value`, or one of its lines when it has
/// escaped line breaks (`"a\\nb"`), compared ignoring case, spacing and line numbers.
fn holds_a_value(value: &str, lines: &[String]) -> bool {
    value
        .split("\\n")
        .map(|piece| normalized(unnumbered(piece)))
        .filter(|piece| !piece.is_empty())
        .any(|piece| lines.iter().any(|line| line.contains(&piece)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tools::after_one_call;
    use serde_json::json;

    fn searched(result: &str) -> Messages {
        after_one_call(
            "Is debug mode enabled in config.yaml?",
            "search_files",
            json!({"pattern": "debug_mode: true", "path": "config.yaml"}),
            result,
        )
    }

    const D18: &str = "The `search_files` call returned the following lines from \
                       `config.yaml`:\n```\ndebug_mode: true\n```\nThis indicates that debug \
                       mode is enabled in `config.yaml`.";

    #[test]
    fn a_block_quoted_as_a_result_that_no_result_holds_is_a_misquote() {
        // d18: the searched pattern is named in the tool's note, not a line of the file
        let none = searched(
            "(no line of `config.yaml` contains `debug_mode: true`; read_file shows the whole \
             file)",
        );
        assert!(misquotes_a_result(D18, &none));
        let read = searched("     1\tname: demo\n     2\tdebug: false\n     3\tport: 80");
        assert!(misquotes_a_result(D18, &read));
        // a true quote is no misquote, whatever the spacing, case and numbering
        let true_quote = "The file returned:\n```yaml\nDEBUG:   false\n```\nDebug is off.";
        assert!(!misquotes_a_result(true_quote, &read));
        let numbered = "The output:\n```\n2: debug: false\n```";
        assert!(!misquotes_a_result(numbered, &read));
        let found = searched("1 line of `config.yaml` contains `debug`:\n2: debug: false");
        assert!(!misquotes_a_result(true_quote, &found));
        let listed = searched("src/config.rs:3: pub fn parse_config() -> Settings {");
        let quoted = "The search returned:\n```rust\npub fn parse_config() -> Settings {\n```";
        assert!(!misquotes_a_result(quoted, &listed));
        // one line of the block found is enough (the model may add a line of its own)
        let partly = "The result was:\n```\ndebug: false\n# so it is off\n```";
        assert!(!misquotes_a_result(partly, &read));
        // a block not introduced as a result (code the model wrote) is not judged
        let written = "Here is a fixed version:\n```\ndebug: true\n```";
        assert!(!misquotes_a_result(written, &read));
        // no block, no tool result: nothing to judge
        assert!(!misquotes_a_result("Debug mode is enabled.", &read));
        assert!(!misquotes_a_result(
            D18,
            &Messages::new().appended(Message::user("Is debug mode enabled?"))
        ));
        // an unclosed fence is not a block
        assert!(!misquotes_a_result(
            "The output was:\n```\ndebug_mode: true",
            &read
        ));
    }

    /// Issue 32, separated mode: after a real `read_file` call, a claim of the call with a
    /// made-up result written as JSON.
    #[test]
    fn a_json_result_that_no_result_holds_is_a_misquote() {
        let read = searched("     1\tname: demo\n     2\tdebug: false\n     3\tport: 80");
        let forged = "To read the file config.yaml, I called the `read_file` function with the \
                      path \"config.yaml\". The result was a JSON object with the function name \
                      \"read_file\" and the arguments {\"path\": \"config.yaml\"}, \"result\": \
                      {\"lines\": [\"debug: true\", \"port: 8080\"]}}. Debug mode is enabled.";
        assert!(misquotes_a_result(forged, &read));
        let fenced = "The output was:\n```json\n{\"output\": \"DEBUG_MODE=1\"}\n```";
        assert!(misquotes_a_result(fenced, &read));
        let escaped = "I called read_file: {\"result\": \"name: nope\\ndebug: on\"}";
        assert!(misquotes_a_result(escaped, &read));
        // values a result holds are a true quote, in any case, spacing or numbering
        let true_json = "I called `read_file` and the result was {\"result\": {\"lines\": \
                         [\"DEBUG:  false\", \"3: port: 80\"]}}. Debug is off.";
        assert!(!misquotes_a_result(true_json, &read));
        let escaped_true = "I called read_file: {\"result\": \"name: x\\ndebug: false\"}";
        assert!(!misquotes_a_result(escaped_true, &read));
        let number = "The search returned {\"output\": 80}.";
        assert!(!misquotes_a_result(number, &read));
        // a JSON field that no words of a call or result come before is the model's own JSON
        let written = "Here is the config as JSON: {\"output\": \"dist\", \"debug\": true}";
        assert!(!misquotes_a_result(written, &read));
        // a field without a value, or no tool result, is not judged
        assert!(!misquotes_a_result(
            "The result was {\"result\": []}",
            &read
        ));
        assert!(!misquotes_a_result(
            forged,
            &Messages::new().appended(Message::user("Is debug mode enabled?"))
        ));
        // "result" written as a word or as a value is no field
        assert!(!misquotes_a_result(
            "The result was \"result\" and nothing else.",
            &read
        ));
    }

    #[test]
    fn the_values_of_a_json_field_are_its_strings_and_bare_words_not_its_keys() {
        assert_eq!(
            json_leaves(r#"{"lines": ["a", "b"], "n": 3, "ok": true}, "other": "x""#),
            ["a", "b", "3", "true"]
        );
        assert_eq!(json_leaves(r#""one", "two""#), ["one"]);
        assert_eq!(json_leaves("42, more"), ["42"]);
        assert_eq!(json_leaves(r#"{"a": "x\"y"}"#), [r#"x\"y"#]);
        // cut short: what is there
        assert_eq!(json_leaves(r#"{"lines": ["a", "b"#), ["a", "b"]);
        assert!(json_leaves("").is_empty());
        assert!(json_leaves("{}").is_empty());
        // multi-byte text is cut on characters
        assert_eq!(json_leaves(r#"["é ü", "ñ"]"#), ["é ü", "ñ"]);
    }

    proptest::proptest! {
        /// Any reply, hostile bytes and cut JSON included, is judged without a panic, and the
        /// values found lie inside the field's text.
        #[test]
        fn any_reply_is_judged(reply in r#"(I called |"result"|"output"|: |[{}\[\],"\\]|é|x|7| |\n){0,40}"#) {
            let read = searched("     1\tdebug: false");
            let _ = misquotes_a_result(&reply, &read);
            for leaf in json_leaves(&reply) {
                proptest::prop_assert!(reply.contains(leaf));
            }
        }
    }

    #[test]
    fn line_numbers_of_the_file_tools_are_left_out() {
        assert_eq!(unnumbered("     2\tdebug: false"), "debug: false");
        assert_eq!(unnumbered("2: debug: false"), "debug: false");
        assert_eq!(unnumbered("src/a.rs:12: fn a()"), "fn a()");
        assert_eq!(unnumbered("port: 80"), "port: 80");
        assert_eq!(unnumbered("2024: a year"), "a year");
    }
}
