//! [`JournalCalls`]: a call finished before a crash is not run again when its step re-runs.

use async_trait::async_trait;
use messages::ToolCall;

use crate::records::agent_error::AgentError;
use crate::records::tool_execution::ToolExecution;
use crate::tools::layer::{NextTool, ToolLayer, ToolScope};

/// With a [`StepJournal`](crate::StepJournal) (durable sessions give one per step), a call
/// whose result the journal holds returns that result without running; every other call's
/// result is recorded, durably, as soon as it finishes. Without a journal it only passes the
/// call on.
#[derive(Clone, Copy, Debug, Default)]
pub struct JournalCalls;

#[async_trait]
impl ToolLayer for JournalCalls {
    async fn call(
        &self,
        call: ToolCall,
        scope: &ToolScope<'_>,
        next: NextTool<'_>,
    ) -> Result<ToolExecution, AgentError> {
        let Some(journal) = scope.journal() else {
            return next.run(call, scope).await;
        };
        if let Some(execution) = journal.recorded_tool_result(call.id()).await? {
            tracing::debug!(
                call_id = call.id(),
                "reusing the tool result recorded before an interruption"
            );
            return Ok(execution);
        }
        let execution = next.run(call, scope).await?;
        journal.record_tool_result(&execution).await?;
        Ok(execution)
    }

    fn name(&self) -> &str {
        "JournalCalls"
    }
}
