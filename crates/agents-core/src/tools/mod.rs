//! Tools: the [`Tool`] trait, the [`Tools`] registry, [`FunctionTool`] (a tool from a typed
//! closure), tool sources, the approval policy, the executor contract and the
//! [`DefaultToolExecutor`], the tool-call onion ([`ToolLayer`]s and the standard stack) and
//! the limits it enforces. The execution records are in `crate::records`; they are re-exported
//! here for users.

pub(crate) mod approval_policy;
pub(crate) mod closest;
pub(crate) mod default_executor;
pub(crate) mod executor;
pub(crate) mod function_tool;
pub(crate) mod hook;
pub(crate) mod layer;
pub(crate) mod layers;
pub(crate) mod limits;
pub(crate) mod panics;
pub(crate) mod registry;
pub(crate) mod source;
pub(crate) mod stack;
pub(crate) mod tool;

pub use crate::records::tool_effects::ToolEffects;
pub use crate::records::tool_execution::{
    ToolExecution, ToolExecutions, ToolFailureKind, ToolOutcome,
};
pub use crate::schema::{arguments_schema, clean_schema, validate_arguments};
pub use crate::signature::signature;
pub use approval_policy::ApprovalPolicy;
pub use closest::{closest_names, misspelled_names};
pub use default_executor::{DefaultToolExecutor, ToolEventListener, DEFAULT_TOOL_TIMEOUT};
pub use executor::{ToolEvent, ToolExecutor};
pub use function_tool::FunctionTool;
pub use hook::{AfterToolHook, BeforeToolHook, ToolHook, ToolHookDecision};
pub use layer::{NextTool, ToolLayer, ToolLayers, ToolScope};
pub use layers::cap_output::CapOutput;
pub use layers::hold_for_approval::HoldForApproval;
pub use layers::journal_calls::JournalCalls;
pub use layers::refuse_repeats::RefuseRepeats;
pub use layers::report_calls::ReportCalls;
pub use layers::tool_hooks::HookLayer;
pub use limits::{
    tool_output_limit_for, PreviousCalls, ToolCallLimits, DEFAULT_REPEATED_CALL_LIMIT,
    DEFAULT_TOOL_OUTPUT_LIMIT, MAX_TOOL_IMAGE_BYTES,
};
pub use registry::{doing_the_job_clause, Tools};
pub use source::ToolSource;
pub use stack::standard_tool_layers;
pub use tool::{Tool, ToolContext, ToolError, ToolOutput};
