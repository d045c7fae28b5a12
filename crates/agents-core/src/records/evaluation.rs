//! `ContinuationEvaluation`: one criterion's verdict.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::records::decision::{ContinuationDecision, StopReason};

/// One criterion's decision, with a readable reason.
///
/// Built-in criteria name themselves with `&'static str` and keep the default reason
/// (`"<criterion> <verb>"`, written out only when read), so evaluating them allocates nothing.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(from = "EvaluationDocument", into = "EvaluationDocument")]
pub struct ContinuationEvaluation {
    /// The criterion's name.
    pub criterion: Cow<'static, str>,
    /// Its decision.
    pub decision: ContinuationDecision,
    /// A reason given with [`with_reason`](Self::with_reason); `None` means the default one.
    reason: Option<Cow<'static, str>>,
    /// The stop reason it reports when it forbids or stops.
    pub stop_reason: Option<StopReason>,
}

/// The serialized shape: the reason is always written out.
#[derive(Serialize, Deserialize)]
struct EvaluationDocument {
    criterion: String,
    decision: ContinuationDecision,
    reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stop_reason: Option<StopReason>,
}

impl From<ContinuationEvaluation> for EvaluationDocument {
    fn from(evaluation: ContinuationEvaluation) -> Self {
        Self {
            reason: evaluation.reason().into_owned(),
            criterion: evaluation.criterion.into_owned(),
            decision: evaluation.decision,
            stop_reason: evaluation.stop_reason,
        }
    }
}

impl From<EvaluationDocument> for ContinuationEvaluation {
    fn from(document: EvaluationDocument) -> Self {
        Self {
            criterion: Cow::Owned(document.criterion),
            decision: document.decision,
            reason: Some(Cow::Owned(document.reason)),
            stop_reason: document.stop_reason,
        }
    }
}

impl PartialEq for ContinuationEvaluation {
    fn eq(&self, other: &Self) -> bool {
        self.criterion == other.criterion
            && self.decision == other.decision
            && self.stop_reason == other.stop_reason
            && self.reason() == other.reason()
    }
}

impl Eq for ContinuationEvaluation {}

impl ContinuationEvaluation {
    /// An evaluation with a reason derived from the decision
    /// (`"<criterion> forbade continuation"`, `"... requested continuation"`, ...).
    pub fn new(criterion: impl Into<Cow<'static, str>>, decision: ContinuationDecision) -> Self {
        Self {
            criterion: criterion.into(),
            decision,
            reason: None,
            stop_reason: None,
        }
    }

    /// Why, for people reading logs: the reason given, else `"<criterion> <verb>"`.
    pub fn reason(&self) -> Cow<'_, str> {
        if let Some(reason) = &self.reason {
            return Cow::Borrowed(reason);
        }
        let verb = match self.decision {
            ContinuationDecision::Forbid => "forbade continuation",
            ContinuationDecision::Allow => "permits continuation",
            ContinuationDecision::Request => "requested continuation",
            ContinuationDecision::Stop => "allows stop",
        };
        Cow::Owned(format!("{} {verb}", self.criterion))
    }

    /// A forbidding evaluation with a stop reason.
    pub fn forbid(criterion: impl Into<Cow<'static, str>>, stop_reason: StopReason) -> Self {
        Self::new(criterion, ContinuationDecision::Forbid).with_stop_reason(stop_reason)
    }

    /// An allowing evaluation.
    pub fn allow(criterion: impl Into<Cow<'static, str>>) -> Self {
        Self::new(criterion, ContinuationDecision::Allow)
    }

    /// A requesting evaluation.
    pub fn request(criterion: impl Into<Cow<'static, str>>) -> Self {
        Self::new(criterion, ContinuationDecision::Request)
    }

    /// A stopping evaluation.
    pub fn stop(criterion: impl Into<Cow<'static, str>>) -> Self {
        Self::new(criterion, ContinuationDecision::Stop)
    }

    /// A copy with another reason.
    pub fn with_reason(mut self, reason: impl Into<Cow<'static, str>>) -> Self {
        self.reason = Some(reason.into());
        self
    }

    /// A copy with a stop reason.
    pub fn with_stop_reason(mut self, stop_reason: StopReason) -> Self {
        self.stop_reason = Some(stop_reason);
        self
    }
}
