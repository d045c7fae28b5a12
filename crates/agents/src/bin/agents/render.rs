//! Everything the CLI prints: while a turn runs, the user's line, each tool call and result,
//! the streamed text and a spinner on stderr ([`Progress`]); once it is over, the answer, the
//! usage line, the `--output json` summary, the transcript, the calls waiting for approval;
//! errors; and the arguments of a call as a person deciding on it reads them.
//!
//! Everything printed that a model, a tool or a file wrote goes through [`printable`]: control
//! characters (terminal escape sequences included) are shown as escapes, never sent to the
//! terminal, so a reply cannot clear the screen, retitle the window or hide text.

use std::borrow::Cow;
use std::fmt::Write;
use std::io::{IsTerminal, Write as _};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agents::prelude::*;
use serde_json::{json, Value};

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

/// JSON text (as `serde_json` writes it) with the characters [`printable`] escapes written as
/// JSON escapes (`\u009b`), so the output is still the same JSON value and no terminal control
/// character reaches the screen (`serde_json` escapes only U+0000 to U+001F itself).
pub fn printable_json(json: &str) -> Cow<'_, str> {
    if !json.chars().any(needs_escape) {
        return Cow::Borrowed(json);
    }
    let mut shown = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if needs_escape(c) {
            let _ = write!(shown, "\\u{:04x}", u32::from(c));
        } else {
            shown.push(c);
        }
    }
    Cow::Owned(shown)
}

/// Characters of one argument value an approval prompt shows before asking to view the rest:
/// the first [`SHOWN_HEAD`] and the last [`SHOWN_TAIL`].
pub const SHOWN_HEAD: usize = 600;
/// See [`SHOWN_HEAD`].
pub const SHOWN_TAIL: usize = 300;

/// A call's arguments as a person deciding on it reads them: one `name: value` per argument,
/// string values with their real line breaks (each continuation line indented), other values as
/// JSON, everything escaped by [`printable`]. With `full` false a value longer than
/// `SHOWN_HEAD + SHOWN_TAIL` characters shows its head and tail around a line
/// `... N characters hidden, [v]iew all ...`; the second value says whether anything was hidden.
pub fn arguments_text(arguments: &serde_json::Value, full: bool) -> (String, bool) {
    let mut text = String::new();
    let mut hidden = false;
    let mut one = |name: Option<&str>, value: &serde_json::Value, text: &mut String| {
        let raw = match value {
            serde_json::Value::String(s) => s.clone(),
            other => serde_json::to_string_pretty(other).unwrap_or_default(),
        };
        let count = raw.chars().count();
        let shown = if !full && count > SHOWN_HEAD + SHOWN_TAIL {
            hidden = true;
            let head: String = raw.chars().take(SHOWN_HEAD).collect();
            let tail: String = raw.chars().skip(count - SHOWN_TAIL).collect();
            format!(
                "{head}\n... {} characters hidden, [v]iew all ...\n{tail}",
                count - SHOWN_HEAD - SHOWN_TAIL
            )
        } else {
            raw
        };
        let shown = printable(&shown).replace('\n', "\n    ");
        match name {
            Some(name) => {
                let _ = writeln!(text, "  {}: {shown}", printable(name));
            }
            None => {
                let _ = writeln!(text, "  {shown}");
            }
        }
    };
    match arguments.as_object() {
        Some(object) if !object.is_empty() => {
            for (name, value) in object {
                one(Some(name), value, &mut text);
            }
        }
        Some(_) => text.push_str("  (no arguments)\n"),
        None => one(None, arguments, &mut text),
    }
    (text, hidden)
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

/// ` (from text)` for a call the driver recovered from the model's text rather than a native
/// call, so that a person reading the trace sees which calls the model wrote as text.
pub fn origin(call: &ToolCall) -> &'static str {
    if agents::toolcalling::is_recovered_call(call) {
        " (from text)"
    } else {
        ""
    }
}

/// The progress of `agents run`'s turn: with text output, the user's line and every event as
/// it happens ([`print_event`]); unless quiet, the [`Spinner`].
pub struct Progress {
    text: bool,
    spinner: Spinner,
}

impl Progress {
    /// Progress for text output (`text`), with a spinner unless `quiet`.
    pub fn new(text: bool, quiet: bool) -> Self {
        Self {
            text,
            spinner: Spinner::new(text && !quiet),
        }
    }

    /// `agent`, showing its events as they happen.
    pub fn follow(&self, agent: Agent) -> Agent {
        let spinner = self.spinner.clone();
        let text = self.text;
        agent.on_event(move |event: &AgentEvent| {
            spinner.on_event(event);
            if text {
                print_event(event);
            }
        })
    }

    /// Prints the user's message (with text output).
    pub fn user(&self, prompt: &str) {
        if self.text {
            println!("user: {}", printable(prompt));
        }
    }

    /// Ends the spinner (before the turn's end is printed).
    pub fn stop(&self) {
        self.spinner.stop();
    }
}

/// A printer for the events of a run: tool calls, results and answers, indented.
pub fn print_event(event: &AgentEvent) {
    match event {
        AgentEvent::ToolCallStarted { call, .. } => {
            println!(
                "    -> {}({}){}",
                printable(call.name()),
                one_line(&call.arguments().to_string(), 100),
                origin(call)
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
        AgentEvent::ReplySetAside {
            reason,
            earlier_reply_stands,
            ..
        } => {
            if *earlier_reply_stands {
                println!("    .. dropped ({reason}): the reply before it stands");
            } else {
                println!("    .. not the answer ({reason}): asking again");
            }
        }
        _ => {}
    }
}

/// A progress line on stderr while the run waits on the model or a tool: the step number
/// and the tool being run. It draws only when stderr is a terminal (and the caller did not
/// ask for quiet), and it is erased before anything else is printed.
#[derive(Clone)]
pub struct Spinner {
    shared: Option<Arc<Mutex<SpinnerState>>>,
}

struct SpinnerState {
    /// What it says, when it is showing.
    label: Option<String>,
    /// Whether its line is on the screen now.
    drawn: bool,
    stopped: bool,
}

impl SpinnerState {
    fn erase(&mut self) {
        if self.drawn {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
            self.drawn = false;
        }
    }
}

impl Spinner {
    /// A spinner that draws when `wanted` and stderr is a terminal; otherwise it does nothing.
    pub fn new(wanted: bool) -> Self {
        if !wanted || !std::io::stderr().is_terminal() {
            return Self { shared: None };
        }
        let shared = Arc::new(Mutex::new(SpinnerState {
            label: None,
            drawn: false,
            stopped: false,
        }));
        let ticker = Arc::clone(&shared);
        std::thread::spawn(move || {
            const FRAMES: [char; 4] = ['|', '/', '-', '\\'];
            for frame in FRAMES.iter().cycle() {
                std::thread::sleep(Duration::from_millis(120));
                let mut state = ticker.lock().unwrap_or_else(PoisonError::into_inner);
                if state.stopped {
                    break;
                }
                if let Some(label) = &state.label {
                    let mut err = std::io::stderr().lock();
                    let _ = write!(err, "\r{frame} {label}\x1b[K");
                    let _ = err.flush();
                    drop(err);
                    state.drawn = true;
                }
            }
        });
        Self {
            shared: Some(shared),
        }
    }

    /// Follows the run: shows "waiting for the model" or the tool being run, hides itself
    /// while text streams and before each printed line.
    pub fn on_event(&self, event: &AgentEvent) {
        let Some(shared) = &self.shared else {
            return;
        };
        let mut state = shared.lock().unwrap_or_else(PoisonError::into_inner);
        state.erase();
        state.label = match event {
            AgentEvent::InferenceRequested { source, .. } => Some(format!(
                "step {}: waiting for the model",
                source.step_number
            )),
            AgentEvent::ToolCallStarted { source, call } => Some(format!(
                "step {}: running {}",
                source.step_number,
                one_line(call.name(), 40)
            )),
            AgentEvent::TextDelta { .. }
            | AgentEvent::ExecutionCompleted { .. }
            | AgentEvent::ApprovalRequested { .. } => None,
            _ => state.label.take(),
        };
    }

    /// Erases the line and ends the spinner.
    pub fn stop(&self) {
        if let Some(shared) = &self.shared {
            let mut state = shared.lock().unwrap_or_else(PoisonError::into_inner);
            state.erase();
            state.stopped = true;
            state.label = None;
        }
    }
}

/// Whether `answer` was appended on a stop (synthesized or a notice), not the model's own
/// final answer: it carries `"incomplete": true`.
pub fn is_answer_on_stop(answer: &Message) -> bool {
    answer
        .metadata()
        .get(agents::core::INCOMPLETE_KEY)
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false)
}

/// What `agents run` prints when its turn is over: with text output (`text`) the answer, the
/// usage line and, with `transcript`, the persisted conversation; otherwise the `--output json`
/// summary alone.
pub fn print_run_end(done: &AgentState, text: bool, streamed: bool, transcript: bool) {
    if text {
        print_answer(done, streamed);
        println!("{}", usage_line(done));
        if transcript {
            print_transcript(done);
        }
    } else {
        println!("{}", run_summary(done));
    }
}

/// Prints the run's answer once: without streaming, the final response; with streaming the
/// text is on the screen already, except an answer appended on a stop (never streamed).
fn print_answer(done: &AgentState, streamed: bool) {
    if streamed {
        println!();
    }
    if let Some(answer) = done.final_response() {
        if !streamed || is_answer_on_stop(&answer) {
            println!("assistant: {}", printable(&answer.text()));
        }
    }
}

/// The run's result in one line, every number labelled: status and stop reason, steps,
/// tokens, and the cost ("unknown price" for a model the catalog does not list: never a
/// made-up number).
pub fn usage_line(done: &AgentState) -> String {
    let usage = done.execution_usage();
    format!(
        "[{:?}{}] {} step(s); {}; {}",
        done.status(),
        done.stop_reason()
            .filter(|r| *r != StopReason::Completed)
            .map(|r| format!(", {}", r.as_str()))
            .unwrap_or_default(),
        done.step_executions().len(),
        tokens_text(&usage),
        cost_text(&done.execution_cost())
    )
}

/// `tokens: input N, cached input N, output N, total N` (input excludes the cached part).
pub fn tokens_text(usage: &Usage) -> String {
    format!(
        "tokens: input {}, cached input {}, output {}, total {}",
        usage.input_tokens,
        usage.cache_read_tokens,
        usage.output_tokens,
        usage.total()
    )
}

/// `cost $0.000123`, or `unknown price (...)` when a model that answered is not in the catalog
/// (each step is priced at the model its reply named).
pub fn cost_text(cost: &RunCost) -> String {
    if cost.is_known() {
        format!("cost {cost}")
    } else {
        cost.to_string()
    }
}

/// The `--output json` object: what a script needs to know about the run.
fn run_summary(done: &AgentState) -> Value {
    let usage = done.execution_usage();
    let answer = done.final_response();
    let tool_calls: Vec<Value> = done
        .steps()
        .flat_map(|step| step.tool_executions().iter())
        .map(|execution| {
            json!({
                "name": execution.name(),
                "arguments": execution.arguments(),
                "ok": !execution.has_error(),
            })
        })
        .collect();
    json!({
        "answer": answer.as_ref().map(|a| a.text()),
        "incomplete": answer.as_ref().is_some_and(is_answer_on_stop),
        "status": done.status(),
        "stop_reason": done.stop_reason().map(StopReason::as_str),
        "steps": done.step_executions().len(),
        "tool_calls": tool_calls,
        "usage": {
            "input_tokens": usage.input_tokens,
            "cached_input_tokens": usage.cache_read_tokens,
            "output_tokens": usage.output_tokens,
            "total_tokens": usage.total(),
        },
        // Priced step by step at the model each reply named; null when any part has no price.
        "cost_usd": done.execution_cost().usd(),
    })
}

/// The waiting calls of `state`, one per line, for a person deciding elsewhere.
pub fn pending_report(state: &AgentState, session: &str) -> String {
    let mut report = String::from("waiting for approval:\n");
    for pending in state.pending_approvals() {
        let verdict = match pending.decision() {
            Some(ApprovalVerdict::Approved { .. }) => " (approved)",
            Some(ApprovalVerdict::Rejected { .. }) => " (rejected)",
            None => "",
        };
        let fingerprint = state
            .approval_fingerprint(&pending.key())
            .unwrap_or_default();
        report.push_str(&format!(
            "  {}@{fingerprint}  {}{verdict}\n{}",
            printable(&pending.key()),
            printable(pending.tool_name()),
            arguments_text(pending.arguments(), true).0,
        ));
    }
    report.push_str(&format!(
        "decide with `agents approve --session {session} CALL_ID@FINGERPRINT [--with JSON]` or \
         `agents reject --session {session} CALL_ID@FINGERPRINT --reason TEXT` (the fingerprint \
         refuses a call that is not the one shown), then continue with \
         `agents run --session {session} --resume`"
    ));
    report
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
