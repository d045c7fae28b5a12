//! The state-processor middleware chain and the built-in processors.
//!
//! A [`StateProcessor`] is a layer around each step of the agent loop (like a `tower` layer);
//! [`StateProcessors`] folds a list of them so that the **first** is the **outermost**. Both
//! live in `agents-core` (the loop runs them) and are re-exported here; this crate holds the
//! built-in layers and the standard stacks.
//!
//! The processors decide which messages persist:
//!
//! - legacy mode ([`AppendStepMessages`]): every message of every step goes to `messages`;
//! - observation masking ([`MaskOldObservations`] around [`AppendStepMessages`]): legacy
//!   persistence, but outputs older than the last N executions become short placeholders;
//! - separated mode ([`AppendToolTraceToBuffer`], [`AppendFinalResponse`],
//!   [`ClearExecutionBuffer`]): tool calls and results live in the ephemeral
//!   `execution_buffer` while the execution runs and are cleared when it stops; only user
//!   messages and final answers persist. [`TraceRetention`] chooses what of the trace survives.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! use agents_core::testing::ScriptedDriver;
//! use agents_core::{Agent, AgentState, FunctionTool, ToolCallPresenceCheck, ToolError};
//! use agents_core::EXECUTION_BUFFER_SECTION;
//! use agents_processing::{standard_processors, TraceRetention};
//! use inference::InferenceResponse;
//! use messages::ToolCall;
//! use serde_json::json;
//!
//! let driver = ScriptedDriver::new([
//!     InferenceResponse::with_tool_calls([ToolCall::new("c1", "clock", json!({}))]),
//!     InferenceResponse::text("It is noon."),
//! ]);
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct NoArgs {}
//! let clock = FunctionTool::new("clock", "The current time", |_: NoArgs| async {
//!     Ok::<_, ToolError>("12:00")
//! });
//! let agent = Agent::new(driver)
//!     .with_tool(clock)
//!     .with_criterion(ToolCallPresenceCheck::new()) // run while the model calls tools
//!     .with_processors(standard_processors(TraceRetention::Ephemeral));
//! let done = agent.execute(AgentState::new().with_user_message("What time is it?")).await.unwrap();
//!
//! // Only the question and the answer persist; the tool trace is gone with the execution.
//! assert_eq!(done.messages().len(), 2);
//! assert!(done.store().section(EXECUTION_BUFFER_SECTION).is_empty());
//! # });
//! ```

mod processors;
mod retention;
mod stacks;
mod token_counter;

pub use agents_core::{InlineProcessor, Next, StateProcessor, StateProcessors};
pub use processors::{is_observation, masked_conversation};
pub use processors::{
    AccumulateTokenUsage, AppendContextMetadata, AppendFinalResponse, AppendStepMessages,
    AppendToolTraceToBuffer, ApplyCachedContext, CallableProcessor, ClearExecutionBuffer,
    MaskOldObservations, MoveMessagesToBuffer, SummarizeBuffer, CONTEXT_METADATA_KEY,
    CONTEXT_METADATA_PARAMETER, OBSERVATION_MASKED_KEY, TOKEN_USAGE_PARAMETER,
};
pub use retention::{
    execution_digest, DigestConfig, TraceRetention, DEFAULT_MASKED_EXECUTIONS, EXECUTION_DIGEST_KEY,
};
pub use stacks::{legacy_processors, separated_processors, standard_processors};
#[cfg(feature = "tiktoken")]
pub use token_counter::TiktokenCounter;
pub use token_counter::{EstimateTokenCounter, TokenCounter};
