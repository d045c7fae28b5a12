//! `InferenceError`: everything that can go wrong talking to a model.

use std::time::Duration;

use thiserror::Error;

/// An inference failure, typed so that callers (retry logic, the agent's error policy) can tell
/// a rate limit from a timeout from a bad request.
///
/// Errors never contain API keys.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum InferenceError {
    /// The provider said "too many requests" (HTTP 429). Retry after the given delay.
    #[error("rate limited by the provider{}: {message}", retry_after.map(|d| format!(" (retry after {:.1}s)", d.as_secs_f64())).unwrap_or_default())]
    RateLimited {
        /// The delay the provider asked for (`Retry-After`), if any.
        retry_after: Option<Duration>,
        /// The provider's message.
        message: String,
    },
    /// The request did not finish in time.
    #[error("inference request timed out after {:.1}s; raise the timeout or retry", after.as_secs_f64())]
    Timeout {
        /// The timeout that expired.
        after: Duration,
    },
    /// A streamed answer did not end within the total time allowed for one request
    /// (`stream_deadline`, 10 minutes by default). Not retried: the same request would likely
    /// run as long again.
    #[error("the streamed answer did not finish within {:.1}s; raise the provider's `stream_deadline` or ask for a shorter answer (max_tokens)", after.as_secs_f64())]
    StreamDeadline {
        /// The deadline that expired, counted from the request.
        after: Duration,
    },
    /// One server-sent event of a stream was larger than the limit (`max_event_bytes`, 8 MiB
    /// by default): the server sent a runaway line. Not retried.
    #[error("a server-sent event exceeded {limit} bytes; check the server, or raise the provider's `max_event_bytes` if it really sends events that large")]
    EventTooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// A response body (not streamed) was larger than the limit (`max_body_bytes`, 32 MiB by
    /// default): it was not read further. Not retried.
    #[error("the response body exceeded {limit} bytes; check the server, or raise the provider's `max_body_bytes` if its answers really are that large")]
    BodyTooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// The provider answered with an HTTP error status.
    #[error("provider returned HTTP {status}: {message}")]
    Http {
        /// The HTTP status code.
        status: u16,
        /// The provider's error message (or a body excerpt).
        message: String,
    },
    /// The provider's answer could not be understood.
    #[error("malformed provider response: {reason} (body: {excerpt})")]
    MalformedResponse {
        /// What was wrong.
        reason: String,
        /// The start of the offending body.
        excerpt: String,
    },
    /// The connection failed (DNS, refused, reset, TLS, broken stream).
    #[error("transport error: {message}")]
    Transport {
        /// What failed.
        message: String,
    },
    /// The client is misconfigured (missing base URL, missing environment variable, ...).
    #[error("configuration error: {message}")]
    Configuration {
        /// What is missing or wrong, and how to fix it.
        message: String,
    },
    /// A [`ScriptedModel`](crate::ScriptedModel) was asked for more responses than scripted.
    #[error("scripted model has no response left: it was scripted with {scripted} response(s) and got request #{request}")]
    ScriptExhausted {
        /// How many responses were scripted.
        scripted: usize,
        /// The 1-based number of the request that found the script empty.
        request: usize,
    },
}

impl InferenceError {
    /// True for errors worth retrying: rate limits, timeouts, transport errors, HTTP 408 and 5xx.
    pub fn is_retryable(&self) -> bool {
        match self {
            InferenceError::RateLimited { .. }
            | InferenceError::Timeout { .. }
            | InferenceError::Transport { .. } => true,
            InferenceError::Http { status, .. } => *status == 408 || *status >= 500,
            _ => false,
        }
    }

    /// True for a rate limit.
    pub fn is_rate_limit(&self) -> bool {
        matches!(self, InferenceError::RateLimited { .. })
    }

    /// True for a timeout: a request or a silence that lasted too long, or a stream past its
    /// deadline.
    pub fn is_timeout(&self) -> bool {
        matches!(
            self,
            InferenceError::Timeout { .. } | InferenceError::StreamDeadline { .. }
        )
    }

    /// The HTTP status, when the provider answered with one.
    pub fn status(&self) -> Option<u16> {
        match self {
            InferenceError::Http { status, .. } => Some(*status),
            InferenceError::RateLimited { .. } => Some(429),
            _ => None,
        }
    }

    /// The delay the provider asked for before retrying.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            InferenceError::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// A `MalformedResponse` with at most 300 characters of the body.
    pub fn malformed(reason: impl Into<String>, body: &str) -> Self {
        let excerpt: String = body.chars().take(300).collect();
        let excerpt = if excerpt.len() < body.len() {
            format!("{excerpt}...")
        } else {
            excerpt
        };
        InferenceError::MalformedResponse {
            reason: reason.into(),
            excerpt,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retryability_by_class() {
        assert!(InferenceError::RateLimited {
            retry_after: None,
            message: String::new()
        }
        .is_retryable());
        assert!(InferenceError::Timeout {
            after: Duration::from_secs(1)
        }
        .is_retryable());
        assert!(InferenceError::Http {
            status: 503,
            message: String::new()
        }
        .is_retryable());
        assert!(InferenceError::Http {
            status: 408,
            message: String::new()
        }
        .is_retryable());
        assert!(!InferenceError::Http {
            status: 400,
            message: String::new()
        }
        .is_retryable());
        assert!(!InferenceError::malformed("bad", "{").is_retryable());
        let deadline = InferenceError::StreamDeadline {
            after: Duration::from_secs(600),
        };
        assert!(deadline.is_timeout() && !deadline.is_retryable());
        let too_large = InferenceError::EventTooLarge { limit: 10 };
        assert!(!too_large.is_timeout() && !too_large.is_retryable());
    }

    #[test]
    fn malformed_keeps_a_bounded_excerpt() {
        let body = "x".repeat(1000);
        let InferenceError::MalformedResponse { excerpt, .. } =
            InferenceError::malformed("bad", &body)
        else {
            panic!("wrong variant");
        };
        assert_eq!(excerpt.len(), 303);
    }
}
