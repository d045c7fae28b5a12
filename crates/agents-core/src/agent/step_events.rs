//! The events a step reports when it is recorded: `StepCompleted` (and `TokenUsage`), and
//! `ApprovalRequested` for each call a suspended step waits on. Built only when someone
//! listens.

use crate::agent::agent::Agent;
use crate::events::agent_event::{AgentEvent, EventSource};
use crate::state::agent_state::AgentState;

impl Agent {
    pub(super) fn emit_step_completed(&self, state: &AgentState) {
        if !self.events.is_observed() {
            return;
        }
        let Some(execution) = state.step_executions().last() else {
            return;
        };
        let step = execution.step();
        let source = EventSource {
            step_number: execution.step_number(),
            ..EventSource::execution(state)
        };
        self.events.emit_with(|| AgentEvent::StepCompleted {
            source: source.clone(),
            step_type: step.step_type(),
            has_tool_calls: step.has_tool_calls(),
            errors: step.error_messages(),
            usage: step.usage(),
            finish_reason: step.finish_reason(),
            duration: execution.duration(),
            cost: step.cost(),
        });
        if !step.usage().is_empty() {
            self.events.emit_with(|| AgentEvent::TokenUsage {
                source,
                usage: step.usage(),
            });
        }
    }

    pub(super) fn emit_approvals_requested(&self, state: &AgentState) {
        if !self.events.is_observed() {
            return;
        }
        for pending in state.pending_approvals() {
            self.events.emit_with(|| AgentEvent::ApprovalRequested {
                source: EventSource {
                    step_number: state.step_count(),
                    ..EventSource::execution(state)
                },
                pending,
            });
        }
    }
}
