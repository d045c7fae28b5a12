//! Events: what happened while an agent ran.

mod agent_event;
mod agent_events;

pub use agent_event::{AgentEvent, EventSource};
pub use agent_events::AgentEvents;
