//! Serving the session object: the Restate endpoint and its HTTP/2 server.
//!
//! The accept loop is ours rather than the SDK's `HttpServer` for one reason: each
//! connection gets `TCP_NODELAY`. Restate and the service exchange small frames (a journal
//! entry, its acknowledgement) and wait for each other's; with Nagle's algorithm on, each
//! exchange could wait for a delayed ACK.

use std::future::Future;
use std::time::Duration;

use hyper::server::conn::http2;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::graceful::GracefulShutdown;
use restate_sdk::endpoint::Endpoint;
use restate_sdk::hyper::HyperEndpoint;
use tokio::net::TcpListener;

use crate::dispatch::definition;
use crate::error::RestateError;
use crate::object::AgentSession;

/// How long connections in flight get to finish after shutdown.
const DRAIN: Duration = Duration::from_secs(10);

/// The Restate endpoint serving `session` under its name, checking the request identity
/// when the session names keys (for a server of your own).
///
/// # Errors
/// [`RestateError::Name`] when the session's name is not a valid service name,
/// [`RestateError::IdentityKey`] when one of its identity keys cannot be read.
pub fn endpoint(session: AgentSession) -> Result<Endpoint, RestateError> {
    let mut builder = Endpoint::builder();
    for key in session.identity_keys() {
        builder = builder
            .identity_key(key)
            .map_err(|source| RestateError::IdentityKey {
                key: key.clone(),
                source: Box::new(source),
            })?;
    }
    Ok(builder.bind(definition(session)?).build())
}

/// Serves `session` on `listener` (HTTP/2, what Restate speaks to services) until `shutdown`
/// completes; connections in flight get 10 seconds to finish. Register the listener's address
/// with [`register_deployment`](crate::register_deployment) so Restate sends it invocations.
///
/// # Errors
/// As [`endpoint`].
pub async fn serve(
    session: AgentSession,
    listener: TcpListener,
    shutdown: impl Future,
) -> Result<(), RestateError> {
    let service = HyperEndpoint::new(endpoint(session)?);
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, remote) = match accepted {
                    Ok(accepted) => accepted,
                    Err(error) => {
                        tracing::warn!(%error, "accepting a connection failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                if let Err(error) = stream.set_nodelay(true) {
                    tracing::debug!(%error, "TCP_NODELAY could not be set");
                }
                let connection = http2::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), service.clone());
                let connection = graceful.watch(connection);
                tokio::spawn(async move {
                    if let Err(error) = connection.await {
                        tracing::debug!(%remote, %error, "a Restate connection ended");
                    }
                });
            }
            _ = &mut shutdown => break,
        }
    }
    if tokio::time::timeout(DRAIN, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open {}s after shutdown", DRAIN.as_secs());
    }
    Ok(())
}
