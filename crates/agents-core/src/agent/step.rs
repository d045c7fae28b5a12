//! Where a step happens: [`Agent::step`], and the two ways of repeating it, [`Agent::iterate`]
//! and [`Agent::execute`]. This file is the whole loop; read it top to bottom.
//!
//! ```text
//! step(state):                                   inside an `invoke_agent {name}` span
//!   suspended, every waiting call decided?     resume: the approved calls run through
//!                       run_tool_calls (hooks, limits, timeouts, journal), rejected ones get
//!                       a tool error, placeholders become results, the step gets its verdict
//!   finished already or still waiting?         return it unchanged
//!   no execution yet?   start one: Execution{id, started_at}, before-execution hooks,
//!                       ExecutionStarted; the criteria may stop it before any step
//!   cancelled?          finish: Failed, user_requested (and a notice answer)
//!   StepStarted, before-step hooks
//!   processors.run(state, terminal)               the onion, outermost layer first
//!     terminal: step = driver.next_step(..)       (a driver error is a failure step;
//!                                                  tool-call limits hold in run_tool_calls)
//!               record it, priced (the agent's catalog) and checked against the context
//!               window; calls held for approval (placeholder results)?  the run is
//!               Suspended and the verdict waits for the decisions; otherwise
//!               outcome = criteria (+ error policy, repeated calls, cost limit,
//!               cancellation, stop hooks), decided once
//!   a layer returns without running the step: a guard stop is recorded right there, so
//!   the layers outside it see a recorded, stopping step
//!   a layer that failed: record a failure step on the state the step began with
//!   after-step hooks, StepCompleted (suspended: ApprovalRequested, return)
//!   the recorded outcome says stop?  finish: Completed (Failed on error or cancellation),
//!                                    an answer if the execution has none (AnswerOnStop),
//!                                    after-execution hooks, ExecutionCompleted / Failed
//! ```

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use futures::Stream;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use messages::Message;

use crate::agent::agent::Agent;
use crate::agent::answer_on_stop;
use crate::agent::hooks::{run_state_hooks, StopDecision};
use crate::cached_context::CachedContext;
use crate::continuation::criteria::error_policy_criterion::ErrorPolicyCriterion;
use crate::continuation::criterion::ContinuationCriterion;
use crate::driver::StepContext;
use crate::events::agent_event::{AgentEvent, EventSource};
use crate::processing::{StepFuture, StepTerminal};
use crate::records::agent_error::AgentError;
use crate::records::agent_status::AgentStatus;
use crate::records::agent_step::AgentStep;
use crate::records::answer_on_stop::AnswerOnStop;
use crate::records::cost::RunCost;
use crate::records::decision::StopReason;
use crate::records::evaluation::ContinuationEvaluation;
use crate::records::outcome::ContinuationOutcome;
use crate::records::step_execution::StepExecution;
use crate::records::tool_execution::{ToolExecution, ToolExecutions, ToolFailureKind};
use crate::state::agent_state::{AgentState, Execution};
use crate::state::approvals;
use crate::state::pending_approval::{ApprovalVerdict, PendingApproval};
use crate::telemetry;
use crate::tools::limits::PreviousCalls;
use crate::tools::tool::HeldRuns;

impl Agent {
    /// Advances `state` by exactly one step.
    ///
    /// Starts the execution when the state has none (before-execution hooks,
    /// `ExecutionStarted`), runs the step through the processors and the driver, records it
    /// with its continuation outcome, and finishes the execution when that outcome says stop
    /// (final status, after-execution hooks, `ExecutionCompleted`/`ExecutionFailed`). A state
    /// that is not `InProgress` comes back unchanged.
    ///
    /// The returned state is all there is: serialize it, stop the process, load it elsewhere
    /// and pass it to `step` on an agent built the same way, and the run continues exactly as
    /// if it had never been interrupted.
    ///
    /// # Errors
    /// None today: failures are recorded in the state (a failure step, then the error policy
    /// decides). The `Result` leaves room for states the loop cannot run.
    pub async fn step(&self, state: AgentState) -> Result<AgentState, AgentError> {
        self.step_cancellable(state, &CancellationToken::new())
            .await
    }

    /// [`Agent::step`] that gives up when `token` is cancelled: a step not begun yet is not
    /// begun, and a running one is dropped (nothing of it is recorded, so the conversation
    /// holds no tool call without its result); the execution finishes `Failed` with stop
    /// reason `user_requested`. The token also reaches tools through their context.
    ///
    /// # Errors
    /// As [`Agent::step`].
    pub async fn step_cancellable(
        &self,
        state: AgentState,
        token: &CancellationToken,
    ) -> Result<AgentState, AgentError> {
        self.step_with(state, &StepOptions::new().with_cancellation(token.clone()))
            .await
    }

    /// [`Agent::step`] with per-run options: [`Agent::step_cancellable`]'s cancellation and
    /// a [`StepJournal`](crate::StepJournal) that the drivers and
    /// [`StepContext::run_tool_calls`](crate::StepContext::run_tool_calls) consult, so a step
    /// re-run after a crash reuses the model reply and the tool results the interrupted run
    /// recorded (durable sessions give one per step).
    ///
    /// # Errors
    /// As [`Agent::step`].
    pub async fn step_with(
        &self,
        state: AgentState,
        options: &StepOptions,
    ) -> Result<AgentState, AgentError> {
        // Nothing to do for a finished run or one still waiting for decisions (a decided
        // suspended run resumes: `step_in_span`).
        if state.status() != AgentStatus::InProgress
            && !(state.status() == AgentStatus::Suspended && state.approvals_decided())
        {
            return Ok(state);
        }
        // One `invoke_agent` span per step call (see `crate::telemetry` for why not one per
        // execution); the driver's chat spans and the tool spans nest under it.
        let span = telemetry::invoke_agent_span(&self.telemetry.name, &state);
        let result = self
            .step_in_span(state, options)
            .instrument(span.clone())
            .await;
        if let Ok(state) = &result {
            telemetry::record_step(&span, state, self.telemetry.capture_content);
        }
        result
    }

    async fn step_in_span(
        &self,
        state: AgentState,
        options: &StepOptions,
    ) -> Result<AgentState, AgentError> {
        let token = &options.cancellation;
        match state.status() {
            AgentStatus::InProgress => {}
            AgentStatus::Suspended if state.approvals_decided() => {
                return self.resume(state, options).await;
            }
            _ => return Ok(state),
        }
        let state = if state.execution().is_none() {
            match self.start(state, options) {
                Started::Running(state) => state,
                Started::Stopped(state, reason) => {
                    return Ok(self.finish(state, reason, token).await)
                }
            }
        } else {
            state
        };
        if token.is_cancelled() {
            return Ok(self.finish(state, StopReason::UserRequested, token).await);
        }

        self.events.emit_with(|| AgentEvent::StepStarted {
            source: EventSource::step(&state),
            message_count: state.messages_for_inference().len(),
        });
        let state = run_state_hooks(&self.hooks.before_step, state);
        let started_at = self.clock.now();
        // Kept (a reference count) to record a failed or cancelled step on.
        let began = state.clone();
        let terminal = Terminal::new(self, options);
        let chain = self
            .processors
            .run(state, &terminal, Arc::clone(&self.cached_context));
        let state = match chain.await {
            Ok(state) => state,
            Err(error) => {
                let step = failure_step(&began_input(&terminal, &began), &error);
                self.record(began, step, started_at, token, &HeldRuns::default())
            }
        };
        let state = run_state_hooks(&self.hooks.after_step, state);
        self.emit_step_completed(&state);
        if state.status() == AgentStatus::Suspended {
            self.emit_approvals_requested(&state);
            return Ok(state);
        }

        match state.continuation_outcome() {
            Some(outcome) if !outcome.should_continue() => {
                let reason = outcome.stop_reason().unwrap_or(StopReason::Completed);
                Ok(self.finish(state, reason, token).await)
            }
            _ => Ok(state),
        }
    }

    /// Runs the agent step by step: [`Agent::step`] repeated while the status is
    /// `InProgress`, one item per step (the last one has the final status; a state that is
    /// not `InProgress` gives one item, itself).
    ///
    /// Dropping the stream stops the execution; no task keeps running.
    pub fn iterate(
        &self,
        state: AgentState,
    ) -> impl Stream<Item = Result<AgentState, AgentError>> + Send + 'static {
        self.iterate_cancellable(state, CancellationToken::new())
    }

    /// [`Agent::iterate`] with [`Agent::step_cancellable`]'s cancellation.
    pub fn iterate_cancellable(
        &self,
        state: AgentState,
        token: CancellationToken,
    ) -> impl Stream<Item = Result<AgentState, AgentError>> + Send + 'static {
        let agent = self.clone();
        futures::stream::unfold(Some(state), move |state| {
            let agent = agent.clone();
            let token = token.clone();
            async move {
                let state = state?;
                let item = agent.step_cancellable(state, &token).await;
                let next = match &item {
                    Ok(state) if state.status() == AgentStatus::InProgress => Some(state.clone()),
                    _ => None,
                };
                Some((item, next))
            }
        })
    }

    /// Runs the agent until it stops and returns the final state: the last item of
    /// [`Agent::iterate`].
    ///
    /// # Errors
    /// As [`Agent::step`]; step failures are recorded in the state (status `Failed`, stop
    /// reason `error`) rather than returned.
    pub async fn execute(&self, state: AgentState) -> Result<AgentState, AgentError> {
        self.execute_cancellable(state, CancellationToken::new())
            .await
    }

    /// [`Agent::execute`] with [`Agent::step_cancellable`]'s cancellation.
    ///
    /// # Errors
    /// As [`Agent::step`].
    pub async fn execute_cancellable(
        &self,
        mut state: AgentState,
        token: CancellationToken,
    ) -> Result<AgentState, AgentError> {
        loop {
            state = self.step_cancellable(state, &token).await?;
            if state.status() != AgentStatus::InProgress {
                return Ok(state);
            }
        }
    }

    // ----- the parts of a step, in the order they happen ---------------------------------------

    /// Starts an execution; the criteria may stop it before its first step.
    fn start(&self, state: AgentState, options: &StepOptions) -> Started {
        let id = match &options.execution_id {
            Some(id) => Arc::clone(id),
            None => self.ids.new_id(),
        };
        let execution = Execution::new(id, self.clock.now());
        let state = run_state_hooks(&self.hooks.before_execution, state.started(execution));
        self.events.emit_with(|| AgentEvent::ExecutionStarted {
            source: EventSource::execution(&state),
            message_count: state.messages().len(),
            tool_count: self.tools.len(),
        });
        if state.step_count() > 0 {
            return Started::Running(state);
        }
        let outcome = self.criteria.evaluate_all(&state);
        self.events.emit_with(|| AgentEvent::ContinuationEvaluated {
            source: EventSource::execution(&state),
            outcome: outcome.clone(),
        });
        if outcome.should_continue() {
            Started::Running(state)
        } else {
            let reason = outcome.stop_reason().unwrap_or(StopReason::Completed);
            Started::Stopped(state, reason)
        }
    }

    /// Records `step` (begun at `started_at`) and the verdict on it: the criteria, the error
    /// policy when the step failed, the repeated-call limit, the cancellation, and the stop
    /// hooks when the verdict is to stop.
    fn record(
        &self,
        state: AgentState,
        step: AgentStep,
        started_at: DateTime<Utc>,
        token: &CancellationToken,
        held: &HeldRuns,
    ) -> AgentState {
        let completed_at = self.clock.now().max(started_at);
        let number = state.step_count() + 1;
        let step = self.priced(step).with_id(&*self.ids.new_id());
        self.check_context_window(&state, &step, number);
        let pending = ContinuationOutcome::from_evaluations(Vec::new());
        let state = state.recorded(StepExecution::new(
            step,
            pending,
            started_at,
            completed_at,
            number,
        ));
        let held = self.held_calls(&state, held);
        if !held.is_empty() {
            // The step is not over until its held calls are decided: its verdict waits for
            // them (`resume`), and the run is suspended.
            let outcome = ContinuationOutcome::from_evaluation(
                ContinuationEvaluation::request("Approval").with_reason(format!(
                    "{} tool call(s) wait for a person's approval",
                    held.len()
                )),
            );
            return state.judged(outcome).suspended(held);
        }
        self.judge(state, token)
    }

    /// The verdict on the last recorded step: the criteria, the error policy when the step
    /// failed, the repeated-call limit, the cancellation, and the stop hooks when the verdict
    /// is to stop.
    fn judge(&self, state: AgentState, token: &CancellationToken) -> AgentState {
        let number = state.step_count();
        let mut outcome = self.criteria.evaluate_all(&state);
        let mut guards = Vec::new();
        if state.current_step().is_some_and(AgentStep::has_errors) {
            guards.push(ErrorPolicyCriterion::new(self.error_policy).evaluate(&state));
        }
        if let Some(refusals) = repeated_refusals(&state).filter(|n| *n >= 2) {
            guards.push(
                ContinuationEvaluation::forbid("RepeatedCallLimit", StopReason::RepeatedToolCalls)
                    .with_reason(format!(
                        "the model repeated calls it had already made ({refusals} refused)"
                    )),
            );
        }
        if let Some(guard) = self.cost_guard(&state) {
            guards.push(guard);
        }
        if token.is_cancelled() {
            guards.push(
                ContinuationEvaluation::forbid("Cancellation", StopReason::UserRequested)
                    .with_reason("the run was cancelled"),
            );
        }
        if !guards.is_empty() {
            // The cancellation comes first: it is why the step ended, whatever else failed.
            guards.sort_by_key(|guard| guard.stop_reason != Some(StopReason::UserRequested));
            let mut evaluations = outcome.into_evaluations();
            evaluations.splice(0..0, guards);
            outcome = ContinuationOutcome::from_evaluations(evaluations);
        }
        let (state, outcome) = self.apply_stop_hooks(state, outcome);
        self.events.emit_with(|| AgentEvent::ContinuationEvaluated {
            source: EventSource {
                step_number: number,
                ..EventSource::execution(&state)
            },
            outcome: outcome.clone(),
        });
        state.judged(outcome)
    }

    /// `step` with its cost: its usage at the catalog price of the model its inference
    /// reported (unknown when the catalog has no price for it).
    fn priced(&self, step: AgentStep) -> AgentStep {
        let model = step.inference_response().and_then(|r| r.model());
        let cost = RunCost::of_usage(step.usage(), model, &self.telemetry.catalog);
        if !cost.is_known() {
            tracing::debug!(
                target: "agents_core::agent",
                model = model.unwrap_or("(none reported)"),
                "no price for the step's model in the catalog: its cost is unknown"
            );
        }
        step.with_cost(cost)
    }

    /// Warns (event and `tracing`) when `step`'s request used more than
    /// [`CONTEXT_WINDOW_WARNING`] of its model's context window.
    fn check_context_window(&self, state: &AgentState, step: &AgentStep, number: usize) {
        let Some(model) = step.inference_response().and_then(|r| r.model()) else {
            return;
        };
        let input_tokens = step.usage().prompt_tokens();
        if input_tokens == 0 {
            return;
        }
        let Some(window) = self
            .telemetry
            .catalog
            .lookup(model)
            .and_then(|info| info.context_window)
            .filter(|window| *window > 0)
        else {
            return;
        };
        if (input_tokens as f64) <= CONTEXT_WINDOW_WARNING * window as f64 {
            return;
        }
        tracing::warn!(
            target: "agents_core::agent",
            agent_id = %state.agent_id(),
            model,
            input_tokens,
            context_window = window,
            "the request used over {:.0}% of the model's context window; summarize or trim \
             the conversation before it no longer fits",
            CONTEXT_WINDOW_WARNING * 100.0
        );
        self.events
            .emit_with(|| AgentEvent::ContextWindowNearlyFull {
                source: EventSource {
                    step_number: number,
                    ..EventSource::execution(state)
                },
                model: model.to_owned(),
                input_tokens,
                context_window: window,
            });
    }

    /// The verdict of the cost limit on `state`'s execution: stop once its priced cost
    /// reaches the limit.
    fn cost_guard(&self, state: &AgentState) -> Option<ContinuationEvaluation> {
        let limit = self.telemetry.cost_limit?;
        let cost = state.execution_cost();
        if !cost.is_known() {
            tracing::warn!(
                target: "agents_core::agent",
                %cost,
                limit_usd = limit,
                "the cost limit counts only priced tokens: some of this execution's model has no price"
            );
        }
        (cost.priced_usd() >= limit).then(|| {
            ContinuationEvaluation::forbid("CostLimit", StopReason::CostLimit).with_reason(format!(
                "the execution cost ${:.4}, reaching the limit of ${limit:.4}",
                cost.priced_usd()
            ))
        })
    }

    /// A stop that a stop hook prevents (at most `max_stop_vetoes` times per execution, never
    /// after a failure) becomes a continue, recorded as such.
    fn apply_stop_hooks(
        &self,
        state: AgentState,
        outcome: ContinuationOutcome,
    ) -> (AgentState, ContinuationOutcome) {
        let vetoes = state.execution().map_or(0, Execution::stop_vetoes);
        if outcome.should_continue()
            || outcome.stop_reason() == Some(StopReason::Error)
            || vetoes >= self.max_stop_vetoes
        {
            return (state, outcome);
        }
        for hook in &self.hooks.stop {
            if let StopDecision::Prevent(reason) = hook(&state) {
                tracing::info!(
                    target: "agents_core::agent",
                    agent_id = %state.agent_id(),
                    veto = vetoes + 1,
                    %reason,
                    "a stop hook prevented the agent from stopping"
                );
                return (state.vetoed(), outcome.vetoed(reason));
            }
        }
        (state, outcome)
    }

    /// The calls of the last recorded step that wait for approval, with their tools'
    /// parameter schemas.
    fn held_calls(&self, state: &AgentState, held: &HeldRuns) -> Vec<PendingApproval> {
        let runs = held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        state
            .current_step()
            .map(|step| {
                step.tool_executions()
                    .iter()
                    .filter(|e| e.failure_kind() == Some(ToolFailureKind::AwaitingApproval))
                    .flat_map(|e| match runs.iter().find(|(id, _)| id == e.id()) {
                        Some((_, run)) => approvals::of_subagent(e.call(), run),
                        None => {
                            let parameters = self.tools.get(e.name()).map(|tool| tool.parameters());
                            vec![PendingApproval::new(e.call().clone(), parameters)]
                        }
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Completes the suspended step once every waiting call is decided: the approved calls
    /// run (with edited arguments when given) through the same path as any call
    /// ([`StepContext::run_tool_calls`](crate::StepContext::run_tool_calls): hooks, limits,
    /// timeouts, the journal), the rejected ones get a tool error with the reason, each
    /// placeholder result becomes the real one, and the step gets its verdict.
    async fn resume(
        &self,
        state: AgentState,
        options: &StepOptions,
    ) -> Result<AgentState, AgentError> {
        let token = &options.cancellation;
        let terminal = Terminal::new(self, options);
        let context = terminal
            .step_context(&state, Arc::clone(&self.cached_context))
            .for_decided_calls();
        let mut tool_context = context.tool_context(&state);
        tool_context.step_number = state.step_count().max(1);
        // The tools as of now (a tool source's included), as a step would offer them.
        let tools = crate::tools::source::merged(&self.tools, &self.tool_sources).await;
        let pending = state.pending_approvals();
        let approved: Vec<messages::ToolCall> = pending
            .iter()
            .filter_map(PendingApproval::approved_call)
            .collect();
        let ran = if approved.is_empty() {
            ToolExecutions::new()
        } else {
            context
                .run_tool_calls(
                    self.executor.as_ref(),
                    &approved,
                    &tools,
                    &tool_context,
                    false,
                )
                .await?
        };
        // A subagent's waiting calls: the call that ran the subagent runs again, resuming
        // the subagent's saved state (with the decisions routed into it).
        let mut resumed: Vec<ToolExecution> = Vec::new();
        for p in &pending {
            let Some((parent_call, child)) = p.subagent_resume() else {
                continue;
            };
            if resumed.iter().any(|e| e.id() == parent_call.id()) {
                continue;
            }
            let child = approvals::child_state(p.call_id(), child)
                .map_err(|error| AgentError::driver(error.to_string()))?;
            let mut resume_context = tool_context.clone();
            resume_context.resumed = Some(Arc::new(child));
            let execution = context
                .run_tool_calls(
                    self.executor.as_ref(),
                    std::slice::from_ref(parent_call),
                    &tools,
                    &resume_context,
                    false,
                )
                .await?;
            resumed.extend(execution.iter().cloned());
        }
        let now = self.clock.now();
        let mut ran = ran.iter().cloned();
        let mut rejected = Vec::new();
        let executions: ToolExecutions = pending
            .iter()
            .filter(|p| p.subagent().is_none())
            .filter_map(|p| match p.decision() {
                Some(ApprovalVerdict::Rejected { reason }) => {
                    let execution = ToolExecution::failure(
                        p.call().clone(),
                        ToolFailureKind::NotApproved,
                        format!(
                            "A person did not approve this call, so it did not run. \
                             Their reason: {reason}"
                        ),
                        now,
                        now,
                    );
                    rejected.push(execution.clone());
                    Some(execution)
                }
                _ => ran.next(),
            })
            .chain(resumed)
            .collect();
        context.emit_tool_executions(&tool_context, &rejected.into());
        let state = state.resolved(&executions);
        for p in &pending {
            if let Some(verdict) = p.decision() {
                self.events.emit_with(|| AgentEvent::ApprovalResolved {
                    source: EventSource {
                        step_number: state.step_count(),
                        ..EventSource::execution(&state)
                    },
                    call_id: p.call_id().to_owned(),
                    verdict: verdict.clone(),
                });
            }
        }
        // A subagent that stopped on another call that needs approval: still suspended.
        let held = self.held_calls(&state, &context.held);
        if !held.is_empty() {
            let outcome = state.continuation_outcome().cloned().unwrap_or_else(|| {
                ContinuationOutcome::from_evaluation(ContinuationEvaluation::request("Approval"))
            });
            let state = state.judged(outcome).suspended(held);
            self.emit_approvals_requested(&state);
            return Ok(state);
        }
        let state = self.judge(state, token);
        match state.continuation_outcome() {
            Some(outcome) if !outcome.should_continue() => {
                let reason = outcome.stop_reason().unwrap_or(StopReason::Completed);
                Ok(self.finish(state, reason, token).await)
            }
            _ => Ok(state),
        }
    }

    fn emit_approvals_requested(&self, state: &AgentState) {
        if !self.events.is_observed() {
            return;
        }
        for pending in state.pending_approvals() {
            self.events.emit_with(|| AgentEvent::ApprovalRequested {
                source: EventSource {
                    step_number: state.step_count(),
                    ..EventSource::execution(state)
                },
                pending,
            });
        }
    }

    /// A layer returned without running the step: a step with no model call is recorded, and
    /// its outcome stops the execution with [`StopReason::Guard`].
    fn record_guard_stop(&self, state: AgentState) -> AgentState {
        let now = self.clock.now();
        let number = state.step_count() + 1;
        let outcome = ContinuationOutcome::from_evaluation(
            ContinuationEvaluation::forbid("StateProcessor", StopReason::Guard)
                .with_reason("a processor returned without running the step"),
        );
        let step = AgentStep::new(state.messages_for_inference());
        tracing::info!(
            target: "agents_core::agent",
            agent_id = %state.agent_id(),
            "a processor did not run the step: the execution stops (guard)"
        );
        state
            .recorded(StepExecution::new(step, outcome.clone(), now, now, number))
            .judged(outcome)
    }

    /// Finishes the execution: the final status, an answer when it has none
    /// ([`AnswerOnStop`]), after-execution hooks, the closing event.
    async fn finish(
        &self,
        state: AgentState,
        reason: StopReason,
        token: &CancellationToken,
    ) -> AgentState {
        let failed = matches!(reason, StopReason::Error | StopReason::UserRequested);
        let status = if failed {
            AgentStatus::Failed
        } else {
            AgentStatus::Completed
        };
        let state = state.finished(status, reason);
        let state = self.answer_on_stop(state, reason, token).await;
        let state = run_state_hooks(&self.hooks.after_execution, state);
        if failed {
            self.events.emit_with(|| AgentEvent::ExecutionFailed {
                source: EventSource::execution(&state),
                errors: state
                    .current_step()
                    .map(AgentStep::error_messages)
                    .unwrap_or_default(),
                steps: state.step_count(),
                usage: state.execution_usage(),
                cost: state.execution_cost(),
            });
        } else {
            self.events.emit_with(|| AgentEvent::ExecutionCompleted {
                source: EventSource::execution(&state),
                status: state.status(),
                stop_reason: state.stop_reason(),
                steps: state.step_count(),
                usage: state.execution_usage(),
                cost: state.execution_cost(),
            });
        }
        state
    }

    /// Appends an answer when the execution stops without one: synthesized by the model
    /// without tools, or a notice (always a notice on cancellation).
    async fn answer_on_stop(
        &self,
        state: AgentState,
        reason: StopReason,
        token: &CancellationToken,
    ) -> AgentState {
        let mode = if reason == StopReason::UserRequested {
            AnswerOnStop::Notice
        } else {
            self.answer_on_stop
        };
        let answered = state
            .current_step()
            .is_some_and(|step| step.final_response().is_some());
        if mode == AnswerOnStop::Nothing || answered {
            return state;
        }
        let mut path = AnswerOnStop::Notice;
        let mut answer = None;
        let mut usage = inference::Usage::default();
        let mut cost = RunCost::zero();
        if mode == AnswerOnStop::Synthesize {
            let options = StepOptions::new().with_cancellation(token.clone());
            let context = Terminal::new(self, &options).context(Arc::clone(&self.cached_context));
            let input =
                answer_on_stop::synthesis_input(&state, context.prompt_messages(&state), reason);
            let input = self.cached_context.messages.concat(&input);
            match self.driver.answer_without_tools(input, &context).await {
                Ok(Some(response)) => {
                    // An empty reply is no answer (a notice follows), but its tokens count.
                    usage = response.usage();
                    cost = RunCost::of_response(&response, &self.telemetry.catalog);
                    if !response.content().trim().is_empty() {
                        path = AnswerOnStop::Synthesize;
                        answer = Some(answer_on_stop::marked(
                            Message::assistant(response.content().trim()),
                            reason,
                            AnswerOnStop::Synthesize,
                        ));
                    }
                }
                Ok(None) => {}
                Err(error) => tracing::warn!(
                    target: "agents_core::agent",
                    error = %crate::records::agent_error::error_chain(&error),
                    "synthesizing an answer on stop failed; appending a notice"
                ),
            }
        }
        let answer = answer.unwrap_or_else(|| answer_on_stop::notice(&state, reason));
        let store = state
            .store()
            .section(crate::state::sections::DEFAULT_SECTION)
            .append(answer);
        let state = state.with_store(store).with_added_usage(usage, cost);
        self.events.emit_with(|| AgentEvent::AnsweredOnStop {
            source: EventSource::execution(&state),
            stop_reason: reason,
            path,
        });
        state
    }

    fn emit_step_completed(&self, state: &AgentState) {
        if !self.events.is_observed() {
            return;
        }
        let Some(execution) = state.step_executions().last() else {
            return;
        };
        let step = execution.step();
        let source = EventSource {
            step_number: execution.step_number(),
            ..EventSource::execution(state)
        };
        self.events.emit_with(|| AgentEvent::StepCompleted {
            source: source.clone(),
            step_type: step.step_type(),
            has_tool_calls: step.has_tool_calls(),
            errors: step.error_messages(),
            usage: step.usage(),
            finish_reason: step.finish_reason(),
            duration: execution.duration(),
            cost: step.cost(),
        });
        if !step.usage().is_empty() {
            self.events.emit_with(|| AgentEvent::TokenUsage {
                source,
                usage: step.usage(),
            });
        }
    }
}

/// The share of a model's context window past which a request is reported
/// ([`AgentEvent::ContextWindowNearlyFull`] and a `tracing` warning): 0.8.
pub const CONTEXT_WINDOW_WARNING: f64 = 0.8;

/// What one run of [`Agent::step_with`] gets besides the state: a cancellation token and an
/// optional journal. Built with [`StepOptions::new`] and the `with_*` methods.
#[derive(Clone, Debug, Default)]
pub struct StepOptions {
    cancellation: CancellationToken,
    journal: Option<Arc<dyn crate::journal::StepJournal>>,
    execution_id: Option<Arc<str>>,
}

impl StepOptions {
    /// No cancellation (a token nobody cancels) and no journal.
    pub fn new() -> Self {
        Self::default()
    }

    /// These options with this cancellation token.
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = token;
        self
    }

    /// These options with this journal.
    pub fn with_journal(mut self, journal: Arc<dyn crate::journal::StepJournal>) -> Self {
        self.journal = Some(journal);
        self
    }

    /// These options with the id an execution this step starts gets (default: one from the
    /// agent's [`IdSource`](crate::IdSource)). A durable store that re-runs an interrupted
    /// step passes the id the first run used, so that the execution, and every tool's
    /// [`idempotency key`](crate::ToolContext::idempotency_key), are the same.
    pub fn with_execution_id(mut self, id: impl Into<Arc<str>>) -> Self {
        self.execution_id = Some(id.into());
        self
    }
}

/// How starting an execution went.
enum Started {
    /// The first step may run.
    Running(AgentState),
    /// The criteria stopped it before any step.
    Stopped(AgentState, StopReason),
}

/// The step at the centre of the processors: the driver, then the recording.
struct Terminal<'a> {
    agent: &'a Agent,
    options: &'a StepOptions,
    token: &'a CancellationToken,
    /// Whether the step was recorded (run, or stopped by a guard).
    recorded: AtomicBool,
}

impl<'a> Terminal<'a> {
    fn new(agent: &'a Agent, options: &'a StepOptions) -> Self {
        Self {
            agent,
            options,
            token: &options.cancellation,
            recorded: AtomicBool::new(false),
        }
    }
    fn context(&self, cached_context: Arc<CachedContext>) -> StepContext {
        StepContext {
            events: self.agent.events.clone(),
            cancellation: self.token.clone(),
            cached_context,
            clock: Arc::clone(&self.agent.clock),
            tool_limits: self.agent.tool_limits,
            previous_calls: Arc::default(),
            journal: self.options.journal.clone(),
            capture_content: self.agent.telemetry.capture_content,
            approval: self.agent.approval.clone(),
            tool_layers: self.agent.tool_layers.clone(),
            held: HeldRuns::default(),
            decided: false,
        }
    }

    /// [`context`](Self::context) for a step of `state`, knowing the calls made so far.
    fn step_context(&self, state: &AgentState, cached_context: Arc<CachedContext>) -> StepContext {
        let mut context = self.context(cached_context);
        if self.agent.tool_limits.repeated_call_limit.is_some() {
            context.previous_calls = Arc::new(PreviousCalls::of(state));
        }
        context
    }
}

impl StepTerminal for Terminal<'_> {
    fn run<'a>(&'a self, state: AgentState, cached_context: Arc<CachedContext>) -> StepFuture<'a> {
        Box::pin(async move {
            let agent = self.agent;
            let context = self.step_context(&state, cached_context);
            let tools = crate::tools::source::merged(&agent.tools, &agent.tool_sources).await;
            let started_at = agent.clock.now();
            let result = agent
                .driver
                .next_step(&state, &tools, agent.executor.as_ref(), &context)
                .await;
            let step = match result {
                Ok(step) => step,
                Err(error) => failure_step(&context.prompt_messages(&state), &error),
            };
            self.recorded.store(true, Ordering::Release);
            Ok(agent.record(state, step, started_at, self.token, &context.held))
        })
    }

    fn after_layer(&self, state: AgentState) -> AgentState {
        if self.recorded.swap(true, Ordering::AcqRel) {
            return state;
        }
        self.agent.record_guard_stop(state)
    }
}

/// How many calls of `state`'s execution were refused as repeats (`None` when none).
fn repeated_refusals(state: &AgentState) -> Option<usize> {
    let refused = state
        .steps()
        .flat_map(|step| step.tool_executions().iter())
        .filter(|execution| execution.failure_kind() == Some(ToolFailureKind::Repeated))
        .count();
    (refused > 0).then_some(refused)
}

/// What the model would have been given for the step `state` begins.
fn began_input(terminal: &Terminal<'_>, state: &AgentState) -> messages::Messages {
    terminal
        .context(Arc::clone(&terminal.agent.cached_context))
        .prompt_messages(state)
}

/// A failed step: what the model was given and the error.
fn failure_step(input: &messages::Messages, error: &AgentError) -> AgentStep {
    tracing::warn!(
        target: "agents_core::agent",
        error = %crate::records::agent_error::error_chain(error),
        error_type = ?error.error_type(),
        "step failed"
    );
    AgentStep::failure(input.clone(), error)
}
