//! Continuation: whether the agent runs another step, and why it stopped.

mod criteria;
mod criterion;
mod decision;
mod evaluation;
mod outcome;

pub use criteria::{
    criterion_fn, CallableCriterion, EmptyResponseCheck, ErrorPolicyCriterion, ExecutionTimeLimit,
    FinishReasonCheck, ResponseContentCheck, RetryLimit, StepsLimit, TokenUsageLimit,
    ToolCallPresenceCheck,
};
pub use criterion::{ContinuationCriteria, ContinuationCriterion};
pub use decision::{ContinuationDecision, StopReason};
pub use evaluation::ContinuationEvaluation;
pub use outcome::ContinuationOutcome;
