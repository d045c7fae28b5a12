//! `McpError`: why an MCP server could not be reached or used.

use std::time::Duration;

use thiserror::Error;

/// A failure to connect to, or talk to, an MCP server.
///
/// Failures of a single tool call never surface as `McpError`: they become tool-error results
/// the model reads (see [`McpTool`](crate::McpTool)).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum McpError {
    /// The server's program could not be started.
    #[error("MCP server `{server}`: could not start `{program}`; check that it is installed and on PATH")]
    Spawn {
        /// The server's name.
        server: String,
        /// The program that failed to start.
        program: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The MCP handshake (`initialize`) failed.
    #[error("MCP server `{server}`: the handshake failed; check the command or URL and the server's log")]
    Handshake {
        /// The server's name.
        server: String,
        /// What rmcp reported.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The server did not finish the handshake in time.
    #[error("MCP server `{server}`: no answer to the handshake within {timeout:?}; raise the connect timeout or check the server")]
    ConnectTimeout {
        /// The server's name.
        server: String,
        /// The connect timeout.
        timeout: Duration,
    },
    /// A request to the server (for example `tools/list`) failed.
    #[error(
        "MCP server `{server}`: `{method}` failed; the server may have stopped or rejected it"
    )]
    Request {
        /// The server's name.
        server: String,
        /// The MCP method.
        method: &'static str,
        /// What rmcp reported.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A request did not get an answer in time.
    #[error("MCP server `{server}`: `{method}` got no answer within {timeout:?}")]
    Timeout {
        /// The server's name.
        server: String,
        /// The MCP method.
        method: &'static str,
        /// The timeout.
        timeout: Duration,
    },
    /// The configuration is unusable (bad URL, bad header, empty program).
    #[error("MCP server `{server}`: {reason}")]
    InvalidConfig {
        /// The server's name.
        server: String,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// Two tools would reach the model under the same name.
    #[error("MCP tool name `{name}` is offered by both `{first}` and `{second}`: give one of the servers a prefix (with_prefix) so the model can tell them apart")]
    DuplicateToolName {
        /// The colliding name.
        name: String,
        /// The server that offered it first.
        first: String,
        /// The server that offered it again.
        second: String,
    },
    /// The client was closed.
    #[error("MCP server `{server}`: the client was closed; connect again to use it")]
    Closed {
        /// The server's name.
        server: String,
    },
}
