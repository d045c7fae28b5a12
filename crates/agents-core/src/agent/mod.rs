//! The agent loop.

#[allow(clippy::module_inception)]
mod agent;
mod hooks;
mod run;
mod step_runner;

pub use agent::{Agent, DEFAULT_MAX_STOP_VETOES};
pub use hooks::{StateHook, StopDecision, StopHook};
