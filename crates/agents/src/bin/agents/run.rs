//! `agents run`: an agent with file and bash tools against a real endpoint.

use std::path::{Path, PathBuf};

use agents::prelude::*;
use serde_json::{json, Value};

use crate::render::{one_line, print_event, print_transcript, printable, usage_line};
use crate::setup::{is_answer_on_stop, prepare, AgentArgs, Prepared, Settings};

/// What `agents run` prints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    /// The conversation as it happens, for a person.
    #[default]
    Text,
    /// One JSON object at the end, for scripts: answer, status, stop_reason, steps,
    /// tool_calls, usage, cost.
    Json,
}

/// Options of `agents run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The user's message (not needed with `--resume`).
    #[arg(long, short, required_unless_present = "resume")]
    pub prompt: Option<String>,
    /// Durable sessions: `--session NAME`, `--resume`, `--db URL`.
    #[command(flatten)]
    pub session: crate::sessions::SessionArgs,
    /// The model, the tools, the limits (shared with `agents chat`).
    #[command(flatten)]
    pub agent: AgentArgs,
    /// Human approval: `--require-approval TOOL,..`, `--approve all|none|TOOL,..`.
    #[command(flatten)]
    pub approval: crate::approve::ApprovalArgs,
    /// Stream the model's text as it arrives.
    #[arg(long)]
    pub stream: bool,
    /// Conversation file: loaded if it exists (at most 256 MiB), saved after the run
    /// (atomically, readable by you only), also when Ctrl-C cancels it.
    #[arg(long)]
    pub state: Option<PathBuf>,
    /// Print the persisted conversation at the end.
    #[arg(long)]
    pub transcript: bool,
    /// `text` (the default) or `json`: one object at the end, nothing else on stdout.
    #[arg(long, value_enum, default_value_t = Output::Text)]
    pub output: Output,
    /// No progress spinner on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

/// The largest `--state` file a run loads: a conversation that grew past it is refused, not
/// read into memory.
const MAX_STATE_BYTES: u64 = 256 * 1024 * 1024;

/// The conversation in `path` (a new one when the file does not exist), at most 256 MiB.
pub fn load_state(path: &Path) -> Result<AgentState, Box<dyn std::error::Error>> {
    if !path.exists() {
        return Ok(AgentState::new());
    }
    let text = agents::fs::read_to_string_bounded(path, MAX_STATE_BYTES)?;
    AgentState::from_json(&text).map_err(|e| {
        format!(
            "cannot resume from `{}`: {e} (the file was left untouched)",
            path.display()
        )
        .into()
    })
}

/// The exit codes of `agents run` (also in its `--help`).
pub const EXIT_CODES_HELP: &str = "Exit codes:
  0    the run completed
  1    the run failed: stopped on an error, or on an empty reply from the model (one line on
       stderr names the stop reason and the last error); the conversation is still saved
  2    bad usage or configuration (options, definition file, state file, endpoint settings)
  3    waiting for approval (a --session run): the waiting calls are printed; decide with
       `agents approve|reject --session NAME CALL_ID`, then `agents run --session NAME --resume`
  4    session busy: another process is running --session NAME (its pid, host and start are
       printed); nothing was done. `--wait` waits for it instead
  130  cancelled with Ctrl-C (the conversation is saved first with --state or --session; a
       second Ctrl-C exits at once)
  143  stopped by SIGTERM: a --session run finishes and commits the step in progress, gives
       the session back and stops (continue with --resume); a run without a session is
       cancelled as by Ctrl-C. A second signal exits at once

Sessions and tools: one process runs a session at a time (a lease). A tool call that a crash
interrupted runs again on --resume only if the tool is read-only or idempotent; any other is
not run twice: the model is told it may or may not have taken effect (effectively once for
idempotent tools, at most once and then ask for the rest; see docs/sessions.md)";

/// How `agents run` ended.
#[derive(Debug)]
pub enum RunError {
    /// Bad options or configuration (exit code 2).
    Usage(Box<dyn std::error::Error>),
    /// The run itself failed (exit code 1); the message is one line.
    Failed(String),
    /// Ctrl-C cancelled the run (exit code 130).
    Cancelled(String),
    /// The run waits for a person's decision (exit code 3).
    Waiting,
    /// Another process is running the session (exit code 4).
    Busy(String),
    /// SIGTERM stopped the run (exit code 143).
    Terminated(String),
}

impl RunError {
    /// The process exit code.
    pub fn exit_code(&self) -> u8 {
        match self {
            RunError::Usage(_) => 2,
            RunError::Failed(_) => 1,
            RunError::Cancelled(_) => 130,
            RunError::Waiting => 3,
            RunError::Busy(_) => 4,
            RunError::Terminated(_) => 143,
        }
    }
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Usage(error) => write!(f, "{error}"),
            RunError::Failed(message)
            | RunError::Cancelled(message)
            | RunError::Busy(message)
            | RunError::Terminated(message) => f.write_str(message),
            RunError::Waiting => f.write_str(
                "the run waits for approval; decide with `agents approve` or `agents reject`",
            ),
        }
    }
}

/// A failed session run: exit code 4 when another process runs the session, else 1.
fn session_failed(error: &(dyn std::error::Error + 'static)) -> RunError {
    match error.downcast_ref::<agents::sessions::SessionError>() {
        Some(busy) if busy.is_busy() => RunError::Busy(crate::sessions::busy_line(busy)),
        _ => RunError::Failed(one_line(&error.to_string(), 300)),
    }
}

/// A configuration error, exit code 2.
fn usage(error: impl Into<Box<dyn std::error::Error>>) -> RunError {
    RunError::Usage(error.into())
}

/// Runs one user turn and prints it as it happens; Ctrl-C cancels it (see [`until_ctrl_c`]).
pub async fn run(args: RunArgs) -> Result<(), RunError> {
    // Dropped when the run ends, which sends the spans still buffered.
    #[cfg(feature = "otel")]
    let _telemetry = crate::setup::telemetry(&args.agent).map_err(usage)?;
    let state = match &args.state {
        Some(path) => load_state(path).map_err(usage)?,
        None => AgentState::new(),
    };
    let settings = Settings::resolve(&args.agent).map_err(usage)?;
    let text = args.output == Output::Text;
    let stream = args.stream && text;
    let spinner = crate::render::Spinner::new(text && !args.quiet);
    let on_event = {
        let spinner = spinner.clone();
        move |event: &AgentEvent| {
            spinner.on_event(event);
            if text {
                print_event(event);
            }
        }
    };
    let Prepared { agent, .. } = prepare(
        &args.agent,
        &settings,
        stream,
        Some(&args.approval),
        on_event,
    )
    .await
    .map_err(usage)?;
    let prompt = args.prompt.as_deref().unwrap_or_default();
    if text && !args.session.resume {
        println!("user: {}", printable(prompt));
    }
    let token = CancellationToken::new();
    let terminate = args.session.graceful_stop.clone();
    let graceful = args.session.session.is_some();
    let turn = async {
        let done = if graceful {
            crate::sessions::run(&agent, &args.session, args.prompt.as_deref(), token.clone())
                .await
                .map_err(|e| session_failed(e.as_ref()))?
        } else {
            agent
                .execute_with(
                    state.with_user_message(prompt),
                    &StepOptions::new().with_cancellation(token.clone()),
                )
                .await
                .map_err(|e| {
                    RunError::Failed(format!("the run failed: {}", one_line(&e.to_string(), 300)))
                })?
        };
        // Approval (approve.rs): decide what can be decided and resume; a session run left
        // waiting exits 3 below.
        let mut approver = crate::approve::Approver::new(&args.approval);
        crate::approve::settle(&agent, &mut approver, &args.session, done, &token)
            .await
            .map_err(|e| session_failed(e.as_ref()))
    };
    let done = until_ctrl_c(&token, (&terminate, graceful), turn).await;
    spinner.stop();
    let done = done?;
    if text {
        print_answer(&done, stream);
        println!("{}", usage_line(&done));
        if args.transcript {
            print_transcript(&done);
        }
    } else {
        println!("{}", run_summary(&done));
    }
    if let Some(path) = &args.state {
        let json = done
            .to_json()
            .map_err(|e| RunError::Failed(format!("cannot save the conversation: {e}")))?;
        agents::fs::write_atomic(path, json.as_bytes()).map_err(|e| {
            RunError::Failed(format!(
                "cannot save the conversation to {}: {e}",
                path.display()
            ))
        })?;
        if text {
            println!("conversation saved to {}", path.display());
        }
    }
    if terminate.is_cancelled() {
        let name = args.session.session.as_deref().unwrap_or_default();
        return Err(RunError::Terminated(if graceful && done.is_runnable() {
            format!(
                "stopped by SIGTERM after committing the step in progress; continue with \
                 `agents run --session {} --resume`",
                printable(name)
            )
        } else {
            "stopped by SIGTERM".to_owned()
        }));
    }
    if cancelled(&done) {
        return Err(RunError::Cancelled(
            "cancelled with Ctrl-C; the conversation holds a note saying so".to_owned(),
        ));
    }
    if done.status() == AgentStatus::Suspended {
        let name = args.session.session.as_deref().unwrap_or_default();
        println!("{}", crate::approve::pending_report(&done, name));
        return Err(RunError::Waiting);
    }
    match failure(&done) {
        Some(message) => Err(RunError::Failed(message)),
        None => Ok(()),
    }
}

/// Whether Ctrl-C (or another cancellation) stopped the run.
pub fn cancelled(state: &AgentState) -> bool {
    state.stop_reason() == Some(StopReason::UserRequested)
}

/// Prints the run's answer once: without streaming, the final response; with streaming the
/// text is on the screen already, except an answer appended on a stop (never streamed).
pub fn print_answer(done: &AgentState, streamed: bool) {
    if streamed {
        println!();
    }
    if let Some(answer) = done.final_response() {
        if !streamed || is_answer_on_stop(&answer) {
            println!("assistant: {}", printable(&answer.text()));
        }
    }
}

/// Awaits `turn`; the first Ctrl-C cancels `token` (the turn then ends with every tool call
/// answered and a notice in the conversation), a second one exits the process with 130 at
/// once. The first SIGTERM cancels `terminate`: a session run (`graceful`) finishes and
/// commits its step and stops, anything else is cancelled as by Ctrl-C; a second signal exits
/// with 143 at once (a session's journal keeps what the step did). Without signal handlers
/// (they could not be installed) the turn just runs.
pub async fn until_ctrl_c<F: std::future::Future>(
    token: &CancellationToken,
    (terminate, graceful): (&CancellationToken, bool),
    turn: F,
) -> F::Output {
    use tokio::signal::unix::{signal, SignalKind};
    let mut turn = std::pin::pin!(turn);
    let (Ok(mut interrupts), Ok(mut terms)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return turn.await;
    };
    loop {
        tokio::select! {
            done = &mut turn => return done,
            Some(()) = interrupts.recv() => {
                if token.is_cancelled() || terminate.is_cancelled() {
                    eprintln!("\ninterrupted again: exiting");
                    std::process::exit(130);
                }
                eprintln!("\ncancelling (Ctrl-C again to exit at once)...");
                token.cancel();
            }
            Some(()) = terms.recv() => {
                if token.is_cancelled() || terminate.is_cancelled() {
                    eprintln!("\nterminated again: exiting");
                    std::process::exit(143);
                }
                if graceful {
                    eprintln!("\nSIGTERM: finishing the step in progress, then stopping...");
                } else {
                    eprintln!("\nSIGTERM: cancelling...");
                    token.cancel();
                }
                terminate.cancel();
            }
        }
    }
}

/// The `--output json` object: what a script needs to know about the run.
pub fn run_summary(done: &AgentState) -> Value {
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

/// One line saying why the run failed (stop reason and last error), when it did: its status
/// is `Failed`, or it stopped on an empty reply.
fn failure(state: &AgentState) -> Option<String> {
    let reason = state.stop_reason();
    let failed = state.status() == AgentStatus::Failed || reason == Some(StopReason::EmptyResponse);
    if !failed {
        return None;
    }
    let reason = reason.map_or("unknown", StopReason::as_str);
    let last_error = state.steps().rev().find_map(|step| {
        step.error_messages().pop().or_else(|| {
            step.tool_executions()
                .errors()
                .last()
                .and_then(|e| e.error_message().map(str::to_owned))
        })
    });
    Some(match (reason, last_error) {
        ("empty_response", _) => {
            "the run failed (stop reason: empty_response): the model sent an empty reply, twice"
                .to_owned()
        }
        (reason, Some(error)) => format!(
            "the run failed (stop reason: {reason}); last error: {}",
            one_line(&error, 300)
        ),
        (reason, None) => format!("the run failed (stop reason: {reason})"),
    })
}
