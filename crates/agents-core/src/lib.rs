//! The core of the agent library: the state an agent carries, the steps it takes, when it
//! stops, what happens on errors, its tools, the events it reports, and the loop that runs it.
//!
//! - [`AgentState`]: an immutable, cheaply cloned value holding the conversation in a sectioned
//!   [`MessageStore`](messages::MessageStore) (`messages` persists across executions,
//!   `execution_buffer` holds the tool trace of the running execution and is cleared by
//!   [`AgentState::for_continuation`]), metadata, usage and the [`StepExecutions`] of the
//!   running execution. It serializes to versioned JSON ([`AgentState::to_json`]).
//! - [`AgentStep`]: what one step produced, with `trace_messages` (tool calls and results) kept
//!   apart from `response_messages` (the answer).
//! - [`ContinuationCriterion`]s ([`StepsLimit`], [`TokenUsageLimit`], [`ExecutionTimeLimit`],
//!   [`ToolCallPresenceCheck`], ...) decide after each step whether to run another; the
//!   [`ErrorPolicy`] decides what failures do ([`AgentError::error_type`] sees through wrappers).
//! - [`AgentDriver`]: produces a step (calls the model, runs tools through a [`ToolExecutor`]);
//!   [`StateProcessors`]: middleware around each step, one onion of [`StateProcessor`] layers.
//! - [`Agent`]: the loop. [`Agent::iterate`] streams the state after each step and then the
//!   final state; [`Agent::execute`] returns the final state. [`AgentEvents`] reports what
//!   happens to listeners and to `tracing`.
//!
//! With the `testing` feature, `testing::ScriptedDriver` replays scripted model answers and
//! `testing` has proptest strategies for states and steps.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! use agents_core::testing::ScriptedDriver;
//! use agents_core::{
//!     Agent, AgentState, AgentStatus, ContinuationCriteria, FunctionTool, StepsLimit, StopReason,
//!     ToolCallPresenceCheck, ToolError,
//! };
//! use inference::InferenceResponse;
//! use messages::ToolCall;
//! use serde_json::json;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Args { city: String }
//!
//! let weather = FunctionTool::new("get_weather", "Current weather", |args: Args| async move {
//!     Ok::<_, ToolError>(format!("22°C and sunny in {}", args.city))
//! });
//! let driver = ScriptedDriver::new([
//!     InferenceResponse::with_tool_calls([ToolCall::new("call_1", "get_weather", json!({"city": "Paris"}))]),
//!     InferenceResponse::text("It is 22°C and sunny in Paris."),
//! ]);
//! let agent = Agent::new(driver)
//!     .with_tool(weather)
//!     .with_criteria(ContinuationCriteria::new().with(ToolCallPresenceCheck::new()).with(StepsLimit::new(10)));
//!
//! let done = agent.execute(AgentState::new().with_user_message("Weather in Paris?")).await.unwrap();
//! assert_eq!(done.status(), AgentStatus::Completed);
//! assert_eq!(done.stop_reason(), Some(StopReason::Completed));
//! assert_eq!(done.step_count(), 2);
//! assert_eq!(done.final_response().unwrap().text(), "It is 22°C and sunny in Paris.");
//! let first = done.steps().next().unwrap();
//! assert_eq!(first.trace_messages().len(), 2); // the tool call and its result
//!
//! // States round-trip through JSON.
//! let restored = AgentState::from_json(&done.to_json().unwrap()).unwrap();
//! assert_eq!(restored, done);
//! # });
//! ```

mod agent;
mod cached_context;
mod clock;
mod continuation;
mod driver;
mod errors;
mod events;
mod group_watchdog;
mod ids;
mod journal;
mod processing;
pub mod processors;
mod records;
mod schema;
mod signature;
mod state;
pub mod telemetry;
pub mod tools;

#[cfg(feature = "testing")]
pub mod testing;

// What users see. Nothing inside the crate imports through these re-exports: modules import
// each other by path, in layers (records, then state, then behaviour; see docs/architecture.md).

pub use agent::agent::{Agent, DEFAULT_AGENT_NAME, DEFAULT_MAX_STOP_VETOES};
pub use agent::build_error::BuildError;
pub use agent::builder::{AgentBuilder, Listener, DEFAULT_MAX_STEPS, DEFAULT_TOOL_ERROR_RETRIES};
pub use agent::hooks::{StateHook, StepHooks, StopDecision, StopHook};
pub use agent::pricing::CONTEXT_WINDOW_WARNING;
pub use agent::step_options::StepOptions;
pub use cached_context::CachedContext;
pub use clock::{Clock, ManualClock, SystemClock, TokioClock};
pub use continuation::criteria::callable_criterion::{criterion_fn, CallableCriterion};
pub use continuation::criteria::empty_response_check::EmptyResponseCheck;
pub use continuation::criteria::error_policy_criterion::ErrorPolicyCriterion;
pub use continuation::criteria::execution_time_limit::ExecutionTimeLimit;
pub use continuation::criteria::finish_reason_check::FinishReasonCheck;
pub use continuation::criteria::guards::{
    standard_guards, CancellationGuard, CostLimitGuard, ErrorPolicyGuard, RepeatedCallGuard,
};
pub use continuation::criteria::response_content_check::ResponseContentCheck;
pub use continuation::criteria::retry_limit::RetryLimit;
pub use continuation::criteria::steps_limit::StepsLimit;
pub use continuation::criteria::token_usage_limit::TokenUsageLimit;
pub use continuation::criteria::tool_call_presence_check::ToolCallPresenceCheck;
pub use continuation::criterion::{ContinuationCriteria, ContinuationCriterion, StepFacts};
pub use driver::{AgentDriver, StepContext};
pub use errors::error_context::ErrorContext;
pub use errors::error_policy::ErrorPolicy;
pub use events::agent_event::{AgentEvent, EventSource};
pub use events::agent_events::AgentEvents;
pub use group_watchdog::GroupWatchdog;
pub use ids::{IdSource, SequentialIds, UuidV7Ids};
pub use journal::{
    CallIntent, InferenceAction, JournalError, JournaledCall, OnInterrupted, StepJournal,
    ToolCallAction, INTERRUPTED_MESSAGE,
};
pub use processing::{
    InlineProcessor, Next, StateProcessor, StateProcessors, StepFuture, StepTerminal,
};
pub use records::agent_error::{error_chain, AgentError};
pub use records::agent_status::AgentStatus;
pub use records::agent_step::{AgentStep, AgentStepType, StepParts};
pub use records::answer_on_stop::{AnswerOnStop, ANSWERED_BY_KEY, INCOMPLETE_KEY, STOP_REASON_KEY};
pub use records::cost::RunCost;
pub use records::decision::{ContinuationDecision, StopReason};
pub use records::error_type::{ErrorHandlingDecision, ErrorType};
pub use records::evaluation::ContinuationEvaluation;
pub use records::outcome::ContinuationOutcome;
pub use records::step_error::StepError;
pub use records::step_execution::{StepExecution, StepExecutions};
pub use records::tool_effects::ToolEffects;
pub use state::agent_state::{AgentState, Execution};
pub use state::document::STATE_VERSION;
pub use state::incremental;
pub use state::pending_approval::{
    ApprovalDecision, ApprovalError, ApprovalVerdict, PendingApproval, AWAITING_APPROVAL_MESSAGE,
};
pub use state::sections::{
    BUFFER_SECTION, DEFAULT_SECTION, EXECUTION_BUFFER_SECTION, SUMMARY_SECTION,
};
pub use state::state_error::StateError;
pub use state::suspended_run::SuspendedRun;
/// The token that cancels an execution (tokio-util's): see [`StepOptions::with_cancellation`].
pub use tokio_util::sync::CancellationToken;
pub use tools::{
    arguments_schema, clean_schema, closest_names, misspelled_names, signature, validate_arguments,
    AfterToolHook, ApprovalPolicy, BeforeToolHook, DefaultToolExecutor, FunctionTool,
    PreviousCalls, Tool, ToolCallLimits, ToolContext, ToolError, ToolEvent, ToolEventListener,
    ToolExecution, ToolExecutions, ToolExecutor, ToolFailureKind, ToolHook, ToolHookDecision,
    ToolOutcome, ToolOutput, ToolSource, Tools, DEFAULT_REPEATED_CALL_LIMIT,
    DEFAULT_TOOL_OUTPUT_LIMIT, DEFAULT_TOOL_TIMEOUT, MAX_TOOL_IMAGE_BYTES,
};
