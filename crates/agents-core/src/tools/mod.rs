//! Tools: the `Tool` trait, the `Tools` registry, execution records and the executor contract,
//! plus `FunctionTool` (a tool from a typed closure), `ToolHook`s and the `DefaultToolExecutor`.

mod closest;
mod default_executor;
mod execution;
mod executor;
mod function_tool;
mod hook;
mod registry;
mod schema;
mod tool;

pub use closest::closest_names;
pub use default_executor::{DefaultToolExecutor, ToolEventListener, DEFAULT_TOOL_TIMEOUT};
pub use execution::{ToolExecution, ToolExecutions, ToolFailureKind, ToolOutcome};
pub use executor::{ToolEvent, ToolExecutor};
pub use function_tool::FunctionTool;
pub use hook::{AfterToolHook, BeforeToolHook, ToolHook, ToolHookDecision};
pub use registry::Tools;
pub use schema::{arguments_schema, clean_schema, validate_arguments};
pub use tool::{Tool, ToolContext, ToolError, ToolOutput};
