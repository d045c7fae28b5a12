//! HTTP servers over agents and their sessions: the web console (`agents serve`), with the
//! access rules every server of the crate shares.
//!
//! - [`access`]: [`Access`] checks every request before any route runs: the access token
//!   (`Authorization: Bearer`, a `token` parameter, or the console's cookie), the `Host` and
//!   `Origin` headers against the bound address (DNS rebinding), a limit on concurrent
//!   requests and on body size.
//! - [`console`]: [`Console`], the web console over a session store (sessions, executions
//!   step by step, what the model saw, charts, approvals, chat with an agent).
//! - [`served`]: [`ServedAgent`], an agent run on behalf of remote callers over a session
//!   store (one turn per session, a bound on turns, a cost limit per turn, approvals by
//!   fingerprint), which the two servers below share.
//! - [`mcp_server`]: [`McpAgentServer`], the agent as an MCP server (`agents mcp serve`):
//!   the tool `ask`, with `approve`/`reject`, over stdio or streamable HTTP.
//! - [`a2a`]: the agent as an Agent2Agent (A2A 1.0) endpoint (`agents a2a serve`), and
//!   [`a2a::A2aAgentTool`], a remote A2A agent as a tool.
//! - [`server`]: bind, serve until SIGTERM, finish what is in flight.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use agents_serve::{Access, AccessToken, Auth};
//! use axum::{routing::get, Router};
//!
//! let listener = agents_serve::server::bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
//! let addr = agents_serve::server::local_addr(&listener).unwrap();
//! let access = Access::new(addr, Auth::Token(AccessToken::random())).unwrap();
//! let app: Router = access.protect(Router::new().route("/health", get(|| async { "ok" })));
//! // The address to print: http://127.0.0.1:PORT/?token=...
//! assert!(access.url("/").contains("?token="));
//! # drop((app, listener));
//! # });
//! ```

pub mod a2a;
pub mod access;
pub mod console;
mod error;
mod fingerprint;
pub mod mcp_server;
pub mod served;
pub mod server;
#[cfg(feature = "testing")]
pub mod testing;
mod token;

pub use access::{Access, Auth};
pub use console::{Console, RunningTurns};
pub use error::ServeError;
pub use fingerprint::fingerprint;
pub use mcp_server::McpAgentServer;
pub use served::{Outcome, ServedAgent, Turn, TurnError, Verdict, WaitingCall};
pub use token::{AccessToken, MIN_TOKEN_LEN};
