//! The agent and its loop: what an agent is (`agent.rs`) and where a step happens (`step.rs`).

#[allow(clippy::module_inception)]
mod agent;
mod answer_on_stop;
mod approval;
mod hooks;
mod step;

pub use agent::{Agent, DEFAULT_AGENT_NAME, DEFAULT_MAX_STOP_VETOES};
pub use answer_on_stop::{AnswerOnStop, ANSWERED_BY_KEY, INCOMPLETE_KEY, STOP_REASON_KEY};
pub use approval::ApprovalPolicy;
pub use hooks::{StateHook, StopDecision, StopHook};
pub use step::{StepOptions, CONTEXT_WINDOW_WARNING};
