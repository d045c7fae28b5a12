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

use crate::{
    AgentState, AgentStatus, AgentStep, CachedContext, ContinuationDecision,
    ContinuationEvaluation, ContinuationOutcome, ErrorType, StepError, StepExecution, StopReason,
    ToolExecution, ToolFailureKind,
};

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

/// A state with a random store, metadata, recorded steps, and sometimes a parent, a cached
/// context, a running step or an interruption.
pub fn agent_state() -> impl Strategy<Value = AgentState> {
    (
        msg::message_store(),
        msg::metadata(),
        vec((agent_step(), continuation_outcome(), time()), 0..3),
        option::of("[a-f0-9]{8}"),
        option::of(agent_step()),
        any::<bool>(),
        option::of(stop_reason()),
        proptest::sample::select(vec![
            AgentStatus::InProgress,
            AgentStatus::Completed,
            AgentStatus::Failed,
        ]),
        msg::messages(2),
    )
        .prop_map(
            |(store, metadata, steps, parent, pending, begun, stop, status, system)| {
                let mut state = AgentState::new()
                    .with_store(store)
                    .with_metadata_map(metadata)
                    .with_cached_context(CachedContext::new().with_messages(system));
                if let Some(parent) = parent {
                    state = state.with_parent_agent_id(parent);
                }
                for (number, (step, outcome, at)) in steps.into_iter().enumerate() {
                    let execution = StepExecution::new(step, outcome, at, at, number + 1);
                    state = state.record_step_execution(execution);
                }
                if begun {
                    state = state.begin_step_execution();
                }
                if let Some(step) = pending {
                    state = state.record_step(step);
                }
                if let Some(stop) = stop {
                    state = state.with_stop_reason(stop);
                }
                state.with_status(status)
            },
        )
}
