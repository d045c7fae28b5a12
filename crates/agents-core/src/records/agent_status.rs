//! `AgentStatus`.

use serde::{Deserialize, Serialize};

/// Where an agent's execution stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentStatus {
    /// Running, or ready to run: [`Agent::step`](crate::Agent::step) runs another step.
    #[default]
    InProgress,
    /// Stopped normally (the answer, a limit, a guard).
    Completed,
    /// Stopped by an error.
    Failed,
    /// Waiting for a person to decide on tool calls
    /// ([`AgentState::pending_approvals`](crate::AgentState::pending_approvals)); `step` on it
    /// runs the decided calls once every one is decided, and returns it unchanged until then.
    Suspended,
}
