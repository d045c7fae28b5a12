//! The `ContinuationCriterion` trait and the `ContinuationCriteria` list.

use std::sync::Arc;

use crate::records::evaluation::ContinuationEvaluation;
use crate::records::outcome::ContinuationOutcome;
use crate::state::agent_state::AgentState;

/// What the loop knows about a step beyond its state, for [`ContinuationCriterion::judge`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StepFacts {
    /// Whether the run was cancelled (its cancellation token fired).
    pub cancelled: bool,
}

impl StepFacts {
    /// These facts with `cancelled` set.
    pub fn cancelled(mut self, cancelled: bool) -> Self {
        self.cancelled = cancelled;
        self
    }
}

/// Decides, after each step (and once before the first), whether the agent runs another step.
pub trait ContinuationCriterion: Send + Sync {
    /// This criterion's verdict on `state`.
    fn evaluate(&self, state: &AgentState) -> ContinuationEvaluation;

    /// The name used in evaluations and logs.
    fn name(&self) -> &str;

    /// This criterion's verdict after a step, knowing the step's [`StepFacts`]; `None` when
    /// it has nothing to say about this step, and then no evaluation is recorded (the
    /// built-in guards, [`standard_guards`](crate::continuation::criteria::guards::standard_guards),
    /// say nothing unless they stop the run). By default, [`evaluate`](Self::evaluate).
    fn judge(&self, state: &AgentState, facts: &StepFacts) -> Option<ContinuationEvaluation> {
        let _ = facts;
        Some(self.evaluate(state))
    }
}

/// An ordered list of criteria, all evaluated every time.
///
/// An empty list runs exactly one step: before the first step it requests, afterwards it
/// stops. (Continuing forever would make an agent without criteria loop without end.)
#[derive(Clone, Default)]
pub struct ContinuationCriteria {
    /// Shared between copies (the loop clones the criteria for every execution).
    criteria: Arc<Vec<Arc<dyn ContinuationCriterion>>>,
}

impl ContinuationCriteria {
    /// No criteria.
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy with another criterion appended.
    pub fn with(mut self, criterion: impl ContinuationCriterion + 'static) -> Self {
        Arc::make_mut(&mut self.criteria).push(Arc::new(criterion));
        self
    }

    /// Appends a shared criterion.
    pub fn push(&mut self, criterion: Arc<dyn ContinuationCriterion>) {
        Arc::make_mut(&mut self.criteria).push(criterion);
    }

    /// Number of criteria.
    pub fn len(&self) -> usize {
        self.criteria.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.criteria.is_empty()
    }

    /// The criteria's names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.criteria.iter().map(|c| c.name()).collect()
    }

    /// Every criterion's verdict after a step ([`ContinuationCriterion::judge`]), in order,
    /// leaving out the criteria with nothing to say.
    pub fn judge_all(&self, state: &AgentState, facts: &StepFacts) -> Vec<ContinuationEvaluation> {
        self.criteria
            .iter()
            .filter_map(|c| c.judge(state, facts))
            .collect()
    }

    /// The outcome after a step: `guards`' verdicts first, then these criteria's (with the
    /// one-step default of an empty list). The one place a step's verdict is decided.
    pub fn decide_after_step(
        &self,
        guards: &ContinuationCriteria,
        state: &AgentState,
        facts: &StepFacts,
    ) -> ContinuationOutcome {
        // One list, sized once: the verdict is recorded with every evaluation, and a step
        // pays for one allocation rather than one per list and a growth (issue 35).
        let mut evaluations = Vec::with_capacity(guards.len() + self.criteria.len().max(1));
        evaluations.extend(guards.criteria.iter().filter_map(|c| c.judge(state, facts)));
        if self.criteria.is_empty() {
            evaluations.push(one_step_default(state));
        } else {
            evaluations.extend(self.criteria.iter().filter_map(|c| c.judge(state, facts)));
        }
        ContinuationOutcome::from_evaluations(evaluations)
    }

    /// Evaluates every criterion and resolves the outcome.
    pub fn evaluate_all(&self, state: &AgentState) -> ContinuationOutcome {
        if self.criteria.is_empty() {
            return ContinuationOutcome::from_evaluation(one_step_default(state));
        }
        ContinuationOutcome::from_evaluations(
            self.criteria.iter().map(|c| c.evaluate(state)).collect(),
        )
    }
}

impl std::fmt::Debug for ContinuationCriteria {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ContinuationCriteria")
            .field(&self.names())
            .finish()
    }
}

impl FromIterator<Arc<dyn ContinuationCriterion>> for ContinuationCriteria {
    fn from_iter<I: IntoIterator<Item = Arc<dyn ContinuationCriterion>>>(iter: I) -> Self {
        Self {
            criteria: Arc::new(iter.into_iter().collect()),
        }
    }
}

const NO_CRITERIA: &str = "NoCriteria";

fn one_step_default(state: &AgentState) -> ContinuationEvaluation {
    if state.step_count() == 0 {
        ContinuationEvaluation::request(NO_CRITERIA)
            .with_reason("no continuation criteria: run one step")
    } else {
        ContinuationEvaluation::stop(NO_CRITERIA)
            .with_reason("no continuation criteria: stop after one step")
    }
}
