//! Listening and stopping: bind an address, serve a router until a shutdown signal, then let
//! the requests in flight finish (for at most a grace period).

use std::future::IntoFuture;
use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::error::ServeError;

/// How long requests in flight may take to finish after a shutdown signal by default.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(10);

/// Binds `addr` (port 0 picks a free port; read it back with `local_addr`).
///
/// # Errors
/// [`ServeError::Bind`] when the address cannot be bound.
pub async fn bind(addr: SocketAddr) -> Result<TcpListener, ServeError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind { addr, source })
}

/// The address `listener` is bound to.
///
/// # Errors
/// [`ServeError::Io`] when the socket cannot say.
pub fn local_addr(listener: &TcpListener) -> Result<SocketAddr, ServeError> {
    listener.local_addr().map_err(ServeError::Io)
}

/// Serves `router` on `listener` until `shutdown` is cancelled; then stops accepting, cancels
/// nothing itself (long-lived answers such as event streams watch `shutdown` and end), and
/// waits up to `grace` for the requests in flight.
///
/// # Errors
/// [`ServeError::Io`] when accepting connections fails.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    shutdown: CancellationToken,
    grace: Duration,
) -> Result<(), ServeError> {
    let stopping = shutdown.clone();
    let server = axum::serve(listener, router)
        .with_graceful_shutdown(async move { stopping.cancelled().await })
        .into_future();
    tokio::pin!(server);
    tokio::select! {
        result = &mut server => return result.map_err(ServeError::Io),
        () = shutdown.cancelled() => {}
    }
    match tokio::time::timeout(grace, server).await {
        Ok(result) => result.map_err(ServeError::Io),
        Err(_) => {
            tracing::warn!(
                ?grace,
                "requests still in flight after the grace period; stopping"
            );
            Ok(())
        }
    }
}

/// Cancels `shutdown` on SIGTERM or Ctrl-C (SIGINT).
///
/// # Errors
/// [`ServeError::Io`] when the signal handlers cannot be installed.
pub fn cancel_on_signal(shutdown: CancellationToken) -> Result<(), ServeError> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate()).map_err(ServeError::Io)?;
        let mut interrupt = signal(SignalKind::interrupt()).map_err(ServeError::Io)?;
        tokio::spawn(async move {
            tokio::select! {
                _ = term.recv() => tracing::info!("SIGTERM: shutting down"),
                _ = interrupt.recv() => tracing::info!("SIGINT: shutting down"),
            }
            shutdown.cancel();
        });
    }
    #[cfg(not(unix))]
    {
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                shutdown.cancel();
            }
        });
    }
    Ok(())
}
