//! `AppendToolTraceToBuffer`: the step's trace goes to the ephemeral execution buffer.

use agents_core::{AgentError, AgentState, EXECUTION_BUFFER_SECTION};

use agents_core::InlineProcessor;

/// Post-step: appends the step's `trace_messages` to `execution_buffer`, where the next steps
/// of the same execution see them.
///
/// Driven by the step's trace, not by message shapes, so a ReAct step's Thought/Action and
/// Observation texts are kept as well as native tool calls and results.
#[derive(Clone, Copy, Debug, Default)]
pub struct AppendToolTraceToBuffer;

impl InlineProcessor for AppendToolTraceToBuffer {
    fn after(&self, state: AgentState) -> Result<AgentState, AgentError> {
        let Some(step) = state.current_step() else {
            return Ok(state);
        };
        if step.trace_messages().is_empty() {
            return Ok(state);
        }
        let trace = step.trace_messages().clone();
        let buffer = state.store().section(EXECUTION_BUFFER_SECTION).messages();
        if buffer.ends_with_same(&trace) {
            // The step passed here before: a step held for approval, now resolved in place.
            return Ok(state);
        }
        Ok({
            let store = state
                .store()
                .section(EXECUTION_BUFFER_SECTION)
                .append(trace);
            state.with_store(store)
        })
    }
}
