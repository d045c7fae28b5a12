//! The terminal of the processor chain: run the driver, record the step, decide continuation.

use std::sync::Arc;

use tokio::time::Instant;

use crate::continuation::execution_start::during_execution;
use crate::{
    AgentDriver, AgentError, AgentEvent, AgentEvents, AgentState, AgentStep, ContinuationCriteria,
    ContinuationCriterion, ContinuationOutcome, ErrorPolicy, ErrorPolicyCriterion, EventSource,
    StepContext, StepExecution, ToolExecutor, Tools,
};

/// Everything the boxed terminal needs, owned (the terminal is `'static`). Built only for
/// processor chains that need a boxed `next`; the inline path borrows a [`StepEnv`] from the
/// agent instead.
pub(crate) struct StepRunner {
    pub(crate) driver: Arc<dyn AgentDriver>,
    pub(crate) tools: Tools,
    pub(crate) executor: Arc<dyn ToolExecutor>,
    pub(crate) criteria: ContinuationCriteria,
    pub(crate) error_policy: ErrorPolicy,
    pub(crate) context: StepContext,
    pub(crate) execution_start: Instant,
}

impl StepRunner {
    /// The borrowed environment over these parts.
    pub(crate) fn env(&self) -> StepEnv<'_> {
        StepEnv {
            driver: self.driver.as_ref(),
            tools: &self.tools,
            executor: self.executor.as_ref(),
            criteria: &self.criteria,
            error_policy: self.error_policy,
            context: &self.context,
            execution_start: self.execution_start,
        }
    }
}

/// What one step runs with, borrowed: the driver, tools, executor, criteria, error policy and
/// the execution's step context.
#[derive(Clone, Copy)]
pub(crate) struct StepEnv<'a> {
    pub(crate) driver: &'a dyn AgentDriver,
    pub(crate) tools: &'a Tools,
    pub(crate) executor: &'a dyn ToolExecutor,
    pub(crate) criteria: &'a ContinuationCriteria,
    pub(crate) error_policy: ErrorPolicy,
    pub(crate) context: &'a StepContext,
    /// When the execution started (the baseline of time limits).
    pub(crate) execution_start: Instant,
}

impl StepEnv<'_> {
    /// Runs one step on `state`. Driver errors become a recorded failure step.
    pub(crate) async fn run(self, state: AgentState) -> Result<AgentState, AgentError> {
        let state = state.into_begun();
        let result = self
            .driver
            .next_step(&state, self.tools, self.executor, self.context)
            .await;
        Ok(match result {
            Ok(step) => self.record(state, step),
            Err(error) => self.record_failure(state, &error),
        })
    }

    /// Records `step`, evaluates continuation and records the step execution: in place on a
    /// state nothing else shares.
    pub(crate) fn record(self, state: AgentState, step: AgentStep) -> AgentState {
        // One clock read for the whole recording: the step ended now.
        let now = crate::clock::now();
        let state = state.into_step_recorded(step, now);
        let outcome = self.evaluate(&state);
        record_execution(state, outcome, now)
    }

    /// Records a failure step for `error`; the error policy decides whether to go on.
    pub(crate) fn record_failure(self, state: AgentState, error: &AgentError) -> AgentState {
        tracing::warn!(
            target: "agents_core::agent",
            agent_id = %state.agent_id(),
            error = %error,
            error_type = ?error.error_type(),
            "step failed"
        );
        let step = AgentStep::failure(state.messages_for_inference(), error);
        self.record(state, step)
    }

    /// The criteria's outcome plus the error policy's verdict when the step failed.
    fn evaluate(self, state: &AgentState) -> ContinuationOutcome {
        let mut outcome =
            during_execution(self.execution_start, || self.criteria.evaluate_all(state));
        if state.current_step().is_some_and(AgentStep::has_errors) {
            let mut evaluations = outcome.into_evaluations();
            evaluations.push(ErrorPolicyCriterion::new(self.error_policy).evaluate(state));
            outcome = ContinuationOutcome::from_evaluations(evaluations);
        }
        emit_evaluated(&self.context.events, state, &outcome);
        outcome
    }
}

fn emit_evaluated(events: &AgentEvents, state: &AgentState, outcome: &ContinuationOutcome) {
    events.emit_with(|| AgentEvent::ContinuationEvaluated {
        source: EventSource::step(state),
        outcome: outcome.clone(),
    });
}

fn record_execution(
    state: AgentState,
    outcome: ContinuationOutcome,
    now: chrono::DateTime<chrono::Utc>,
) -> AgentState {
    let (step_number, started_at) = state
        .current_execution()
        .map_or((state.step_count() + 1, now), |c| {
            (c.step_number, c.started_at)
        });
    let Some(step) = state.current_step_shared() else {
        return state;
    };
    let execution = StepExecution::new(
        Arc::clone(step),
        outcome,
        started_at,
        now.max(started_at),
        step_number,
    );
    state.into_recorded(execution)
}
