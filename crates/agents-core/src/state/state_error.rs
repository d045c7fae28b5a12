//! `StateError`: why a serialized state could not be read or written.

use thiserror::Error;

/// A serialized [`AgentState`](crate::AgentState) that could not be read (or a state that could
/// not be written).
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum StateError {
    /// The text is not JSON.
    #[error("agent state is not valid JSON: {0}")]
    Syntax(String),
    /// The document has no `version` field: probably not an agent state.
    #[error(
        "not an agent state document: the `version` field is missing (expected version {expected})"
    )]
    MissingVersion {
        /// The version this library reads.
        expected: u32,
    },
    /// The document is of a version this library does not read.
    #[error(
        "unsupported agent state version {found} (this library reads versions 1 to {expected})"
    )]
    UnsupportedVersion {
        /// The version found (as written in the document).
        found: String,
        /// The version this library reads.
        expected: u32,
    },
    /// A field is missing or has the wrong shape.
    #[error("invalid agent state at `{path}`: {message}")]
    InvalidField {
        /// The path of the offending field (e.g. `step_executions[0].step.usage`).
        path: String,
        /// What is wrong with it.
        message: String,
    },
    /// The state could not be serialized.
    #[error("agent state could not be serialized: {0}")]
    Serialize(String),
}
