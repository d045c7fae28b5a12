//! `ClearExecutionBuffer`: nothing of the trace survives the end of an execution.

use agents_core::{AgentError, AgentState, EXECUTION_BUFFER_SECTION};

use crate::InlineProcessor;

/// Post-step: empties `execution_buffer` when the step's continuation outcome says stop.
///
/// Put it **first** in the list so its post-step logic runs **last**, after the trace of the
/// final step was appended: a run that stops on a limit right after a tool call leaves nothing
/// behind.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClearExecutionBuffer;

impl InlineProcessor for ClearExecutionBuffer {
    fn after(&self, state: AgentState) -> Result<AgentState, AgentError> {
        let stopping = state
            .continuation_outcome()
            .is_some_and(|outcome| !outcome.should_continue());
        if !stopping || state.store().section(EXECUTION_BUFFER_SECTION).is_empty() {
            return Ok(state);
        }
        Ok(state.edit_store(|store| store.section_mut(EXECUTION_BUFFER_SECTION).clear()))
    }
}
