//! `drivers_react`: the agent step that talks to the model through a Thought/Action/Observation
//! protocol written as JSON, for models without native tool calling (or that use it badly).
//!
//! - [`react_prompt`] teaches the model the protocol and lists the tools with their schemas.
//! - [`parse_decision`] reads a [`ReActDecision`] leniently from the reply (code fences, prose,
//!   trailing commas); [`validate`] checks it strictly against the tools. Each
//!   [`DecisionError`] reads as a correction the model can act on.
//! - [`action_message`] and [`observation_message`] write the step's trace as text messages
//!   marked with the metadata key [`REACT_KEY`].

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
