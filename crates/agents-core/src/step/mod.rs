//! Steps and their executions.

mod agent_step;
mod step_error;
mod step_execution;

pub(crate) use agent_step::final_assistant_message;
pub use agent_step::{AgentStep, AgentStepType, StepParts};
pub use step_error::StepError;
pub use step_execution::{StepExecution, StepExecutions};
