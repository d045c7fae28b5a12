//! The `AgentDriver` contract and the `StepContext` drivers receive.

use std::sync::Arc;

use async_trait::async_trait;
use inference::ToolSchema;
use messages::Messages;
use tokio_util::sync::CancellationToken;

use crate::journal::{CallIntent, JournalError, StepJournal};
use crate::{
    AgentError, AgentEvent, AgentEvents, AgentState, AgentStep, ApprovalPolicy, CachedContext,
    Clock, PreviousCalls, SystemClock, ToolCallLimits, ToolContext, ToolExecution, ToolExecutions,
    ToolExecutor, ToolFailureKind, Tools,
};

/// What the loop gives a driver besides the state, tools and executor: the agent's fixed
/// request prefix ([`CachedContext`]: system prompt, tool choice, response format), the event
/// handle (drivers emit `InferenceRequested`/`InferenceResponded`, tool and text-delta events
/// through it), the execution's cancellation token (pass it to tools via
/// [`StepContext::tool_context`]), the agent's clock, and the run's
/// [`StepJournal`](crate::StepJournal) when a durable store gave one (drivers call the model
/// through [`StepContext::journaled_inference`] and run tools through
/// [`StepContext::run_tool_calls`], which consult it).
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
    /// What this step already did in an earlier, interrupted run (none outside durable
    /// sessions).
    pub journal: Option<Arc<dyn StepJournal>>,
    /// Whether the agent records contents on its spans (see
    /// [`Agent::with_content_capture`](crate::Agent::with_content_capture)).
    pub capture_content: bool,
    /// Which calls wait for a person's approval:
    /// [`run_tool_calls`](Self::run_tool_calls) does not run them (each gets a placeholder
    /// result, [`ToolFailureKind::AwaitingApproval`]) and the loop suspends the run.
    pub approval: ApprovalPolicy,
    /// The calls a person approved that run now (a resumed run's): one that a crash
    /// interrupted after it started is asked for again rather than reported interrupted.
    pub reapproval: ApprovalPolicy,
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
            journal: None,
            capture_content: false,
            approval: ApprovalPolicy::default(),
            reapproval: ApprovalPolicy::default(),
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

    /// A copy with this approval policy.
    pub fn with_approval_policy(mut self, policy: ApprovalPolicy) -> Self {
        self.approval = policy;
        self
    }

    /// A copy with this journal.
    pub fn with_journal(mut self, journal: Option<Arc<dyn StepJournal>>) -> Self {
        self.journal = journal;
        self
    }

    /// The model reply for the inference the driver names `key` within this step: the one
    /// the journal recorded in an interrupted run of the step (with its tool call ids), else
    /// `infer`'s, recorded before it is returned. Without a journal, just `infer`.
    ///
    /// Give `infer` everything that shapes the reply (ids for calls that came without one,
    /// calls recovered from text) so the recorded reply is the one the step used.
    ///
    /// # Errors
    /// `infer`'s error, or the journal's (the step must not go on without its record).
    pub async fn journaled_inference<F>(
        &self,
        key: &str,
        infer: F,
    ) -> Result<inference::InferenceResponse, AgentError>
    where
        F: std::future::Future<Output = Result<inference::InferenceResponse, AgentError>>,
    {
        let Some(journal) = &self.journal else {
            return infer.await;
        };
        if let Some(reply) = journal.recorded_reply(key).await? {
            tracing::debug!(
                key,
                "reusing the model reply recorded before an interruption"
            );
            return Ok(reply);
        }
        let reply = infer.await?;
        journal.record_reply(key, &reply).await?;
        Ok(reply)
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
    ///
    /// With a journal, a call whose result the journal holds is not run again (its recorded
    /// execution is used), and every other call's result is recorded as soon as it finishes.
    ///
    /// A call the [approval policy](Self::approval) holds does not run: its execution is a
    /// [`ToolFailureKind::AwaitingApproval`] placeholder (result
    /// [`AWAITING_APPROVAL_MESSAGE`](crate::AWAITING_APPROVAL_MESSAGE)), and the loop
    /// suspends the run once the step is recorded.
    ///
    /// # Errors
    /// Only the journal's: tool failures are failed executions, never errors.
    pub async fn run_tool_calls(
        &self,
        executor: &dyn ToolExecutor,
        calls: &[messages::ToolCall],
        tools: &Tools,
        tool_context: &ToolContext,
        parallel: bool,
    ) -> Result<ToolExecutions, AgentError> {
        if !self.approval.is_empty() && calls.iter().any(|c| self.approval.requires(c)) {
            let runnable: Vec<messages::ToolCall> = calls
                .iter()
                .filter(|c| !self.approval.requires(c))
                .cloned()
                .collect();
            let ran = Box::pin(self.without_approvals().run_tool_calls(
                executor,
                &runnable,
                tools,
                tool_context,
                parallel,
            ))
            .await?;
            let now = self.clock.now();
            let mut ran = ran.iter().cloned();
            return Ok(calls
                .iter()
                .filter_map(|call| {
                    if self.approval.requires(call) {
                        Some(ToolExecution::failure(
                            call.clone(),
                            ToolFailureKind::AwaitingApproval,
                            crate::AWAITING_APPROVAL_MESSAGE,
                            now,
                            now,
                        ))
                    } else {
                        ran.next()
                    }
                })
                .collect::<Vec<_>>()
                .into());
        }
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
            self.execute_journaled(executor, &to_run, tools, tool_context, parallel)
                .await?
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
        Ok(executions
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
            .into())
    }

    /// This context with no call held for approval (the held ones are set aside already, or
    /// were decided).
    pub(crate) fn without_approvals(&self) -> Self {
        let reapproval = if self.approval.is_empty() {
            self.reapproval.clone()
        } else {
            self.approval.clone()
        };
        Self {
            approval: ApprovalPolicy::default(),
            reapproval,
            ..self.clone()
        }
    }

    /// Runs `calls` through `executor`, or through the journal when there is one (a recorded
    /// result is reused, every other call recorded as it finishes).
    async fn execute_journaled(
        &self,
        executor: &dyn ToolExecutor,
        calls: &[messages::ToolCall],
        tools: &Tools,
        tool_context: &ToolContext,
        parallel: bool,
    ) -> Result<Vec<ToolExecution>, AgentError> {
        let Some(journal) = &self.journal else {
            return Ok(executor
                .execute(calls, tools, tool_context, parallel)
                .await
                .iter()
                .cloned()
                .collect());
        };
        let journal = journal.as_ref();
        if parallel {
            return futures::future::try_join_all(calls.iter().enumerate().map(|(index, call)| {
                self.journaled_call(journal, executor, index, call, tools, tool_context)
            }))
            .await;
        }
        let mut executions = Vec::with_capacity(calls.len());
        for (index, call) in calls.iter().enumerate() {
            executions.push(
                self.journaled_call(journal, executor, index, call, tools, tool_context)
                    .await?,
            );
        }
        Ok(executions)
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
            capture_content: self.capture_content,
            resumed: None,
            execution_id: state.execution().map(|e| Arc::from(e.id())),
            call_id: None,
        }
    }

    /// One call through the journal (it is the `index`-th of the calls the step runs
    /// through it): its recorded execution; or, when an interrupted run started it and did not
    /// finish it, a run again (read-only and idempotent tools), a placeholder asking a person
    /// again (a call that ran on a person's approval) or an "interrupted" result; or a fresh
    /// run, its intent recorded before it starts and its result as soon as it finishes.
    async fn journaled_call(
        &self,
        journal: &dyn StepJournal,
        executor: &dyn ToolExecutor,
        index: usize,
        call: &messages::ToolCall,
        tools: &Tools,
        tool_context: &ToolContext,
    ) -> Result<ToolExecution, AgentError> {
        let mut intent = CallIntent::new(index, call);
        let key = intent.key();
        if let Some(execution) = journal.recorded_tool_result(&key).await? {
            if !intent.same_call(&CallIntent::new(index, execution.call())) {
                return Err(JournalError::mismatch(format!(
                    "the result recorded for call `{}` at position {index} is of another call \
                     (`{}`)",
                    call.id(),
                    execution.name()
                ))
                .into());
            }
            tracing::debug!(
                call_id = call.id(),
                "reusing the tool result recorded before an interruption"
            );
            return Ok(execution);
        }
        if let Some(started) = journal.recorded_intent(&key).await? {
            if !intent.same_call(&started) {
                return Err(JournalError::mismatch(format!(
                    "the intent recorded for call `{}` at position {index} is of another call \
                     (`{}`)",
                    call.id(),
                    started.name
                ))
                .into());
            }
            let rerun = tools
                .get(call.name())
                .is_some_and(|tool| tool.effects().is_retry_safe());
            tracing::warn!(
                call_id = call.id(),
                tool = call.name(),
                attempt = started.attempt,
                rerun,
                "a call an interrupted run started and did not finish"
            );
            self.events
                .emit_tool_event_with(tool_context, || crate::ToolEvent::Interrupted {
                    call: call.clone(),
                    rerun,
                });
            if !rerun {
                let now = self.clock.now();
                if self.reapproval.requires(call) {
                    // Not recorded: the person decides again, and the decision starts afresh.
                    return Ok(ToolExecution::failure(
                        call.clone(),
                        ToolFailureKind::AwaitingApproval,
                        crate::AWAITING_APPROVAL_MESSAGE,
                        now,
                        now,
                    ));
                }
                let execution = ToolExecution::failure(
                    call.clone(),
                    ToolFailureKind::Interrupted,
                    crate::journal::INTERRUPTED_MESSAGE,
                    now,
                    now,
                );
                journal.record_tool_result(&key, &execution).await?;
                return Ok(execution);
            }
            intent.attempt = started.attempt.saturating_add(1);
        }
        journal.record_intent(&intent).await?;
        let executions = executor
            .execute(std::slice::from_ref(call), tools, tool_context, false)
            .await;
        let Some(execution) = executions.iter().next().cloned() else {
            return Err(AgentError::driver(format!(
                "the tool executor returned no execution for call `{}`",
                call.id()
            )));
        };
        journal.record_tool_result(&key, &execution).await?;
        Ok(execution)
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
