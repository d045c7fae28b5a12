//! MCP tools: use any [Model Context Protocol](https://modelcontextprotocol.io) server's tools as
//! agent tools, robustly.
//!
//! Describe a server with [`McpServer::stdio`] (a local program) or [`McpServer::http`]
//! (streamable HTTP), connect with [`McpClient::connect`], and hand
//! [`McpClient::tools`] to an agent. Built on the official Rust SDK, `rmcp`.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! use agents_mcp::{McpClient, McpServer};
//!
//! let server = McpServer::stdio("npx", ["-y", "@modelcontextprotocol/server-everything"])
//!     .with_prefix("everything")
//!     .with_call_timeout(Duration::from_secs(30));
//! let client = McpClient::connect(server).await?;
//! let tools = client.tools().await?; // Vec<Arc<dyn Tool>>: AgentBuilder::with_tools(tools)
//! for tool in &tools {
//!     println!("{}: {}", tool.name(), tool.description());
//! }
//! client.close().await?;
//! # Ok(()) }
//! ```
//!
//! What the client does so a server cannot break a run:
//! - every call has a timeout (default 60 s); on expiry, and when the run is cancelled, the
//!   server gets `notifications/cancelled` and the model a tool error;
//! - a server that stops mid-call fails that call only; the next call restarts a stdio server or
//!   reconnects over HTTP (bounded attempts, exponential backoff);
//! - `isError` results, protocol errors and removed tools become tool errors the model reads;
//! - results are converted to text (structured content as JSON, images and blobs as a short
//!   description) and cut to `max_result_chars` (default 100,000) with a note;
//! - input schemas are normalized (`type: object`, `properties`, `$ref`s inlined) so every
//!   provider accepts them;
//! - a stdio server's stderr goes to `tracing` (target `agents_mcp::stderr`), never to the
//!   model, and its process group is killed and reaped when the client goes away;
//! - `notifications/tools/list_changed` marks the list stale: calls re-check it,
//!   [`McpClient::tool_changes`] tells the program to fetch [`McpClient::tools`] again, and an
//!   agent given [`McpClient::tool_source`] (`with_tool_source`) offers the new list from its
//!   next step on.

mod calls;
mod client;
mod connection;
pub mod convert;
mod error;
pub mod schema;
mod server;
mod source;
#[cfg(feature = "testing")]
pub mod testing;
mod tool;
mod toolset;

pub use calls::{CallError, McpToolInfo};
pub use client::McpClient;
pub use error::McpError;
pub use server::{
    McpServer, McpTransport, DEFAULT_CALL_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_RECONNECTS,
    DEFAULT_MAX_RESULT_CHARS, DEFAULT_MCP_ENV,
};
pub use source::McpToolSource;
pub use tool::McpTool;
pub use toolset::connect_all;
