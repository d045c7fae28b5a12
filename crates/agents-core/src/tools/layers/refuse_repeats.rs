//! [`RefuseRepeats`]: the same call made too often in one execution is not run again.

use async_trait::async_trait;
use messages::ToolCall;

use crate::records::agent_error::AgentError;
use crate::records::tool_execution::{ToolExecution, ToolFailureKind};
use crate::tools::layer::{NextTool, ToolLayer, ToolScope};
use crate::tools::limits::repeat_refusal;

/// Refuses the n-th identical call (same tool, same arguments as canonical JSON) of an
/// execution, n being [`ToolCallLimits::repeated_call_limit`](crate::ToolCallLimits); calls
/// earlier in the same reply count too. The refusal is a [`ToolFailureKind::Repeated`] tool
/// error quoting the earlier result, so the model can use it instead; the loop stops the
/// execution (`StopReason::RepeatedToolCalls`) when the model persists.
#[derive(Clone, Copy, Debug, Default)]
pub struct RefuseRepeats;

#[async_trait]
impl ToolLayer for RefuseRepeats {
    async fn call(
        &self,
        call: ToolCall,
        scope: &ToolScope<'_>,
        next: NextTool<'_>,
    ) -> Result<ToolExecution, AgentError> {
        let Some(limit) = scope.limits().repeated_call_limit else {
            return next.run(call, scope).await;
        };
        let (count, earlier) = scope.count_repeat(&call);
        if count + 1 < limit {
            return next.run(call, scope).await;
        }
        let message = repeat_refusal(count, earlier);
        Ok(scope.refusal(call, ToolFailureKind::Repeated, message))
    }

    fn passes(&self, _call: &ToolCall, scope: &ToolScope<'_>) -> bool {
        // As `call`: no limit, or the first call of the execution under a limit above one.
        match scope.limits().repeated_call_limit {
            None => true,
            Some(limit) => scope.is_first_call() && 1 < limit,
        }
    }

    fn name(&self) -> &str {
        "RefuseRepeats"
    }
}
