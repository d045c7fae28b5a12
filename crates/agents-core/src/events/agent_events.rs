//! `AgentEvents`: the handle events are emitted through.

use std::sync::Arc;

use crate::events::agent_event::AgentEvent;
use crate::tools::executor::ToolEvent;
use crate::tools::tool::ToolContext;

type Listener = Arc<dyn Fn(&AgentEvent) + Send + Sync>;

/// Delivers events to the registered listeners (in registration order) and logs each one with
/// `tracing` (target `agents_core::events`, level debug). Cheap to clone; clones share the
/// listeners.
#[derive(Clone, Default)]
pub struct AgentEvents {
    listeners: Arc<Vec<Listener>>,
}

impl AgentEvents {
    /// No listeners (events are only logged).
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy with one more listener.
    pub fn with_listener(&self, listener: impl Fn(&AgentEvent) + Send + Sync + 'static) -> Self {
        let mut listeners: Vec<Listener> = self.listeners.iter().cloned().collect();
        listeners.push(Arc::new(listener));
        Self {
            listeners: Arc::new(listeners),
        }
    }

    /// Number of listeners.
    pub fn listener_count(&self) -> usize {
        self.listeners.len()
    }

    /// True when an emitted event would reach anyone: a listener, or a `tracing` subscriber
    /// that wants debug events of `agents_core::events`.
    pub fn is_observed(&self) -> bool {
        !self.listeners.is_empty()
            || tracing::enabled!(target: "agents_core::events", tracing::Level::DEBUG)
    }

    /// Builds the event with `make` and emits it, only when someone observes events
    /// ([`AgentEvents::is_observed`]). The loop uses this so that unobserved runs do not pay
    /// for building events.
    pub fn emit_with(&self, make: impl FnOnce() -> AgentEvent) {
        if self.is_observed() {
            self.emit(make());
        }
    }

    /// Builds a tool executor's event with `make` and emits it when someone observes events.
    pub fn emit_tool_event_with(&self, context: &ToolContext, make: impl FnOnce() -> ToolEvent) {
        if self.is_observed() {
            self.emit_tool_event(context, make());
        }
    }

    /// Logs `event` and hands it to every listener.
    pub fn emit(&self, event: AgentEvent) {
        tracing::debug!(
            target: "agents_core::events",
            event = event.name(),
            agent_id = %event.agent_id(),
            step = event.step_number(),
            details = ?event,
        );
        for listener in self.listeners.iter() {
            listener(&event);
        }
    }

    /// Emits a tool executor's event as an [`AgentEvent`].
    pub fn emit_tool_event(&self, context: &ToolContext, event: ToolEvent) {
        self.emit(AgentEvent::from_tool_event(context, event));
    }
}

impl std::fmt::Debug for AgentEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentEvents")
            .field("listeners", &self.listeners.len())
            .finish()
    }
}
