//! Running a step's tool calls through the executor and reporting them as events.

use agents_core::{
    StepContext, ToolContext, ToolEvent, ToolExecutions, ToolExecutor, ToolFailureKind, Tools,
};
use messages::ToolCall;

/// Runs `calls` through `executor` and reports each one through the step's events:
/// `ToolCallStarted` before the calls run, then `ToolCallCompleted` (or `ToolCallBlocked` for
/// calls a hook refused) for each execution, in call order.
pub async fn run_tool_calls(
    executor: &dyn ToolExecutor,
    calls: &[ToolCall],
    tools: &Tools,
    tool_context: &ToolContext,
    parallel: bool,
    context: &StepContext,
) -> ToolExecutions {
    for call in calls {
        context
            .events
            .emit_tool_event(tool_context, ToolEvent::Started { call: call.clone() });
    }
    let executions = executor.execute(calls, tools, tool_context, parallel).await;
    for execution in &executions {
        let event = match execution.failure_kind() {
            Some(ToolFailureKind::Blocked) => ToolEvent::Blocked {
                call: execution.call().clone(),
                reason: execution.error_message().unwrap_or_default().to_owned(),
            },
            _ => ToolEvent::Completed {
                execution: execution.clone(),
            },
        };
        context.events.emit_tool_event(tool_context, event);
    }
    executions
}
