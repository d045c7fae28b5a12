//! The agent's state: the conversation and the run ([`AgentState`](agent_state::AgentState)),
//! the calls a suspended run waits on, and the versioned document it serializes to. Built
//! from records only (`crate::records`).

pub(crate) mod agent_state;
pub(crate) mod approvals;
pub(crate) mod document;
pub mod incremental;
pub(crate) mod pending_approval;
pub(crate) mod sections;
pub(crate) mod state_error;
pub(crate) mod suspended_run;
