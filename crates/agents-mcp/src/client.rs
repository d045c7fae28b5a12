//! `McpClient`: a connection to one server that survives the server.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use agents_core::Tool;
use serde_json::Value;
use tokio::sync::{watch, Mutex};
use tokio_util::sync::CancellationToken;

use crate::calls::{CallError, ClientInner, McpToolInfo};
use crate::connection::{Connection, Shared};
use crate::convert::ConvertedResult;
use crate::error::McpError;
use crate::server::McpServer;
use crate::tool::McpTool;

/// A connection to one MCP server.
///
/// Calls go through [`McpTool`]s (from [`tools`](McpClient::tools)) or
/// [`call`](McpClient::call). When the server stops (a crash, a closed connection), the call in
/// flight gets an error and the next call starts the server again (stdio) or reconnects (HTTP),
/// with a bounded number of attempts and exponential backoff. The server's process stops when
/// the client and every tool it handed out are dropped, or at [`close`](McpClient::close).
#[derive(Clone)]
pub struct McpClient {
    inner: Arc<ClientInner>,
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("server", &self.inner.server.name)
            .finish_non_exhaustive()
    }
}

impl McpClient {
    /// Starts (or dials) the server and completes the MCP handshake.
    ///
    /// # Errors
    /// [`McpError::Spawn`] when the program cannot start, [`McpError::ConnectTimeout`] when the
    /// handshake takes longer than the connect timeout, [`McpError::Handshake`] when it fails,
    /// [`McpError::InvalidConfig`] for an unusable command, header or URL.
    pub async fn connect(server: McpServer) -> Result<McpClient, McpError> {
        let shared = Shared::new(&server.name);
        let connection = Connection::open(&server, &shared).await?;
        if let Some(info) = connection.peer_info() {
            tracing::debug!(server = %server.name, protocol = %info.protocol_version, "MCP server connected");
        }
        Ok(Self {
            inner: Arc::new(ClientInner {
                server,
                shared,
                connection: Mutex::new(Some(Arc::new(connection))),
                closed: AtomicBool::new(false),
                offered: std::sync::Mutex::new(Vec::new()),
            }),
        })
    }

    /// The server this client talks to.
    pub fn server(&self) -> &McpServer {
        &self.inner.server
    }

    /// The server's tools as agent tools (usable with `AgentBuilder::with_tools`).
    ///
    /// # Errors
    /// [`McpError`] when the server cannot be reached or `tools/list` fails.
    pub async fn tools(&self) -> Result<Vec<Arc<dyn Tool>>, McpError> {
        Ok(self
            .list_tools()
            .await?
            .into_iter()
            .map(|info| Arc::new(McpTool::new(Arc::clone(&self.inner), info)) as Arc<dyn Tool>)
            .collect())
    }

    /// The server's tools as an agent [`ToolSource`](agents_core::ToolSource), fetched again
    /// between steps after the server announces a new list (`Agent::with_tool_source`).
    pub fn tool_source(&self) -> crate::McpToolSource {
        crate::McpToolSource::new(self.clone())
    }

    /// The server's tools as it describes them (schemas normalized).
    ///
    /// # Errors
    /// [`McpError`] when the server cannot be reached or `tools/list` fails.
    pub async fn list_tools(&self) -> Result<Vec<McpToolInfo>, McpError> {
        let connection = self.inner.connection().await?;
        self.inner.list_tools(&connection).await
    }

    /// Calls the server's tool `name` (its own name, without prefix) with `arguments`.
    ///
    /// # Errors
    /// A [`CallError`] saying why the call did not produce a result.
    pub async fn call(
        &self,
        name: &str,
        arguments: Value,
        cancellation: &CancellationToken,
    ) -> Result<ConvertedResult, CallError> {
        self.inner.call(name, arguments, cancellation).await
    }

    /// Changes whenever the server announces that its tool list changed
    /// (`notifications/tools/list_changed`); call [`tools`](McpClient::tools) again to get the
    /// new list. Calls made through existing tools check the list first, so a removed tool
    /// answers with a clear tool error.
    pub fn tool_changes(&self) -> watch::Receiver<u64> {
        self.inner.shared.tools_version.subscribe()
    }

    /// The process id of a running stdio server (for diagnostics).
    pub async fn process_id(&self) -> Option<u32> {
        self.inner
            .connection
            .lock()
            .await
            .as_ref()
            .filter(|c| !c.is_closed())
            .and_then(|c| c.pid)
    }

    /// Ends the session: a stdio server gets its stdin closed, then SIGTERM, then SIGKILL, and
    /// is reaped. Tools handed out earlier answer with a tool error afterwards.
    ///
    /// # Errors
    /// Never fails today; the `Result` leaves room for transports whose goodbye can fail.
    pub async fn close(&self) -> Result<(), McpError> {
        self.inner.closed.store(true, Ordering::SeqCst);
        let connection = self.inner.connection.lock().await.take();
        if let Some(connection) = connection {
            match Arc::try_unwrap(connection) {
                Ok(mut connection) => {
                    if let Err(error) = connection.service.close().await {
                        tracing::debug!(server = %self.inner.server.name, %error, "MCP session task ended abnormally");
                    }
                }
                // A call still holds the session: it is cancelled, and the process stops when
                // that call lets go.
                Err(shared) => shared.service.cancellation_token().cancel(),
            }
        }
        Ok(())
    }
}
