//! [`HoldForApproval`]: a call the approval policy names does not run until a person decides.

use async_trait::async_trait;
use messages::ToolCall;

use crate::records::agent_error::AgentError;
use crate::records::tool_execution::{ToolExecution, ToolFailureKind};
use crate::state::pending_approval::AWAITING_APPROVAL_MESSAGE;
use crate::tools::layer::{NextTool, ToolLayer, ToolScope};

/// Holds a call that needs a person's approval ([`ToolScope::approval`]): it does not run,
/// and its execution is a [`ToolFailureKind::AwaitingApproval`] placeholder whose result
/// ([`AWAITING_APPROVAL_MESSAGE`]) keeps the history valid for every provider while the run
/// is suspended. The decided calls of a resuming run pass ([`ToolScope::is_decided`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct HoldForApproval;

#[async_trait]
impl ToolLayer for HoldForApproval {
    async fn call(
        &self,
        call: ToolCall,
        scope: &ToolScope<'_>,
        next: NextTool<'_>,
    ) -> Result<ToolExecution, AgentError> {
        if !scope.is_decided() && scope.approval().requires(&call) {
            return Ok(scope.refusal(
                call,
                ToolFailureKind::AwaitingApproval,
                AWAITING_APPROVAL_MESSAGE,
            ));
        }
        next.run(call, scope).await
    }

    fn passes(&self, call: &ToolCall, scope: &ToolScope<'_>) -> bool {
        scope.is_decided() || !scope.approval().requires(call)
    }

    fn name(&self) -> &str {
        "HoldForApproval"
    }
}
