//! The `AgentDriver` contract and the `StepContext` drivers receive.

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::{
    AgentError, AgentEvent, AgentEvents, AgentState, AgentStep, ToolContext, ToolExecutions,
    ToolExecutor, ToolFailureKind, Tools,
};

/// What the loop gives a driver besides the state, tools and executor: the event handle
/// (drivers emit `InferenceRequested`/`InferenceResponded`, tool and text-delta events through
/// it) and the execution's cancellation token (pass it to tools via
/// [`StepContext::tool_context`]).
///
/// This is the one deviation from the indicative `next_step(state, tools, executor)` signature:
/// a fourth argument that can grow without breaking drivers.
#[derive(Clone, Debug, Default)]
pub struct StepContext {
    /// Where to emit events.
    pub events: AgentEvents,
    /// Cancelled when the execution is cancelled.
    pub cancellation: CancellationToken,
}

impl StepContext {
    /// A context with these events and a fresh cancellation token.
    pub fn new(events: AgentEvents) -> Self {
        Self {
            events,
            cancellation: CancellationToken::new(),
        }
    }

    /// A copy with this cancellation token.
    pub fn with_cancellation(mut self, cancellation: CancellationToken) -> Self {
        self.cancellation = cancellation;
        self
    }

    /// Emits an event.
    pub fn emit(&self, event: AgentEvent) {
        self.events.emit(event);
    }

    /// Builds the event with `make` and emits it only when someone observes events (see
    /// [`AgentEvents::emit_with`]).
    pub fn emit_with(&self, make: impl FnOnce() -> AgentEvent) {
        self.events.emit_with(make);
    }

    /// Emits `ToolCallCompleted` for each execution (`ToolCallBlocked` for calls a hook
    /// refused), for drivers whose executor does not report to the agent's events itself.
    pub fn emit_tool_executions(&self, tool_context: &ToolContext, executions: &ToolExecutions) {
        if !self.events.is_observed() {
            return;
        }
        for execution in executions {
            let event = match (execution.failure_kind(), execution.error_message()) {
                (Some(ToolFailureKind::Blocked), Some(reason)) => crate::ToolEvent::Blocked {
                    call: execution.call().clone(),
                    reason: reason.to_owned(),
                },
                _ => crate::ToolEvent::Completed {
                    execution: execution.clone(),
                },
            };
            self.events.emit_tool_event(tool_context, event);
        }
    }

    /// Runs `calls` through `executor` and reports them: `ToolCallStarted` for each call before
    /// they run, then `ToolCallCompleted` (or `ToolCallBlocked` for calls a hook refused) for
    /// each execution, in call order. Every driver runs its tools through this.
    pub async fn run_tool_calls(
        &self,
        executor: &dyn ToolExecutor,
        calls: &[messages::ToolCall],
        tools: &Tools,
        tool_context: &ToolContext,
        parallel: bool,
    ) -> ToolExecutions {
        for call in calls {
            self.events
                .emit_tool_event_with(tool_context, || crate::ToolEvent::Started {
                    call: call.clone(),
                });
        }
        let executions = executor.execute(calls, tools, tool_context, parallel).await;
        self.emit_tool_executions(tool_context, &executions);
        executions
    }

    /// The tool context for `state`'s running step, carrying this execution's cancellation token.
    pub fn tool_context(&self, state: &AgentState) -> ToolContext {
        state.tool_context_with(self.cancellation.clone())
    }
}

/// Produces the next step: calls the model, runs the tools it asks for (through `executor`)
/// and returns an [`AgentStep`] with trace and response messages kept apart.
///
/// Drivers do not touch the state: the loop records the step, evaluates continuation and the
/// processors decide which messages persist.
#[async_trait]
pub trait AgentDriver: Send + Sync {
    /// Runs one step.
    ///
    /// # Errors
    /// An [`AgentError`] when no step could be produced (provider failure, invalid model output
    /// the driver could not recover from). The loop records it as a failure step and applies
    /// the [`ErrorPolicy`](crate::ErrorPolicy).
    async fn next_step(
        &self,
        state: &AgentState,
        tools: &Tools,
        executor: &dyn ToolExecutor,
        context: &StepContext,
    ) -> Result<AgentStep, AgentError>;
}
