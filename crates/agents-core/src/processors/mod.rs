//! The processors an agent has unless told otherwise: every message a step produces persists
//! (`AppendStepMessages`), and changed metadata is shown to the model once when an execution
//! stops (`AppendContextMetadata`). This is the legacy stack; the separated stacks (the
//! execution buffer, digests, observation masking) are `agents-processing`'s, which also
//! re-exports these two.

mod append_context_metadata;
mod append_step_messages;

use std::sync::Arc;

use crate::processing::{StateProcessor, StateProcessors};

pub use append_context_metadata::{
    AppendContextMetadata, CONTEXT_METADATA_KEY, CONTEXT_METADATA_PARAMETER,
};
pub use append_step_messages::AppendStepMessages;

/// The processors of an agent built with the defaults ([`Agent::new`](crate::Agent::new),
/// [`AgentBuilder`](crate::AgentBuilder)), outermost first: `AppendStepMessages`,
/// `AppendContextMetadata` (legacy mode: the conversation keeps every step's messages).
pub fn default_processors() -> StateProcessors {
    StateProcessors::new([
        Arc::new(AppendStepMessages) as Arc<dyn StateProcessor>,
        Arc::new(AppendContextMetadata),
    ])
}
