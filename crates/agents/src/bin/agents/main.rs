//! `agents`: run an agent from the command line.
//!
//! - `agents demo` (or no arguments): the bundled demo, no endpoint needed.
//! - `agents run --prompt ... [--provider openai|anthropic] [--base-url ...] [--model ...]`:
//!   an agent with sandboxed file tools and a policy-bound bash tool against a real endpoint;
//!   `--definition FILE` takes the prompt, model, limits, tools and capabilities from an agent
//!   definition file.
//!   `--session NAME [--db URL] [--resume]` keeps the conversation in a durable session.
//! - `agents chat [--session NAME] [same options as run]`: an interactive conversation.
//! - `agents approve|reject --session NAME CALL_ID`: decide on a call a session run waits on
//!   (`agents run --require-approval TOOL --approve all|none|TOOL`; exit code 3 when waiting).
//! - `agents sessions list | show NAME [--version N] | delete NAME | export NAME`.
//! - `agents check PATH...`: validate agent definition files.
//! - `agents mcp tools|call`: list or call an MCP server's tools (for debugging a server).

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod approve;
mod chat;
mod demo;
mod markdown;
#[cfg(feature = "mcp")]
mod mcp;
mod render;
mod run;
mod sessions;
mod setup;

use clap::{Parser, Subcommand};

/// Run LLM agents from the command line.
#[derive(Debug, Parser)]
#[command(
    name = "agents",
    version,
    about = "Run LLM agents from the command line; `agents demo` needs no endpoint."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The bundled demo: a scripted model, real file tools, both trace modes side by side.
    Demo,
    /// One user turn against an OpenAI-compatible or Anthropic endpoint.
    #[command(after_help = run::EXIT_CODES_HELP)]
    Run(Box<run::RunArgs>),
    /// An interactive conversation in the terminal (the same options as `run`; /help inside).
    Chat(Box<chat::ChatArgs>),
    /// Approve a call a `--session` run waits on: `agents approve --session NAME CALL_ID
    /// [--with JSON]`; then `agents run --session NAME --resume`.
    Approve(approve::ApproveArgs),
    /// Reject a call a `--session` run waits on: `agents reject --session NAME CALL_ID
    /// --reason TEXT`; then `agents run --session NAME --resume`.
    Reject(approve::RejectArgs),
    /// Durable sessions: list, show, delete, export.
    Sessions(sessions::SessionsArgs),
    /// Validate agent definition files (or directories of them); exit 1 if any is invalid.
    Check {
        /// Definition files or directories.
        #[arg(required = true)]
        paths: Vec<std::path::PathBuf>,
    },
    /// Look at an MCP server: `agents mcp tools --command "..."`, `agents mcp call TOOL --args JSON`.
    #[cfg(feature = "mcp")]
    #[command(subcommand)]
    Mcp(mcp::McpCommand),
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.command.unwrap_or(Command::Demo) {
        Command::Demo => demo::run().await,
        Command::Run(args) => {
            return match run::run(*args).await {
                Ok(()) => std::process::ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("error: {error}");
                    std::process::ExitCode::from(error.exit_code())
                }
            }
        }
        Command::Chat(args) => chat::run(*args).await,
        Command::Check { paths } => setup::check(&paths),
        Command::Approve(args) => approve::approve(args).await,
        Command::Reject(args) => approve::reject(args).await,
        #[cfg(feature = "mcp")]
        Command::Mcp(command) => mcp::run(command).await,
        #[cfg(feature = "sessions")]
        Command::Sessions(args) => sessions::command(args).await,
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}", render::error_report(error.as_ref()));
            // Another process runs the session (`agents approve|reject`): the same code as
            // `agents run`'s.
            if sessions::is_busy(error.as_ref()) {
                return std::process::ExitCode::from(4);
            }
            std::process::ExitCode::FAILURE
        }
    }
}
