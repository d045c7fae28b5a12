//! `StopOnFinalDecision`: the ReAct loop's own continuation criterion.

use agents_core::{AgentState, AgentStepType, ContinuationCriterion, ContinuationEvaluation};

/// The name this criterion reports in its evaluations.
const NAME: &str = "StopOnFinalDecision";

/// Keeps a ReAct agent going while the model acts and stops it when the model answers.
///
/// - before the first step: requests a step;
/// - after a step that called a tool: requests another step (the model has to see the
///   observation and decide again);
/// - after a final answer: says the work is done;
/// - after an error step: has no objection either way, leaving the decision to the error
///   policy and the other criteria.
///
/// ```
/// use agents_core::{AgentState, AgentStep, ContinuationCriterion, ContinuationDecision};
/// use drivers_react::StopOnFinalDecision;
/// use inference::InferenceResponse;
///
/// let criterion = StopOnFinalDecision::new();
/// let state = AgentState::new();
/// assert_eq!(criterion.evaluate(&state).decision, ContinuationDecision::Request);
///
/// let step = AgentStep::new(vec![]).with_inference_response(InferenceResponse::text("42"));
/// let answered = agents_core::testing::with_recorded_step(state, step);
/// assert_eq!(criterion.evaluate(&answered).decision, ContinuationDecision::Stop);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StopOnFinalDecision;

impl StopOnFinalDecision {
    /// The criterion.
    pub fn new() -> Self {
        Self
    }
}

impl ContinuationCriterion for StopOnFinalDecision {
    fn evaluate(&self, state: &AgentState) -> ContinuationEvaluation {
        let Some(step) = state.current_step() else {
            return ContinuationEvaluation::request(NAME)
                .with_reason("no step yet: run the first step");
        };
        match step.step_type() {
            AgentStepType::ToolExecution => ContinuationEvaluation::request(NAME)
                .with_reason("the model called a tool and must see the observation"),
            AgentStepType::FinalResponse => {
                ContinuationEvaluation::stop(NAME).with_reason("the model gave its final answer")
            }
            AgentStepType::Error => ContinuationEvaluation::allow(NAME)
                .with_reason("the step failed; the error policy decides"),
        }
    }

    fn name(&self) -> &str {
        NAME
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agents_core::{AgentError, AgentStep, ContinuationDecision, ToolExecution, ToolExecutions};
    use chrono::Utc;
    use inference::InferenceResponse;
    use messages::ToolCall;
    use serde_json::json;

    fn decision(step: AgentStep) -> ContinuationDecision {
        StopOnFinalDecision::new()
            .evaluate(&agents_core::testing::with_recorded_step(
                AgentState::new(),
                step,
            ))
            .decision
    }

    #[test]
    fn tool_step_requests_another_step() {
        let call = ToolCall::new("react_1", "add", json!({"a": 1, "b": 2}));
        let now = Utc::now();
        let step = AgentStep::new(vec![])
            .with_inference_response(InferenceResponse::text("{}").with_calls([call.clone()]))
            .with_tool_executions(ToolExecutions::from(vec![ToolExecution::success(
                call, "3", now, now,
            )]));
        assert_eq!(decision(step), ContinuationDecision::Request);
    }

    #[test]
    fn final_answer_stops_and_error_defers() {
        let answer = AgentStep::new(vec![]).with_inference_response(InferenceResponse::text("3"));
        assert_eq!(decision(answer), ContinuationDecision::Stop);
        let failed = AgentStep::failure(vec![], &AgentError::validation("bad decision"));
        assert_eq!(decision(failed), ContinuationDecision::Allow);
    }
}
