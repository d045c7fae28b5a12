//! The `AgentDriver` contract and the `StepContext` drivers receive.

use std::borrow::Cow;
use std::sync::Arc;

use async_trait::async_trait;
use futures::{StreamExt, TryStreamExt};
use inference::ToolSchema;
use messages::{Messages, SharedSlice};
use tokio_util::sync::CancellationToken;

use crate::cached_context::CachedContext;
use crate::clock::{Clock, SystemClock};
use crate::events::agent_event::AgentEvent;
use crate::events::agent_events::AgentEvents;
use crate::journal::StepJournal;
use crate::records::agent_error::AgentError;
use crate::records::agent_step::AgentStep;
use crate::records::tool_execution::{ToolExecution, ToolExecutions, ToolFailureKind};
use crate::state::agent_state::AgentState;
use crate::tools::approval_policy::ApprovalPolicy;
use crate::tools::executor::{ToolEvent, ToolExecutor};
use crate::tools::layer::{CallBatch, ToolLayers, ToolScope};
use crate::tools::limits::{PreviousCalls, ToolCallLimits};
use crate::tools::registry::Tools;
use crate::tools::stack::standard_tool_layers;
use crate::tools::tool::{StepHeldRuns, ToolContext};

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
///
/// The parts that belong to the agent (events, clock, approval policy, tool-call onion) are
/// borrowed from it for the step (`Cow::Borrowed`), not cloned: each clone wrote to a
/// reference count that every core running steps of one shared `Agent` writes to. A context
/// built with [`StepContext::new`] and the `with_*` methods owns them instead (it can be
/// `StepContext<'static>`).
#[derive(Clone, Debug)]
pub struct StepContext<'a> {
    /// Where to emit events.
    pub events: Cow<'a, AgentEvents>,
    /// Cancelled when the execution is cancelled.
    pub cancellation: CancellationToken,
    /// The agent's fixed request prefix.
    pub cached_context: Arc<CachedContext>,
    /// The agent's clock (tool executions are stamped with it).
    pub clock: Cow<'a, Arc<dyn Clock>>,
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
    pub approval: Cow<'a, ApprovalPolicy>,
    /// The tool-call onion every call of the step goes through before the executor
    /// ([`standard_tool_layers`](crate::tools::standard_tool_layers) and the agent's own).
    pub tool_layers: Cow<'a, ToolLayers>,
    /// The id the agent gives the step it records, made with the agent's id source: a
    /// driver passes it on ([`StepParts::id`](crate::StepParts::id)) so that no other id is
    /// made for the step. `None` outside an agent's step (the step gets a fresh uuid v7).
    pub step_id: Option<Arc<str>>,
    /// The suspended subagent runs this step's calls left (see `ToolContext::hold`).
    pub(crate) held: StepHeldRuns,
    /// Whether the calls run now were decided by a person (a suspended step resuming).
    pub(crate) decided: bool,
    /// The most prompt tokens one request of the step took (see [`LargestRequest`]).
    pub(crate) largest_request: LargestRequest,
}

/// The most prompt tokens one model request of a step took, as its reply's usage counts them
/// ([`inference::Usage::prompt_tokens`]), noted by [`StepContext::journaled_inference`]. A
/// driver that asks again within a step (a nudge, an empty reply) adds the replies' usage up
/// for the step's cost; what a single request took of the model's context window is this.
///
/// A copy (`Clone`) starts from the value so far and notes on its own: the loop reads the
/// context it gave the driver, so a request made through a copy of the [`StepContext`] is not
/// seen here and the warning falls back to the step's summed usage (see
/// `check_context_window`). Decided so: sharing one cell across copies, as [`StepHeldRuns`]
/// does, would allocate on every step (each step asks the model), for a copy no driver of
/// ours makes.
#[derive(Debug, Default)]
pub(crate) struct LargestRequest(std::sync::atomic::AtomicU64);

impl LargestRequest {
    /// Notes a request of `tokens` prompt tokens.
    fn saw(&self, tokens: u64) {
        self.0
            .fetch_max(tokens, std::sync::atomic::Ordering::Relaxed);
    }

    /// The most prompt tokens one request took; 0 when no reply came through
    /// [`StepContext::journaled_inference`].
    pub(crate) fn tokens(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Clone for LargestRequest {
    fn clone(&self) -> Self {
        Self(std::sync::atomic::AtomicU64::new(self.tokens()))
    }
}

impl Default for StepContext<'_> {
    fn default() -> Self {
        Self::new(AgentEvents::new())
    }
}

impl StepContext<'_> {
    /// A context with these events, a fresh cancellation token, no request prefix and the
    /// system clock.
    pub fn new(events: AgentEvents) -> Self {
        Self {
            events: Cow::Owned(events),
            cancellation: CancellationToken::new(),
            cached_context: Arc::default(),
            clock: Cow::Owned(Arc::new(SystemClock) as Arc<dyn Clock>),
            tool_limits: ToolCallLimits::default(),
            previous_calls: Arc::default(),
            journal: None,
            capture_content: false,
            approval: Cow::Owned(ApprovalPolicy::default()),
            tool_layers: Cow::Owned(standard_tool_layers()),
            step_id: None,
            held: StepHeldRuns::default(),
            decided: false,
            largest_request: LargestRequest::default(),
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
        self.approval = Cow::Owned(policy);
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
    /// calls recovered from text) so the recorded reply is the one the step used. The
    /// reply's prompt tokens are what the loop's context-window warning reads.
    ///
    /// # Errors
    /// `infer`'s error, or the journal's (the step must not go on without its record).
    pub async fn journaled_inference<F>(
        &self,
        key: &str,
        infer: F,
    ) -> Result<inference::InferenceResponse, AgentError>
    where
        F: std::future::Future<Output = Result<inference::InferenceResponse, AgentError>> + Send,
    {
        let response = match &self.journal {
            None => infer.await?,
            Some(journal) => journal.journaled_reply(key, Box::pin(infer)).await?,
        };
        self.largest_request.saw(response.usage().prompt_tokens());
        Ok(response)
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
        self.clock = Cow::Owned(clock);
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
    pub fn tool_schemas(&self, tools: &Tools) -> SharedSlice<ToolSchema> {
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
                (Some(ToolFailureKind::Blocked), Some(reason)) => ToolEvent::Blocked {
                    call: execution.call().clone(),
                    reason: reason.to_owned(),
                },
                _ => ToolEvent::Completed {
                    execution: execution.clone(),
                },
            };
            self.events.emit_tool_event(tool_context, event);
        }
    }

    /// Runs `calls` through the agent's tool-call onion ([`tool_layers`](Self::tool_layers),
    /// see [`standard_tool_layers`](crate::tools::standard_tool_layers)) and then `executor`,
    /// concurrently when `parallel` is true (at most the executor's
    /// [`max_concurrency`](ToolExecutor::max_concurrency) at once). Every driver runs its
    /// tools through this, so every layer holds for every tool: a call the approval policy
    /// names waits (a [`ToolFailureKind::AwaitingApproval`] placeholder, and the loop suspends
    /// the run), an identical call made too often is refused quoting the earlier result, each
    /// result the model sees is cut to the output limit with a note, and with a journal a call
    /// finished before a crash is not run again.
    ///
    /// The onion reports each call ([`ReportCalls`](crate::tools::ReportCalls)):
    /// `ToolCallStarted` as it enters, then `ToolCallCompleted` (or `ToolCallBlocked` for a
    /// call a hook refused) as it ends, with the whole result; a held call is reported when
    /// it runs.
    ///
    /// # Errors
    /// Only a layer's (the journal's): tool failures are failed executions, never errors.
    pub async fn run_tool_calls(
        &self,
        executor: &dyn ToolExecutor,
        calls: &[messages::ToolCall],
        tools: &Tools,
        tool_context: &ToolContext,
        parallel: bool,
    ) -> Result<ToolExecutions, AgentError> {
        let batch = CallBatch::new(
            self.journal.clone(),
            Arc::clone(&self.previous_calls),
            self.decided,
            calls.len(),
        );
        let report = |event: ToolEvent| self.events.emit_tool_event(tool_context, event);
        let observed = self.events.is_observed();
        let run = |(position, call): (usize, &messages::ToolCall)| {
            let scope = ToolScope {
                tools,
                context: tool_context,
                limits: self.tool_limits,
                approval: &self.approval,
                batch: &batch,
                report: &report,
                observed,
                position,
            };
            let call = call.clone();
            async move { self.tool_layers.run(call, &scope, executor).await }
        };
        let executions: Vec<ToolExecution> = if parallel && calls.len() > 1 {
            let runs = calls.iter().enumerate().map(run);
            match executor.max_concurrency() {
                Some(limit) => {
                    futures::stream::iter(runs)
                        .buffered(limit.max(1))
                        .try_collect()
                        .await?
                }
                None => futures::future::try_join_all(runs).await?,
            }
        } else {
            let mut executions = Vec::with_capacity(calls.len());
            for call in calls.iter().enumerate() {
                executions.push(run(call).await?);
            }
            executions
        };
        Ok(ToolExecutions::from(executions))
    }

    /// This context for the decided calls of a suspended step: the calls the approval policy
    /// holds run now (a person decided them).
    pub(crate) fn for_decided_calls(&self) -> Self {
        Self {
            decided: true,
            ..self.clone()
        }
    }

    /// The tool context for the step `state` is about to record, carrying this execution's
    /// cancellation token and clock.
    pub fn tool_context(&self, state: &AgentState) -> ToolContext {
        ToolContext {
            agent_id: Arc::clone(state.shared_agent_id()),
            parent_agent_id: state.shared_parent_agent_id().cloned(),
            step_number: state.next_step_number(),
            metadata: state.metadata().clone(),
            cancellation: self.cancellation.clone(),
            clock: Arc::clone(&*self.clock),
            capture_content: self.capture_content,
            resumed: None,
            execution_id: state.execution().map(|e| Arc::clone(e.shared_id())),
            call_id: None,
            output_limit: self.tool_limits.output_limit,
            earlier_steps: state.step_executions().clone(),
            held: self.held.shared(),
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
        context: &StepContext<'_>,
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
        _context: &StepContext<'_>,
    ) -> Result<Option<inference::InferenceResponse>, AgentError> {
        Ok(None)
    }
}
