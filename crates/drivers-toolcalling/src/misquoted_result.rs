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
pub(crate) const MISQUOTED_RESULT_NUDGE: &str = "Your last reply quotes lines as what a tool \
returned, but no tool result above holds them. Read the results above again and answer from \
what they actually say; if they do not hold the answer, say so.";

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

/// `text` lower-cased with runs of whitespace made one space.
fn normalized(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The lines of a tool result, normalized, each without the numbering the file tools put
/// before it (`     2\t`, `2: `, `src/config.rs:3: `).
fn result_lines(result: &str) -> Vec<String> {
    result
        .lines()
        .map(|line| normalized(unnumbered(line)))
        .filter(|line| !line.is_empty())
        .collect()
}

/// `line` without a leading line number (`     2\t`, `2: `) or `path:number: `.
fn unnumbered(line: &str) -> &str {
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
    if !reply.contains("```") {
        return false;
    }
    let blocks = quoted_blocks(reply);
    if blocks.is_empty() {
        return false;
    }
    let lines: Vec<String> = execution
        .filter(|message| message.role() == Role::Tool)
        .flat_map(|message| result_lines(&text_of(message)))
        .collect();
    if lines.is_empty() {
        return false;
    }
    blocks.iter().any(|quoted| {
        quoted
            .iter()
            .map(|line| normalized(unnumbered(line)))
            .all(|line| !line.is_empty() && !quotes_a_line(&line, &lines))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use messages::ToolCall;
    use serde_json::json;

    fn searched(result: &str) -> Messages {
        let call = ToolCall::new(
            "c1",
            "search_files",
            json!({"pattern": "debug_mode: true", "path": "config.yaml"}),
        );
        Messages::new()
            .appended(Message::user("Is debug mode enabled in config.yaml?"))
            .appended(Message::assistant_tool_calls([call.clone()]))
            .appended(Message::tool_result_for(&call, result))
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

    #[test]
    fn line_numbers_of_the_file_tools_are_left_out() {
        assert_eq!(unnumbered("     2\tdebug: false"), "debug: false");
        assert_eq!(unnumbered("2: debug: false"), "debug: false");
        assert_eq!(unnumbered("src/a.rs:12: fn a()"), "fn a()");
        assert_eq!(unnumbered("port: 80"), "port: 80");
        assert_eq!(unnumbered("2024: a year"), "a year");
    }
}
