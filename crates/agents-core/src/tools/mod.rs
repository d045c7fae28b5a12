//! Tools: the `Tool` trait, the `Tools` registry, execution records and the executor contract,
//! plus `FunctionTool` (a tool from a typed closure), `ToolHook`s and the `DefaultToolExecutor`.

mod closest;
mod default_executor;
mod effects;
mod execution;
mod executor;
mod function_tool;
mod hook;
mod limits;
mod registry;
mod schema;
mod source;
mod tool;

pub use closest::closest_names;
pub use default_executor::{DefaultToolExecutor, ToolEventListener, DEFAULT_TOOL_TIMEOUT};
pub use effects::ToolEffects;
pub use execution::{ToolExecution, ToolExecutions, ToolFailureKind, ToolOutcome};
pub use executor::{ToolEvent, ToolExecutor};
pub use function_tool::FunctionTool;
pub use hook::{AfterToolHook, BeforeToolHook, ToolHook, ToolHookDecision};
pub(crate) use limits::{cap_output, screen_repeats};
pub use limits::{
    signature, PreviousCalls, ToolCallLimits, DEFAULT_REPEATED_CALL_LIMIT,
    DEFAULT_TOOL_OUTPUT_LIMIT, MAX_TOOL_IMAGE_BYTES,
};
pub use registry::Tools;
pub use schema::{arguments_schema, clean_schema, validate_arguments};
pub(crate) use source::merged as merged_tools;
pub use source::ToolSource;
pub use tool::{Tool, ToolContext, ToolError, ToolOutput};
