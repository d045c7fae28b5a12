//! `CallableCriterion` and `criterion_fn`: a closure as a criterion.

use std::sync::Arc;

use crate::continuation::criterion::ContinuationCriterion;
use crate::records::decision::ContinuationDecision;
use crate::records::evaluation::ContinuationEvaluation;
use crate::state::agent_state::AgentState;

/// A criterion backed by a closure.
#[derive(Clone)]
pub struct CallableCriterion {
    name: String,
    decide: Arc<dyn Fn(&AgentState) -> ContinuationDecision + Send + Sync>,
}

/// A criterion named `name` deciding with `decide`.
pub fn criterion_fn(
    name: impl Into<String>,
    decide: impl Fn(&AgentState) -> ContinuationDecision + Send + Sync + 'static,
) -> CallableCriterion {
    CallableCriterion {
        name: name.into(),
        decide: Arc::new(decide),
    }
}

impl std::fmt::Debug for CallableCriterion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallableCriterion")
            .field("name", &self.name)
            .finish()
    }
}

impl ContinuationCriterion for CallableCriterion {
    fn evaluate(&self, state: &AgentState) -> ContinuationEvaluation {
        ContinuationEvaluation::new(self.name.clone(), (self.decide)(state))
    }

    fn name(&self) -> &str {
        &self.name
    }
}
