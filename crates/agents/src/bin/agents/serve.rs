//! `agents serve`: the web console (`agents::serve::Console`) over the session store, behind
//! the access rules every server shares (`agents::serve::Access`): a token printed in the URL
//! (`AGENTS_SERVE_TOKEN` sets it), `Host`/`Origin` checks, request limits. With
//! `--definition` (or `--model`) the console also runs turns: chat, and resuming a run whose
//! waiting calls were decided on the page. SIGTERM or Ctrl-C: stop accepting, let requests and
//! turns finish (for the grace period), then cancel what is left (each step is committed).

use std::fmt::Debug;
use std::net::SocketAddr;
use std::time::Duration;

use agents::prelude::*;
use agents::serve::{server, Access, AccessToken, Auth, Console};
use agents::sessions::SessionStore;
use tokio::net::TcpListener;

use crate::sessions::Store;
use crate::setup::{self, AgentArgs, Settings};

type Error = Box<dyn std::error::Error>;

/// `agents serve ...`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The session database: a SQLite path (default: the user's data directory) or a
    /// postgres:// URL.
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,
    /// Where to listen. Only a loopback address may run without a token.
    #[arg(long, default_value = "127.0.0.1:8484")]
    pub addr: SocketAddr,
    /// No access token (loopback addresses only).
    #[arg(long)]
    pub no_auth: bool,
    /// Also answer to this Host (name:port), e.g. when listening on 0.0.0.0 (repeatable).
    #[arg(long, value_name = "HOST:PORT")]
    pub allow_host: Vec<String>,
    /// Link executions to traces: a URL with {trace_id}, e.g.
    /// http://localhost:16686/trace/{trace_id}.
    #[arg(long, value_name = "URL")]
    pub trace_url: Option<String>,
    /// At most this many turns run at once.
    #[arg(long, default_value_t = agents::serve::console::DEFAULT_MAX_RUNS)]
    pub max_runs: usize,
    /// At most this many requests are handled at once.
    #[arg(long, default_value_t = agents::serve::access::DEFAULT_MAX_CONCURRENT)]
    pub max_requests: usize,
    /// Seconds requests and turns get to finish after SIGTERM.
    #[arg(long, default_value_t = 10)]
    pub grace_seconds: u64,
    /// Calls of these tools wait for a person's approval (besides the definition's).
    #[arg(long, value_name = "TOOL[,TOOL]", value_delimiter = ',')]
    pub require_approval: Vec<String>,
    /// The agent that runs turns (with --definition or --model; without, the console only
    /// reads and records decisions).
    #[command(flatten)]
    pub agent: AgentArgs,
}

/// `agents serve`.
pub async fn run(args: ServeArgs) -> Result<(), Error> {
    let auth = if args.no_auth {
        Auth::None
    } else {
        match std::env::var("AGENTS_SERVE_TOKEN") {
            Ok(token) if !token.is_empty() => Auth::Token(AccessToken::new(token)?),
            _ => Auth::Token(AccessToken::random()),
        }
    };
    let listener = server::bind(args.addr).await?;
    let addr = server::local_addr(&listener)?;
    let mut access = Access::new(addr, auth)?
        .with_cookie_login()
        .with_max_concurrent(args.max_requests);
    for host in &args.allow_host {
        access = access.with_allowed_host(host)?;
    }
    let agent = if args.agent.definition.is_some() || args.agent.model.is_some() {
        let settings = Settings::resolve(&args.agent)?;
        Some(
            setup::prepare(&args.agent, &settings, true, &args.require_approval)
                .await?
                .agent,
        )
    } else {
        None
    };
    let shutdown = CancellationToken::new();
    server::cancel_on_signal(shutdown.clone())?;
    match Store::open(args.db.as_deref()).await? {
        Store::Sqlite(store) => serve(store, agent, access, listener, shutdown, &args).await,
        Store::Postgres(store) => serve(store, agent, access, listener, shutdown, &args).await,
    }
}

async fn serve<S: SessionStore + Clone + Debug + 'static>(
    store: S,
    agent: Option<Agent>,
    access: Access,
    listener: TcpListener,
    shutdown: CancellationToken,
    args: &ServeArgs,
) -> Result<(), Error> {
    eprintln!("sessions: {}", store.describe());
    let mut console = Console::new(store)
        .with_shutdown(shutdown.clone())
        .with_max_runs(args.max_runs);
    match agent {
        Some(agent) => console = console.with_agent(agent),
        None => eprintln!("no --definition: the console reads sessions and records decisions"),
    }
    if let Some(template) = &args.trace_url {
        console = console.with_trace_url(template);
    }
    let (router, turns) = console.build();
    let router = access.protect(router);
    // The one line on stdout: the address to open, with the token in it.
    crate::serving::announce(&format!("{}\n", access.url("/")))?;
    let grace = Duration::from_secs(args.grace_seconds);
    server::serve(listener, router, shutdown, grace).await?;
    turns.finish(grace).await;
    eprintln!("stopped");
    Ok(())
}
