//! The facade: build agents with [`AgentBuilder`], give them [`capabilities`], and
//! reach every layer of the workspace from one dependency.
//!
//! `use agents::prelude::*;` is enough for most programs:
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use agents::prelude::*;
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct WeatherArgs { city: String }
//!
//! let weather = FunctionTool::new("get_weather", "Current weather for a city",
//!     |args: WeatherArgs| async move { Ok::<_, ToolError>(format!("22°C and sunny in {}", args.city)) });
//! let model = ScriptedModel::new([
//!     InferenceResponse::with_tool_calls([ToolCall::new("call_1", "get_weather", json!({"city": "Paris"}))]),
//!     InferenceResponse::text("It is 22°C and sunny in Paris."),
//! ]);
//! let agent = AgentBuilder::new()
//!     .with_model(model)
//!     .with_tool(weather)
//!     .with_system_prompt("You are a helpful assistant.")
//!     .with_separated_tool_trace(true)
//!     .with_max_steps(10)
//!     .build()
//!     .unwrap();
//!
//! let done = agent.execute(AgentState::new().with_user_message("What's the weather in Paris?")).await.unwrap();
//! assert_eq!(done.status(), AgentStatus::Completed);
//! assert_eq!(done.messages().len(), 2); // the question and the answer; the tool trace is gone
//! assert!(done.store().section(EXECUTION_BUFFER_SECTION).is_empty());
//! # });
//! ```
//!
//! The layers are re-exported as modules: [`messages`], [`inference`], [`core`],
//! [`processing`], [`toolcalling`], [`react`]; the items most programs use are also at the
//! crate root and in [`prelude`].
//!
//! [`capabilities`] add whole features in one call: [`UseFileTools`](capabilities::UseFileTools),
//! [`UseBash`](capabilities::UseBash), [`UseSubagents`](capabilities::UseSubagents),
//! [`UseSummarization`](capabilities::UseSummarization),
//! [`UseStructuredOutput`](capabilities::UseStructuredOutput) and
//! [`UseSelfCritique`](capabilities::UseSelfCritique).
//!
//! [`fs`] saves conversations the way a crash cannot corrupt them
//! ([`write_atomic`](fs::write_atomic)) and loads them with a size bound.

mod build_error;
mod builder;
pub mod capabilities;
mod capability;
pub mod definition;
#[cfg(feature = "otel")]
mod execution_traces;
pub mod fs;
pub mod prelude;
pub mod telemetry;

pub use build_error::BuildError;
pub use builder::{AgentBuilder, SEPARATED_TRACE_NOTE};
pub use capability::AgentCapability;

pub use agents_core::{
    Agent, AgentDriver, AgentError, AgentEvent, AgentState, AgentStatus, AgentStep, AnswerOnStop,
    ApprovalDecision, ApprovalError, ApprovalPolicy, ApprovalVerdict, CancellationToken, Clock,
    ErrorPolicy, FunctionTool, ManualClock, Next, PendingApproval, RunCost, StateProcessors,
    StepHooks, StepOptions, StopReason, Tool, ToolContext, ToolError, ToolOutput, ToolSource,
    Tools, EXECUTION_BUFFER_SECTION,
};
pub use agents_processing::{InlineProcessor, StateProcessor, TraceRetention};
pub use drivers_react::ReActDriver;
pub use drivers_toolcalling::ToolCallingDriver;
pub use inference::{
    Anthropic, Cost, InferenceError, InferenceResponse, LanguageModel, ModelCatalog, ModelInfo,
    ModelSettings, OpenAiCompatible, ScriptedModel,
};
pub use messages::{Message, Messages, ToolCall};

pub use agents_core as core;
/// MCP servers' tools as agent tools (the `agents-mcp` crate; feature `mcp`, on by default).
#[cfg(feature = "mcp")]
pub use agents_mcp as mcp;

pub use agents_processing as processing;
/// Agents as durable services on Restate: a session is a virtual object, every model and tool
/// call a journaled action, approvals are awakeables (the `agents-restate` crate; feature
/// `restate`; see `docs/distributed.md`).
#[cfg(feature = "restate")]
pub use agents_restate as restate;
/// Durable sessions (feature `sessions`, on by default): see [`agents_sessions`].
#[cfg(feature = "sessions")]
pub use agents_sessions as sessions;

/// HTTP servers over agents and sessions: the web console and the access rules every server
/// shares (feature `serve`): see [`agents_serve`].
#[cfg(feature = "serve")]
pub use agents_serve as serve;
pub use drivers_react as react;
pub use drivers_toolcalling as toolcalling;
pub use inference;
pub use messages;

#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

#[doc = include_str!("../../../docs/getting-started.md")]
#[cfg(doctest)]
pub struct GettingStartedDoctests;

#[doc = include_str!("../../../docs/answer-on-stop.md")]
#[cfg(doctest)]
pub struct AnswerOnStopDoctests;

#[doc = include_str!("../../../docs/interop.md")]
#[cfg(all(doctest, feature = "serve"))]
pub struct InteropDoctests;
