//! `BuildError`: why an [`AgentBuilder`](crate::AgentBuilder) could not build an agent.

use thiserror::Error;

/// A configuration mistake found by [`AgentBuilder::build`](crate::AgentBuilder::build).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum BuildError {
    /// No driver was given.
    #[error("no driver: call with_driver(..) before build()")]
    MissingDriver,
    /// Two tools share a name; the model could not tell them apart.
    #[error("duplicate tool name `{name}`: every tool of an agent needs a unique name")]
    DuplicateTool {
        /// The repeated name.
        name: String,
    },
    /// A step limit of zero would never run a step.
    #[error("the step limit is 0: an agent needs at least one step (with_max_steps(1) or more)")]
    ZeroStepLimit,
}
