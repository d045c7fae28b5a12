//! What failures do: the [`ErrorPolicy`](error_policy::ErrorPolicy) and the
//! [`ErrorContext`](error_context::ErrorContext) it reads. The errors themselves are records
//! (`crate::records::agent_error`).

pub(crate) mod error_context;
pub(crate) mod error_policy;
