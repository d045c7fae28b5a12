//! `ErrorPolicy`: what to do when a step fails.

use serde::{Deserialize, Serialize};

use crate::errors::error_context::ErrorContext;
use crate::records::error_type::{ErrorHandlingDecision, ErrorType};

/// Per-error-type decisions plus a retry budget.
///
/// [`ErrorPolicy::evaluate`] turns an [`ErrorContext`] into a decision: no failure means
/// `Ignore`; a `Retry` becomes `Stop` once the consecutive failures exceed `max_retries` (so
/// `retry_all(2)` tolerates two failed steps in a row and stops at the third).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorPolicy {
    /// Decision for failed tool calls.
    pub on_tool: ErrorHandlingDecision,
    /// Decision for model and driver errors.
    pub on_model: ErrorHandlingDecision,
    /// Decision for invalid model output.
    pub on_validation: ErrorHandlingDecision,
    /// Decision for rate limits.
    pub on_rate_limit: ErrorHandlingDecision,
    /// Decision for timeouts.
    pub on_timeout: ErrorHandlingDecision,
    /// Decision for anything else.
    pub on_unknown: ErrorHandlingDecision,
    /// How many failed steps in a row a `Retry` tolerates.
    pub max_retries: u32,
}

impl Default for ErrorPolicy {
    fn default() -> Self {
        Self::stop_on_any_error()
    }
}

impl ErrorPolicy {
    /// Every error stops the execution (the default).
    pub fn stop_on_any_error() -> Self {
        Self::uniform(ErrorHandlingDecision::Stop, 0)
    }

    /// Tool, validation, rate-limit and timeout errors are retried up to `max_retries` times in
    /// a row; model and unknown errors stop.
    pub fn retry_tool_errors(max_retries: u32) -> Self {
        use ErrorHandlingDecision::{Retry, Stop};
        Self {
            on_tool: Retry,
            on_model: Stop,
            on_validation: Retry,
            on_rate_limit: Retry,
            on_timeout: Retry,
            on_unknown: Stop,
            max_retries,
        }
    }

    /// Tool, validation and unknown errors are ignored (the model already saw tool errors);
    /// rate limits and timeouts are retried up to 3 times in a row; model errors stop.
    pub fn ignore_tool_errors() -> Self {
        use ErrorHandlingDecision::{Ignore, Retry, Stop};
        Self {
            on_tool: Ignore,
            on_model: Stop,
            on_validation: Ignore,
            on_rate_limit: Retry,
            on_timeout: Retry,
            on_unknown: Ignore,
            max_retries: 3,
        }
    }

    /// Every error is retried up to `max_retries` times in a row.
    pub fn retry_all(max_retries: u32) -> Self {
        Self::uniform(ErrorHandlingDecision::Retry, max_retries)
    }

    fn uniform(decision: ErrorHandlingDecision, max_retries: u32) -> Self {
        Self {
            on_tool: decision,
            on_model: decision,
            on_validation: decision,
            on_rate_limit: decision,
            on_timeout: decision,
            on_unknown: decision,
            max_retries,
        }
    }

    /// A copy with another retry budget.
    pub fn with_max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = max_retries;
        self
    }

    /// A copy with another decision for one error type.
    pub fn with_decision(mut self, error_type: ErrorType, decision: ErrorHandlingDecision) -> Self {
        *self.slot(error_type) = decision;
        self
    }

    /// The configured decision for an error type (before the retry budget is applied).
    pub fn decision_for(&self, error_type: ErrorType) -> ErrorHandlingDecision {
        match error_type {
            ErrorType::Tool => self.on_tool,
            ErrorType::Model => self.on_model,
            ErrorType::Validation => self.on_validation,
            ErrorType::RateLimit => self.on_rate_limit,
            ErrorType::Timeout => self.on_timeout,
            ErrorType::Unknown => self.on_unknown,
        }
    }

    /// The decision for a failure context.
    pub fn evaluate(&self, context: &ErrorContext) -> ErrorHandlingDecision {
        if context.consecutive_failures == 0 {
            return ErrorHandlingDecision::Ignore;
        }
        match self.decision_for(context.error_type) {
            ErrorHandlingDecision::Retry if context.consecutive_failures > self.max_retries => {
                ErrorHandlingDecision::Stop
            }
            decision => decision,
        }
    }

    fn slot(&mut self, error_type: ErrorType) -> &mut ErrorHandlingDecision {
        match error_type {
            ErrorType::Tool => &mut self.on_tool,
            ErrorType::Model => &mut self.on_model,
            ErrorType::Validation => &mut self.on_validation,
            ErrorType::RateLimit => &mut self.on_rate_limit,
            ErrorType::Timeout => &mut self.on_timeout,
            ErrorType::Unknown => &mut self.on_unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failures(error_type: ErrorType, consecutive: u32) -> ErrorContext {
        ErrorContext {
            error_type,
            consecutive_failures: consecutive,
            total_failures: consecutive,
            message: Some("boom".into()),
            tool_name: None,
        }
    }

    #[test]
    fn presets_decide_per_type_and_budget() {
        use ErrorHandlingDecision::*;
        let retry = ErrorPolicy::retry_tool_errors(2);
        assert_eq!(retry.evaluate(&failures(ErrorType::Tool, 1)), Retry);
        assert_eq!(retry.evaluate(&failures(ErrorType::Tool, 2)), Retry);
        assert_eq!(retry.evaluate(&failures(ErrorType::Tool, 3)), Stop);
        assert_eq!(retry.evaluate(&failures(ErrorType::RateLimit, 1)), Retry);
        assert_eq!(retry.evaluate(&failures(ErrorType::Model, 1)), Stop);
        let ignore = ErrorPolicy::ignore_tool_errors();
        assert_eq!(ignore.evaluate(&failures(ErrorType::Tool, 9)), Ignore);
        assert_eq!(ignore.evaluate(&failures(ErrorType::Model, 1)), Stop);
        assert_eq!(
            ErrorPolicy::stop_on_any_error().evaluate(&failures(ErrorType::Tool, 1)),
            Stop
        );
        assert_eq!(
            ErrorPolicy::stop_on_any_error().evaluate(&ErrorContext::none()),
            Ignore
        );
        let custom = ErrorPolicy::stop_on_any_error().with_decision(ErrorType::Timeout, Ignore);
        assert_eq!(custom.evaluate(&failures(ErrorType::Timeout, 4)), Ignore);
    }
}
