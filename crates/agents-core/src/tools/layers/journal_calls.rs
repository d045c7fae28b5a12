//! [`JournalCalls`]: a call finished before a crash is not run again when its step re-runs,
//! and a call a crash interrupted is not run again silently.

use async_trait::async_trait;
use messages::ToolCall;

use crate::journal::{CallIntent, OnInterrupted, INTERRUPTED_MESSAGE};
use crate::records::agent_error::AgentError;
use crate::records::tool_execution::{ToolExecution, ToolFailureKind};
use crate::state::pending_approval::AWAITING_APPROVAL_MESSAGE;
use crate::tools::executor::ToolEvent;
use crate::tools::layer::{NextTool, ToolLayer, ToolScope};

/// With a [`StepJournal`](crate::StepJournal) (durable sessions give one per step), the call
/// goes through [`StepJournal::journaled_tool_call`](crate::StepJournal::journaled_tool_call):
/// a call whose result the journal holds returns that result without running; a call an
/// interrupted run started and did not finish runs again only when its tool is read-only or
/// idempotent, is asked for again when it ran on a person's approval, and otherwise gets the
/// result [`INTERRUPTED_MESSAGE`] ([`ToolFailureKind::Interrupted`]; a `ToolCallInterrupted`
/// event either way); every other call's intent is recorded before it runs and its result as
/// soon as it finishes. Without a journal it only passes the call on.
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
        let intent = CallIntent::new(scope.position(), &call);
        let rerun = scope.effects(call.name()).is_retry_safe();
        let on_interrupted = if rerun {
            OnInterrupted::RunAgain
        } else if scope.is_decided() && scope.approval().requires(&call) {
            // It ran on a person's approval: they decide again (not recorded, so the new
            // decision starts afresh).
            OnInterrupted::Answer {
                execution: scope.refusal(
                    call.clone(),
                    ToolFailureKind::AwaitingApproval,
                    AWAITING_APPROVAL_MESSAGE,
                ),
                record: false,
            }
        } else {
            OnInterrupted::Answer {
                execution: scope.refusal(
                    call.clone(),
                    ToolFailureKind::Interrupted,
                    INTERRUPTED_MESSAGE,
                ),
                record: true,
            }
        };
        let asked = call.clone();
        let journaled = journal
            .journaled_tool_call(&intent, on_interrupted, Box::pin(next.run(call, scope)))
            .await?;
        if journaled.interrupted {
            tracing::warn!(
                call_id = asked.id(),
                tool = asked.name(),
                rerun,
                "a call an interrupted run started and did not finish"
            );
            scope.report(ToolEvent::Interrupted { call: asked, rerun });
        }
        Ok(journaled.execution)
    }

    fn passes(&self, _call: &ToolCall, scope: &ToolScope<'_>) -> bool {
        scope.journal().is_none()
    }

    fn name(&self) -> &str {
        "JournalCalls"
    }
}
