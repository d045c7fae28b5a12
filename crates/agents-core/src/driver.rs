//! The `AgentDriver` contract and the `StepContext` drivers receive.

use std::sync::Arc;

use async_trait::async_trait;
use inference::ToolSchema;
use messages::Messages;
use tokio_util::sync::CancellationToken;

use crate::{
    AgentError, AgentEvent, AgentEvents, AgentState, AgentStep, CachedContext, Clock,
    PreviousCalls, SystemClock, ToolCallLimits, ToolContext, ToolExecutions, ToolExecutor,
    ToolFailureKind, Tools,
};

/// What the loop gives a driver besides the state, tools and executor: the agent's fixed
/// request prefix ([`CachedContext`]: system prompt, tool choice, response format), the event
/// handle (drivers emit `InferenceRequested`/`InferenceResponded`, tool and text-delta events
/// through it), the execution's cancellation token (pass it to tools via
/// [`StepContext::tool_context`]) and the agent's clock.
///
/// This is the one deviation from the indicative `next_step(state, tools, executor)` signature:
/// a fourth argument that can grow without breaking drivers.
#[derive(Clone, Debug)]
pub struct StepContext {
    /// Where to emit events.
    pub events: AgentEvents,
    /// Cancelled when the execution is cancelled.
    pub cancellation: CancellationToken,
    /// The agent's fixed request prefix.
    pub cached_context: Arc<CachedContext>,
    /// The agent's clock (tool executions are stamped with it).
    pub clock: Arc<dyn Clock>,
    /// The limits on every tool call (output cap, repeated calls).
    pub tool_limits: ToolCallLimits,
    /// The calls made earlier in this execution (for the repeated-call limit).
    pub previous_calls: Arc<PreviousCalls>,
}

impl Default for StepContext {
    fn default() -> Self {
        Self::new(AgentEvents::new())
    }
}

impl StepContext {
    /// A context with these events, a fresh cancellation token, no request prefix and the
    /// system clock.
    pub fn new(events: AgentEvents) -> Self {
        Self {
            events,
            cancellation: CancellationToken::new(),
            cached_context: Arc::default(),
            clock: Arc::new(SystemClock),
            tool_limits: ToolCallLimits::default(),
            previous_calls: Arc::default(),
        }
    }

    /// A copy with these tool-call limits.
    pub fn with_tool_limits(mut self, limits: ToolCallLimits) -> Self {
        self.tool_limits = limits;
        self
    }

    /// Awaits `future` unless the execution is cancelled first: then
    /// [`AgentError::Cancelled`] (the future is dropped, e.g. a model request in flight).
    /// Drivers wrap their model calls in it.
    ///
    /// # Errors
    /// [`AgentError::Cancelled`] when the token fires first; otherwise the future's own error.
    pub async fn until_cancelled<T, E>(
        &self,
        future: impl std::future::Future<Output = Result<T, E>>,
    ) -> Result<T, AgentError>
    where
        AgentError: From<E>,
    {
        tokio::select! {
            biased;
            () = self.cancellation.cancelled() => Err(AgentError::Cancelled),
            result = future => result.map_err(AgentError::from),
        }
    }

    /// A copy with this cancellation token.
    pub fn with_cancellation(mut self, cancellation: CancellationToken) -> Self {
        self.cancellation = cancellation;
        self
    }

    /// A copy with this request prefix.
    pub fn with_cached_context(mut self, cached_context: impl Into<Arc<CachedContext>>) -> Self {
        self.cached_context = cached_context.into();
        self
    }

    /// A copy with this clock.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// What a driver sends: the request prefix's messages (the system prompt) followed by
    /// [`AgentState::messages_for_inference`].
    pub fn prompt_messages(&self, state: &AgentState) -> Messages {
        self.cached_context
            .messages
            .concat(&state.messages_for_inference())
    }

    /// The tool schemas to offer: the registry's when it has tools (they are the ones the
    /// executor can run), else the request prefix's.
    pub fn tool_schemas(&self, tools: &Tools) -> Arc<[ToolSchema]> {
        self.cached_context.tool_schemas(tools)
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

    /// Runs `calls` through `executor` under the agent's [`ToolCallLimits`] and reports them:
    /// `ToolCallStarted` for each call before they run, then `ToolCallCompleted` (or
    /// `ToolCallBlocked` for calls a hook refused) for each execution, in call order, with the
    /// full output. Every driver runs its tools through this, so the limits hold for every
    /// tool: an identical call made too often is refused (a tool error quoting the earlier
    /// result), and each result the model sees is cut to the output limit with a note.
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
        let screened = crate::tools::screen_repeats(
            calls,
            &self.previous_calls,
            self.tool_limits.repeated_call_limit,
            self.clock.now(),
        );
        let to_run: Vec<messages::ToolCall> = screened
            .iter()
            .filter_map(|call| call.as_ref().ok().cloned())
            .collect();
        let mut ran = if to_run.is_empty() {
            Vec::new()
        } else {
            executor
                .execute(&to_run, tools, tool_context, parallel)
                .await
                .iter()
                .cloned()
                .collect()
        }
        .into_iter();
        let executions: ToolExecutions = screened
            .into_iter()
            .filter_map(|screened| match screened {
                Ok(_) => ran.next(),
                Err(refused) => Some(*refused),
            })
            .collect::<Vec<_>>()
            .into();
        self.emit_tool_executions(tool_context, &executions);
        let limit = self.tool_limits.output_limit;
        executions
            .iter()
            .cloned()
            .map(|execution| {
                let hint = limit.and_then(|shown| {
                    tools
                        .get(execution.name())
                        .and_then(|tool| tool.truncation_hint(execution.arguments(), shown))
                });
                crate::tools::cap_output(execution, limit, hint)
            })
            .collect::<Vec<_>>()
            .into()
    }

    /// The tool context for the step `state` is about to record, carrying this execution's
    /// cancellation token and clock.
    pub fn tool_context(&self, state: &AgentState) -> ToolContext {
        ToolContext {
            agent_id: Arc::clone(state.shared_agent_id()),
            parent_agent_id: state.shared_parent_agent_id().cloned(),
            step_number: state.step_count() + 1,
            metadata: state.metadata().clone(),
            cancellation: self.cancellation.clone(),
            clock: Arc::clone(&self.clock),
        }
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

    /// One inference without tools on `input` (what the model saw, its last tool calls and
    /// results, and an instruction to answer now): the answer the loop appends when an
    /// execution stops without one ([`AnswerOnStop::Synthesize`](crate::AnswerOnStop)).
    /// `Ok(None)` when this driver cannot (the default): the loop appends a notice instead.
    ///
    /// # Errors
    /// Whatever the model reports; the loop then appends a notice.
    async fn answer_without_tools(
        &self,
        _input: Messages,
        _context: &StepContext,
    ) -> Result<Option<inference::InferenceResponse>, AgentError> {
        Ok(None)
    }
}
