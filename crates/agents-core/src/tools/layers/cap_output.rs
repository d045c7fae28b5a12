//! [`CapOutput`]: what the model sees of a result is cut to the output limit, with a note.

use async_trait::async_trait;
use messages::ToolCall;

use crate::records::agent_error::AgentError;
use crate::records::tool_execution::ToolExecution;
use crate::tools::layer::{NextTool, ToolLayer, ToolScope};
use crate::tools::limits::cap_output;

/// Cuts the result (or error message) of a call to
/// [`ToolCallLimits::output_limit`](crate::ToolCallLimits) characters and says what was left
/// out, with the tool's own advice on reading the rest
/// ([`Tool::truncation_hint`](crate::Tool::truncation_hint)). It stands outside the journal,
/// so a result reused after a crash is cut the same way as a fresh one, and outside the
/// reporting, so listeners see the whole result.
#[derive(Clone, Copy, Debug, Default)]
pub struct CapOutput;

#[async_trait]
impl ToolLayer for CapOutput {
    async fn call(
        &self,
        call: ToolCall,
        scope: &ToolScope<'_>,
        next: NextTool<'_>,
    ) -> Result<ToolExecution, AgentError> {
        let limit = scope.limits().output_limit;
        let execution = next.run(call, scope).await?;
        let hint = limit.and_then(|shown| {
            scope
                .tool(execution.name())
                .and_then(|tool| tool.truncation_hint(execution.arguments(), shown))
        });
        Ok(cap_output(execution, limit, hint))
    }

    fn passes(&self, _call: &ToolCall, scope: &ToolScope<'_>) -> bool {
        scope.limits().output_limit.is_none()
    }

    fn name(&self) -> &str {
        "CapOutput"
    }
}
