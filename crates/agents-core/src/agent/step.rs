//! Where a step happens: [`Agent::step`], and the two ways of repeating it, [`Agent::iterate`]
//! and [`Agent::execute`]. This file is the loop's skeleton; read it top to bottom. The jobs a
//! step hands off live in files named for them: `verdict.rs` (the criteria and the built-in
//! guards), `pricing.rs` (cost and the context window), `approval_resume.rs` (held calls and
//! resuming decided ones), `answer_on_stop.rs`, `terminal.rs` (the step at the centre of the
//! processors), `step_events.rs` (what a recorded step reports), `step_options.rs`, and
//! `deprecated.rs` (the retired `*_cancellable` methods).
//!
//! ```text
//! step(state):                                   inside an `invoke_agent {name}` span
//!   not runnable (finished, or still waiting)?  return it unchanged
//!   suspended, every waiting call decided?     resume: the approved calls run through
//!                       run_tool_calls (hooks, limits, timeouts, journal), rejected ones get
//!                       a tool error, placeholders become results, the step gets its verdict
//!                       and passes through the onion (step hooks, processors) as it is
//!   no execution yet?   start one: Execution{id, started_at}, before-execution hooks,
//!                       ExecutionStarted; the criteria may stop it before any step
//!   cancelled?          finish: Failed, user_requested (and a notice answer)
//!   StepStarted
//!   onion.run(state, terminal)                    outermost layer first: the step hooks
//!                                                 (`StepHooks`, when any), then the processors
//!     terminal: step = driver.next_step(..)       (a driver error is a failure step;
//!                                                  tool-call limits hold in run_tool_calls)
//!               record it, priced (the agent's catalog) and checked against the context
//!               window; calls held for approval (placeholder results)?  the run is
//!               Suspended and the verdict waits for the decisions; otherwise
//!               outcome = the guards (cancellation, error policy, repeated calls,
//!               cost limit), then the criteria, then the stop hooks, decided once
//!   a layer returns without running the step: a guard stop is recorded right there, so
//!   the layers outside it see a recorded, stopping step
//!   a layer that failed: record a failure step on the state the step began with (the
//!                       step hooks settle it inside: their after-step hooks see it)
//!   StepCompleted (suspended: ApprovalRequested, return)
//!   the recorded outcome says stop?  finish: Completed (Failed on error or cancellation,
//!                                    or when a limit refused the retry of a failed step),
//!                                    an answer if the execution has none (AnswerOnStop),
//!                                    after-execution hooks, ExecutionCompleted / Failed
//! ```

use std::sync::Arc;

use chrono::{DateTime, Utc};
use futures::Stream;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::agent::agent::Agent;
use crate::agent::hooks::run_state_hooks;
use crate::agent::step_options::StepOptions;
use crate::agent::terminal::Terminal;
use crate::continuation::criteria::error_policy_criterion::NAME as ERROR_POLICY_CRITERION;
use crate::events::agent_event::{AgentEvent, EventSource};
use crate::records::agent_error::AgentError;
use crate::records::agent_status::AgentStatus;
use crate::records::agent_step::AgentStep;
use crate::records::decision::{ContinuationDecision, StopReason};
use crate::records::evaluation::ContinuationEvaluation;
use crate::records::outcome::ContinuationOutcome;
use crate::records::step_execution::StepExecution;
use crate::state::agent_state::{AgentState, Execution};
use crate::telemetry;
use crate::tools::tool::StepHeldRuns;

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
        self.step_with(state, &StepOptions::new()).await
    }

    /// [`Agent::step`] with per-run options: a cancellation token (when it is cancelled, a
    /// step not begun yet is not begun, and a running one is dropped: nothing of it is
    /// recorded, so the conversation holds no tool call without its result; the execution
    /// finishes `Failed` with stop reason `user_requested`; the token also reaches tools
    /// through their context), and a [`StepJournal`](crate::StepJournal) that the drivers and
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
        // suspended run resumes: `step_in_span`). The one stop condition of every loop.
        if !state.is_runnable() {
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
        let terminal = Terminal::new(self, options);
        // Kept (a reference count) to record a failed step on: a layer's error becomes a
        // failure step on the state the step began with, judged by the error policy.
        let began = state.clone();
        let chain = self
            .onion
            .run(state, &terminal, Arc::clone(&self.cached_context));
        let state = match chain.await {
            Ok(state) => state,
            Err(error) => terminal.record_failure(began, &error),
        };
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

    /// Runs the agent step by step: [`Agent::step`] repeated while the state
    /// [is runnable](AgentState::is_runnable), one item per step (the last one has the final
    /// status; a state that is not runnable gives one item, itself).
    ///
    /// Dropping the stream stops the execution; no task keeps running.
    pub fn iterate(
        &self,
        state: AgentState,
    ) -> impl Stream<Item = Result<AgentState, AgentError>> + Send + 'static {
        self.iterate_with(state, StepOptions::new())
    }

    /// [`Agent::iterate`] with [`Agent::step_with`]'s options for every step.
    pub fn iterate_with(
        &self,
        state: AgentState,
        options: StepOptions,
    ) -> impl Stream<Item = Result<AgentState, AgentError>> + Send + 'static {
        let agent = self.clone();
        let options = Arc::new(options);
        futures::stream::unfold(Some(state), move |state| {
            let agent = agent.clone();
            let options = Arc::clone(&options);
            async move {
                let state = state?;
                let item = agent.step_with(state, &options).await;
                let next = match &item {
                    Ok(state) if state.is_runnable() => Some(state.clone()),
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
        self.execute_with(state, &StepOptions::new()).await
    }

    /// [`Agent::execute`] with [`Agent::step_with`]'s options for every step.
    ///
    /// # Errors
    /// As [`Agent::step`].
    pub async fn execute_with(
        &self,
        mut state: AgentState,
        options: &StepOptions,
    ) -> Result<AgentState, AgentError> {
        loop {
            state = self.step_with(state, options).await?;
            if !state.is_runnable() {
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
    pub(super) fn record(
        &self,
        state: AgentState,
        step: AgentStep,
        started_at: DateTime<Utc>,
        token: &CancellationToken,
        held: &StepHeldRuns,
        id: Option<Arc<str>>,
    ) -> AgentState {
        let completed_at = self.clock.now().max(started_at);
        let number = state.next_step_number();
        let step = self
            .priced(step)
            .with_id(id.unwrap_or_else(|| self.ids.new_id()));
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
    /// Finishes the execution: the final status, an answer when it has none
    /// ([`AnswerOnStop`]), after-execution hooks, the closing event.
    pub(super) async fn finish(
        &self,
        state: AgentState,
        reason: StopReason,
        token: &CancellationToken,
    ) -> AgentState {
        let failed = matches!(reason, StopReason::Error | StopReason::UserRequested)
            || retry_overruled(&state);
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
}

/// True when the execution's last step failed (its model call, or a reply that is no
/// answer) and the error policy asked for another step that a limit (steps, time, cost)
/// then refused: the run ends on that failure, so it has failed, whatever stopped it. A
/// failure the policy ignores does not count, nor a failed tool call (the model was told).
fn retry_overruled(state: &AgentState) -> bool {
    let Some(last) = state.step_executions().last() else {
        return false;
    };
    !last.step().errors().is_empty()
        && last
            .outcome()
            .evaluation_for(ERROR_POLICY_CRITERION)
            .is_some_and(|evaluation| evaluation.decision == ContinuationDecision::Request)
}

/// How starting an execution went.
enum Started {
    /// The first step may run.
    Running(AgentState),
    /// The criteria stopped it before any step.
    Stopped(AgentState, StopReason),
}
