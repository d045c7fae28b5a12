//! The error type of this crate.

use thiserror::Error;

/// What can go wrong when building or reading messages and stores.
///
/// Every variant names the offending value so that a corrupt document can be fixed by hand.
#[derive(Debug, Error)]
pub enum MessagesError {
    /// A role string that is not one of `system`, `developer`, `user`, `assistant`, `tool`.
    #[error(
        "unknown message role `{role}`: expected one of system, developer, user, assistant, tool"
    )]
    UnknownRole {
        /// The role string that was found.
        role: String,
    },
    /// A tool call whose `arguments` could not be read as JSON.
    #[error("tool call `{call_id}` ({tool}) has invalid arguments: {reason}")]
    InvalidToolArguments {
        /// Id of the tool call (may be empty).
        call_id: String,
        /// Name of the tool that was called.
        tool: String,
        /// Why the arguments were rejected.
        reason: String,
    },
    /// A tool call that lacks a required field (for example its name).
    #[error("invalid tool call: {reason}")]
    InvalidToolCall {
        /// What is wrong with it.
        reason: String,
    },
    /// A content part that could not be read.
    #[error("invalid content part: {reason}")]
    InvalidContentPart {
        /// What is wrong with it.
        reason: String,
    },
    /// A message document that could not be read (missing role, wrong types, ...).
    #[error("invalid message: {reason}")]
    InvalidMessage {
        /// What is wrong with it.
        reason: String,
    },
    /// Two sections with the same name in one store.
    #[error("duplicate section name `{name}` in message store: section names must be unique")]
    DuplicateSection {
        /// The repeated name.
        name: String,
    },
    /// The text was not JSON of the expected shape.
    #[error("malformed JSON: {0}")]
    Json(#[from] serde_json::Error),
}
