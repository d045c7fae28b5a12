//! Events: what happened while an agent ran, reported to listeners and to `tracing`.

pub(crate) mod agent_event;
pub(crate) mod agent_events;
