//! Errors and the error policy.

mod agent_error;
mod error_context;
mod error_policy;
mod error_type;

pub use agent_error::{error_chain, AgentError};
pub use error_context::ErrorContext;
pub use error_policy::ErrorPolicy;
pub use error_type::{ErrorHandlingDecision, ErrorType};
