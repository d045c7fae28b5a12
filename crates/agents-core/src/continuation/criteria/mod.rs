//! Built-in continuation criteria.

mod callable_criterion;
mod empty_response_check;
mod error_policy_criterion;
mod execution_time_limit;
mod finish_reason_check;
mod response_content_check;
mod retry_limit;
mod steps_limit;
mod token_usage_limit;
mod tool_call_presence_check;

pub use callable_criterion::{criterion_fn, CallableCriterion};

pub use empty_response_check::EmptyResponseCheck;
pub use error_policy_criterion::ErrorPolicyCriterion;
pub use execution_time_limit::ExecutionTimeLimit;
pub use finish_reason_check::FinishReasonCheck;
pub use response_content_check::ResponseContentCheck;
pub use retry_limit::RetryLimit;
pub use steps_limit::StepsLimit;
pub use token_usage_limit::TokenUsageLimit;
pub use tool_call_presence_check::ToolCallPresenceCheck;
