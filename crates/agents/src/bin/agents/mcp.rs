//! `agents mcp`: look at an MCP server from the command line (for debugging a server); a
//! definition's `mcp_servers` are connected by `setup.rs`.

use std::time::Duration;

use agents::mcp::{McpClient, McpServer};
use agents::prelude::*;

use crate::render::{printable, printable_json};

type Error = Box<dyn std::error::Error>;

/// `agents mcp ...`
#[derive(Debug, clap::Subcommand)]
pub enum McpCommand {
    /// List a server's tools: name, description and input schema (normalized).
    Tools {
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Call one tool and print its result (exit 1 for a tool error).
    Call {
        /// The tool's name (as the server names it).
        tool: String,
        /// The arguments, a JSON object.
        #[arg(long, default_value = "{}")]
        args: String,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Serve an agent as an MCP server: the tool `ask` (`prompt`, optional `session`), with
    /// `approve`/`reject`; over stdio, or streamable HTTP at /mcp with --addr.
    #[cfg(feature = "serve")]
    Serve(Box<McpServeArgs>),
}

/// `agents mcp serve ...`
#[cfg(feature = "serve")]
#[derive(Debug, clap::Args)]
pub struct McpServeArgs {
    /// Serve streamable HTTP here (at /mcp) instead of stdio. Only a loopback address may
    /// run without a token.
    #[arg(long)]
    pub addr: Option<std::net::SocketAddr>,
    /// No access token (HTTP on a loopback address only).
    #[arg(long)]
    pub no_auth: bool,
    /// Also serve the agent's own tools (those that need no approval), as the definition's
    /// tool policy permits them.
    #[arg(long)]
    pub expose_tools: bool,
    /// Never ask for approvals through MCP elicitation: a turn waiting for approval returns
    /// the waiting calls, for the `approve`/`reject` tools, even to a client that declared
    /// the `elicitation` capability.
    #[arg(long)]
    pub no_elicitation: bool,
    /// At most this many HTTP requests are handled at once.
    #[arg(long, default_value_t = agents::serve::access::DEFAULT_MAX_CONCURRENT)]
    pub max_requests: usize,
    #[command(flatten)]
    pub served: crate::serving::ServedArgs,
}

/// Which server: exactly one of `--command` and `--url`.
#[derive(Debug, clap::Args)]
#[group(required = true, multiple = false)]
pub struct ServerTarget {
    /// A stdio server's command line, for example "npx -y @modelcontextprotocol/server-everything".
    #[arg(long)]
    pub command: Option<String>,
    /// A streamable HTTP server's URL, for example http://127.0.0.1:3001/mcp.
    #[arg(long)]
    pub url: Option<String>,
}

/// Which server, and how.
#[derive(Debug, clap::Args)]
pub struct ServerArgs {
    #[command(flatten)]
    pub target: ServerTarget,
    /// An environment variable for a stdio server, `NAME=value` (repeatable).
    #[arg(long = "env", value_name = "NAME=VALUE")]
    pub env: Vec<String>,
    /// A header for an HTTP server, `Name: value` (repeatable).
    #[arg(long = "header", value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// Per-call timeout in seconds.
    #[arg(long, default_value_t = 60)]
    pub timeout: u64,
}

impl ServerArgs {
    fn server(&self) -> Result<McpServer, Error> {
        let mut server = match (&self.target.command, &self.target.url) {
            (Some(command), _) => {
                let mut words = split_command(command)?.into_iter();
                let program = words
                    .next()
                    .ok_or("--command is empty: give the program to run")?;
                let mut server = McpServer::stdio(program, words);
                for pair in &self.env {
                    let (name, value) = pair
                        .split_once('=')
                        .ok_or_else(|| format!("--env `{pair}`: expected NAME=value"))?;
                    server = server.with_env(name, value);
                }
                server
            }
            (None, Some(url)) => {
                let mut server = McpServer::http(url.clone());
                for header in &self.headers {
                    let (name, value) = header
                        .split_once(':')
                        .ok_or("--header: expected `Name: value`")?;
                    server = server.with_header(name.trim(), value.trim());
                }
                server
            }
            (None, None) => return Err("give --command or --url".into()),
        };
        server = server.with_call_timeout(Duration::from_secs(self.timeout.max(1)));
        Ok(server)
    }
}

/// Runs `agents mcp ...`.
pub async fn run(command: McpCommand) -> Result<(), Error> {
    match command {
        #[cfg(feature = "serve")]
        McpCommand::Serve(args) => serve::run(*args).await,
        McpCommand::Tools { server } => {
            let client = McpClient::connect(server.server()?).await?;
            let tools = client.list_tools().await?;
            for tool in &tools {
                println!("{}", printable(&tool.exposed_name));
                if !tool.description.is_empty() {
                    println!("  {}", printable(&tool.description).replace('\n', "\n  "));
                }
                println!(
                    "  parameters: {}",
                    printable_json(&tool.input_schema.to_string())
                );
            }
            println!("{} tool(s)", tools.len());
            client.close().await?;
            Ok(())
        }
        McpCommand::Call { tool, args, server } => {
            let arguments: serde_json::Value = serde_json::from_str(&args)
                .map_err(|e| format!("--args is not valid JSON ({e}); pass an object such as '{{\"message\": \"hi\"}}'"))?;
            let client = McpClient::connect(server.server()?).await?;
            let outcome = client
                .call(&tool, arguments, &ToolContext::default().cancellation)
                .await;
            client.close().await?;
            match outcome {
                Ok(result) if !result.is_error => {
                    println!("{}", printable(&result.text));
                    Ok(())
                }
                Ok(result) => {
                    Err(format!("the tool reported an error: {}", printable(&result.text)).into())
                }
                Err(error) => Err(error.into()),
            }
        }
    }
}

/// Splits a command line into words: whitespace separates, '…' and "…" group, \ escapes.
fn split_command(line: &str) -> Result<Vec<String>, Error> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') | (None, '\\') => {
                word.push(chars.next().ok_or("--command ends with a lone `\\`")?);
                in_word = true;
            }
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return Err("--command has an unclosed quote".into());
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::split_command;

    #[test]
    fn command_lines_split_like_a_shell() {
        assert_eq!(
            split_command(r#"npx -y "@scope/server x" 'a b' c\ d"#).unwrap(),
            ["npx", "-y", "@scope/server x", "a b", "c d"]
        );
        assert_eq!(split_command("  ").unwrap(), Vec::<String>::new());
        assert!(split_command("a 'b").is_err());
    }
}

#[cfg(feature = "serve")]
mod serve {
    //! `agents mcp serve`: the agent as an MCP server (`agents::serve::McpAgentServer`). Over
    //! stdio nothing but the protocol goes to stdout; over HTTP the endpoint's address (with
    //! the token) is the one line on stdout, and SIGTERM stops it gracefully.

    use std::fmt::Debug;

    use agents::prelude::*;
    use agents::serve::{server, Access, McpAgentServer, ServedAgent};
    use agents::sessions::SessionStore;

    use super::{Error, McpServeArgs};
    use crate::serving;
    use crate::sessions::Store;

    pub async fn run(mut args: McpServeArgs) -> Result<(), Error> {
        if args.no_auth && args.addr.is_none() {
            return Err("--no-auth is for HTTP (--addr); stdio has no token".into());
        }
        let agent = args.served.agent(false).await?;
        match Store::open(args.served.db.as_deref()).await? {
            Store::Sqlite(store) => serve(store, agent, &args).await,
            Store::Postgres(store) => serve(store, agent, &args).await,
        }
    }

    async fn serve<S: SessionStore + Clone + Debug + 'static>(
        store: S,
        agent: Agent,
        args: &McpServeArgs,
    ) -> Result<(), Error> {
        eprintln!("sessions: {}", store.describe());
        let shutdown = CancellationToken::new();
        server::cancel_on_signal(shutdown.clone())?;
        let mut served = ServedAgent::new(agent, store).with_max_runs(args.served.max_runs);
        if let Some(limit) = args.served.cost_limit {
            served = served.with_cost_limit(limit);
        }
        let mut mcp = McpAgentServer::new(served.clone());
        if args.expose_tools {
            mcp = mcp.with_exposed_tools();
        }
        if args.no_elicitation {
            mcp = mcp.without_elicitation();
        }
        eprintln!("tools: {}", mcp.tool_names().join(", "));
        let grace = args.served.grace();
        let Some(addr) = args.addr else {
            mcp.serve_stdio(shutdown).await?;
            served.finish(grace).await;
            return Ok(());
        };
        let listener = server::bind(addr).await?;
        let addr = server::local_addr(&listener)?;
        let access =
            Access::new(addr, serving::auth(args.no_auth)?)?.with_max_concurrent(args.max_requests);
        let router = access.protect(mcp.router(shutdown.clone()));
        // The one line on stdout: the endpoint, with the token in it.
        serving::announce(&format!("{}\n", access.url("/mcp")))?;
        let served_result = server::serve(listener, router, shutdown, grace).await;
        // Turns whose requests ended (a client that cancelled or hung up) still run.
        served.finish(grace).await;
        served_result?;
        eprintln!("stopped");
        Ok(())
    }
}
