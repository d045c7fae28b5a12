//! The built-in guards: criteria every agent judges a step with before its own, in this
//! order (the order their verdicts are recorded in): [`CancellationGuard`],
//! [`ErrorPolicyGuard`], [`RepeatedCallGuard`], [`CostLimitGuard`]. A guard that does not
//! apply to a step records nothing (see [`ContinuationCriterion::judge`]).

use crate::continuation::criteria::error_policy_criterion::ErrorPolicyCriterion;
use crate::continuation::criterion::{ContinuationCriteria, ContinuationCriterion, StepFacts};
use crate::errors::error_policy::ErrorPolicy;
use crate::records::agent_step::AgentStep;
use crate::records::decision::StopReason;
use crate::records::evaluation::ContinuationEvaluation;
use crate::records::tool_execution::ToolFailureKind;
use crate::state::agent_state::AgentState;

/// The guards an agent with this error policy and cost limit judges every step with, in
/// order. [`Agent::guards`](crate::agent::agent::Agent::guards) shows an agent's.
pub fn standard_guards(policy: ErrorPolicy, cost_limit: Option<f64>) -> ContinuationCriteria {
    let guards = ContinuationCriteria::new()
        .with(CancellationGuard)
        .with(ErrorPolicyGuard::new(policy))
        .with(RepeatedCallGuard);
    match cost_limit {
        Some(usd) => guards.with(CostLimitGuard::new(usd)),
        None => guards,
    }
}

/// Stops the execution ([`StopReason::UserRequested`]) once its run was cancelled.
#[derive(Clone, Copy, Debug, Default)]
pub struct CancellationGuard;

impl CancellationGuard {
    const NAME: &'static str = "Cancellation";
}

impl ContinuationCriterion for CancellationGuard {
    /// Without the run's facts nothing is cancelled: allows.
    fn evaluate(&self, _state: &AgentState) -> ContinuationEvaluation {
        ContinuationEvaluation::allow(Self::NAME)
    }

    fn judge(&self, _state: &AgentState, facts: &StepFacts) -> Option<ContinuationEvaluation> {
        facts.cancelled.then(|| {
            ContinuationEvaluation::forbid(Self::NAME, StopReason::UserRequested)
                .with_reason("the run was cancelled")
        })
    }

    fn name(&self) -> &str {
        Self::NAME
    }
}

/// The agent's [`ErrorPolicy`] on a step that failed (a driver error or a failed tool call):
/// stop, retry or go on ([`ErrorPolicyCriterion`]'s verdict). Nothing on a step without
/// errors.
#[derive(Clone, Copy, Debug, Default)]
pub struct ErrorPolicyGuard {
    policy: ErrorPolicyCriterion,
}

impl ErrorPolicyGuard {
    /// The guard applying `policy`.
    pub fn new(policy: ErrorPolicy) -> Self {
        Self {
            policy: ErrorPolicyCriterion::new(policy),
        }
    }

    /// The policy.
    pub fn policy(&self) -> &ErrorPolicy {
        self.policy.policy()
    }
}

impl ContinuationCriterion for ErrorPolicyGuard {
    fn evaluate(&self, state: &AgentState) -> ContinuationEvaluation {
        self.policy.evaluate(state)
    }

    fn judge(&self, state: &AgentState, _facts: &StepFacts) -> Option<ContinuationEvaluation> {
        state
            .current_step()
            .is_some_and(AgentStep::has_errors)
            .then(|| self.policy.evaluate(state))
    }

    fn name(&self) -> &str {
        self.policy.name()
    }
}

/// Stops the execution ([`StopReason::RepeatedToolCalls`]) once two of its calls were refused
/// as repeats of calls already made (the tool layers refuse them by the agent's
/// `ToolCallLimits`).
#[derive(Clone, Copy, Debug, Default)]
pub struct RepeatedCallGuard;

impl RepeatedCallGuard {
    const NAME: &'static str = "RepeatedCallLimit";
    /// Refused repeats that stop the execution.
    const REFUSALS: usize = 2;

    fn verdict(state: &AgentState) -> Option<ContinuationEvaluation> {
        let refused = state
            .steps()
            .flat_map(|step| step.tool_executions().iter())
            .filter(|execution| execution.failure_kind() == Some(ToolFailureKind::Repeated))
            .count();
        (refused >= Self::REFUSALS).then(|| {
            ContinuationEvaluation::forbid(Self::NAME, StopReason::RepeatedToolCalls).with_reason(
                format!("the model repeated calls it had already made ({refused} refused)"),
            )
        })
    }
}

impl ContinuationCriterion for RepeatedCallGuard {
    fn evaluate(&self, state: &AgentState) -> ContinuationEvaluation {
        Self::verdict(state).unwrap_or_else(|| ContinuationEvaluation::allow(Self::NAME))
    }

    fn judge(&self, state: &AgentState, _facts: &StepFacts) -> Option<ContinuationEvaluation> {
        Self::verdict(state)
    }

    fn name(&self) -> &str {
        Self::NAME
    }
}

/// Stops the execution ([`StopReason::CostLimit`]) once the priced part of its cost reaches
/// the limit; tokens of a model with no price do not count (a warning says so).
#[derive(Clone, Copy, Debug)]
pub struct CostLimitGuard {
    limit_usd: f64,
}

impl CostLimitGuard {
    const NAME: &'static str = "CostLimit";

    /// The guard stopping at `limit_usd` dollars.
    pub fn new(limit_usd: f64) -> Self {
        Self { limit_usd }
    }

    /// The limit in dollars.
    pub fn limit_usd(&self) -> f64 {
        self.limit_usd
    }

    fn verdict(&self, state: &AgentState) -> Option<ContinuationEvaluation> {
        let limit = self.limit_usd;
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
            ContinuationEvaluation::forbid(Self::NAME, StopReason::CostLimit).with_reason(format!(
                "the execution cost ${:.4}, reaching the limit of ${limit:.4}",
                cost.priced_usd()
            ))
        })
    }
}

impl ContinuationCriterion for CostLimitGuard {
    fn evaluate(&self, state: &AgentState) -> ContinuationEvaluation {
        self.verdict(state)
            .unwrap_or_else(|| ContinuationEvaluation::allow(Self::NAME))
    }

    fn judge(&self, state: &AgentState, _facts: &StepFacts) -> Option<ContinuationEvaluation> {
        self.verdict(state)
    }

    fn name(&self) -> &str {
        Self::NAME
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_standard_guards_read_in_the_order_they_report() {
        let guards = standard_guards(ErrorPolicy::default(), Some(1.0));
        assert_eq!(
            guards.names(),
            [
                "Cancellation",
                "ErrorPolicyCriterion",
                "RepeatedCallLimit",
                "CostLimit"
            ]
        );
        assert_eq!(standard_guards(ErrorPolicy::default(), None).len(), 3);
    }

    #[test]
    fn guards_say_nothing_about_a_quiet_step() {
        let state = AgentState::new().with_user_message("hi");
        let guards = standard_guards(ErrorPolicy::default(), Some(1.0));
        assert!(guards.judge_all(&state, &StepFacts::default()).is_empty());
        let cancelled = guards.judge_all(&state, &StepFacts::default().cancelled(true));
        assert_eq!(cancelled.len(), 1);
        assert_eq!(cancelled[0].stop_reason, Some(StopReason::UserRequested));
    }
}
