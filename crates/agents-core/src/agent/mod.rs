//! The agent and its loop: [`Agent`](agent::Agent) (configuration) and `step.rs` (the one
//! step function), with the jobs a step delegates in files of their own.

#[allow(clippy::module_inception)]
pub(crate) mod agent;
pub(crate) mod answer_on_stop;
pub(crate) mod approval_resume;
pub(crate) mod build_error;
pub(crate) mod builder;
pub(crate) mod deprecated;
pub(crate) mod hooks;
pub(crate) mod pricing;
pub(crate) mod step;
pub(crate) mod step_events;
pub(crate) mod step_options;
pub(crate) mod terminal;
pub(crate) mod verdict;
