//! The agent's state.

mod agent_state;
mod agent_status;
mod cached_context;
mod document;
mod state_error;

pub use agent_state::AgentState;
pub use agent_status::AgentStatus;
pub use cached_context::CachedContext;
pub use document::STATE_VERSION;
pub use state_error::StateError;
