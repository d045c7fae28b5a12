//! `ContinuationOutcome`: the resolved verdict of all criteria.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::records::decision::{ContinuationDecision, StopReason};
use crate::records::evaluation::ContinuationEvaluation;

/// The name a stop hook's veto is recorded under.
const STOP_HOOK: &str = "StopHook";

/// Whether to run another step, and why, resolved from every criterion's evaluation.
///
/// Resolution: any `Forbid` stops; else any `Request` continues; else any `Stop` stops; else
/// any `Allow` continues; no evaluations stop.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContinuationOutcome {
    should_continue: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stop_reason: Option<StopReason>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    resolved_by: Option<Cow<'static, str>>,
    #[serde(default)]
    evaluations: Vec<ContinuationEvaluation>,
}

impl ContinuationOutcome {
    /// Resolves a list of evaluations.
    pub fn from_evaluations(evaluations: Vec<ContinuationEvaluation>) -> Self {
        let first = |d: ContinuationDecision| evaluations.iter().find(|e| e.decision == d);
        let (should_continue, stop_reason, resolved_by) =
            if let Some(forbid) = first(ContinuationDecision::Forbid) {
                (
                    false,
                    Some(forbid.stop_reason.unwrap_or(StopReason::Guard)),
                    Some(forbid.criterion.clone()),
                )
            } else if let Some(request) = first(ContinuationDecision::Request) {
                (true, None, Some(request.criterion.clone()))
            } else if let Some(stop) = first(ContinuationDecision::Stop) {
                (
                    false,
                    Some(stop.stop_reason.unwrap_or(StopReason::Completed)),
                    Some(stop.criterion.clone()),
                )
            } else if let Some(allow) = first(ContinuationDecision::Allow) {
                (true, None, Some(allow.criterion.clone()))
            } else {
                (false, Some(StopReason::Completed), None)
            };
        Self {
            should_continue,
            stop_reason,
            resolved_by,
            evaluations,
        }
    }

    /// This outcome overruled by a stop hook that keeps the execution going: it continues,
    /// resolved by `StopHook`, with the hook's reason recorded as one more evaluation.
    pub fn vetoed(mut self, reason: impl Into<Cow<'static, str>>) -> Self {
        self.evaluations
            .push(ContinuationEvaluation::request(STOP_HOOK).with_reason(reason));
        self.should_continue = true;
        self.stop_reason = None;
        self.resolved_by = Some(Cow::Borrowed(STOP_HOOK));
        self
    }

    /// An outcome of a single evaluation.
    pub fn from_evaluation(evaluation: ContinuationEvaluation) -> Self {
        Self::from_evaluations(vec![evaluation])
    }

    /// True when another step should run.
    pub fn should_continue(&self) -> bool {
        self.should_continue
    }

    /// Why the execution stops; `None` when it continues.
    pub fn stop_reason(&self) -> Option<StopReason> {
        self.stop_reason
    }

    /// The criterion that decided (first forbidding, requesting, stopping or allowing one).
    pub fn resolved_by(&self) -> Option<&str> {
        self.resolved_by.as_deref()
    }

    /// Every evaluation, in criteria order.
    pub fn evaluations(&self) -> &[ContinuationEvaluation] {
        &self.evaluations
    }

    /// The evaluations, taken out of the outcome.
    pub fn into_evaluations(self) -> Vec<ContinuationEvaluation> {
        self.evaluations
    }

    /// The evaluation of the named criterion.
    pub fn evaluation_for(&self, criterion: &str) -> Option<&ContinuationEvaluation> {
        self.evaluations.iter().find(|e| e.criterion == criterion)
    }

    /// The summarised decision: `Request` when continuing, `Forbid` when a guard forbade,
    /// `Stop` otherwise.
    pub fn decision(&self) -> ContinuationDecision {
        if self.should_continue {
            ContinuationDecision::Request
        } else if self
            .evaluations
            .iter()
            .any(|e| e.decision == ContinuationDecision::Forbid)
        {
            ContinuationDecision::Forbid
        } else {
            ContinuationDecision::Stop
        }
    }
}

impl std::fmt::Display for ContinuationOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.should_continue, self.stop_reason) {
            (true, _) => write!(f, "CONTINUE")?,
            (false, Some(reason)) => write!(f, "STOP ({reason})")?,
            (false, None) => write!(f, "STOP")?,
        }
        if let Some(by) = &self.resolved_by {
            write!(f, " by {by}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(decision: ContinuationDecision) -> ContinuationEvaluation {
        ContinuationEvaluation::new(format!("{decision:?}"), decision)
    }

    #[test]
    fn resolution_rules() {
        use ContinuationDecision::*;
        let cases = [
            (vec![Forbid, Request, Allow], false),
            (vec![Request, Stop], true),
            (vec![Stop, Allow], false),
            (vec![Allow, Allow], true),
            (vec![], false),
        ];
        for (decisions, expected) in cases {
            let outcome = ContinuationOutcome::from_evaluations(
                decisions.iter().copied().map(eval).collect(),
            );
            assert_eq!(outcome.should_continue(), expected, "{decisions:?}");
        }
        let forbid = ContinuationOutcome::from_evaluations(vec![
            eval(Request),
            ContinuationEvaluation::forbid("StepsLimit", StopReason::StepsLimit),
        ]);
        assert_eq!(forbid.stop_reason(), Some(StopReason::StepsLimit));
        assert_eq!(forbid.resolved_by(), Some("StepsLimit"));
        assert_eq!(forbid.to_string(), "STOP (steps_limit) by StepsLimit");
        let guard = ContinuationOutcome::from_evaluation(eval(Forbid));
        assert_eq!(guard.stop_reason(), Some(StopReason::Guard));
        let done = ContinuationOutcome::from_evaluation(eval(Stop));
        assert_eq!(done.stop_reason(), Some(StopReason::Completed));
        assert_eq!(done.decision(), Stop);
    }
}
