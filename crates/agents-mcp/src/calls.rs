//! The client's shared core: one server's connection state and the calls made on it
//! (`tools/list`, `tools/call`, reconnecting with backoff), held by the [`McpClient`](crate::McpClient)
//! and by every [`McpTool`](crate::McpTool) it handed out; and the records they share
//! ([`McpToolInfo`], [`CallError`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use agents_core::ToolEffects;
use rmcp::model::CallToolRequestParams;
use rmcp::service::ServiceError;
use serde_json::Value;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use crate::connection::{Connection, Shared};
use crate::convert::{convert_result, ConvertedResult};
use crate::error::McpError;
use crate::schema::normalize_schema;
use crate::server::McpServer;

/// The first pause before reconnecting; doubled for every further attempt.
const FIRST_BACKOFF: Duration = Duration::from_millis(200);

/// A tool as the server describes it (after schema normalization).
#[derive(Clone, Debug, PartialEq)]
pub struct McpToolInfo {
    /// The server's name for the tool.
    pub name: String,
    /// The name the model sees (with the server's prefix, if any).
    pub exposed_name: String,
    /// The description (empty when the server gave none).
    pub description: String,
    /// The input schema, normalized so both providers accept it.
    pub input_schema: Value,
    /// What the tool does to the world, from its `readOnlyHint` and `idempotentHint`
    /// annotations (side-effecting when the server says nothing, as MCP specifies).
    pub effects: ToolEffects,
}

pub(crate) struct ClientInner {
    pub(crate) server: McpServer,
    pub(crate) shared: Arc<Shared>,
    pub(crate) connection: Mutex<Option<Arc<Connection>>>,
    pub(crate) closed: AtomicBool,
    /// The server's tool names as last listed (refreshed when the server says they changed).
    pub(crate) offered: std::sync::Mutex<Vec<String>>,
}

/// Why one call failed; becomes the tool-error text the model reads.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The server could not be reached or restarted.
    #[error(transparent)]
    Unavailable(McpError),
    /// The server stopped while the call ran.
    #[error("MCP server `{server}` stopped during the call to `{tool}`; it will be restarted on the next call, so retry if the call is safe to repeat")]
    ServerStopped {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
    },
    /// The call took longer than the server's call timeout.
    #[error("MCP tool `{tool}` on server `{server}` did not answer within {timeout:?}; the call was cancelled. Try smaller input or another approach")]
    Timeout {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
        /// The call timeout.
        timeout: Duration,
    },
    /// The run was cancelled; the server was told (`notifications/cancelled`).
    #[error("the call to MCP tool `{tool}` was cancelled")]
    Cancelled {
        /// The tool.
        tool: String,
    },
    /// The server answered with a protocol error (unknown tool, invalid parameters, ...).
    #[error("MCP server `{server}` rejected the call to `{tool}`: {message}")]
    Rejected {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
        /// The server's message.
        message: String,
    },
    /// The server no longer offers the tool.
    #[error("MCP server `{server}` no longer offers `{tool}`; its tools now are: {available}")]
    ToolGone {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
        /// The tools it offers now.
        available: String,
    },
}

impl ClientInner {
    pub(crate) fn server(&self) -> &McpServer {
        &self.server
    }

    /// The live session, started again if the server stopped (bounded, with backoff).
    pub(crate) async fn connection(&self) -> Result<Arc<Connection>, McpError> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(McpError::Closed {
                server: self.server.name.clone(),
            });
        }
        let mut slot = self.connection.lock().await;
        if let Some(connection) = slot.as_ref().filter(|c| !c.is_closed()) {
            return Ok(Arc::clone(connection));
        }
        *slot = None;
        let mut backoff = FIRST_BACKOFF;
        let mut attempt = 0;
        loop {
            attempt += 1;
            tracing::info!(server = %self.server.name, attempt, "MCP server not running: reconnecting");
            match Connection::open(&self.server, &self.shared).await {
                Ok(connection) => {
                    // Whatever the old session listed may have changed.
                    self.shared.tools_stale.store(true, Ordering::SeqCst);
                    let connection = Arc::new(connection);
                    *slot = Some(Arc::clone(&connection));
                    return Ok(connection);
                }
                Err(error) if attempt > self.server.max_reconnects => return Err(error),
                Err(error) => {
                    tracing::warn!(server = %self.server.name, attempt, %error, "MCP reconnect failed");
                    tokio::time::sleep(backoff).await;
                    backoff *= 2;
                }
            }
        }
    }

    /// Forgets `connection` if it is still the current one (the next call reconnects).
    pub(crate) async fn discard(&self, connection: &Arc<Connection>) {
        let mut slot = self.connection.lock().await;
        if slot.as_ref().is_some_and(|c| Arc::ptr_eq(c, connection)) {
            *slot = None;
        }
    }

    pub(crate) async fn list_tools(
        &self,
        connection: &Connection,
    ) -> Result<Vec<McpToolInfo>, McpError> {
        let server = &self.server;
        self.shared.tools_stale.store(false, Ordering::SeqCst);
        let listed = tokio::time::timeout(
            server.call_timeout,
            connection.service.peer().list_all_tools(),
        )
        .await
        .map_err(|_| McpError::Timeout {
            server: server.name.clone(),
            method: "tools/list",
            timeout: server.call_timeout,
        })?
        .map_err(|source| {
            self.shared.tools_stale.store(true, Ordering::SeqCst);
            McpError::Request {
                server: server.name.clone(),
                method: "tools/list",
                source: Box::new(source),
            }
        })?;
        let infos: Vec<McpToolInfo> = listed
            .into_iter()
            .map(|tool| McpToolInfo {
                effects: tool
                    .annotations
                    .as_ref()
                    .map_or_else(ToolEffects::default, |a| {
                        ToolEffects::from_hints(a.read_only_hint, a.idempotent_hint)
                    }),
                exposed_name: server.exposed_name(&tool.name),
                name: tool.name.into_owned(),
                description: tool.description.map(|d| d.into_owned()).unwrap_or_default(),
                input_schema: normalize_schema(&Value::Object((*tool.input_schema).clone())),
            })
            .collect();
        if let Ok(mut offered) = self.offered.lock() {
            *offered = infos.iter().map(|i| i.name.clone()).collect();
        }
        Ok(infos)
    }

    /// Re-lists the tools if the server said they changed; errors if `tool` is gone.
    pub(crate) async fn check_offered(
        &self,
        connection: &Connection,
        tool: &str,
    ) -> Result<(), CallError> {
        if !self.shared.tools_stale.load(Ordering::SeqCst) {
            return Ok(());
        }
        let infos = self
            .list_tools(connection)
            .await
            .map_err(CallError::Unavailable)?;
        if infos.iter().any(|i| i.name == tool) {
            return Ok(());
        }
        Err(CallError::ToolGone {
            server: self.server.name.clone(),
            tool: tool.to_owned(),
            available: infos
                .iter()
                .map(|i| i.exposed_name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
    }

    pub(crate) async fn call(
        &self,
        tool: &str,
        arguments: Value,
        cancellation: &CancellationToken,
    ) -> Result<ConvertedResult, CallError> {
        let connection = tokio::select! {
            biased;
            () = cancellation.cancelled() => return Err(CallError::Cancelled { tool: tool.to_owned() }),
            connection = self.connection() => connection.map_err(CallError::Unavailable)?,
        };
        self.check_offered(&connection, tool).await?;
        let mut params = CallToolRequestParams::new(tool.to_owned());
        match arguments {
            Value::Object(map) => params = params.with_arguments(map),
            Value::Null => {}
            other => {
                return Err(CallError::Rejected {
                    server: self.server.name.clone(),
                    tool: tool.to_owned(),
                    message: format!("the arguments must be a JSON object, not `{other}`"),
                })
            }
        }
        // Dropping the call future (on timeout or cancellation) makes rmcp send
        // `notifications/cancelled` for it.
        let peer = connection.service.peer().clone();
        let outcome = tokio::select! {
            biased;
            () = cancellation.cancelled() => return Err(CallError::Cancelled { tool: tool.to_owned() }),
            outcome = tokio::time::timeout(self.server.call_timeout, peer.call_tool(params)) => outcome,
        };
        let result = match outcome {
            Err(_) => {
                return Err(CallError::Timeout {
                    server: self.server.name.clone(),
                    tool: tool.to_owned(),
                    timeout: self.server.call_timeout,
                })
            }
            Ok(Ok(result)) => result,
            Ok(Err(ServiceError::McpError(error))) => {
                return Err(CallError::Rejected {
                    server: self.server.name.clone(),
                    tool: tool.to_owned(),
                    message: error.message.into_owned(),
                })
            }
            Ok(Err(error)) => {
                tracing::warn!(server = %self.server.name, tool, %error, "MCP call failed: the session is dropped");
                self.discard(&connection).await;
                return Err(CallError::ServerStopped {
                    server: self.server.name.clone(),
                    tool: tool.to_owned(),
                });
            }
        };
        let wire = serde_json::to_value(&result).map_err(|e| CallError::Rejected {
            server: self.server.name.clone(),
            tool: tool.to_owned(),
            message: format!("its result could not be read ({e})"),
        })?;
        Ok(convert_result(&wire, self.server.max_result_chars))
    }
}
