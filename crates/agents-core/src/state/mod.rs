//! The agent's state: the conversation and the run, and its serialized document.

mod agent_state;
mod agent_status;
mod approvals;
mod document;
pub mod incremental;
mod state_error;

pub use agent_state::{AgentState, Execution};
pub use agent_status::AgentStatus;
pub use approvals::{
    ApprovalDecision, ApprovalError, ApprovalVerdict, PendingApproval, SuspendedRun,
    AWAITING_APPROVAL_MESSAGE,
};
pub use document::STATE_VERSION;
pub use state_error::StateError;
