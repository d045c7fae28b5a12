//! One live session with a server: starting it, the handshake, and taking it down.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use futures::StreamExt;
use process_wrap::tokio::{CommandWrap, KillOnDrop, ProcessGroup};
use rmcp::model::ServerPeerInfo;
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::process::ChildStderr;
use tokio::sync::watch;
use tokio_util::codec::{FramedRead, LinesCodec};

use crate::error::McpError;
use crate::server::{McpServer, McpTransport};

/// The longest stderr line logged whole; longer lines are logged in pieces of this size.
const MAX_STDERR_LINE: usize = 8 * 1024;

/// What the notification handler shares with the client.
#[derive(Debug)]
pub(crate) struct Shared {
    server: String,
    /// The server said its tool list changed since the client last listed it.
    pub(crate) tools_stale: AtomicBool,
    /// Bumped on every `notifications/tools/list_changed`.
    pub(crate) tools_version: watch::Sender<u64>,
    version: AtomicU64,
}

impl Shared {
    pub(crate) fn new(server: &str) -> Arc<Self> {
        Arc::new(Self {
            server: server.to_owned(),
            tools_stale: AtomicBool::new(false),
            tools_version: watch::channel(0).0,
            version: AtomicU64::new(0),
        })
    }

    fn tools_changed(&self) {
        self.tools_stale.store(true, Ordering::SeqCst);
        let version = self.version.fetch_add(1, Ordering::SeqCst) + 1;
        self.tools_version.send_replace(version);
    }
}

/// The rmcp client handler: reacts to the server's notifications.
#[derive(Clone, Debug)]
pub(crate) struct Handler {
    shared: Arc<Shared>,
}

impl ClientHandler for Handler {
    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl std::future::Future<Output = ()> + Send + '_ {
        tracing::debug!(server = %self.shared.server, "MCP server's tool list changed");
        self.shared.tools_changed();
        std::future::ready(())
    }
}

/// A live session.
pub(crate) struct Connection {
    pub(crate) service: RunningService<RoleClient, Handler>,
    pub(crate) pid: Option<u32>,
    /// Kills a stdio server's process group if this process dies (dropped with the session).
    _watchdog: Option<agents_core::GroupWatchdog>,
}

impl Connection {
    /// Starts (or dials) the server and completes the handshake within the connect timeout.
    pub(crate) async fn open(server: &McpServer, shared: &Arc<Shared>) -> Result<Self, McpError> {
        let handler = Handler {
            shared: Arc::clone(shared),
        };
        match &server.transport {
            McpTransport::Stdio {
                program,
                args,
                env,
                current_dir,
                inherit_env,
            } => {
                if program.trim().is_empty() {
                    return Err(McpError::InvalidConfig {
                        server: server.name.clone(),
                        reason: "the command is empty: give the program to run".to_owned(),
                    });
                }
                let mut command = tokio::process::Command::new(program);
                command.args(args);
                if !inherit_env {
                    // like bash: the allow-list, then what the definition gives it
                    command
                        .env_clear()
                        .envs(std::env::vars_os().filter(|(name, _)| {
                            name.to_str().is_some_and(crate::server::passes_default_env)
                        }));
                }
                command.envs(env.iter().cloned());
                if let Some(dir) = current_dir {
                    command.current_dir(dir);
                }
                let mut wrapped = CommandWrap::from(command);
                // Its own process group: killing it also kills what it started (npx → node).
                wrapped.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
                let (transport, stderr) = TokioChildProcess::builder(wrapped)
                    .stderr(Stdio::piped())
                    .spawn()
                    .map_err(|source| McpError::Spawn {
                        server: server.name.clone(),
                        program: program.clone(),
                        source,
                    })?;
                let pid = transport.id();
                // If this process dies (even by SIGKILL), the server's group dies with it.
                let watchdog = pid.and_then(|pid| {
                    agents_core::GroupWatchdog::join(pid)
                        .map_err(|error| {
                            tracing::warn!(server = %server.name, %error,
                                "no watchdog for the server's process group: it may outlive \
                                 this process if this process is killed");
                        })
                        .ok()
                });
                if let Some(stderr) = stderr {
                    tokio::spawn(log_stderr(server.name.clone(), stderr));
                }
                let service = handshake(server, handler.serve(transport)).await?;
                Ok(Self {
                    service,
                    pid,
                    _watchdog: watchdog,
                })
            }
            McpTransport::Http { url, headers } => {
                let client = http_client(server)?;
                let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(header_map(server, headers)?)
                    .reinit_on_expired_session(true);
                let transport = StreamableHttpClientTransport::with_client(client, config);
                let service = handshake(server, handler.serve(transport)).await?;
                Ok(Self {
                    service,
                    pid: None,
                    _watchdog: None,
                })
            }
        }
    }

    /// The session ended (the process exited, the connection closed) or was closed.
    pub(crate) fn is_closed(&self) -> bool {
        self.service.is_closed() || self.service.peer().is_transport_closed()
    }

    /// What the server said about itself in the handshake.
    pub(crate) fn peer_info(&self) -> Option<Arc<ServerPeerInfo>> {
        self.service.peer().peer_info()
    }
}

async fn handshake<F, E>(
    server: &McpServer,
    serve: F,
) -> Result<RunningService<RoleClient, Handler>, McpError>
where
    F: std::future::Future<Output = Result<RunningService<RoleClient, Handler>, E>>,
    E: std::error::Error + Send + Sync + 'static,
{
    match tokio::time::timeout(server.connect_timeout, serve).await {
        Ok(Ok(service)) => Ok(service),
        Ok(Err(source)) => Err(McpError::Handshake {
            server: server.name.clone(),
            source: Box::new(source),
        }),
        // Dropping the handshake future drops the transport, which stops the process.
        Err(_) => Err(McpError::ConnectTimeout {
            server: server.name.clone(),
            timeout: server.connect_timeout,
        }),
    }
}

/// A reqwest client for rmcp with TLS from rustls + ring and the webpki roots, configured for
/// this client only (no process-wide crypto provider is installed).
fn http_client(server: &McpServer) -> Result<reqwest_mcp::Client, McpError> {
    let invalid = |reason: String| McpError::InvalidConfig {
        server: server.name.clone(),
        reason,
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let roots = rustls::RootCertStore::from_iter(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| {
            invalid(format!(
                "TLS setup failed ({e}); this is a bug, please report it"
            ))
        })?
        .with_root_certificates(roots)
        .with_no_client_auth();
    reqwest_mcp::Client::builder()
        .tls_backend_preconfigured(tls)
        .redirect(same_origin_temporary_redirects())
        .build()
        .map_err(|e| invalid(format!("the HTTP client could not be built ({e})")))
}

/// The most redirects followed for one request.
const MAX_REDIRECTS: usize = 5;

/// Follows only a 307 or 308 (the method, body and headers are kept, so they may go only where
/// they were meant to) to the origin (scheme, host, port) of the original request, at most
/// [`MAX_REDIRECTS`] times. Any other redirect (another origin, or a 301/302/303 that would
/// turn the JSON-RPC POST into a GET to any URL the server names) is handed back as the
/// response, and the request fails with its status.
fn same_origin_temporary_redirects() -> reqwest_mcp::redirect::Policy {
    reqwest_mcp::redirect::Policy::custom(|attempt| {
        let keeps_request = matches!(attempt.status().as_u16(), 307 | 308);
        let same_origin = attempt.previous().first().is_some_and(|first| {
            let next = attempt.url();
            first.scheme() == next.scheme()
                && first.host_str() == next.host_str()
                && first.port_or_known_default() == next.port_or_known_default()
        });
        if keeps_request && same_origin && attempt.previous().len() <= MAX_REDIRECTS {
            attempt.follow()
        } else {
            attempt.stop()
        }
    })
}

fn header_map(
    server: &McpServer,
    headers: &[(String, String)],
) -> Result<HashMap<reqwest_mcp::header::HeaderName, reqwest_mcp::header::HeaderValue>, McpError> {
    headers
        .iter()
        .map(|(name, value)| {
            let header_name = reqwest_mcp::header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| McpError::InvalidConfig {
                    server: server.name.clone(),
                    reason: format!("`{name}` is not a valid HTTP header name"),
                })?;
            let mut header_value = reqwest_mcp::header::HeaderValue::from_str(value).map_err(|_| {
                McpError::InvalidConfig {
                    server: server.name.clone(),
                    // the value may be a secret: never echo it
                    reason: format!("the value of header `{name}` is not valid in HTTP (control characters or non-ASCII)"),
                }
            })?;
            header_value.set_sensitive(true);
            Ok((header_name, header_value))
        })
        .collect()
}

/// Forwards a stdio server's stderr to `tracing`, line by line; never to the model.
async fn log_stderr(server: String, stderr: ChildStderr) {
    let mut lines = FramedRead::new(stderr, LinesCodec::new_with_max_length(MAX_STDERR_LINE));
    while let Some(line) = lines.next().await {
        match line {
            Ok(line) => {
                tracing::info!(target: "agents_mcp::stderr", server = %server, "{line}");
            }
            Err(tokio_util::codec::LinesCodecError::MaxLineLengthExceeded) => {
                tracing::info!(target: "agents_mcp::stderr", server = %server, "(a line longer than {MAX_STDERR_LINE} bytes was skipped)");
            }
            Err(tokio_util::codec::LinesCodecError::Io(error)) => {
                tracing::debug!(server = %server, %error, "MCP server stderr closed");
                break;
            }
        }
    }
}
