//! `agents a2a serve`: the agent as an Agent2Agent (A2A 1.0, JSON-RPC) endpoint
//! (`agents::serve::a2a::A2aServer`) behind the access rules every server shares: a bearer
//! token (printed at start, or `AGENTS_SERVE_TOKEN`), `Host`/`Origin` checks, request
//! limits. An A2A task is a session in the store. SIGTERM: stop accepting, let turns finish
//! for the grace period, cancel the rest (each step is committed).

use std::fmt::Debug;
use std::net::SocketAddr;

use agents::prelude::*;
use agents::serve::a2a::A2aServer;
use agents::serve::{server, Access, ServedAgent};
use agents::sessions::SessionStore;
use tokio::net::TcpListener;

use crate::serving::{self, ServedArgs};
use crate::sessions::Store;

type Error = Box<dyn std::error::Error>;

/// `agents a2a ...`
#[derive(Debug, clap::Subcommand)]
pub enum A2aCommand {
    /// Serve an agent over A2A 1.0 (JSON-RPC): agent card at /.well-known/agent-card.json.
    Serve(Box<A2aServeArgs>),
}

/// `agents a2a serve ...`
#[derive(Debug, clap::Args)]
pub struct A2aServeArgs {
    /// Where to listen. Only a loopback address may run without a token.
    #[arg(long)]
    pub addr: SocketAddr,
    /// No access token (loopback addresses only).
    #[arg(long)]
    pub no_auth: bool,
    /// At most this many requests are handled at once.
    #[arg(long, default_value_t = agents::serve::access::DEFAULT_MAX_CONCURRENT)]
    pub max_requests: usize,
    /// The agent card's description.
    #[arg(long)]
    pub description: Option<String>,
    #[command(flatten)]
    pub served: ServedArgs,
}

/// Runs `agents a2a ...`.
pub async fn run(command: A2aCommand) -> Result<(), Error> {
    let A2aCommand::Serve(mut args) = command;
    let agent = args.served.agent(true).await?;
    let auth = serving::auth(args.no_auth)?;
    let listener = server::bind(args.addr).await?;
    let addr = server::local_addr(&listener)?;
    let access = Access::new(addr, auth)?.with_max_concurrent(args.max_requests);
    let shutdown = CancellationToken::new();
    server::cancel_on_signal(shutdown.clone())?;
    match Store::open(args.served.db.as_deref()).await? {
        Store::Sqlite(store) => serve(store, agent, access, listener, shutdown, &args).await,
        Store::Postgres(store) => serve(store, agent, access, listener, shutdown, &args).await,
    }
}

async fn serve<S: SessionStore + Clone + Debug + 'static>(
    store: S,
    agent: Agent,
    access: Access,
    listener: TcpListener,
    shutdown: CancellationToken,
    args: &A2aServeArgs,
) -> Result<(), Error> {
    eprintln!("sessions: {}", store.describe());
    let mut served = ServedAgent::new(agent, store).with_max_runs(args.served.max_runs);
    if let Some(limit) = args.served.cost_limit {
        served = served.with_cost_limit(limit);
    }
    let mut a2a = A2aServer::new(served.clone(), format!("http://{}/", access.addr()))
        .with_bearer_auth(access.token().is_some());
    if let Some(description) = &args.description {
        a2a = a2a.with_description(description);
    }
    let router = access.protect(a2a.router());
    // On stdout: the agent's address, then the token (if any) on the next line.
    let mut announcement = format!("http://{}/\n", access.addr());
    if let Some(token) = access.token() {
        announcement.push_str(&format!("token: {}\n", token.expose()));
    }
    serving::announce(&announcement)?;
    let grace = args.served.grace();
    let served_result = server::serve(listener, router, shutdown, grace).await;
    // Turns whose requests ended (a client that hung up, return-immediately) still run.
    served.finish(grace).await;
    served_result?;
    eprintln!("stopped");
    Ok(())
}
