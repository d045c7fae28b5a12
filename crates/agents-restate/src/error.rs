//! `RestateError`: what can go wrong talking to Restate's ingress and admin API.

/// A request to Restate (ingress or admin API) that did not give what was asked.
#[derive(Debug, thiserror::Error)]
pub enum RestateError {
    /// The URL given for Restate cannot be used.
    #[error("`{url}` is not a usable Restate URL")]
    Url {
        /// The URL as given.
        url: String,
    },
    /// The name is not a valid Restate service name.
    #[error("`{name}` is not a valid Restate service name (letters, digits, `_`, `-`, `.`)")]
    Name {
        /// The name as given.
        name: String,
    },
    /// A request-identity key is not a Restate public key (`publickeyv1_...`).
    #[error("`{key}` is not a Restate request-identity public key (publickeyv1_...)")]
    IdentityKey {
        /// The key as given.
        key: String,
        /// Why it was refused.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Restate could not be reached (connection refused, reset, timed out).
    #[error("cannot reach Restate for {what}; is it running (cargo xtask restate start)?")]
    Unreachable {
        /// The request.
        what: String,
        /// The transport error.
        #[source]
        source: reqwest::Error,
    },
    /// Restate answered with an error status (404: no such call or session, 409: the
    /// invocation was cancelled, 5xx: the invocation failed).
    #[error("Restate answered {status} to {what}: {body}")]
    Status {
        /// The request.
        what: String,
        /// The HTTP status.
        status: u16,
        /// Restate's message.
        body: String,
    },
    /// Restate's answer is not what the handler returns.
    #[error("Restate's answer to {what} cannot be read")]
    Decode {
        /// The request.
        what: String,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
}

impl RestateError {
    /// The HTTP status Restate answered with, when it answered with an error.
    pub fn status(&self) -> Option<u16> {
        match self {
            RestateError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }
}
