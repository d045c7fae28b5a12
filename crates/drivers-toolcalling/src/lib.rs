//! `drivers_toolcalling`: the agent step that talks to the model through native tool calls.
//!
//! - [`format_step_messages`] turns a model response and its tool executions into a step's
//!   messages: the tool trace (one assistant message with all the calls, then one tool result
//!   per call) and the response (the assistant's text answer).
//! - [`recover_tool_calls_from_content`] recovers calls that a model wrote as JSON text instead
//!   of native tool calls (common with small local models), validated against the tools.
//! - `inference::lenient_json` finds JSON in model text (code fences, prose around it, trailing commas).
//! - [`is_plan_reply`], [`files_no_call_used`], [`asks_for_a_change`], [`asks_to_run`] and
//!   [`nothing_changed_by`] judge a final reply
//!   against the request and the execution's calls: a plan to use a tool, an answer about a
//!   file no call looked at, a request for a change (the ReAct driver asks about its final
//!   answers with them too).
//! - [`forged_evidence`] recognises a reply that writes tool results itself;
//!   [`RefuseForgedEvidence`] and [`ForgedEvidenceCheck`] never accept one as an answer.
//! - [`ToolCallingDriver`] runs one agent step with all of that: it builds the request (cached
//!   context, tools, options), calls the model (optionally streaming), runs the calls through
//!   the executor (optionally in parallel) and returns the step.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use agents_core::{Agent, AgentState, FunctionTool, StepsLimit, ToolCallPresenceCheck, Tools};
//! use drivers_toolcalling::ToolCallingDriver;
//! use inference::{InferenceResponse, ScriptedModel};
//! use serde_json::json;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct City { city: String }
//!
//! let weather = FunctionTool::new("get_weather", "Weather for a city.", |c: City| async move {
//!     Ok::<_, String>(format!("Sunny in {}", c.city))
//! });
//! // A small local model that writes its tool call as JSON text instead of a native call.
//! let model = ScriptedModel::new([
//!     InferenceResponse::text(r#"{"name": "get_weather", "arguments": {"city": "Paris"}}"#),
//!     InferenceResponse::text("It is sunny in Paris."),
//! ]);
//! let driver = ToolCallingDriver::new(model).with_content_tool_call_recovery(true);
//! // (A real agent also wires processors so the trace reaches the next request.)
//! let agent = Agent::new(driver)
//!     .with_tools(Tools::new().with(weather))
//!     .with_criterion(ToolCallPresenceCheck::new())
//!     .with_criterion(StepsLimit::new(5));
//!
//! let done = agent.execute(AgentState::new().with_user_message("Weather in Paris?")).await.unwrap();
//! let first = done.steps().next().unwrap();
//! assert_eq!(first.tool_executions().iter().next().unwrap().result_text(), "Sunny in Paris");
//! assert_eq!(done.final_response().map(|m| m.text()).as_deref(), Some("It is sunny in Paris."));
//! # });
//! ```

mod ambiguous_value;
mod backticks;
mod borrowed_value;
mod change_request;
mod claimed_call;
mod claimed_change;
mod contradicted_listing;
mod contradicted_setting;
mod copied_error;
mod copied_instructions;
mod disowned_tools;
mod echoed_request;
mod failed_calls;
mod fenced;
mod files_left;
mod foreign_file;
mod forged_evidence;
mod latest_results;
mod misquoted_result;
mod narration;
mod plan_reply;
mod plan_steps;
mod predicted_answer;
mod recover;
mod repeated_answer;
mod repeated_reply;
mod reply_nudge;
mod reply_prefix;
mod setting_line;
mod several_files;
mod shown_calls;
mod step_messages;
#[cfg(test)]
mod test_tools;
mod tool_calling_driver;
mod trust;
mod unread_file;
mod unseen_term;
mod unseen_value;
mod unshown_calculation;
mod word_set;
mod wrong_arithmetic;

pub use ambiguous_value::{ambiguous_value, AmbiguousValue};
pub use backticks::{in_backticks, in_backticks_and};
pub use borrowed_value::{borrowed_value, BorrowedValue};
pub use change_request::{asks_for_a_change, asks_to_run, nothing_changed_by};
pub use claimed_change::files_claimed_changed;
pub use contradicted_listing::{contradicted_listing, ListingContradiction};
pub use contradicted_setting::{contradicted_setting, ContradictedSetting};
pub use copied_error::{copies_a_tool_error_of, copies_an_error_on_stop};
pub use forged_evidence::{
    forged_evidence, ForgedEvidence, ForgedEvidenceCheck, RefuseForgedEvidence, FORGED_REPLY_KEY,
};
pub use plan_reply::{is_plan_reply, is_plan_reply_naming};
pub use recover::{
    is_recovered_call, is_tool_call_text, recover_announced_call, recover_tool_calls,
    recover_tool_calls_from_content, recover_tool_calls_from_cut_reply, recovered_id_prefix,
    AnnouncedCall, RecoveredCall, RecoveredKind, MAX_TEXT_CALL_BYTES, RECOVERED_ID_PREFIX,
};
pub use several_files::{one_of_several_files, SeveralFiles};
pub use shown_calls::RecoveredCallsShown;
pub use step_messages::{format_step_messages, repeats_calls, StepMessages};
pub use tool_calling_driver::{ToolCallingDriver, DEFAULT_MAX_CALLS_PER_STEP};
pub use unread_file::files_no_call_used;
pub use unseen_term::terms_no_result_holds;
pub use unseen_value::unseen_values;
pub use unshown_calculation::{operand_answer, uncalculated_numbers, OperandAnswer};
pub use wrong_arithmetic::{wrong_arithmetic, WrongArithmetic};
