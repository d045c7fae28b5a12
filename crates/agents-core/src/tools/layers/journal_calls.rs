//! [`JournalCalls`]: a call finished before a crash is not run again when its step re-runs.

use async_trait::async_trait;
use messages::ToolCall;

use crate::records::agent_error::AgentError;
use crate::records::tool_execution::ToolExecution;
use crate::tools::layer::{NextTool, ToolLayer, ToolScope};

/// With a [`StepJournal`](crate::StepJournal) (durable sessions give one per step), the call
/// goes through [`StepJournal::journaled_tool_call`](crate::StepJournal::journaled_tool_call):
/// a call whose result the journal holds returns that result without running; every other
/// call's result is recorded, durably, as soon as it finishes. Without a journal it only passes
/// the call on.
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
        let recorded = call.clone();
        journal
            .journaled_tool_call(&recorded, Box::pin(next.run(call, scope)))
            .await
    }

    fn name(&self) -> &str {
        "JournalCalls"
    }
}
