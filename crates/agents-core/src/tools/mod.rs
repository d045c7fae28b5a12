//! Tools: the `Tool` trait, the `Tools` registry, execution records and the executor contract.

mod execution;
mod executor;
mod registry;
mod tool;

pub use execution::{ToolExecution, ToolExecutions, ToolFailureKind, ToolOutcome};
pub use executor::{ToolEvent, ToolExecutor};
pub use registry::Tools;
pub use tool::{Tool, ToolContext, ToolError, ToolOutput};
