//! [`SuspendedRun`]: what a subagent tool returns when the subagent waits for approvals.

use serde::{Deserialize, Serialize};

use crate::state::agent_state::AgentState;

/// A subagent's run, suspended on calls that need approval: what a subagent tool returns
/// ([`ToolError::AwaitingApproval`](crate::ToolError::AwaitingApproval)) so that the calling
/// agent suspends too and shows the subagent's waiting calls as its own.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SuspendedRun {
    subagent: String,
    state: AgentState,
}

impl SuspendedRun {
    /// The suspended `state` of the subagent named `subagent`.
    pub fn new(subagent: impl Into<String>, state: AgentState) -> Self {
        Self {
            subagent: subagent.into(),
            state,
        }
    }

    /// The subagent's name.
    pub fn subagent(&self) -> &str {
        &self.subagent
    }

    /// Its suspended state.
    pub fn state(&self) -> &AgentState {
        &self.state
    }
}
