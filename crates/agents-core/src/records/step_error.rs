//! `StepError`: an error recorded on a step.

use serde::{Deserialize, Serialize};

use crate::records::agent_error::AgentError;
use crate::records::error_type::ErrorType;

/// An error a step ran into, classified for the error policy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepError {
    /// The error's class.
    pub error_type: ErrorType,
    /// What went wrong.
    pub message: String,
}

impl StepError {
    /// An error of the given type.
    pub fn new(error_type: ErrorType, message: impl Into<String>) -> Self {
        Self {
            error_type,
            message: message.into(),
        }
    }
}

impl From<&AgentError> for StepError {
    fn from(error: &AgentError) -> Self {
        Self::new(
            error.error_type(),
            crate::records::agent_error::error_chain(error),
        )
    }
}

impl std::fmt::Display for StepError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}
