//! The verdict on a recorded step: the agent's criteria, then the built-in guards (the error
//! policy on a failed step, repeated calls, the cost limit, cancellation), then the stop hooks
//! when the verdict is to stop. Decided once per step, here.

use tokio_util::sync::CancellationToken;

use crate::agent::agent::Agent;
use crate::agent::hooks::StopDecision;
use crate::continuation::criteria::error_policy_criterion::ErrorPolicyCriterion;
use crate::continuation::criterion::ContinuationCriterion;
use crate::events::agent_event::{AgentEvent, EventSource};
use crate::records::agent_step::AgentStep;
use crate::records::decision::StopReason;
use crate::records::evaluation::ContinuationEvaluation;
use crate::records::outcome::ContinuationOutcome;
use crate::records::step_execution::StepExecution;
use crate::records::tool_execution::ToolFailureKind;
use crate::state::agent_state::{AgentState, Execution};

impl Agent {
    /// The verdict on the last recorded step: the criteria, the error policy when the step
    /// failed, the repeated-call limit, the cancellation, and the stop hooks when the verdict
    /// is to stop.
    pub(super) fn judge(&self, state: AgentState, token: &CancellationToken) -> AgentState {
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

    /// A layer returned without running the step: a step with no model call is recorded, and
    /// its outcome stops the execution with [`StopReason::Guard`].
    pub(super) fn record_guard_stop(&self, state: AgentState) -> AgentState {
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
