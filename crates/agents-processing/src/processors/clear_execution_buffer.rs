//! `ClearExecutionBuffer`: nothing of the trace survives the end of an execution.

use agents_core::{AgentError, AgentState, EXECUTION_BUFFER_SECTION};

use agents_core::InlineProcessor;

/// Post-step: empties `execution_buffer` when the step's continuation outcome says stop.
///
/// Put it **first** in the list so its post-step logic runs **last**, after the trace of the
/// final step was appended: a run that stops on a limit right after a tool call leaves nothing
/// behind.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClearExecutionBuffer;

impl InlineProcessor for ClearExecutionBuffer {
    fn after(&self, state: AgentState) -> Result<AgentState, AgentError> {
        let stopping = state.is_stopping();
        if !stopping || state.store().section(EXECUTION_BUFFER_SECTION).is_empty() {
            return Ok(state);
        }
        Ok({
            let store = state.store().section(EXECUTION_BUFFER_SECTION).clear();
            state.with_store(store)
        })
    }
}
