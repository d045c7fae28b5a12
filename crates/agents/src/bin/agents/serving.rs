//! What `agents mcp serve` and `agents a2a serve` share: the options, the agent (bash only
//! with `--allow-tools bash`), the session store, and the access token.

use std::time::Duration;

use agents::prelude::*;
use agents::serve::{AccessToken, Auth};

use crate::setup::{self, AgentArgs, Settings};

type Error = Box<dyn std::error::Error>;

/// The options of a served agent.
#[derive(Debug, clap::Args)]
pub struct ServedArgs {
    /// The session database: a SQLite path (default: the user's data directory) or a
    /// postgres:// URL.
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,
    /// Tools a served agent gets only when named here: `bash` (repeatable or comma-separated).
    #[arg(long, value_name = "TOOL[,TOOL]", value_delimiter = ',')]
    pub allow_tools: Vec<String>,
    /// Each request (one turn) stops once its priced cost reaches this many dollars.
    #[arg(long, value_name = "USD")]
    pub cost_limit: Option<f64>,
    /// At most this many turns run at once.
    #[arg(long, default_value_t = agents::serve::served::DEFAULT_MAX_RUNS)]
    pub max_runs: usize,
    /// Calls of these tools wait for a person's approval (besides the definition's).
    #[arg(long, value_name = "TOOL[,TOOL]", value_delimiter = ',')]
    pub require_approval: Vec<String>,
    /// Seconds turns get to finish after SIGTERM before they are cancelled.
    #[arg(long, default_value_t = 10)]
    pub grace_seconds: u64,
    /// The agent (--definition FILE, or --model and the endpoint options).
    #[command(flatten)]
    pub agent: AgentArgs,
}

/// The tools `--allow-tools` knows.
const GATED_TOOLS: [&str; 1] = ["bash"];

impl ServedArgs {
    /// The grace period after SIGTERM.
    pub fn grace(&self) -> Duration {
        Duration::from_secs(self.grace_seconds)
    }

    /// The agent the options describe, streaming its text when `stream`.
    pub async fn agent(&mut self, stream: bool) -> Result<Agent, Error> {
        if self.agent.definition.is_none() && self.agent.model.is_none() {
            return Err("give the agent to serve: --definition FILE (or --model ...)".into());
        }
        if let Some(unknown) = self
            .allow_tools
            .iter()
            .find(|t| !GATED_TOOLS.contains(&t.as_str()))
        {
            return Err(format!(
                "--allow-tools {unknown}: only {} can be allowed (the other tools come from the definition)",
                GATED_TOOLS.join(", ")
            )
            .into());
        }
        if let Some(limit) = self.cost_limit {
            if !(limit.is_finite() && limit > 0.0) {
                return Err("--cost-limit must be a positive number of dollars".into());
            }
        }
        // A served agent runs what remote callers ask: bash only when allowed by name.
        if !self.allow_tools.iter().any(|t| t == "bash") {
            self.agent.no_bash = true;
        }
        let settings = Settings::resolve(&self.agent)?;
        Ok(
            setup::prepare(&self.agent, &settings, stream, &self.require_approval)
                .await?
                .agent,
        )
    }
}

/// The token from `AGENTS_SERVE_TOKEN`, else a fresh one; none with `--no-auth`.
pub fn auth(no_auth: bool) -> Result<Auth, Error> {
    if no_auth {
        return Ok(Auth::None);
    }
    Ok(match std::env::var("AGENTS_SERVE_TOKEN") {
        Ok(token) if !token.is_empty() => Auth::Token(AccessToken::new(token)?),
        _ => Auth::Token(AccessToken::random()),
    })
}

/// Prints what a server announces on stdout (its address, its token) in one write, so a
/// reader that takes the first line and closes the pipe cannot break the second; a stdout
/// nobody reads any more (a broken pipe) is said on stderr and the server goes on serving.
///
/// # Errors
/// Any other failure to write stdout.
pub fn announce(text: &str) -> Result<(), Error> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => {
            eprintln!("stdout is closed; serving on");
            Ok(())
        }
        result => Ok(result?),
    }
}
