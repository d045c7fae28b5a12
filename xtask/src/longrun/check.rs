//! How a long-run turn is judged: generous about phrasing, strict about facts (the same rules
//! as `cargo xtask eval`'s checks).
//!
//! Standard library only: the scripted twin in `crates/agents/tests/long_horizon.rs` includes
//! this file.

use std::path::Path;

/// A turn's machine check.
#[derive(Clone, Copy, Debug)]
pub enum Check {
    /// The answer contains every one of `all`, at least one of `any` (when not empty) and none
    /// of `never` (normalized: lowercase, markdown emphasis and quotes removed).
    Text {
        all: &'static [&'static str],
        any: &'static [&'static str],
        never: &'static [&'static str],
    },
    /// The answer states `expected` (in digits or as `word`) and no other integer outside
    /// `allowed`.
    Number {
        expected: i64,
        word: &'static str,
        allowed: &'static [i64],
    },
    /// After the turn, the file contains every one of `all` and none of `never` (as written,
    /// case-sensitive: a file is data).
    File {
        path: &'static str,
        all: &'static [&'static str],
        never: &'static [&'static str],
    },
}

impl Check {
    /// Whether `answer` (the turn's saved answer, if any) and the workspace pass.
    pub fn passes(&self, answer: Option<&str>, workspace: &Path) -> bool {
        match self {
            Check::File { path, all, never } => {
                let Ok(text) = std::fs::read_to_string(workspace.join(path)) else {
                    return false;
                };
                all.iter().all(|s| text.contains(s)) && !never.iter().any(|s| text.contains(s))
            }
            Check::Text { all, any, never } => {
                let Some(answer) = answer else {
                    return false;
                };
                let text = normalize(answer);
                let has = |s: &&str| text.contains(&normalize(s));
                all.iter().all(has)
                    && (any.is_empty() || any.iter().any(has))
                    && !never.iter().any(has)
            }
            Check::Number {
                expected,
                word,
                allowed,
            } => {
                let Some(answer) = answer else {
                    return false;
                };
                let text = normalize(answer);
                let numbers = integers(&text);
                let stated = numbers.contains(expected)
                    || text
                        .split(|c: char| !c.is_alphanumeric() && c != '-')
                        .any(|w| w == *word);
                stated && numbers.iter().all(|n| n == expected || allowed.contains(n))
            }
        }
    }

    /// Whether the check reads a file rather than the answer.
    pub fn is_file_check(&self) -> bool {
        matches!(self, Check::File { .. })
    }
}

/// Lowercase, markdown emphasis, backslash escapes and quotes (straight and curly) removed,
/// whitespace collapsed, curly apostrophes made straight. The one copy: `cargo xtask eval`'s
/// checks call it too (it lives here because this file is standard library only, and the
/// scripted twin in `crates/agents` includes it).
pub fn normalize(text: &str) -> String {
    let text = text.to_lowercase().replace(['’', '‘'], "'");
    let cleaned: String = text
        .chars()
        .map(|c| {
            if matches!(c, '*' | '`' | '"' | '“' | '”' | '\\') {
                ' '
            } else {
                c
            }
        })
        .collect();
    cleaned.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `lower` (lower case) holds a JSON object's `"result"` or `"output"` field
/// (`"result": {`, `"output": "...`); no file of the benchmark's project has such a field.
fn holds_a_json_result(lower: &str) -> bool {
    ["\"result\"", "\"output\""].iter().any(|key| {
        lower
            .match_indices(key)
            .any(|(at, _)| lower[at + key.len()..].trim_start().starts_with(':'))
    })
}

/// The integers written in `text` (digits only; `3.14` counts as 3 and 14, and a thousands
/// separator splits a number, so callers list such parts as allowed).
pub fn integers(text: &str) -> Vec<i64> {
    let mut found = Vec::new();
    let mut current = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() {
            current.push(c);
        } else if !current.is_empty() {
            if let Ok(n) = current.parse() {
                found.push(n);
            }
            current.clear();
        }
    }
    found
}

/// Whether `text` forges evidence the way issue 32 found: a digest-style note (its header, or
/// a line `- tool({...}) -> result`), a tool result in chat-template tags, or a tool result
/// written as a JSON object with a `"result"` or `"output"` field ("I called the `read_file`
/// function ... The result was a JSON object ... "result": {"lines": [...]}": the project's
/// tools answer in plain text, never in such an object, so the model made it up). The
/// benchmark's own judge, independent of the library's checks that refuse such replies.
pub fn is_forged_evidence(text: &str) -> bool {
    let lower = text.to_lowercase();
    if lower.contains("notes on the tool calls behind")
        || lower.contains("<tool_response>")
        || lower.contains("</tool_response>")
        || holds_a_json_result(&lower)
    {
        return true;
    }
    text.lines().any(|line| {
        let line = line.trim_start().trim_start_matches(['-', '*', ' ', '`']);
        let Some((name, rest)) = line.split_once("({") else {
            return false;
        };
        !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && rest.contains("}) ->")
    })
}
