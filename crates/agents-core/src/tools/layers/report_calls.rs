//! [`ReportCalls`]: the agent's listeners hear of every call that is handled, and how it ended.

use async_trait::async_trait;
use messages::ToolCall;

use crate::records::agent_error::AgentError;
use crate::records::tool_execution::{ToolExecution, ToolFailureKind};
use crate::tools::executor::ToolEvent;
use crate::tools::layer::{NextTool, ToolLayer, ToolScope};

/// Reports [`ToolEvent::Started`] for the call, passes it on, and reports how it ended:
/// [`ToolEvent::Blocked`] for a call a hook refused, [`ToolEvent::Completed`] for any other,
/// with the whole result (it stands inside
/// [`CapOutput`](crate::tools::layers::cap_output::CapOutput)). It only observes. It stands
/// inside [`HoldForApproval`](crate::tools::layers::hold_for_approval::HoldForApproval), so a
/// held call is reported when a person's decision lets it run, not while it waits.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReportCalls;

#[async_trait]
impl ToolLayer for ReportCalls {
    async fn call(
        &self,
        call: ToolCall,
        scope: &ToolScope<'_>,
        next: NextTool<'_>,
    ) -> Result<ToolExecution, AgentError> {
        scope.report_with(|| ToolEvent::Started { call: call.clone() });
        let execution = next.run(call, scope).await?;
        scope.report_with(
            || match (execution.failure_kind(), execution.error_message()) {
                (Some(ToolFailureKind::Blocked), Some(reason)) => ToolEvent::Blocked {
                    call: execution.call().clone(),
                    reason: reason.to_owned(),
                },
                _ => ToolEvent::Completed {
                    execution: execution.clone(),
                },
            },
        );
        Ok(execution)
    }

    fn passes(&self, _call: &ToolCall, scope: &ToolScope<'_>) -> bool {
        !scope.is_observed()
    }

    fn name(&self) -> &str {
        "ReportCalls"
    }
}
