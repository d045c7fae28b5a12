//! `agents chat`: a conversation in the terminal, one turn after another.
//!
//! The line editor is rustyline: history (a file), multi-line input (end a line with `\`),
//! completion of the `/` commands. The model's text is written as it arrives, each tool call
//! as one line (name, short arguments, then its status and duration), everything that a model
//! or tool wrote through [`printable`] (no raw control characters). Ctrl-C during a turn
//! cancels it (every tool call still gets a result, and a notice says the turn was cancelled);
//! a second Ctrl-C, or Ctrl-D, at the prompt leaves. A tool call the model wrote as text (a
//! fenced block of JSON, `<tool_call>` tags) is shown once, as its tool line: the block is held
//! back while it may be a call ([`held_calls`]) and shown as text if it turns out not to be one.

mod held_calls;

use std::io::{IsTerminal, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use agents::prelude::*;
use rustyline::completion::Completer;
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::FileHistory;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{Editor, Helper};

use crate::markdown::MarkdownStream;
use crate::render::{cost_text, is_answer_on_stop, one_line, printable, tokens_text};
use crate::runner::{cancelled, Runner, TurnError};
use crate::setup::Trace;
use crate::setup::{load_state, prepare, AgentArgs, Prepared, Settings};
use held_calls::HeldCalls;

type Error = Box<dyn std::error::Error>;

/// Options of `agents chat`.
#[derive(Debug, clap::Args)]
pub struct ChatArgs {
    /// The model, the tools, the limits (the same options as `agents run`).
    #[command(flatten)]
    pub agent: AgentArgs,
    /// Keep the conversation in the session NAME (created on first use, resumed after).
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,
    /// The session database: `sqlite://PATH` or `postgres://..` (default:
    /// `$XDG_DATA_HOME/agents/sessions.db`).
    #[arg(long, value_name = "URL", requires = "session")]
    pub db: Option<String>,
    /// When another process is running the session, wait for it at each turn instead of
    /// failing the turn.
    #[arg(long, requires = "session")]
    pub wait: bool,
    /// The line editor's history file (default: `$XDG_DATA_HOME/agents/chat_history`).
    #[arg(long, value_name = "FILE")]
    pub history: Option<PathBuf>,
    /// Human approval: `--require-approval TOOL,..`, `--approve all|none|TOOL,..`; waiting
    /// calls are asked for at the prompt, and "always" holds for the rest of the chat.
    #[command(flatten)]
    pub approval: crate::approve::ApprovalArgs,
}

/// The commands, for `/help` and completion.
const COMMANDS: [(&str, &str); 10] = [
    ("/help", "this list"),
    ("/tools", "the tools the agent has"),
    ("/trace", "the last turn's tool calls and results"),
    (
        "/usage",
        "tokens used in this chat, and the cost when the model's price is known",
    ),
    (
        "/mode",
        "legacy|separated|digest|masked: what of the tool trace the conversation keeps",
    ),
    ("/reset", "start a new conversation"),
    ("/save", "FILE: write the conversation to FILE (atomically)"),
    ("/load", "FILE: continue the conversation saved in FILE"),
    ("/exit", "leave (Ctrl-D does too)"),
    (
        "\\",
        "at the end of a line: continue the message on the next line",
    ),
];

/// `agents chat`.
pub async fn run(args: ChatArgs) -> Result<(), Error> {
    #[cfg(feature = "otel")]
    let _telemetry = crate::setup::telemetry(&args.agent)?;
    let mut settings = Settings::resolve(&args.agent)?;
    let style = Style::new();
    let screen = Screen::new(style);
    let mut prepared = shown(
        prepare(
            &args.agent,
            &settings,
            true,
            &args.approval.require_approval,
        )
        .await?,
        &screen,
    );
    let no_session = crate::sessions::SessionArgs::default();
    let session = args
        .session
        .clone()
        .map(|name| crate::sessions::SessionArgs {
            session: Some(name),
            db: args.db.clone(),
            wait: args.wait,
            ..crate::sessions::SessionArgs::default()
        });
    let mut state = match &session {
        Some(session) => crate::sessions::load(session).await?,
        None => AgentState::new(),
    };
    // One runner for the whole chat: calls waiting for approval are asked for at the prompt
    // and the turn goes on; "always" holds for the rest of the chat.
    let session_args = session.as_ref().unwrap_or(&no_session);
    let mut runner = Runner::new(session_args, &args.approval);
    let mut editor = editor(args.history.as_deref())?;
    let mut total = Usage::default();
    let mut total_cost = RunCost::default();
    println!(
        "{}",
        style.dim(&format!(
            "agents chat: model {}, {} tool(s), {} mode{}. /help for commands, Ctrl-D to leave.",
            printable(&prepared.model_name),
            prepared.agent.tools().len(),
            trace_name(settings.trace),
            match &args.session {
                Some(name) => format!(
                    ", session {} ({} messages)",
                    printable(name),
                    state.messages().len()
                ),
                None => String::new(),
            }
        ))
    );
    let mut interrupted = false;
    loop {
        let line = match editor.editor.readline("you> ") {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) if !interrupted => {
                interrupted = true;
                println!("{}", style.dim("(Ctrl-C again or Ctrl-D to leave)"));
                continue;
            }
            Err(ReadlineError::Interrupted | ReadlineError::Eof) => break,
            Err(error) => return Err(error.into()),
        };
        interrupted = false;
        let message = line.replace("\\\n", "\n");
        let message = message.trim();
        if message.is_empty() {
            continue;
        }
        editor.remember(&line);
        if let Some(command) = message.strip_prefix('/') {
            let (name, argument) = command
                .split_once(char::is_whitespace)
                .map_or((command, ""), |(n, a)| (n, a.trim()));
            match name {
                "exit" | "quit" => break,
                "help" => {
                    for (command, what) in COMMANDS {
                        println!("  {command:<8} {what}");
                    }
                }
                "tools" => {
                    for tool in prepared.agent.tools().iter() {
                        let description = tool.description();
                        println!(
                            "  {:<20} {}",
                            printable(tool.name()),
                            one_line(description.lines().next().unwrap_or_default(), 100)
                        );
                    }
                }
                "trace" => screen.print_trace(),
                "usage" => println!("{}; {}", tokens_text(&total), cost_text(&total_cost)),
                "mode" => match parse_trace(argument) {
                    Some(trace) => {
                        settings.trace = trace;
                        // The same agent in another mode: calls that needed a person's
                        // approval still do.
                        let require = &args.approval.require_approval;
                        prepared = shown(
                            prepare(&args.agent, &settings, true, require).await?,
                            &screen,
                        );
                        println!("mode: {}", trace_name(trace));
                    }
                    None => println!(
                        "mode: {} (change it with /mode legacy|separated|digest)",
                        trace_name(settings.trace)
                    ),
                },
                "reset" | "load" if session.is_some() => println!(
                    "/{name} does not apply to a session, which keeps its conversation; \
                     `agents sessions delete NAME` removes it"
                ),
                "reset" => {
                    state = AgentState::new();
                    screen.clear_trace();
                    println!("new conversation");
                }
                "save" | "load" if argument.is_empty() => println!("usage: /{name} FILE"),
                "save" => match save(&state, Path::new(argument)) {
                    Ok(()) => println!(
                        "saved {} messages to {}",
                        state.messages().len(),
                        printable(argument)
                    ),
                    Err(error) => println!("{}", style.error(&printable(&error.to_string()))),
                },
                "load" => match load(Path::new(argument)) {
                    Ok(loaded) => {
                        state = loaded;
                        screen.clear_trace();
                        println!(
                            "loaded {} messages from {}",
                            state.messages().len(),
                            printable(argument)
                        );
                    }
                    Err(error) => println!("{}", style.error(&printable(&error.to_string()))),
                },
                _ => println!(
                    "unknown command `/{}`; /help lists the commands",
                    printable(name)
                ),
            }
            continue;
        }
        screen.start_turn();
        let done = runner
            .turn(&prepared.agent, state.clone(), Some(message))
            .await
            .map_err(TurnError::into_error);
        let terminate = &session_args.graceful_stop;
        if terminate.is_cancelled() {
            editor.save();
            if let Ok(done) = &done {
                screen.end_turn(done, &done.execution_usage());
            }
            eprintln!("stopped by SIGTERM");
            std::process::exit(143);
        }
        match done {
            Ok(done) => {
                let usage = done.execution_usage();
                total += usage;
                total_cost += done.execution_cost();
                screen.end_turn(&done, &usage);
                state = done;
            }
            Err(error) => {
                screen.end_line();
                println!(
                    "{}",
                    style.error(&format!(
                        "the turn failed: {}",
                        crate::render::error_report(error.as_ref())
                    ))
                );
            }
        }
    }
    editor.save();
    Ok(())
}

/// `prepared`, its events shown on `screen`.
fn shown(prepared: Prepared, screen: &Screen) -> Prepared {
    Prepared {
        agent: prepared.agent.on_event(screen.listener()),
        ..prepared
    }
}

fn trace_name(trace: Trace) -> &'static str {
    match trace {
        Trace::Legacy => "legacy",
        Trace::Separated => "separated",
        Trace::Digest => "digest",
        Trace::Masked => "masked",
    }
}

fn parse_trace(text: &str) -> Option<Trace> {
    match text {
        "legacy" => Some(Trace::Legacy),
        "separated" => Some(Trace::Separated),
        "digest" => Some(Trace::Digest),
        "masked" => Some(Trace::Masked),
        _ => None,
    }
}

fn save(state: &AgentState, path: &Path) -> Result<(), Error> {
    let json = state.to_json()?;
    Ok(agents::fs::write_atomic(path, json.as_bytes())?)
}

fn load(path: &Path) -> Result<AgentState, Error> {
    if !path.exists() {
        return Err(format!("no file `{}` to load", path.display()).into());
    }
    load_state(path)
}

/// The line editor and where its history lives.
struct LineEditor {
    editor: Editor<ChatHelper, FileHistory>,
    history: Option<PathBuf>,
}

fn editor(history: Option<&Path>) -> Result<LineEditor, Error> {
    let mut editor = Editor::with_config(
        rustyline::Config::builder()
            .auto_add_history(false)
            .max_history_size(2000)?
            .build(),
    )?;
    editor.set_helper(Some(ChatHelper));
    let history = match history {
        Some(path) => Some(path.to_owned()),
        None => crate::sessions::data_dir()
            .ok()
            .map(|dir| dir.join("agents").join("chat_history")),
    };
    if let Some(path) = &history {
        if path.exists() {
            if let Err(error) = editor.load_history(path) {
                eprintln!(
                    "warning: cannot read the history file {}: {error}",
                    path.display()
                );
            }
        } else if let Err(error) = create_private(path) {
            eprintln!(
                "warning: cannot create the history file {}: {error}",
                path.display()
            );
        }
    }
    Ok(LineEditor { editor, history })
}

/// Creates an empty file readable by its owner only (what you type can be private).
fn create_private(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if let Some(parent) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)?;
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map(drop)
}

impl LineEditor {
    /// Adds `line` to the history, and to the history file at once (a second Ctrl-C during a
    /// turn leaves without a goodbye).
    fn remember(&mut self, line: &str) {
        let _ = self.editor.add_history_entry(line);
        self.save();
    }

    fn save(&mut self) {
        if let Some(path) = &self.history {
            if let Err(error) = self.editor.append_history(path) {
                eprintln!(
                    "warning: cannot write the history file {}: {error}",
                    path.display()
                );
                self.history = None;
            }
        }
    }
}

/// Multi-line input (a line ending in `\` continues) and completion of `/` commands.
struct ChatHelper;

impl Helper for ChatHelper {}
impl Hinter for ChatHelper {
    type Hint = String;
}
impl Highlighter for ChatHelper {}

impl Validator for ChatHelper {
    fn validate(&self, ctx: &mut ValidationContext<'_>) -> rustyline::Result<ValidationResult> {
        Ok(if ctx.input().ends_with('\\') {
            ValidationResult::Incomplete
        } else {
            ValidationResult::Valid(None)
        })
    }
}

impl Completer for ChatHelper {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        let typed = &line[..pos];
        if !typed.starts_with('/') || typed.contains(char::is_whitespace) {
            return Ok((0, Vec::new()));
        }
        let matches = COMMANDS
            .iter()
            .map(|(command, _)| *command)
            .filter(|command| command.starts_with(typed))
            .map(str::to_owned)
            .collect();
        Ok((0, matches))
    }
}

/// Colors, when stdout is a terminal and `NO_COLOR` is not set.
#[derive(Clone, Copy)]
struct Style {
    color: bool,
}

impl Style {
    fn new() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Self {
            color: !no_color && std::io::stdout().is_terminal(),
        }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    fn dim(&self, text: &str) -> String {
        self.paint("2", text)
    }

    fn bold(&self, text: &str) -> String {
        self.paint("1", text)
    }

    fn error(&self, text: &str) -> String {
        self.paint("31", text)
    }

    fn ok(&self, text: &str) -> String {
        self.paint("32", text)
    }
}

/// What the turn has put on the screen, shared with the agent's event listener.
#[derive(Clone)]
struct Screen {
    style: Style,
    shared: Arc<Mutex<ScreenState>>,
}

#[derive(Default)]
struct ScreenState {
    /// The cursor is not at the start of a line.
    mid_line: bool,
    /// The tool call whose line is open (waiting for its status), by call id.
    open_call: Option<String>,
    /// The current inference has streamed text.
    streamed: bool,
    /// The last turn's tool calls.
    trace: Vec<ToolExecution>,
    /// The reply's text that may be a call written as text, held back until that is known.
    held: HeldCalls,
    /// The markdown renderer of the answer being shown (with colour, lines are rendered whole).
    markdown: MarkdownStream,
}

impl Screen {
    fn new(style: Style) -> Self {
        let state = ScreenState {
            markdown: MarkdownStream::new(style.color),
            ..ScreenState::default()
        };
        Self {
            style,
            shared: Arc::new(Mutex::new(state)),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ScreenState> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The agent's event listener.
    fn listener(&self) -> impl Fn(&AgentEvent) + Send + Sync + 'static {
        let screen = self.clone();
        move |event| screen.on_event(event)
    }

    fn on_event(&self, event: &AgentEvent) {
        let style = self.style;
        let mut state = self.lock();
        let mut out = std::io::stdout().lock();
        match event {
            AgentEvent::InferenceRequested { .. } => {
                let rest = state.held.finish();
                show_text(style, &mut state, &mut out, &rest);
                state.streamed = false;
            }
            AgentEvent::TextDelta { delta, .. } => {
                let shown = state.held.push(delta);
                show_text(style, &mut state, &mut out, &shown);
            }
            AgentEvent::StepCompleted { .. } => {
                let rest = state.held.finish();
                show_text(style, &mut state, &mut out, &rest);
            }
            AgentEvent::ReplySetAside {
                reason,
                earlier_reply_stands,
                ..
            } => {
                // What streamed above is not the answer: say so before the model is asked again
                // (or, for a reply to a nudge that is dropped, that the one before it stands).
                let rest = state.held.finish();
                show_text(style, &mut state, &mut out, &rest);
                close_line(&mut state, &mut out);
                let note = if *earlier_reply_stands {
                    format!("  (dropped: {reason}; the reply before it stands)")
                } else {
                    format!("  (not the answer: {reason}; asking again)")
                };
                let _ = writeln!(out, "{}", style.dim(&note));
            }
            AgentEvent::ToolCallStarted { call, .. } => {
                // A block holding this call is the call: the tool line shows it.
                let before = state.held.call_started(call.name(), call.arguments());
                show_text(style, &mut state, &mut out, &before);
                close_line(&mut state, &mut out);
                let _ = write!(
                    out,
                    "{}",
                    style.dim(&format!(
                        "  > {}({}){} ...",
                        printable(call.name()),
                        one_line(&call.arguments().to_string(), 60),
                        crate::render::origin(call)
                    ))
                );
                state.mid_line = true;
                state.open_call = Some(call.id().to_owned());
            }
            AgentEvent::ToolCallCompleted { execution, .. } => {
                if state.open_call.as_deref() != Some(execution.id()) {
                    close_line(&mut state, &mut out);
                    let _ = write!(
                        out,
                        "{}",
                        style.dim(&format!("  > {}", printable(execution.name())))
                    );
                }
                let millis = execution.duration().as_millis();
                let status = match execution.error_message() {
                    Some(error) => {
                        style.error(&format!(" error ({millis} ms): {}", one_line(error, 80)))
                    }
                    None => style.ok(&format!(" ok ({millis} ms)")),
                };
                let _ = writeln!(out, "{status}");
                state.mid_line = false;
                state.open_call = None;
                state.trace.push(execution.clone());
            }
            AgentEvent::ToolCallBlocked { call, reason, .. } => {
                let before = state.held.call_started(call.name(), call.arguments());
                show_text(style, &mut state, &mut out, &before);
                close_line(&mut state, &mut out);
                let _ = writeln!(
                    out,
                    "{}",
                    style.error(&format!(
                        "  > {} blocked: {}",
                        printable(call.name()),
                        one_line(reason, 80)
                    ))
                );
            }
            AgentEvent::InferenceResponded { finish_reason, .. } => {
                let shown = state.held.end_reply();
                show_text(style, &mut state, &mut out, &shown);
                if *finish_reason == FinishReason::Length {
                    close_line(&mut state, &mut out);
                    let _ = writeln!(
                        out,
                        "{}",
                        style.error("(the reply was cut at the model's token limit)")
                    );
                }
            }
            _ => {}
        }
        let _ = out.flush();
    }

    fn start_turn(&self) {
        let mut state = self.lock();
        state.trace.clear();
        state.streamed = false;
        state.held = HeldCalls::default();
    }

    fn end_line(&self) {
        let mut state = self.lock();
        let mut out = std::io::stdout().lock();
        let rest = state.held.finish();
        show_text(self.style, &mut state, &mut out, &rest);
        close_line(&mut state, &mut out);
    }

    fn clear_trace(&self) {
        self.lock().trace.clear();
    }

    /// The answer when it was not streamed (an answer on a stop, a provider that does not
    /// stream), then a dim line with the stop reason, tokens and cost of the turn.
    fn end_turn(&self, done: &AgentState, usage: &Usage) {
        let style = self.style;
        let mut state = self.lock();
        let mut out = std::io::stdout().lock();
        let rest = state.held.finish();
        show_text(style, &mut state, &mut out, &rest);
        close_line(&mut state, &mut out);
        if let Some(answer) = done.final_response() {
            if is_answer_on_stop(&answer) || !state.streamed {
                let full = answer.text();
                let text = printable(full.trim_end());
                let mut rendered = state.markdown.push(&text);
                rendered.push_str(&state.markdown.flush());
                let _ = writeln!(out, "{}{rendered}", style.bold("assistant: "));
            }
        }
        let stopped = match done.stop_reason() {
            Some(reason) if cancelled(done) || done.status() == AgentStatus::Failed => {
                format!("stopped: {}; ", reason.as_str())
            }
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "{}",
            style.dim(&format!(
                "({stopped}{} step(s); {}; {})",
                done.step_executions().len(),
                tokens_text(usage),
                cost_text(&done.execution_cost())
            ))
        );
        let _ = out.flush();
    }

    fn print_trace(&self) {
        let state = self.lock();
        if state.trace.is_empty() {
            println!("the last turn called no tools");
        }
        for (n, execution) in state.trace.iter().enumerate() {
            println!(
                "{}. {}({}){} {} in {} ms",
                n + 1,
                printable(execution.name()),
                one_line(&execution.arguments().to_string(), 200),
                crate::render::origin(execution.call()),
                if execution.has_error() {
                    "failed"
                } else {
                    "ok"
                },
                execution.duration().as_millis()
            );
            println!("   {}", one_line(&execution.result_text(), 300));
        }
    }
}

/// Shows text of the reply (after [`HeldCalls`]): the `assistant:` prefix before the reply's
/// first text, then the text, escaped and (with colour) rendered a line at a time.
fn show_text(style: Style, state: &mut ScreenState, out: &mut impl std::io::Write, text: &str) {
    if text.is_empty() {
        return;
    }
    if !state.streamed {
        close_line(state, out);
        let _ = write!(out, "{}", style.bold("assistant: "));
        state.streamed = true;
        state.mid_line = true;
    }
    let rendered = state.markdown.push(&printable(text));
    let _ = write!(out, "{rendered}");
    if !rendered.is_empty() {
        state.mid_line = !rendered.ends_with('\n');
    }
}

fn close_line(state: &mut ScreenState, out: &mut impl std::io::Write) {
    // The end of a streamed answer that had no final newline: rendered like the other lines.
    let rest = state.markdown.flush();
    if !rest.is_empty() {
        let _ = write!(out, "{rest}");
        state.mid_line = true;
    }
    if state.mid_line {
        let _ = writeln!(out);
        state.mid_line = false;
    }
    state.open_call = None;
}
