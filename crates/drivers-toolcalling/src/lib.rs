//! `drivers_toolcalling`: the agent step that talks to the model through native tool calls.
//!
//! - [`format_step_messages`] turns a model response and its tool executions into a step's
//!   messages: the tool trace (one assistant message with all the calls, then one tool result
//!   per call) and the response (the assistant's text answer).
//! - [`recover_tool_calls_from_content`] recovers calls that a model wrote as JSON text instead
//!   of native tool calls (common with small local models), validated against the tools.
//! - [`lenient_json`] finds JSON in model text (code fences, prose around it, trailing commas).

pub mod lenient_json;
mod recover;
mod run_tool_calls;
mod step_messages;
#[cfg(test)]
mod test_tools;
mod tool_calling_driver;

pub use recover::{recover_tool_calls_from_content, RECOVERED_ID_PREFIX};
pub use run_tool_calls::run_tool_calls;
pub use step_messages::{format_step_messages, repeats_calls, StepMessages};
pub use tool_calling_driver::ToolCallingDriver;
