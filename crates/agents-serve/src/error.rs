//! `ServeError`: what can go wrong starting or running a server.

use std::net::SocketAddr;

/// An error starting or running a server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The address could not be bound.
    #[error("cannot listen on {addr}; is another server using the port?")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Running without a token was asked for on an address other machines can reach.
    #[error(
        "--no-auth is allowed only on a loopback address (127.0.0.1 or ::1), not on {addr}; \
         keep the token, or bind to 127.0.0.1"
    )]
    NoAuthOffLoopback {
        /// The address.
        addr: SocketAddr,
    },
    /// The access token given (`AGENTS_SERVE_TOKEN`) cannot be used.
    #[error("the access token cannot be used: {reason}")]
    InvalidToken {
        /// Why.
        reason: String,
    },
    /// A host name given to allow cannot be a `Host` header.
    #[error("{host:?} is not a host[:port] a browser sends in its Host header")]
    InvalidHost {
        /// The text given.
        host: String,
    },
    /// The server failed while running.
    #[error("the server stopped with an error")]
    Io(#[source] std::io::Error),
}
