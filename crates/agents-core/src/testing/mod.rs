//! Test support for this crate and the crates above (feature `testing`): a [`ScriptedDriver`]
//! and proptest strategies for agent data.

mod scripted_driver;

use chrono::{TimeZone, Utc};
use inference::{FinishReason, InferenceResponse, Usage};
use messages::testing as msg;
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;

pub use scripted_driver::ScriptedDriver;

use crate::records::agent_status::AgentStatus;
use crate::records::agent_step::AgentStep;
use crate::records::decision::{ContinuationDecision, StopReason};
use crate::records::error_type::ErrorType;
use crate::records::evaluation::ContinuationEvaluation;
use crate::records::outcome::ContinuationOutcome;
use crate::records::step_error::StepError;
use crate::records::step_execution::StepExecution;
use crate::records::tool_execution::{ToolExecution, ToolFailureKind};
use crate::state::agent_state::{AgentState, Execution};

/// `state` with `step` recorded as the last step of its execution (started if it has none),
/// with an outcome of no evaluations: what a criterion sees when the loop asks it about a step.
/// For testing criteria and processors without running an agent.
pub fn with_recorded_step(state: AgentState, step: AgentStep) -> AgentState {
    let state = if state.execution().is_some() {
        state
    } else {
        let now = state.updated_at();
        state.started(Execution::new(crate::ids::new_id(), now))
    };
    let at = state.updated_at();
    let number = state.next_step_number();
    let pending = ContinuationOutcome::from_evaluations(Vec::new());
    state.recorded(StepExecution::new(step, pending, at, at, number))
}

/// [`with_recorded_step`] with the verdict `outcome` recorded on the step.
pub fn with_judged_step(
    state: AgentState,
    step: AgentStep,
    outcome: ContinuationOutcome,
) -> AgentState {
    with_recorded_step(state, step).judged(outcome)
}

/// Any token usage (small numbers).
pub fn usage() -> impl Strategy<Value = Usage> {
    (0u64..500, 0u64..500, 0u64..50, 0u64..50, 0u64..50).prop_map(|(i, o, cr, cw, r)| Usage {
        input_tokens: i,
        output_tokens: o,
        cache_read_tokens: cr,
        cache_write_tokens: cw,
        reasoning_tokens: r,
    })
}

/// Any stop reason.
pub fn stop_reason() -> impl Strategy<Value = StopReason> {
    proptest::sample::select(vec![
        StopReason::Completed,
        StopReason::StepsLimit,
        StopReason::TokenLimit,
        StopReason::TimeLimit,
        StopReason::RetryLimit,
        StopReason::Error,
        StopReason::FinishReason,
        StopReason::Guard,
        StopReason::UserRequested,
        StopReason::EmptyResponse,
    ])
}

/// Any error type.
pub fn error_type() -> impl Strategy<Value = ErrorType> {
    proptest::sample::select(vec![
        ErrorType::Tool,
        ErrorType::Model,
        ErrorType::Validation,
        ErrorType::RateLimit,
        ErrorType::Timeout,
        ErrorType::Unknown,
    ])
}

/// A continuation outcome resolved from a few evaluations.
pub fn continuation_outcome() -> impl Strategy<Value = ContinuationOutcome> {
    let decision = proptest::sample::select(vec![
        ContinuationDecision::Forbid,
        ContinuationDecision::Allow,
        ContinuationDecision::Request,
        ContinuationDecision::Stop,
    ]);
    let evaluation = ("[A-Z][a-zA-Z]{2,12}", decision, option::of(stop_reason())).prop_map(
        |(name, decision, reason)| {
            let evaluation = ContinuationEvaluation::new(name, decision);
            match reason {
                Some(reason) => evaluation.with_stop_reason(reason),
                None => evaluation,
            }
        },
    );
    vec(evaluation, 0..4).prop_map(ContinuationOutcome::from_evaluations)
}

fn time() -> impl Strategy<Value = chrono::DateTime<Utc>> {
    (1_600_000_000i64..1_900_000_000, 0u32..1_000_000_000).prop_map(|(secs, nanos)| {
        Utc.timestamp_opt(secs, nanos)
            .single()
            .unwrap_or_else(Utc::now)
    })
}

/// A tool execution (success or failure).
pub fn tool_execution() -> impl Strategy<Value = ToolExecution> {
    let kind = proptest::sample::select(vec![
        ToolFailureKind::UnknownTool,
        ToolFailureKind::InvalidArguments,
        ToolFailureKind::Failed,
        ToolFailureKind::Panicked,
        ToolFailureKind::TimedOut,
        ToolFailureKind::Blocked,
    ]);
    (
        msg::tool_call(),
        option::of((kind, "[a-z ]{0,16}")),
        "[a-z ]{0,16}",
        time(),
    )
        .prop_map(|(call, failure, content, at)| match failure {
            Some((kind, message)) => ToolExecution::failure(call, kind, message, at, at),
            None => ToolExecution::success(call, content, at, at),
        })
}

/// A step with any mix of trace, response, tool executions and errors.
pub fn agent_step() -> impl Strategy<Value = AgentStep> {
    let response = option::of(
        ("[a-zA-Z ]{0,20}", vec(msg::tool_call(), 0..2), usage()).prop_map(
            |(text, calls, usage)| {
                InferenceResponse::text(text)
                    .with_calls(calls)
                    .with_usage(usage)
                    .with_finish_reason(FinishReason::Stop)
            },
        ),
    );
    (
        msg::messages(3),
        msg::messages(3),
        msg::messages(2),
        response,
        vec(tool_execution(), 0..3),
        vec((error_type(), "[a-z ]{1,16}"), 0..2),
    )
        .prop_map(|(input, trace, answer, response, executions, errors)| {
            let mut step = AgentStep::new(input)
                .with_trace_messages(trace)
                .with_response_messages(answer)
                .with_tool_executions(executions.into());
            if let Some(response) = response {
                step = step.with_inference_response(response);
            }
            errors.into_iter().fold(step, |step, (kind, message)| {
                step.with_error(StepError::new(kind, message))
            })
        })
}

/// A state with a random store, metadata, recorded steps, and sometimes a parent, a running
/// execution or a finished one.
pub fn agent_state() -> impl Strategy<Value = AgentState> {
    (
        msg::message_store(),
        msg::metadata(),
        vec((agent_step(), continuation_outcome(), time()), 0..3),
        option::of("[a-f0-9]{8}"),
        time(),
        option::of((stop_reason(), any::<bool>())),
    )
        .prop_map(|(store, metadata, steps, parent, started, stop)| {
            let mut state = AgentState::new()
                .with_store(store)
                .with_metadata_map(metadata);
            if let Some(parent) = parent {
                state = state.with_parent_agent_id(parent);
            }
            if !steps.is_empty() {
                state = state.started(Execution::new(crate::ids::new_id(), started));
            }
            for (number, (step, outcome, at)) in steps.into_iter().enumerate() {
                let pending = ContinuationOutcome::from_evaluations(Vec::new());
                let execution = StepExecution::new(step, pending, at, at, number + 1);
                state = state.recorded(execution).judged(outcome);
            }
            if let Some((reason, failed)) = stop {
                let status = if failed {
                    AgentStatus::Failed
                } else {
                    AgentStatus::Completed
                };
                state = state.finished(status, reason);
            }
            state
        })
}
