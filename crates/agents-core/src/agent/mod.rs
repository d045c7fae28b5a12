//! The agent and its loop: what an agent is (`agent.rs`) and where a step happens (`step.rs`).

#[allow(clippy::module_inception)]
mod agent;
mod hooks;
mod step;

pub use agent::{Agent, DEFAULT_MAX_STOP_VETOES};
pub use hooks::{StateHook, StopDecision, StopHook};
pub use step::StepOptions;
