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
//! - `agents serve [--db URL] [--definition FILE] [--addr 127.0.0.1:PORT]`: the web console.
//! - `agents check PATH...`: validate agent definition files.
//! - `agents mcp tools|call`: list or call an MCP server's tools (for debugging a server).
//! - `agents mcp serve --definition FILE [--addr 127.0.0.1:PORT]`: the agent as an MCP server.
//! - `agents a2a serve --definition FILE --addr 127.0.0.1:PORT`: the agent as an A2A endpoint.

#![allow(clippy::print_stdout, clippy::print_stderr)]

#[cfg(feature = "serve")]
mod a2a;
mod approve;
mod chat;
mod demo;
mod markdown;
#[cfg(feature = "mcp")]
mod mcp;
mod render;
mod run;
mod runner;
#[cfg(feature = "serve")]
mod serve;
#[cfg(feature = "serve")]
mod serving;
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
    /// The web console over the session store: sessions, executions step by step, what the
    /// model saw, cost charts, approvals, and chat with `--definition`. Prints its URL (with the
    /// access token) once it listens; stops on SIGTERM.
    #[cfg(feature = "serve")]
    Serve(Box<serve::ServeArgs>),
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
    /// Agent2Agent (A2A 1.0): serve an agent to other agents.
    #[cfg(feature = "serve")]
    #[command(subcommand)]
    A2a(a2a::A2aCommand),
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
                    eprintln!("error: {}", render::printable(&error.to_string()));
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
        #[cfg(feature = "serve")]
        Command::Serve(args) => serve::run(*args).await,
        #[cfg(feature = "serve")]
        Command::A2a(command) => a2a::run(command).await,
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
