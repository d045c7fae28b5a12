//! `use agents::prelude::*;` brings in what most agents need.

pub use crate::capabilities::{
    BashPolicy, SubagentDefinition, SubagentModel, UseBash, UseFileTools, UseMetadataTools,
    UseSelfCritique, UseSkills, UseStructuredOutput, UseSubagents, UseSummarization,
    UseToolRegistry,
};
pub use crate::{AgentBuilder, AgentCapability, BuildError};
pub use agents_core::{
    AfterToolHook, Agent, AgentDriver, AgentError, AgentEvent, AgentState, AgentStatus, AgentStep,
    AgentStepType, AnswerOnStop, ApprovalDecision, ApprovalError, ApprovalVerdict, BeforeToolHook,
    CancellationToken, ContinuationCriterion, ContinuationDecision, ContinuationEvaluation,
    ErrorPolicy, FunctionTool, ManualClock, Next, PendingApproval, RunCost, StateProcessors,
    StepHooks, StepOptions, StopReason, Tool, ToolContext, ToolError, ToolExecution,
    ToolHookDecision, ToolOutput, ToolSource, Tools, BUFFER_SECTION, DEFAULT_SECTION,
    EXECUTION_BUFFER_SECTION, SUMMARY_SECTION,
};
pub use agents_processing::{InlineProcessor, StateProcessor, TraceRetention};
#[cfg(feature = "sessions")]
pub use agents_sessions::{AgentSessionExt, SessionStore, SqliteSessionStore};
pub use futures::StreamExt;
pub use inference::{
    Anthropic, FinishReason, InferenceRequest, InferenceResponse, LanguageModel, ModelCatalog,
    ModelInfo, ModelSettings, OpenAiCompatible, ScriptedModel, Usage,
};
pub use messages::{Message, MessageStore, Messages, Role, ToolCall};
pub use serde_json::json;
