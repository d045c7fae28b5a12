//! `ErrorPolicyCriterion`: the error policy as a continuation guard.

use crate::continuation::criterion::ContinuationCriterion;
use crate::errors::error_context::ErrorContext;
use crate::errors::error_policy::ErrorPolicy;
use crate::records::decision::StopReason;
use crate::records::error_type::ErrorHandlingDecision;
use crate::records::evaluation::ContinuationEvaluation;
use crate::state::agent_state::AgentState;

/// The name this criterion reports in its evaluations.
pub(crate) const NAME: &str = "ErrorPolicyCriterion";

/// Judges the last step's errors (failed tool executions are [`ErrorType::Tool`](crate::ErrorType::Tool))
/// with an [`ErrorPolicy`]: `Stop` forbids (stop reason `error`), `Retry` requests another
/// step, `Ignore` allows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ErrorPolicyCriterion {
    policy: ErrorPolicy,
}

impl ErrorPolicyCriterion {
    /// A criterion applying `policy`.
    pub fn new(policy: ErrorPolicy) -> Self {
        Self { policy }
    }

    /// The policy.
    pub fn policy(&self) -> &ErrorPolicy {
        &self.policy
    }
}

impl ContinuationCriterion for ErrorPolicyCriterion {
    fn evaluate(&self, state: &AgentState) -> ContinuationEvaluation {
        let context = ErrorContext::from_state(state);
        if context.consecutive_failures == 0 {
            return ContinuationEvaluation::allow(NAME);
        }
        let what = describe(&context);
        match self.policy.evaluate(&context) {
            ErrorHandlingDecision::Stop => ContinuationEvaluation::forbid(NAME, StopReason::Error)
                .with_reason(format!("error policy stops on {what}")),
            ErrorHandlingDecision::Retry => ContinuationEvaluation::request(NAME)
                .with_reason(format!("error policy retries after {what}")),
            ErrorHandlingDecision::Ignore => ContinuationEvaluation::allow(NAME)
                .with_reason(format!("error policy ignores {what}")),
        }
    }

    fn name(&self) -> &str {
        NAME
    }
}

fn describe(context: &ErrorContext) -> String {
    let kind = serde_json::to_value(context.error_type)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let tool = context
        .tool_name
        .as_deref()
        .map(|t| format!(" in tool `{t}`"))
        .unwrap_or_default();
    let message = context.message.as_deref().unwrap_or("no message");
    format!(
        "{kind} error{tool} ({} in a row): {message}",
        context.consecutive_failures
    )
}
