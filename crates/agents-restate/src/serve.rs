//! Serving the session object: the Restate endpoint and its HTTP/2 server.

use std::future::Future;

use restate_sdk::endpoint::Endpoint;
use restate_sdk::http_server::HttpServer;
use tokio::net::TcpListener;

use crate::dispatch::definition;
use crate::error::RestateError;
use crate::object::AgentSession;

/// The Restate endpoint serving `session` under its name (for a server of your own).
///
/// # Errors
/// [`RestateError::Name`] when the session's name is not a valid service name.
pub fn endpoint(session: AgentSession) -> Result<Endpoint, RestateError> {
    Ok(Endpoint::builder().bind(definition(session)?).build())
}

/// Serves `session` on `listener` (HTTP/2, what Restate speaks to services) until `shutdown`
/// completes; connections in flight get 10 seconds to finish. Register the listener's address
/// with [`register_deployment`](crate::register_deployment) so Restate sends it invocations.
///
/// # Errors
/// [`RestateError::Name`] when the session's name is not a valid service name.
pub async fn serve(
    session: AgentSession,
    listener: TcpListener,
    shutdown: impl Future,
) -> Result<(), RestateError> {
    HttpServer::new(endpoint(session)?)
        .serve_with_cancel(listener, shutdown)
        .await;
    Ok(())
}
