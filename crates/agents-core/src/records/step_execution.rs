//! `StepExecution`, `StepExecutions` and `CurrentExecution`: steps with their timing and verdict.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use inference::Usage;
use messages::SharedSlice;
use serde::{Deserialize, Serialize};

use crate::records::agent_step::AgentStep;
use crate::records::outcome::ContinuationOutcome;

/// A finished step with the continuation verdict that followed it and its timing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepExecution {
    id: Arc<str>,
    step_number: usize,
    step: Arc<AgentStep>,
    outcome: ContinuationOutcome,
    started_at: DateTime<Utc>,
    completed_at: DateTime<Utc>,
}

impl StepExecution {
    /// A record of `step` (its id becomes the record's id).
    pub fn new(
        step: impl Into<Arc<AgentStep>>,
        outcome: ContinuationOutcome,
        started_at: DateTime<Utc>,
        completed_at: DateTime<Utc>,
        step_number: usize,
    ) -> Self {
        let step = step.into();
        Self {
            id: Arc::clone(step.shared_id()),
            step_number,
            step,
            outcome,
            started_at,
            completed_at,
        }
    }

    /// A step execution exactly as a serialized document records it (its own id included).
    pub(crate) fn from_record(
        id: Arc<str>,
        step: Arc<AgentStep>,
        outcome: ContinuationOutcome,
        started_at: DateTime<Utc>,
        completed_at: DateTime<Utc>,
        step_number: usize,
    ) -> Self {
        Self {
            id,
            step_number,
            step,
            outcome,
            started_at,
            completed_at,
        }
    }

    /// The id (the step's id).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The 1-based number of the step within its execution.
    pub fn step_number(&self) -> usize {
        self.step_number
    }

    /// The step.
    pub fn step(&self) -> &AgentStep {
        &self.step
    }

    /// The shared step.
    pub fn shared_step(&self) -> &Arc<AgentStep> {
        &self.step
    }

    /// The continuation verdict after the step.
    pub fn outcome(&self) -> &ContinuationOutcome {
        &self.outcome
    }

    /// When the step started.
    pub fn started_at(&self) -> DateTime<Utc> {
        self.started_at
    }

    /// When the step was recorded.
    pub fn completed_at(&self) -> DateTime<Utc> {
        self.completed_at
    }

    /// How long the step took.
    pub fn duration(&self) -> std::time::Duration {
        (self.completed_at - self.started_at)
            .to_std()
            .unwrap_or_default()
    }

    /// True when the outcome says to run another step.
    pub fn should_continue(&self) -> bool {
        self.outcome.should_continue()
    }
}

/// The step executions of one execution, in order. Cheap to clone: appending copies only
/// pointers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StepExecutions(SharedSlice<Arc<StepExecution>>);

impl StepExecutions {
    /// None.
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy with `execution` appended.
    pub fn appended(&self, execution: StepExecution) -> Self {
        let appended = std::iter::once(Arc::new(execution));
        Self(self.0.iter().cloned().chain(appended).collect())
    }

    /// Number of executions.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The executions in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &StepExecution> + ExactSizeIterator {
        self.0.iter().map(|e| e.as_ref())
    }

    /// The execution at `index` (0-based).
    pub fn get(&self, index: usize) -> Option<&StepExecution> {
        self.0.get(index).map(|e| e.as_ref())
    }

    /// The last execution.
    pub fn last(&self) -> Option<&StepExecution> {
        self.0.last().map(|e| e.as_ref())
    }

    /// The last outcome.
    pub fn last_outcome(&self) -> Option<&ContinuationOutcome> {
        self.last().map(StepExecution::outcome)
    }

    /// This list with the last execution's outcome replaced (in place when nothing else
    /// shares the list): the loop records a step, lets the criteria judge the state that holds
    /// it, then records their verdict.
    pub(crate) fn with_last_outcome(mut self, outcome: ContinuationOutcome) -> Self {
        if let Some(slot) = self.0.get_mut().and_then(<[_]>::last_mut) {
            // The step just recorded, held by nothing else: changed where it is, without a
            // copy (the common case; issue 35).
            match Arc::get_mut(slot) {
                Some(last) => last.outcome = outcome,
                None => {
                    *slot = Arc::new(StepExecution {
                        outcome,
                        ..StepExecution::clone(slot)
                    });
                }
            }
            return self;
        }
        let Some(last) = self.0.last() else {
            return self;
        };
        let updated = Arc::new(StepExecution {
            outcome,
            ..StepExecution::clone(last)
        });
        let len = self.0.len();
        self.0 = self.0[..len - 1].iter().cloned().chain([updated]).collect();
        self
    }

    /// This list with the last execution's step replaced (its held tool calls were decided),
    /// keeping its id, number, verdict and times.
    pub(crate) fn with_last_step(self, step: AgentStep) -> Self {
        let Some(last) = self.0.last() else {
            return self;
        };
        let updated = Arc::new(StepExecution {
            step: Arc::new(step),
            ..StepExecution::clone(last)
        });
        let len = self.0.len();
        Self(self.0[..len - 1].iter().cloned().chain([updated]).collect())
    }

    /// The last outcome's verdict; false when empty.
    pub fn should_continue(&self) -> bool {
        self.last_outcome()
            .is_some_and(ContinuationOutcome::should_continue)
    }

    /// The steps in order.
    pub fn steps(&self) -> impl DoubleEndedIterator<Item = &AgentStep> + ExactSizeIterator {
        self.iter().map(StepExecution::step)
    }

    /// Sum of the steps' usage.
    pub fn total_usage(&self) -> Usage {
        self.steps().map(AgentStep::usage).sum()
    }

    /// Sum of the steps' durations.
    pub fn total_duration(&self) -> std::time::Duration {
        self.iter().map(StepExecution::duration).sum()
    }
}

impl FromIterator<StepExecution> for StepExecutions {
    fn from_iter<I: IntoIterator<Item = StepExecution>>(iter: I) -> Self {
        Self(iter.into_iter().map(Arc::new).collect())
    }
}

#[cfg(test)]
mod tests {
    use messages::Messages;

    use super::*;
    use crate::records::evaluation::ContinuationEvaluation;

    fn recorded(steps: &StepExecutions) -> StepExecutions {
        let now = Utc::now();
        let pending = ContinuationOutcome::from_evaluations(Vec::new());
        steps.appended(StepExecution::new(
            AgentStep::new(Messages::new()),
            pending,
            now,
            now,
            steps.len() + 1,
        ))
    }

    fn verdicts(steps: &StepExecutions) -> Vec<bool> {
        steps.iter().map(StepExecution::should_continue).collect()
    }

    #[test]
    fn the_last_verdict_is_recorded_in_place_and_never_in_a_shared_copy() {
        let go_on = ContinuationOutcome::from_evaluation(ContinuationEvaluation::request("Go"));
        let stop = ContinuationOutcome::from_evaluation(ContinuationEvaluation::stop("Done"));
        // Held by nothing else: the record just made takes its verdict where it is.
        let first = recorded(&StepExecutions::new()).with_last_outcome(go_on.clone());
        assert_eq!(verdicts(&first), [true]);
        // A copy of the list keeps what it had when the original gets another verdict.
        let copy = first.clone();
        let judged = first.with_last_outcome(stop.clone());
        assert_eq!(verdicts(&judged), [false]);
        assert_eq!(verdicts(&copy), [true]);
        // A second step, judged: the first keeps its verdict, shared with the copy.
        let second = recorded(&copy).with_last_outcome(stop);
        assert_eq!(verdicts(&second), [true, false]);
        assert_eq!(verdicts(&copy), [true]);
        assert_eq!(
            second.last_outcome().map(|o| o.resolved_by()),
            Some(Some("Done"))
        );
    }
}
