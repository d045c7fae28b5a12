//! `drivers_react`: the agent step that talks to the model through a Thought/Action/Observation
//! protocol written as JSON, for models without native tool calling (or that use it badly).
//!
//! - [`react_prompt`] teaches the model the protocol and lists the tools with their schemas.
//! - [`parse_decision`] reads a [`ReActDecision`] leniently from the reply (code fences, prose,
//!   trailing commas); [`validate`] checks it strictly against the tools. Each
//!   [`DecisionError`] reads as a correction the model can act on.
//! - [`action_message`] and [`observation_message`] write the step's trace as text messages
//!   marked with the metadata key [`REACT_KEY`].
//! - [`ReActDriver`] runs one agent step with all of that (retrying unusable decisions with
//!   the error fed back), and [`StopOnFinalDecision`] stops the loop on the final answer.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use agents_core::{Agent, AgentState, FunctionTool, StepsLimit, Tools};
//! use drivers_react::{ReActDecision, ReActDriver, StopOnFinalDecision};
//! use inference::{InferenceResponse, ScriptedModel};
//! use serde_json::json;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Pair { a: f64, b: f64 }
//!
//! let add = FunctionTool::new("add", "Adds two numbers.", |p: Pair| async move {
//!     Ok::<_, String>(json!(p.a + p.b))
//! });
//! // A model that first calls the tool, then answers.
//! let model = ScriptedModel::new([
//!     InferenceResponse::text(ReActDecision::call_tool("Use the tool.", "add", json!({"a": 2, "b": 3})).to_json()),
//!     InferenceResponse::text(r#"{"thought": "Got it.", "type": "final_answer", "answer": "5"}"#),
//! ]);
//! let agent = Agent::new(ReActDriver::new(model.clone()).with_max_decision_retries(1))
//!     .with_tools(Tools::new().with(add))
//!     .with_criterion(StopOnFinalDecision::new())
//!     .with_criterion(StepsLimit::new(5));
//!
//! let done = agent.execute(AgentState::new().with_user_message("2 + 3?")).await.unwrap();
//! assert_eq!(done.step_count(), 2);
//! assert_eq!(done.final_response().map(|m| m.text()).as_deref(), Some("5"));
//! // The first request carries the ReAct protocol and the tool catalogue.
//! assert!(model.requests()[0].messages.first().unwrap().text().contains("### add"));
//! # });
//! ```

mod answer_checks;
mod decision;
mod decision_error;
mod parse;
mod prompt;
mod react_driver;
mod stop_on_final_decision;
#[cfg(test)]
mod test_tools;
mod trace;
mod validate;

pub use decision::{DecisionKind, ReActDecision};
pub use decision_error::DecisionError;
pub use parse::parse_decision;
pub use prompt::react_prompt;
pub use react_driver::ReActDriver;
pub use stop_on_final_decision::StopOnFinalDecision;
pub use trace::{
    action_message, is_react_trace, observation_message, observation_messages, REACT_ACTION,
    REACT_KEY, REACT_OBSERVATION,
};
pub use validate::{validate, ValidatedDecision};
