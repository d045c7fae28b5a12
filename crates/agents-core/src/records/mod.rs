//! The bottom band: plain records of what happened, with no behaviour of the loop in them.
//! Stop reasons and continuation outcomes, step and tool execution records, errors as data,
//! costs, statuses. Everything above (the state, the criteria, the tools, the loop) is built
//! from these; nothing here imports anything above.

pub(crate) mod agent_error;
pub(crate) mod agent_status;
pub(crate) mod agent_step;
pub(crate) mod answer_on_stop;
pub(crate) mod cost;
pub(crate) mod decision;
pub(crate) mod error_type;
pub(crate) mod evaluation;
pub(crate) mod outcome;
pub(crate) mod step_error;
pub(crate) mod step_execution;
pub(crate) mod tool_effects;
pub(crate) mod tool_execution;
