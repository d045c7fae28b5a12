//! `use agents::prelude::*;` brings in what most agents need.

pub use crate::capabilities::{
    UseBash, UseFileTools, UseMetadataTools, UseSkills, UseSummarization, UseToolRegistry,
};
pub use crate::{AgentBuilder, AgentCapability, BuildError};
pub use agents_core::{
    Agent, AgentError, AgentEvent, AgentState, AgentStatus, AgentStep, AgentStepType, ErrorPolicy,
    FunctionTool, StopReason, Tool, ToolContext, ToolError, ToolOutput, Tools, BUFFER_SECTION,
    DEFAULT_SECTION, EXECUTION_BUFFER_SECTION, SUMMARY_SECTION,
};
pub use agents_processing::TraceRetention;
pub use futures::StreamExt;
pub use inference::{
    Anthropic, FinishReason, InferenceRequest, InferenceResponse, LanguageModel, OpenAiCompatible,
    ScriptedModel, Usage,
};
pub use messages::{Message, Messages, Role, ToolCall};
pub use serde_json::json;
