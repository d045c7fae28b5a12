//! `AgentError`: what can go wrong while an agent runs a step.

use inference::InferenceError;
use thiserror::Error;

use crate::records::error_type::ErrorType;

/// A failure of the agent loop or of a driver.
///
/// Tool failures are normally *not* agent errors: they become tool-result messages the model
/// can react to. These errors go through the [`ErrorPolicy`](crate::ErrorPolicy), which decides
/// whether to stop, retry or ignore.
#[derive(Clone, Debug, Error, PartialEq)]
#[non_exhaustive]
pub enum AgentError {
    /// The model call failed (the provider's error says what happened and what to do).
    #[error(transparent)]
    Inference(#[from] InferenceError),
    /// The driver could not produce a step (e.g. it could not build the request).
    #[error("driver error: {0}")]
    Driver(String),
    /// The model's output could not be validated (e.g. an unparseable ReAct decision).
    #[error("invalid model output: {0}")]
    Validation(String),
    /// The state cannot be used for this operation.
    #[error("invalid agent state: {0}")]
    InvalidState(String),
    /// The execution was cancelled.
    #[error("the agent execution was cancelled")]
    Cancelled,
    /// A tool failed in a way that fails the whole step (not reported back to the model).
    #[error("tool `{tool}` failed: {message}")]
    Tool {
        /// The tool's name.
        tool: String,
        /// What went wrong.
        message: String,
    },
    /// A hook or processor failed.
    #[error("hook `{hook}` failed: {message}")]
    Hook {
        /// The hook's name.
        hook: String,
        /// What went wrong.
        message: String,
    },
    /// Another error, with context; classification and retryability look through it. Its
    /// text is the context only: the error underneath is its `source()` (see
    /// [`error_chain`](crate::records::agent_error::error_chain) for the whole chain in one line).
    #[error("{context}")]
    Context {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: Box<AgentError>,
    },
}

/// `error` and every error under it (`source()`), in one line: `outer: inner: innermost`.
/// For logs and command-line messages; each error's own text says it once.
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

impl AgentError {
    /// A driver error with a message.
    pub fn driver(message: impl Into<String>) -> Self {
        AgentError::Driver(message.into())
    }

    /// A validation error with a message.
    pub fn validation(message: impl Into<String>) -> Self {
        AgentError::Validation(message.into())
    }

    /// Wraps this error with what was being done.
    pub fn context(self, context: impl Into<String>) -> Self {
        AgentError::Context {
            context: context.into(),
            source: Box::new(self),
        }
    }

    /// The innermost error (through any number of [`AgentError::Context`] layers).
    pub fn root(&self) -> &AgentError {
        match self {
            AgentError::Context { source, .. } => source.root(),
            other => other,
        }
    }

    /// The inference error underneath, if this is (or wraps) one.
    pub fn inference_error(&self) -> Option<&InferenceError> {
        match self.root() {
            AgentError::Inference(error) => Some(error),
            _ => None,
        }
    }

    /// True when trying again may succeed (rate limits, timeouts, transport and 5xx errors).
    pub fn is_retryable(&self) -> bool {
        self.inference_error()
            .is_some_and(InferenceError::is_retryable)
    }

    /// How the error policy classifies this error. Looks through wrappers, so a wrapped
    /// rate-limit error is [`ErrorType::RateLimit`], not [`ErrorType::Model`].
    pub fn error_type(&self) -> ErrorType {
        match self.root() {
            AgentError::Inference(error) if error.is_rate_limit() => ErrorType::RateLimit,
            AgentError::Inference(error) if error.is_timeout() => ErrorType::Timeout,
            AgentError::Inference(_) | AgentError::Driver(_) => ErrorType::Model,
            AgentError::Validation(_) => ErrorType::Validation,
            AgentError::Tool { .. } => ErrorType::Tool,
            AgentError::InvalidState(_)
            | AgentError::Cancelled
            | AgentError::Hook { .. }
            | AgentError::Context { .. } => ErrorType::Unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn rate_limited() -> InferenceError {
        InferenceError::RateLimited {
            retry_after: Some(Duration::from_secs(2)),
            message: "slow down".into(),
        }
    }

    #[test]
    fn classification_sees_through_wrappers() {
        let wrapped = AgentError::from(rate_limited())
            .context("calling the model")
            .context("step 3");
        assert_eq!(wrapped.error_type(), ErrorType::RateLimit);
        assert!(wrapped.is_retryable());
        assert_eq!(wrapped.to_string(), "step 3", "the cause is not repeated");
        assert_eq!(
            crate::records::agent_error::error_chain(&wrapped),
            "step 3: calling the model: rate limited by the provider (retry after 2.0s): slow down"
        );
        let timeout = AgentError::from(InferenceError::Timeout {
            after: Duration::from_secs(5),
        });
        assert_eq!(timeout.error_type(), ErrorType::Timeout);
        let bad = AgentError::from(InferenceError::Http {
            status: 400,
            message: "bad".into(),
        });
        assert_eq!(bad.error_type(), ErrorType::Model);
        assert!(!bad.is_retryable());
        assert_eq!(
            AgentError::validation("no JSON").error_type(),
            ErrorType::Validation
        );
    }
}
