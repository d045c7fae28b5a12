//! `agents_core`: agent state, steps, continuation, error policy, tools, events and the loop.

mod agent;
mod continuation;
mod driver;
mod errors;
mod events;
mod processing;
mod state;
mod step;
pub mod tools;

#[cfg(feature = "testing")]
pub mod testing;

pub use agent::*;
pub use continuation::*;
pub use driver::{AgentDriver, StepContext};
pub use errors::*;
pub use events::*;
pub use processing::{Next, PassThrough, StepFuture, StepProcessing};
pub use state::*;
pub use step::*;
pub use tools::*;

/// The persistent conversation section.
pub const DEFAULT_SECTION: &str = "messages";
/// The tool trace of the running execution (cleared when a new execution starts).
pub const EXECUTION_BUFFER_SECTION: &str = "execution_buffer";
/// Summaries of older conversation.
pub const SUMMARY_SECTION: &str = "summary";
/// Older messages set aside before summarization.
pub const BUFFER_SECTION: &str = "buffer";
