//! `agents run`: one user turn of an agent with file and bash tools against a real endpoint,
//! read top to bottom in [`run`]: the settings and the agent (`setup.rs`), the turn run to its
//! end with its approvals (`runner.rs`) and shown as it goes, what it ended with printed
//! (`render.rs`), and the exit code.

use std::path::PathBuf;

use agents::prelude::*;

use crate::render::{one_line, pending_report, print_run_end, printable, Progress};
use crate::runner::{cancelled, Runner, TurnError};
use crate::setup::{load_state, prepare, AgentArgs, Settings};

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

/// Runs one user turn and prints it as it happens; Ctrl-C cancels it (see
/// [`until_ctrl_c`](crate::runner::until_ctrl_c)).
pub async fn run(args: RunArgs) -> Result<(), RunError> {
    // The settings and the agent. The telemetry guard, dropped when the run ends, sends the
    // spans still buffered.
    #[cfg(feature = "otel")]
    let _telemetry = crate::setup::telemetry(&args.agent).map_err(usage)?;
    let state = match &args.state {
        Some(path) => load_state(path).map_err(usage)?,
        None => AgentState::new(),
    };
    let settings = Settings::resolve(&args.agent).map_err(usage)?;
    let text = args.output == Output::Text;
    let stream = args.stream && text;
    let prepared = prepare(
        &args.agent,
        &settings,
        stream,
        &args.approval.require_approval,
    )
    .await
    .map_err(usage)?;
    // The turn, shown as it happens, run to its end (approvals included).
    let progress = Progress::new(text, args.quiet);
    let agent = progress.follow(prepared.agent);
    if !args.session.resume {
        progress.user(args.prompt.as_deref().unwrap_or_default());
    }
    let done = Runner::new(&args.session, &args.approval)
        .turn(&agent, state, args.prompt.as_deref())
        .await;
    // What it ended with, and the exit code.
    progress.stop();
    let done = done.map_err(turn_failed)?;
    print_run_end(&done, text, stream, args.transcript);
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
    if args.session.graceful_stop.is_cancelled() {
        let name = args.session.session.as_deref().unwrap_or_default();
        return Err(RunError::Terminated(
            if args.session.session.is_some() && done.is_runnable() {
                format!(
                    "stopped by SIGTERM after committing the step in progress; continue with \
                     `agents run --session {} --resume`",
                    printable(name)
                )
            } else {
                "stopped by SIGTERM".to_owned()
            },
        ));
    }
    if cancelled(&done) {
        return Err(RunError::Cancelled(
            "cancelled with Ctrl-C; the conversation holds a note saying so".to_owned(),
        ));
    }
    if done.status() == AgentStatus::Suspended {
        let name = args.session.session.as_deref().unwrap_or_default();
        println!("{}", pending_report(&done, name));
        return Err(RunError::Waiting);
    }
    match failure(&done) {
        Some(message) => Err(RunError::Failed(message)),
        None => Ok(()),
    }
}

/// A failed turn: a run without a session that failed at its start says so; the rest as
/// [`session_failed`].
fn turn_failed(error: TurnError) -> RunError {
    match error {
        TurnError::Start(error) => RunError::Failed(format!(
            "the run failed: {}",
            one_line(&error.to_string(), 300)
        )),
        TurnError::Other(error) => session_failed(error.as_ref()),
    }
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
