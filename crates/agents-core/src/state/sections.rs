//! The names of the sections of an agent's message store.

/// The persistent conversation section.
pub const DEFAULT_SECTION: &str = "messages";
/// The tool trace of the running execution (cleared when a new execution starts).
pub const EXECUTION_BUFFER_SECTION: &str = "execution_buffer";
/// Summaries of older conversation.
pub const SUMMARY_SECTION: &str = "summary";
/// Older messages set aside before summarization.
pub const BUFFER_SECTION: &str = "buffer";
