//! Markdown-aware rendering of the model's answer for a colour terminal, one complete line at a
//! time (so a streamed answer is rendered as its lines complete, never held back whole).
//!
//! Only the few constructs that are cheap to render and common in answers: headings (bold,
//! the `#`s dropped), bullets (`•`), fenced code blocks (the fences dim, the code cyan) and, in
//! ordinary lines, `**bold**` and `` `code` ``. The input must already be printable (control
//! characters escaped by `render::printable`): the only escape sequences in the output are the
//! ones added here. Without colour the text is left exactly as the model wrote it.

/// A streamed answer rendered a complete line at a time: the text of a line waits for its
/// newline, and the last line (an answer rarely ends with a newline) is rendered by
/// [`MarkdownStream::flush`] like every other line. Without colour, text passes through as it
/// comes.
#[derive(Debug, Default)]
pub struct MarkdownStream {
    lines: MarkdownLines,
    pending: String,
}

impl MarkdownStream {
    /// A stream renderer; with `color` false text passes through unchanged.
    pub fn new(color: bool) -> Self {
        Self {
            lines: MarkdownLines::new(color),
            pending: String::new(),
        }
    }

    /// Streamed text; returns what can be shown now (complete lines, rendered).
    pub fn push(&mut self, text: &str) -> String {
        if !self.lines.color {
            return text.to_owned();
        }
        self.pending.push_str(text);
        let mut out = String::new();
        while let Some(end) = self.pending.find('\n') {
            let line: String = self.pending.drain(..=end).collect();
            out.push_str(&self.lines.line(&line[..end]));
            out.push('\n');
        }
        out
    }

    /// The end of the text (or a tool line interrupting it): the unfinished line, rendered.
    /// The next text starts outside any code block.
    pub fn flush(&mut self) -> String {
        let line = std::mem::take(&mut self.pending);
        let out = if line.is_empty() {
            line
        } else {
            self.lines.line(&line)
        };
        self.lines.reset();
        out
    }
}

/// The renderer's state between lines: inside a fenced code block or not.
#[derive(Debug, Default)]
pub struct MarkdownLines {
    color: bool,
    in_code: bool,
}

const BOLD: &str = "\x1b[1m";
const DIM: &str = "\x1b[2m";
const CODE: &str = "\x1b[36m";
const RESET: &str = "\x1b[0m";

impl MarkdownLines {
    /// A renderer; with `color` false every line comes back unchanged.
    pub fn new(color: bool) -> Self {
        Self {
            color,
            in_code: false,
        }
    }

    /// One complete line (without its newline), rendered.
    pub fn line(&mut self, line: &str) -> String {
        if !self.color {
            return line.to_owned();
        }
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") {
            self.in_code = !self.in_code;
            return format!("{DIM}{line}{RESET}");
        }
        if self.in_code {
            return format!("{CODE}{line}{RESET}");
        }
        let hashes = trimmed.bytes().take_while(|b| *b == b'#').count();
        if (1..=6).contains(&hashes) && trimmed[hashes..].starts_with(' ') {
            return format!("{BOLD}{}{RESET}", inline(trimmed[hashes..].trim(), BOLD));
        }
        let indent = &line[..line.len() - trimmed.len()];
        if let Some(item) = trimmed
            .strip_prefix("- ")
            .or_else(|| trimmed.strip_prefix("* "))
            .or_else(|| trimmed.strip_prefix("+ "))
        {
            return format!("{indent}• {}", inline(item, ""));
        }
        inline(line, "")
    }

    /// The end of the answer: the next answer starts outside any code block.
    pub fn reset(&mut self) {
        self.in_code = false;
    }
}

/// `**bold**` and `` `code` `` set apart; unpaired markers are left as they are. `outer` is the
/// style to return to after a span (bold inside a heading). One pass: linear time.
fn inline(text: &str, outer: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(at) = rest.find(['*', '`']) {
        let (before, from) = rest.split_at(at);
        out.push_str(before);
        let (marker, style) = if from.starts_with("**") {
            ("**", BOLD)
        } else if from.starts_with('`') {
            ("`", CODE)
        } else {
            out.push('*');
            rest = &from[1..];
            continue;
        };
        let body = &from[marker.len()..];
        match body.find(marker) {
            Some(end) if end > 0 => {
                out.push_str(style);
                out.push_str(&body[..end]);
                out.push_str(RESET);
                out.push_str(outer);
                rest = &body[end + marker.len()..];
            }
            _ => {
                out.push_str(marker);
                rest = body;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn render(text: &str, color: bool) -> String {
        let mut lines = MarkdownLines::new(color);
        text.lines()
            .map(|line| lines.line(line))
            .collect::<Vec<_>>()
            .join("\n")
    }

    const ANSWER: &str = "## Result\nThe port is **8472** (see `config.ini`).\n\n- one\n  * two\n```sh\nls -la **not bold**\n```\n2 * 3 = 6, a lone ` tick";

    #[test]
    fn colour_sets_headings_bullets_code_and_spans_apart() {
        insta::assert_snapshot!(render(ANSWER, true).replace('\x1b', "<ESC>"));
    }

    #[test]
    fn without_colour_the_text_is_as_written() {
        assert_eq!(render(ANSWER, false), ANSWER);
    }

    #[test]
    fn escaped_control_characters_stay_escaped() {
        // What `printable` makes of an ESC the model sent: the text `\u{1b}`, not the byte.
        let line = "**a** \\u{1b}[2J `b`";
        let out = render(line, true);
        assert_eq!(
            out.matches('\x1b').count(),
            4,
            "only our own four codes: {out:?}"
        );
        assert!(out.contains("\\u{1b}[2J"));
    }

    #[test]
    fn a_list_streamed_in_small_chunks_has_a_bullet_on_every_item() {
        let answer = "Fruits:\n- apple\n* banana\n+ cherry\n  - stone fruit\n- damson";
        for size in [1, 2, 3, 5, 100] {
            let mut stream = MarkdownStream::new(true);
            let chars: Vec<char> = answer.chars().collect();
            let mut shown = String::new();
            for piece in chars.chunks(size) {
                shown.push_str(&stream.push(&piece.iter().collect::<String>()));
            }
            shown.push_str(&stream.flush());
            assert_eq!(
                shown, "Fruits:\n• apple\n• banana\n• cherry\n  • stone fruit\n• damson",
                "pieces of {size}"
            );
        }
        let mut plain = MarkdownStream::new(false);
        assert_eq!(plain.push("- a\n- b"), "- a\n- b");
        assert_eq!(plain.flush(), "");
    }

    #[test]
    fn many_markers_take_linear_time() {
        let hostile = "`*".repeat(100_000);
        assert!(render(&hostile, true).len() >= hostile.len());
    }

    proptest! {
        #[test]
        fn without_colour_rendering_is_the_identity(text in "[^\\x00-\\x1f\\x7f]{0,200}") {
            let mut lines = MarkdownLines::new(false);
            prop_assert_eq!(lines.line(&text), text);
        }
    }
}
