//! Where a step happens: [`Agent::step`], and the two ways of repeating it, [`Agent::iterate`]
//! and [`Agent::execute`]. This file is the whole loop; read it top to bottom.
//!
//! ```text
//! step(state):
//!   finished already (status not InProgress)?  return it unchanged
//!   no execution yet?   start one: Execution{id, started_at}, before-execution hooks,
//!                       ExecutionStarted; the criteria may stop it before any step
//!   cancelled?          finish: Failed, user_requested
//!   StepStarted, before-step hooks
//!   processors.run(state, terminal)               the onion, outermost layer first
//!     terminal: step = driver.next_step(..)       (a driver error is a failure step)
//!               record it; outcome = criteria (+ error policy, stop hooks), decided once
//!   a layer that did not run the step: record a guard stop
//!   a layer that failed: record a failure step on the state the step began with
//!   after-step hooks, StepCompleted
//!   the recorded outcome says stop?  finish: Completed (Failed on error), after-execution
//!                                    hooks, ExecutionCompleted / ExecutionFailed
//! ```

use std::sync::Arc;

use chrono::{DateTime, Utc};
use futures::Stream;
use tokio_util::sync::CancellationToken;

use super::hooks::{run_state_hooks, StopDecision};
use crate::{
    Agent, AgentError, AgentEvent, AgentState, AgentStatus, AgentStep, CachedContext,
    ContinuationCriterion, ContinuationEvaluation, ContinuationOutcome, ErrorPolicyCriterion,
    EventSource, Execution, StepContext, StepExecution, StepFuture, StepTerminal, StopReason,
};

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
        let token = &options.cancellation;
        if state.status() != AgentStatus::InProgress {
            return Ok(state);
        }
        let state = if state.execution().is_none() {
            match self.start(state) {
                Started::Running(state) => state,
                Started::Stopped(state, reason) => return Ok(self.finish(state, reason)),
            }
        } else {
            state
        };
        if token.is_cancelled() {
            return Ok(self.finish(state, StopReason::UserRequested));
        }

        self.events.emit_with(|| AgentEvent::StepStarted {
            source: EventSource::step(&state),
            message_count: state.messages_for_inference().len(),
        });
        let state = run_state_hooks(&self.hooks.before_step, state);
        let started_at = self.clock.now();
        // Kept (a reference count) to record a failed or cancelled step on.
        let began = state.clone();
        let terminal = Terminal {
            agent: self,
            options,
        };
        let chain = self
            .processors
            .run(state, &terminal, Arc::clone(&self.cached_context));
        let result = tokio::select! {
            biased;
            () = token.cancelled() => return Ok(self.finish(began, StopReason::UserRequested)),
            result = chain => result,
        };
        let state = match result {
            Ok(state) if state.step_count() > began.step_count() => state,
            Ok(state) => self.record_guard_stop(state),
            Err(error) => {
                let step = failure_step(&began_input(&terminal, &began), &error);
                self.record(began, step, started_at)
            }
        };
        let state = run_state_hooks(&self.hooks.after_step, state);
        self.emit_step_completed(&state);

        match state.continuation_outcome() {
            Some(outcome) if !outcome.should_continue() => {
                let reason = outcome.stop_reason().unwrap_or(StopReason::Completed);
                Ok(self.finish(state, reason))
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
    fn start(&self, state: AgentState) -> Started {
        let execution = Execution::new(crate::clock::new_id(), self.clock.now());
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
    /// policy when the step failed, and the stop hooks when the verdict is to stop.
    fn record(&self, state: AgentState, step: AgentStep, started_at: DateTime<Utc>) -> AgentState {
        let completed_at = self.clock.now().max(started_at);
        let number = state.step_count() + 1;
        let pending = ContinuationOutcome::from_evaluations(Vec::new());
        let state = state.recorded(StepExecution::new(
            step,
            pending,
            started_at,
            completed_at,
            number,
        ));

        let mut outcome = self.criteria.evaluate_all(&state);
        if state.current_step().is_some_and(AgentStep::has_errors) {
            let mut evaluations = outcome.into_evaluations();
            evaluations.push(ErrorPolicyCriterion::new(self.error_policy).evaluate(&state));
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

    /// Finishes the execution: the final status, after-execution hooks, the closing event.
    fn finish(&self, state: AgentState, reason: StopReason) -> AgentState {
        let failed = matches!(reason, StopReason::Error | StopReason::UserRequested);
        let status = if failed {
            AgentStatus::Failed
        } else {
            AgentStatus::Completed
        };
        let state = run_state_hooks(&self.hooks.after_execution, state.finished(status, reason));
        if failed {
            self.events.emit_with(|| AgentEvent::ExecutionFailed {
                source: EventSource::execution(&state),
                errors: state
                    .current_step()
                    .map(AgentStep::error_messages)
                    .unwrap_or_default(),
                steps: state.step_count(),
                usage: state.execution_usage(),
            });
        } else {
            self.events.emit_with(|| AgentEvent::ExecutionCompleted {
                source: EventSource::execution(&state),
                status: state.status(),
                stop_reason: state.stop_reason(),
                steps: state.step_count(),
                usage: state.execution_usage(),
            });
        }
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
        });
        if !step.usage().is_empty() {
            self.events.emit_with(|| AgentEvent::TokenUsage {
                source,
                usage: step.usage(),
            });
        }
    }
}

/// What one run of [`Agent::step_with`] gets besides the state: a cancellation token and an
/// optional journal. Built with [`StepOptions::new`] and the `with_*` methods.
#[derive(Clone, Debug, Default)]
pub struct StepOptions {
    cancellation: CancellationToken,
    journal: Option<Arc<dyn crate::StepJournal>>,
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
    pub fn with_journal(mut self, journal: Arc<dyn crate::StepJournal>) -> Self {
        self.journal = Some(journal);
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
}

impl Terminal<'_> {
    fn context(&self, cached_context: Arc<CachedContext>) -> StepContext {
        StepContext {
            events: self.agent.events.clone(),
            cancellation: self.options.cancellation.clone(),
            cached_context,
            clock: Arc::clone(&self.agent.clock),
            journal: self.options.journal.clone(),
        }
    }
}

impl StepTerminal for Terminal<'_> {
    fn run<'a>(&'a self, state: AgentState, cached_context: Arc<CachedContext>) -> StepFuture<'a> {
        Box::pin(async move {
            let agent = self.agent;
            let context = self.context(cached_context);
            let started_at = agent.clock.now();
            let result = agent
                .driver
                .next_step(&state, &agent.tools, agent.executor.as_ref(), &context)
                .await;
            let step = match result {
                Ok(step) => step,
                Err(error) => failure_step(&context.prompt_messages(&state), &error),
            };
            Ok(agent.record(state, step, started_at))
        })
    }
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
        error = %crate::error_chain(error),
        error_type = ?error.error_type(),
        "step failed"
    );
    AgentStep::failure(input.clone(), error)
}
