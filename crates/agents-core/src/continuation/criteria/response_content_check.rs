//! `ResponseContentCheck`: keep going while the last step's content says so.

use std::sync::Arc;

use crate::continuation::criterion::ContinuationCriterion;
use crate::records::agent_step::AgentStep;
use crate::records::evaluation::ContinuationEvaluation;
use crate::state::agent_state::AgentState;

/// The name this criterion reports in its evaluations.
const NAME: &str = "ResponseContentCheck";

/// Requests another step while `predicate(last step)` is true, says stop when it is false,
/// and allows before the first step.
#[derive(Clone)]
pub struct ResponseContentCheck {
    predicate: Arc<dyn Fn(&AgentStep) -> bool + Send + Sync>,
}

impl ResponseContentCheck {
    /// A check with the given predicate ("there is more work").
    pub fn new(predicate: impl Fn(&AgentStep) -> bool + Send + Sync + 'static) -> Self {
        Self {
            predicate: Arc::new(predicate),
        }
    }
}

impl std::fmt::Debug for ResponseContentCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ResponseContentCheck")
    }
}

impl ContinuationCriterion for ResponseContentCheck {
    fn evaluate(&self, state: &AgentState) -> ContinuationEvaluation {
        match state.current_step() {
            None => ContinuationEvaluation::allow(NAME),
            Some(step) if (self.predicate)(step) => ContinuationEvaluation::request(NAME),
            Some(_) => ContinuationEvaluation::stop(NAME),
        }
    }

    fn name(&self) -> &str {
        NAME
    }
}
