//! Printing an agent's progress as it happens.
//!
//! Everything printed that a model, a tool or a file wrote goes through [`printable`]: control
//! characters (terminal escape sequences included) are shown as escapes, never sent to the
//! terminal, so a reply cannot clear the screen, retitle the window or hide text.

use std::borrow::Cow;
use std::fmt::Write;

use agents::prelude::*;

/// `text` with every control character except newline and tab written as a visible escape
/// (`\u{1b}`, `\r`), and so are the bidirectional-text overrides that reorder what a line
/// shows. ANSI CSI and OSC sequences start with such a character, so none reaches the terminal.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\r' => shown.push_str("\\r"),
            c if needs_escape(c) => {
                let _ = write!(shown, "\\u{{{:x}}}", u32::from(c));
            }
            c => shown.push(c),
        }
    }
    Cow::Owned(shown)
}

fn needs_escape(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// At most `max` characters of `text` on one line, with `...` when cut.
pub fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let flat = printable(&flat);
    if flat.chars().count() <= max {
        return flat.into_owned();
    }
    let cut: String = flat.chars().take(max).collect();
    format!("{cut}...")
}

/// A printer for the events of a run: tool calls, results and answers, indented.
pub fn print_event(event: &AgentEvent) {
    match event {
        AgentEvent::ToolCallStarted { call, .. } => {
            println!(
                "    -> {}({})",
                printable(call.name()),
                one_line(&call.arguments().to_string(), 100)
            );
        }
        AgentEvent::ToolCallCompleted { execution, .. } => {
            let mark = if execution.has_error() { "!!" } else { "<-" };
            println!(
                "    {mark} {}: {}",
                printable(execution.name()),
                one_line(&execution.result_text(), 100)
            );
        }
        AgentEvent::ToolCallBlocked { call, reason, .. } => {
            println!(
                "    !! {} blocked: {}",
                printable(call.name()),
                one_line(reason, 100)
            );
        }
        AgentEvent::InferenceResponded {
            finish_reason: FinishReason::Length,
            ..
        } => {
            eprintln!(
                "warning: the model's reply was cut at its token limit (finish reason `length`); \
                 raise the limit (`llm.max_tokens`) if this repeats"
            );
        }
        AgentEvent::ContextWindowNearlyFull {
            model,
            input_tokens,
            context_window,
            ..
        } => {
            eprintln!(
                "warning: the request used {input_tokens} of {}'s {context_window}-token context \
                 window; the conversation will soon not fit (summarize it or start a new session)",
                printable(model)
            );
        }
        AgentEvent::TextDelta { delta, .. } => {
            print!("{}", printable(delta));
        }
        _ => {}
    }
}

/// The line after a run: status, stop reason, steps, tokens and what the execution cost
/// (`cost $0.001146`, or `unknown price (...)` when a model the catalog does not price
/// answered: never a made-up number).
pub fn run_summary(state: &AgentState) -> String {
    let usage = state.execution_usage();
    let cost = state.execution_cost();
    format!(
        "[{:?}{}] {} step(s); tokens: {} in, {} out, {} total; {}",
        state.status(),
        state
            .stop_reason()
            .map(|r| format!(", {r:?}"))
            .unwrap_or_default(),
        state.step_executions().len(),
        usage.input_tokens,
        usage.output_tokens,
        usage.total(),
        if cost.is_known() {
            format!("cost {cost}")
        } else {
            cost.to_string()
        }
    )
}

/// Prints the persisted conversation.
pub fn print_transcript(state: &AgentState) {
    println!(
        "--- persisted conversation ({} messages) ---",
        state.messages().len()
    );
    print!("{}", printable(&state.messages().to_transcript()));
}

/// `error` and its causes, one per line, printable.
pub fn error_report(error: &dyn std::error::Error) -> String {
    let mut report = printable(&error.to_string()).into_owned();
    let mut source = error.source();
    while let Some(cause) = source {
        report.push_str("\n  caused by: ");
        report.push_str(&printable(&cause.to_string()));
        source = cause.source();
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_are_shown_not_sent_to_the_terminal() {
        let hostile = "ok\u{1b}[2J\u{1b}]0;owned\u{7}\r\u{9b}31m \u{202e}txt.exe\u{8}";
        let shown = printable(hostile);
        assert_eq!(
            shown,
            "ok\\u{1b}[2J\\u{1b}]0;owned\\u{7}\\r\\u{9b}31m \\u{202e}txt.exe\\u{8}"
        );
        assert!(!shown.chars().any(|c| c.is_control()));
    }

    #[test]
    fn newlines_tabs_and_ordinary_text_are_left_alone() {
        let text = "line one\n\tindented — ünïcode 😀";
        assert!(matches!(printable(text), Cow::Borrowed(t) if t == text));
    }

    #[test]
    fn one_line_escapes_after_flattening_and_cuts_by_characters() {
        assert_eq!(one_line("a\n b\u{1b}[1m", 100), "a b\\u{1b}[1m");
        assert_eq!(one_line("\u{1b}\u{1b}", 8), "\\u{1b}\\u...");
    }

    #[test]
    fn an_error_report_lists_the_causes() {
        let error = agents::fs::write_atomic(
            std::path::Path::new("/nonexistent-dir-for-test/state.json"),
            b"x",
        )
        .unwrap_err();
        let report = error_report(&error);
        assert!(report.starts_with("cannot write `/nonexistent-dir-for-test/state.json`"));
        assert!(report.contains("\n  caused by: "), "{report}");
    }
}
