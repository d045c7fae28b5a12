//! Continuation: whether the agent runs another step. The [`ContinuationCriterion`] trait,
//! [`ContinuationCriteria`] (a list judged once per step) and the built-in criteria. The
//! values they produce (`ContinuationEvaluation`, `ContinuationOutcome`, `StopReason`) are
//! records (`crate::records`).

pub(crate) mod criteria;
pub(crate) mod criterion;
