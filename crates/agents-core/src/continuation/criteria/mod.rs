//! Built-in continuation criteria.

pub(crate) mod callable_criterion;
pub(crate) mod empty_response_check;
pub(crate) mod error_policy_criterion;
pub(crate) mod execution_time_limit;
pub(crate) mod finish_reason_check;
pub(crate) mod guards;
pub(crate) mod response_content_check;
pub(crate) mod retry_limit;
pub(crate) mod steps_limit;
pub(crate) mod token_usage_limit;
pub(crate) mod tool_call_presence_check;
