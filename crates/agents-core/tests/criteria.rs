#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! Built-in continuation criteria judged on hand-made states.

use agents_core::testing::{with_judged_step, with_recorded_step};
use agents_core::{
    criterion_fn, AgentState, AgentStep, ContinuationCriteria, ContinuationCriterion,
    ContinuationDecision, ContinuationEvaluation, ContinuationOutcome, ErrorPolicy,
    ErrorPolicyCriterion, ErrorType, FinishReasonCheck, ResponseContentCheck, RetryLimit,
    StepError, StopReason, ToolCallPresenceCheck,
};
use inference::{FinishReason, InferenceResponse};
use messages::{Message, ToolCall};
use serde_json::json;

fn answer(text: &str) -> AgentStep {
    AgentStep::new(Vec::<Message>::new())
        .with_response_messages(vec![Message::assistant(text)])
        .with_inference_response(InferenceResponse::text(text))
}

fn failed() -> AgentStep {
    AgentStep::new(Vec::<Message>::new()).with_error(StepError::new(ErrorType::Model, "bad output"))
}

fn recorded(steps: Vec<AgentStep>) -> AgentState {
    steps
        .into_iter()
        .enumerate()
        .fold(AgentState::new(), |state, (i, step)| {
            let outcome =
                ContinuationOutcome::from_evaluation(ContinuationEvaluation::request("Test"));
            let _ = i;
            with_judged_step(state, step, outcome)
        })
}

#[test]
fn empty_criteria_run_exactly_one_step() {
    let criteria = ContinuationCriteria::new();
    assert!(criteria.evaluate_all(&AgentState::new()).should_continue());
    let after = with_recorded_step(AgentState::new(), answer("hi"));
    let outcome = criteria.evaluate_all(&after);
    assert!(!outcome.should_continue());
    assert_eq!(outcome.stop_reason(), Some(StopReason::Completed));
}

#[test]
fn tool_call_presence() {
    let check = ToolCallPresenceCheck::new();
    assert_eq!(
        check.evaluate(&AgentState::new()).decision,
        ContinuationDecision::Request
    );
    let tools = AgentStep::new(Vec::<Message>::new()).with_inference_response(
        InferenceResponse::with_tool_calls([ToolCall::new("c", "t", json!({}))]),
    );
    assert_eq!(
        check
            .evaluate(&with_recorded_step(AgentState::new(), tools))
            .decision,
        ContinuationDecision::Request
    );
    assert_eq!(
        check
            .evaluate(&with_recorded_step(AgentState::new(), answer("x")))
            .decision,
        ContinuationDecision::Stop
    );
}

#[test]
fn finish_reason_check_forbids_listed_reasons() {
    let check = FinishReasonCheck::new([FinishReason::Length, FinishReason::ContentFilter]);
    let cut = answer("partial").with_finish_reason(FinishReason::Length);
    let evaluation = check.evaluate(&with_recorded_step(AgentState::new(), cut));
    assert_eq!(evaluation.decision, ContinuationDecision::Forbid);
    assert_eq!(evaluation.stop_reason, Some(StopReason::FinishReason));
    assert_eq!(
        check
            .evaluate(&with_recorded_step(AgentState::new(), answer("ok")))
            .decision,
        ContinuationDecision::Allow
    );
}

#[test]
fn response_content_check_follows_its_predicate() {
    let check = ResponseContentCheck::new(|step| {
        step.final_response()
            .is_some_and(|m| m.text().contains("CONTINUE"))
    });
    assert_eq!(
        check.evaluate(&AgentState::new()).decision,
        ContinuationDecision::Allow
    );
    assert_eq!(
        check
            .evaluate(&with_recorded_step(
                AgentState::new(),
                answer("CONTINUE please")
            ))
            .decision,
        ContinuationDecision::Request
    );
    assert_eq!(
        check
            .evaluate(&with_recorded_step(AgentState::new(), answer("done")))
            .decision,
        ContinuationDecision::Stop
    );
}

#[test]
fn retry_limit_counts_failures_in_a_row() {
    let limit = RetryLimit::new(2);
    let one = recorded(vec![answer("a"), failed()]);
    assert_eq!(limit.evaluate(&one).decision, ContinuationDecision::Allow);
    let two = with_recorded_step(recorded(vec![failed(), answer("a"), failed()]), failed());
    let evaluation = limit.evaluate(&two);
    assert_eq!(evaluation.decision, ContinuationDecision::Forbid);
    assert_eq!(evaluation.stop_reason, Some(StopReason::RetryLimit));
}

#[test]
fn error_policy_criterion_maps_decisions() {
    let state = with_recorded_step(AgentState::new(), failed());
    let stop = ErrorPolicyCriterion::new(ErrorPolicy::stop_on_any_error()).evaluate(&state);
    assert_eq!(stop.decision, ContinuationDecision::Forbid);
    assert_eq!(stop.stop_reason, Some(StopReason::Error));
    assert!(
        stop.reason()
            .contains("model error (1 in a row): bad output"),
        "{}",
        stop.reason()
    );
    let retry = ErrorPolicyCriterion::new(ErrorPolicy::retry_all(1)).evaluate(&state);
    assert_eq!(retry.decision, ContinuationDecision::Request);
    let fine = ErrorPolicyCriterion::default()
        .evaluate(&with_recorded_step(AgentState::new(), answer("x")));
    assert_eq!(fine.decision, ContinuationDecision::Allow);
}

#[test]
fn closures_are_criteria() {
    let criteria = ContinuationCriteria::new()
        .with(criterion_fn("UntilThree", |s: &AgentState| {
            if s.step_count() < 3 {
                ContinuationDecision::Request
            } else {
                ContinuationDecision::Stop
            }
        }))
        .with(ToolCallPresenceCheck::new());
    assert_eq!(criteria.names(), ["UntilThree", "ToolCallPresenceCheck"]);
    let two = recorded(vec![answer("a"), answer("b")]);
    assert!(criteria.evaluate_all(&two).should_continue());
    let three = with_recorded_step(two, answer("c"));
    let outcome = criteria.evaluate_all(&three);
    assert!(!outcome.should_continue());
    assert_eq!(
        outcome.evaluation_for("UntilThree").unwrap().reason(),
        "UntilThree allows stop"
    );
}
