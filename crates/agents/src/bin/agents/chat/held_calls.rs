//! What `agents chat` holds back while a reply streams: a block that may be a tool call written
//! as text (a fenced block of JSON, a `<tool_call>` tag at the start of a line, a line of bare
//! JSON). A small model writes its call that way; the driver recovers it and the chat shows it
//! as the tool line, so the person sees each call once. A block that is not call-shaped is
//! shown as soon as that is known; a call-shaped block waits for the call to start (then it is
//! dropped) or for the step to end (then it is shown as the text it was). Text after a held
//! block waits with it, so the reply keeps its order.
//!
//! Everything is linear in the reply's length: each character is looked at a constant number
//! of times, and a block is parsed once, when it closes (blocks over [`MAX_BLOCK`] are shown
//! as text without being parsed).

use serde_json::Value;

/// The longest block held back; a longer one is shown as text.
pub const MAX_BLOCK: usize = 64 * 1024;

/// The longest line start that may still open a block (so that judging it stays linear).
const MAX_UNDECIDED: usize = 256;

/// Whether `line` is a fence line (short: only short lines are looked at, each once per
/// character, which keeps the judging linear).
fn is_fence(line: &str) -> bool {
    line.len() <= 16 && line.trim() == FENCE
}

const FENCE: &str = "```";
const TAG_OPEN: &str = "<tool_call>";
const TAG_CLOSE: &str = "</tool_call>";

/// Where the reply's text is, as it streams.
#[derive(Debug)]
enum State {
    /// At the start of a line, with what it starts with so far (it may open a block).
    LineStart(String),
    /// In a line that opens no block: shown as it streams, up to its newline.
    Plain,
    /// In a fenced block that is not a call: shown as it streams, up to its closing fence.
    PlainFence { line: String },
    /// Collecting a fenced block: `text` from its opening fence; `line` the current line.
    Fence {
        text: String,
        line: String,
        content: bool,
    },
    /// Collecting a `<tool_call>` block.
    Tag { text: String },
    /// Collecting a line of bare JSON, up to its closing brace.
    Json {
        text: String,
        depth: usize,
        in_string: bool,
        escaped: bool,
    },
}

/// A piece of the reply held back after a call-shaped block.
#[derive(Debug)]
enum Held {
    Text(String),
    /// A call-shaped block and the calls it holds (name and canonical arguments).
    Call {
        text: String,
        calls: Vec<String>,
    },
}

/// The filter between the streamed reply and the screen; each method returns the text to show.
#[derive(Debug)]
pub struct HeldCalls {
    state: State,
    held: Vec<Held>,
    /// Calls of this reply that started (a block repeating one is dropped too).
    started: Vec<String>,
}

impl Default for HeldCalls {
    fn default() -> Self {
        Self {
            state: State::LineStart(String::new()),
            held: Vec::new(),
            started: Vec::new(),
        }
    }
}

impl HeldCalls {
    /// Streamed text of the reply; returns what can be shown now.
    pub fn push(&mut self, delta: &str) -> String {
        let mut out = String::new();
        for c in delta.chars() {
            self.push_char(c, &mut out);
        }
        out
    }

    /// The reply is complete: an unfinished line or block is judged as it is.
    pub fn end_reply(&mut self) -> String {
        let mut out = String::new();
        match std::mem::replace(&mut self.state, State::LineStart(String::new())) {
            State::LineStart(line) => self.show(&line, &mut out),
            State::Plain | State::PlainFence { .. } => {}
            State::Fence { text, .. } => {
                let inner = fence_inner(&text);
                self.close_block(text.clone(), &inner, &mut out);
            }
            State::Tag { text } => {
                let inner = tag_inner(&text);
                self.close_block(text.clone(), &inner, &mut out);
            }
            State::Json { text, .. } => {
                let inner = text.clone();
                self.close_block(text, &inner, &mut out);
            }
        }
        out
    }

    /// A call started (or was refused by a hook): when a held block holds it, the text before
    /// that block is shown (blocks before it were not calls), and the block is dropped.
    pub fn call_started(&mut self, name: &str, arguments: &Value) -> String {
        let mut out = self.end_reply();
        let key = call_key(name, arguments);
        self.started.push(key.clone());
        let Some(at) = self
            .held
            .iter()
            .position(|h| matches!(h, Held::Call { calls, .. } if calls.contains(&key)))
        else {
            return out;
        };
        let rest = self.held.split_off(at + 1);
        self.held.pop();
        let before = std::mem::replace(&mut self.held, rest);
        for piece in before {
            out.push_str(&self.text_of(piece));
        }
        out
    }

    /// The step is over (or the turn): everything still held is shown, blocks whose calls all
    /// started excepted. The next reply starts afresh.
    pub fn finish(&mut self) -> String {
        let mut out = self.end_reply();
        let held = std::mem::take(&mut self.held);
        for piece in held {
            out.push_str(&self.text_of(piece));
        }
        self.started.clear();
        out
    }

    /// The text a held piece shows: nothing for a block whose calls all started.
    fn text_of(&self, piece: Held) -> String {
        match piece {
            Held::Text(text) => text,
            Held::Call { text, calls } => {
                if calls.iter().all(|c| self.started.contains(c)) {
                    String::new()
                } else {
                    text
                }
            }
        }
    }

    /// Shows `text`, or holds it behind a held block.
    fn show(&mut self, text: &str, out: &mut String) {
        if text.is_empty() {
            return;
        }
        if self.held.is_empty() {
            out.push_str(text);
        } else if let Some(Held::Text(last)) = self.held.last_mut() {
            last.push_str(text);
        } else {
            self.held.push(Held::Text(text.to_owned()));
        }
    }

    /// A block is complete: held when it is call-shaped, shown otherwise.
    fn close_block(&mut self, text: String, inner: &str, out: &mut String) {
        let calls = calls_in(inner);
        if calls.is_empty() {
            self.show(&text, out);
        } else {
            self.held.push(Held::Call { text, calls });
        }
    }

    fn push_char(&mut self, c: char, out: &mut String) {
        match &mut self.state {
            State::LineStart(line) => {
                line.push(c);
                let trimmed = line.trim_start();
                if c == '\n' {
                    let line = std::mem::take(line);
                    if line.trim_start().starts_with(FENCE) {
                        self.state = State::Fence {
                            text: line,
                            line: String::new(),
                            content: false,
                        };
                    } else {
                        // A blank line, or a line that ended while it could still open a block.
                        self.end_undecided(line, out);
                    }
                } else if line.len() > MAX_UNDECIDED {
                    // A long run of spaces, or a fence with a long info string: text.
                    let text = std::mem::take(line);
                    self.state = State::Plain;
                    self.show(&text, out);
                } else if trimmed.is_empty()
                    || (FENCE.starts_with(trimmed) || trimmed.starts_with(FENCE))
                    || (TAG_OPEN.starts_with(trimmed) && trimmed.len() < TAG_OPEN.len())
                {
                    // Still undecided.
                } else if trimmed.starts_with(TAG_OPEN) {
                    let text = std::mem::take(line);
                    self.state = State::Tag { text };
                } else if trimmed.starts_with('{') {
                    let text = std::mem::take(line);
                    self.state = State::Json {
                        text,
                        depth: 1,
                        in_string: false,
                        escaped: false,
                    };
                } else {
                    let text = std::mem::take(line);
                    self.state = State::Plain;
                    self.show(&text, out);
                }
            }
            State::Plain => {
                if c == '\n' {
                    self.state = State::LineStart(String::new());
                }
                self.show(c.encode_utf8(&mut [0; 4]), out);
            }
            State::PlainFence { line } => {
                line.push(c);
                let closed = is_fence(line);
                if c == '\n' {
                    line.clear();
                }
                if closed {
                    self.state = State::Plain;
                }
                self.show(c.encode_utf8(&mut [0; 4]), out);
            }
            State::Fence {
                text,
                line,
                content,
            } => {
                text.push(c);
                line.push(c);
                if c == '\n' {
                    line.clear();
                } else if !*content && !c.is_whitespace() {
                    *content = true;
                    if line.trim() != "`" && !matches!(c, '{' | '[') {
                        // Not JSON: a code block, shown as it streams from here on.
                        let text = std::mem::take(text);
                        let line = std::mem::take(line);
                        self.state = State::PlainFence { line };
                        self.show(&text, out);
                        return;
                    }
                }
                if is_fence(line) {
                    let text = std::mem::take(text);
                    self.state = State::Plain;
                    let inner = fence_inner(&text);
                    self.close_block(text, &inner, out);
                } else if text.len() > MAX_BLOCK {
                    self.give_up(out);
                }
            }
            State::Tag { text } => {
                text.push(c);
                if text.ends_with(TAG_CLOSE) {
                    let text = std::mem::take(text);
                    self.state = State::Plain;
                    let inner = tag_inner(&text);
                    self.close_block(text, &inner, out);
                } else if text.len() > MAX_BLOCK {
                    self.give_up(out);
                }
            }
            State::Json {
                text,
                depth,
                in_string,
                escaped,
            } => {
                text.push(c);
                if *in_string {
                    if *escaped {
                        *escaped = false;
                    } else if c == '\\' {
                        *escaped = true;
                    } else if c == '"' {
                        *in_string = false;
                    }
                } else {
                    match c {
                        '"' => *in_string = true,
                        '{' | '[' => *depth += 1,
                        '}' | ']' => *depth = depth.saturating_sub(1),
                        _ => {}
                    }
                }
                if *depth == 0 {
                    let text = std::mem::take(text);
                    self.state = State::Plain;
                    let inner = text.clone();
                    self.close_block(text, &inner, out);
                } else if text.len() > MAX_BLOCK {
                    self.give_up(out);
                }
            }
        }
    }

    /// A line ended while it could still have opened a block (blank, or "``", or "<tool"):
    /// it is text.
    fn end_undecided(&mut self, line: String, out: &mut String) {
        self.state = State::LineStart(String::new());
        self.show(&line, out);
    }

    /// A block grew past [`MAX_BLOCK`]: shown as text, the rest of it streams.
    fn give_up(&mut self, out: &mut String) {
        let state = std::mem::replace(&mut self.state, State::Plain);
        let text = match state {
            State::Fence { text, line, .. } => {
                self.state = State::PlainFence { line };
                text
            }
            State::Tag { text } | State::Json { text, .. } => text,
            State::LineStart(text) => text,
            State::Plain | State::PlainFence { .. } => String::new(),
        };
        self.show(&text, out);
    }
}

/// The lines between a fenced block's opening and closing fences.
fn fence_inner(text: &str) -> String {
    let body = text.split_once('\n').map_or("", |(_, body)| body);
    let body = body.trim_end();
    body.strip_suffix(FENCE).unwrap_or(body).to_owned()
}

/// The text between `<tool_call>` and `</tool_call>`.
fn tag_inner(text: &str) -> String {
    let start = text.find(TAG_OPEN).map_or(0, |i| i + TAG_OPEN.len());
    let body = &text[start..];
    body.strip_suffix(TAG_CLOSE).unwrap_or(body).to_owned()
}

/// The calls in a block: its JSON values (one or several, or an array), each an object naming a
/// tool (`name`, `tool`, `tool_name`, `function`, or `{"function": {...}}`) with arguments
/// (`arguments`, `args`, `parameters`, `input`; an object or a string holding one). Not all
/// JSON: empty.
fn calls_in(inner: &str) -> Vec<String> {
    let mut calls = Vec::new();
    for value in serde_json::Deserializer::from_str(inner).into_iter::<Value>() {
        let Ok(value) = value else {
            return Vec::new();
        };
        collect_calls(&value, &mut calls);
    }
    calls
}

fn collect_calls(value: &Value, calls: &mut Vec<String>) {
    match value {
        Value::Array(items) => items.iter().for_each(|v| collect_calls(v, calls)),
        Value::Object(object) => {
            if let Some(Value::Array(items)) = object.get("tool_calls") {
                items.iter().for_each(|v| collect_calls(v, calls));
                return;
            }
            let object = match object.get("function") {
                Some(Value::Object(inner)) => inner,
                _ => object,
            };
            let name = ["name", "tool", "tool_name", "function"]
                .iter()
                .find_map(|k| object.get(*k).and_then(Value::as_str));
            let arguments = ["arguments", "args", "parameters", "input"]
                .iter()
                .find_map(|k| object.get(*k));
            if let (Some(name), Some(arguments)) = (name, arguments) {
                calls.push(call_key(name, arguments));
            }
        }
        _ => {}
    }
}

/// A call's identity: its name and its arguments with sorted keys (string arguments parsed).
fn call_key(name: &str, arguments: &Value) -> String {
    let parsed;
    let arguments = match arguments {
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(value) => {
                parsed = value;
                &parsed
            }
            Err(_) => arguments,
        },
        other => other,
    };
    format!("{name} {}", canonical(arguments))
}

fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let inner: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{k:?}:{}", canonical(v)))
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// Streams `text` in pieces of `size` characters; returns what was shown while streaming
    /// and at the end of the reply.
    fn stream(held: &mut HeldCalls, text: &str, size: usize) -> String {
        let chars: Vec<char> = text.chars().collect();
        let mut shown = String::new();
        for piece in chars.chunks(size) {
            shown.push_str(&held.push(&piece.iter().collect::<String>()));
        }
        shown.push_str(&held.end_reply());
        shown
    }

    const FENCED: &str = "To read it, I'll call `read_file`:\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"todo.txt\"}}\n```\n";

    #[test]
    fn a_fenced_call_that_runs_is_shown_once_as_the_tool_line() {
        for size in [1, 2, 3, 7, 1000] {
            let mut held = HeldCalls::default();
            let shown = stream(&mut held, FENCED, size);
            assert_eq!(shown, "To read it, I'll call `read_file`:\n", "size {size}");
            let before = held.call_started("read_file", &json!({"path": "todo.txt"}));
            assert_eq!(before, "");
            assert_eq!(held.finish(), "\n", "the newline after the fence");
        }
    }

    #[test]
    fn a_call_shaped_block_that_does_not_run_is_shown_as_written() {
        let mut held = HeldCalls::default();
        let shown = stream(&mut held, FENCED, 3);
        assert_eq!(held.call_started("bash", &json!({"command": "ls"})), "");
        let rest = held.finish();
        assert_eq!(format!("{shown}{rest}"), FENCED);
    }

    #[test]
    fn text_after_a_held_call_keeps_its_place() {
        let reply = format!("{FENCED}Then I will sum it up.");
        let mut held = HeldCalls::default();
        let shown = stream(&mut held, &reply, 4);
        assert_eq!(shown, "To read it, I'll call `read_file`:\n");
        assert_eq!(
            held.call_started("read_file", &json!({"path": "todo.txt"})),
            ""
        );
        assert_eq!(held.finish(), "\nThen I will sum it up.");
    }

    #[test]
    fn the_same_call_written_twice_is_shown_once() {
        let call = "```\n{\"name\": \"list_dir\", \"arguments\": {\"path\": \".\"}}\n```\n";
        let mut held = HeldCalls::default();
        let shown = stream(&mut held, &format!("{call}{call}"), 5);
        assert_eq!(shown, "");
        assert_eq!(held.call_started("list_dir", &json!({"path": "."})), "");
        assert_eq!(held.finish(), "\n\n");
    }

    #[test]
    fn tags_and_bare_json_are_held_too() {
        for reply in [
            "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n</tool_call>",
            "{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}",
            "{\"function\": {\"name\": \"read_file\", \"arguments\": \"{\\\"path\\\": \\\"a\\\"}\"}}",
        ] {
            let mut held = HeldCalls::default();
            assert_eq!(stream(&mut held, reply, 2), "", "{reply}");
            assert_eq!(held.call_started("read_file", &json!({"path": "a"})), "");
            assert_eq!(held.finish(), "", "{reply}");
        }
    }

    #[test]
    fn code_and_prose_stream_without_waiting() {
        let mut held = HeldCalls::default();
        // A code block that is not JSON is shown as soon as its first character says so.
        assert_eq!(held.push("```sh\nl"), "```sh\nl");
        assert_eq!(held.push("s -la\n```\n"), "s -la\n```\n");
        // JSON that names no tool is shown when it closes.
        assert_eq!(held.push("```json\n{\"port\": 8472"), "");
        assert_eq!(held.push("}\n```"), "```json\n{\"port\": 8472}\n```");
        // A braces-only line of prose, a tag inside a sentence, a lone backtick.
        let mut held = HeldCalls::default();
        assert_eq!(held.push("{ not json }\n"), "{ not json }\n");
        assert_eq!(held.finish(), "");
        let mut held = HeldCalls::default();
        let text =
            "It said <tool_call>{\"name\": \"bash\", \"arguments\": {}}</tool_call> once.\n` x\n";
        assert_eq!(stream(&mut held, text, 3), text);
    }

    #[test]
    fn long_lines_keep_judging_linear() {
        let mut held = HeldCalls::default();
        let spaces = " ".repeat(1 << 20);
        assert_eq!(held.push(&spaces), spaces);
        let mut held = HeldCalls::default();
        let code = format!("```sh\necho {}\n```\n", "x".repeat(1 << 20));
        assert_eq!(held.push(&code), code);
    }

    #[test]
    fn a_huge_block_is_shown_as_text() {
        let mut held = HeldCalls::default();
        let mut shown = held.push("```\n[");
        let filler = "1,".repeat(MAX_BLOCK);
        shown.push_str(&held.push(&filler));
        assert!(shown.len() > MAX_BLOCK, "shown once it is too long to hold");
        shown.push_str(&held.push("1]\n```\n"));
        shown.push_str(&held.finish());
        assert_eq!(shown, format!("```\n[{filler}1]\n```\n"));
    }

    proptest! {
        /// Whatever the reply and however it is cut, nothing is lost, nothing is added, and
        /// the order is kept when no call starts.
        #[test]
        fn without_calls_the_text_comes_out_unchanged(
            text in "(```|<tool_call>|</tool_call>|\\{|\\}|\"|\\\\|\n| |[a-z:,\\[\\]]){0,80}",
            size in 1usize..6,
        ) {
            let mut held = HeldCalls::default();
            let mut shown = stream(&mut held, &text, size);
            shown.push_str(&held.finish());
            prop_assert_eq!(shown, text);
        }
    }
}
