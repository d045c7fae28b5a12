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

/// How the message of a [`StepError::not_an_answer`] begins.
const NOT_AN_ANSWER: &str = "the model's reply is not an answer";

impl StepError {
    /// An error of the given type.
    pub fn new(error_type: ErrorType, message: impl Into<String>) -> Self {
        Self {
            error_type,
            message: message.into(),
        }
    }

    /// The error of a step whose reply a driver did not take as the answer (a plan, a copied
    /// error, a copy of the instructions, ...): a model error whose message begins "the
    /// model's reply is not an answer", then `why`. The answer on stop tells the model that
    /// its last reply was not an answer, not that "an error stopped the run": the 1.5B model,
    /// told the latter after its listing had come back, answered that the directory did not
    /// exist (issue 36, development task d6).
    ///
    /// ```
    /// use agents_core::{ErrorType, StepError};
    ///
    /// let error = StepError::not_an_answer("(a plan), even after it was asked once more");
    /// assert_eq!(error.error_type, ErrorType::Model);
    /// assert!(error.is_not_an_answer());
    /// assert!(!StepError::new(ErrorType::Model, "HTTP 500").is_not_an_answer());
    /// ```
    pub fn not_an_answer(why: impl std::fmt::Display) -> Self {
        Self::new(ErrorType::Model, format!("{NOT_AN_ANSWER} {why}"))
    }

    /// Whether this is a [`StepError::not_an_answer`].
    pub fn is_not_an_answer(&self) -> bool {
        self.error_type == ErrorType::Model && self.message.starts_with(NOT_AN_ANSWER)
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
