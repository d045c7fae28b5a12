//! `ContinuationEvaluation`: one criterion's verdict.

use serde::{Deserialize, Serialize};

use super::{ContinuationDecision, StopReason};

/// One criterion's decision, with a readable reason.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContinuationEvaluation {
    /// The criterion's name.
    pub criterion: String,
    /// Its decision.
    pub decision: ContinuationDecision,
    /// Why, for people reading logs.
    pub reason: String,
    /// The stop reason it reports when it forbids or stops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<StopReason>,
}

impl ContinuationEvaluation {
    /// An evaluation with a reason derived from the decision
    /// (`"<criterion> forbade continuation"`, `"... requested continuation"`, ...).
    pub fn new(criterion: impl Into<String>, decision: ContinuationDecision) -> Self {
        let criterion = criterion.into();
        let verb = match decision {
            ContinuationDecision::Forbid => "forbade continuation",
            ContinuationDecision::Allow => "permits continuation",
            ContinuationDecision::Request => "requested continuation",
            ContinuationDecision::Stop => "allows stop",
        };
        Self {
            reason: format!("{criterion} {verb}"),
            criterion,
            decision,
            stop_reason: None,
        }
    }

    /// A forbidding evaluation with a stop reason.
    pub fn forbid(criterion: impl Into<String>, stop_reason: StopReason) -> Self {
        Self::new(criterion, ContinuationDecision::Forbid).with_stop_reason(stop_reason)
    }

    /// An allowing evaluation.
    pub fn allow(criterion: impl Into<String>) -> Self {
        Self::new(criterion, ContinuationDecision::Allow)
    }

    /// A requesting evaluation.
    pub fn request(criterion: impl Into<String>) -> Self {
        Self::new(criterion, ContinuationDecision::Request)
    }

    /// A stopping evaluation.
    pub fn stop(criterion: impl Into<String>) -> Self {
        Self::new(criterion, ContinuationDecision::Stop)
    }

    /// A copy with another reason.
    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = reason.into();
        self
    }

    /// A copy with a stop reason.
    pub fn with_stop_reason(mut self, stop_reason: StopReason) -> Self {
        self.stop_reason = Some(stop_reason);
        self
    }
}
