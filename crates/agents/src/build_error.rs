//! `BuildError`: why an `AgentBuilder` could not build an agent.

use thiserror::Error;

/// A configuration mistake found by [`AgentBuilder::build`](crate::AgentBuilder::build).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum BuildError {
    /// Neither a model nor a driver was given.
    #[error(
        "no model or driver: call with_model(..), with_react(..) or with_driver(..) before build()"
    )]
    MissingModel,
    /// Two tools share a name; the model could not tell them apart.
    #[error("duplicate tool name `{name}`: every tool of an agent needs a unique name")]
    DuplicateTool {
        /// The repeated name.
        name: String,
    },
    /// A step limit of zero would never run a step.
    #[error("the step limit is 0: an agent needs at least one step (with_max_steps(1) or more)")]
    ZeroStepLimit,
    /// A capability could not be installed.
    #[error("capability `{capability}` could not be installed: {reason}")]
    Capability {
        /// The capability's name.
        capability: String,
        /// Why.
        reason: String,
    },
}

impl From<agents_core::BuildError> for BuildError {
    fn from(error: agents_core::BuildError) -> Self {
        match error {
            // The facade gives the core a driver for every model it builds with.
            agents_core::BuildError::MissingDriver => BuildError::MissingModel,
            agents_core::BuildError::DuplicateTool { name } => BuildError::DuplicateTool { name },
            agents_core::BuildError::ZeroStepLimit => BuildError::ZeroStepLimit,
        }
    }
}
