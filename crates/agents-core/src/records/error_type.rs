//! `ErrorType` and `ErrorHandlingDecision`: the vocabulary of the error policy.

use serde::{Deserialize, Serialize};

/// The class of an error, as the [`ErrorPolicy`](crate::ErrorPolicy) sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorType {
    /// A tool call failed (the model saw the error as a tool result).
    Tool,
    /// The model or the driver failed (bad request, malformed answer, provider error).
    Model,
    /// The model's output did not validate (e.g. a ReAct decision that does not parse).
    Validation,
    /// The provider rate-limited the request.
    RateLimit,
    /// A request timed out.
    Timeout,
    /// Anything else.
    Unknown,
}

/// What the error policy decides for an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorHandlingDecision {
    /// Stop the execution; its status becomes `Failed`.
    Stop,
    /// Run another step (bounded by the policy's `max_retries`).
    Retry,
    /// Carry on as if nothing happened; the error does not fail the execution.
    Ignore,
}
