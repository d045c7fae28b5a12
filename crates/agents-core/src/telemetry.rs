//! The agent's spans: `invoke_agent {name}` around each [`Agent::step`](crate::Agent::step)
//! call and `execute_tool {tool}` around each tool call, with the gen_ai attribute names of
//! [`inference::telemetry`] (where the `chat {model}` span of each inference comes from).
//!
//! One `invoke_agent` span per `step` call, not per execution: a run made of steps may span
//! processes and days (durable sessions, approvals), and a span cannot outlive the process
//! that opened it. The spans of one execution share `agents.execution.id`; `agents.step.number`
//! orders them. Inside a step the chat spans of the driver and the `execute_tool` spans of
//! its calls are children of the `invoke_agent` span; a subagent runs inside its parent's
//! `execute_tool` span, so its `invoke_agent` spans are children of that.
//!
//! Contents (the step's output messages, tool arguments and results) are recorded only
//! when the agent was built with content capture on.

use serde::Serialize;
use tracing::field::Empty;
use tracing::Span;

use inference::telemetry::{
    record_usage, ERROR_TYPE, GEN_AI_AGENT_NAME, GEN_AI_OPERATION_NAME, GEN_AI_TOOL_CALL_ID,
    GEN_AI_TOOL_NAME, GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
    GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, GEN_AI_USAGE_INPUT_TOKENS, GEN_AI_USAGE_OUTPUT_TOKENS,
    OPERATION_EXECUTE_TOOL, OPERATION_INVOKE_AGENT, OTEL_KIND, OTEL_NAME, OTEL_STATUS_CODE,
};

use crate::records::agent_status::AgentStatus;
use crate::records::tool_execution::ToolExecution;
use crate::state::agent_state::AgentState;

/// `gen_ai.agent.id`: the agent's id (the state's `agent_id`, one per conversation).
pub const GEN_AI_AGENT_ID: &str = "gen_ai.agent.id";
/// `gen_ai.output.messages`: the step's output messages as JSON (content capture only).
pub const GEN_AI_OUTPUT_MESSAGES: &str = "gen_ai.output.messages";
/// `gen_ai.tool.call.arguments`: a tool call's arguments as JSON (content capture only).
pub const GEN_AI_TOOL_CALL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
/// `gen_ai.tool.call.result`: the text a tool call returned (content capture only).
pub const GEN_AI_TOOL_CALL_RESULT: &str = "gen_ai.tool.call.result";
/// `agents.execution.id`: the execution the step belongs to.
pub const AGENTS_EXECUTION_ID: &str = "agents.execution.id";
/// `agents.step.number`: the 1-based number of the step within its execution.
pub const AGENTS_STEP_NUMBER: &str = "agents.step.number";
/// `agents.cost.usd`: what the step cost in dollars (absent when its price is unknown).
pub const AGENTS_COST_USD: &str = "agents.cost.usd";
/// `agents.stop_reason`: why the execution stopped (on the span of its last step).
pub const AGENTS_STOP_REASON: &str = "agents.stop_reason";

/// An `invoke_agent {name}` span (kind internal) for one step of `state`'s agent.
///
/// Field values are written so that nothing is formatted for a span nobody records: `otel.name`
/// is a `format_args!`, not a `String`. (sqlx turns on tracing's `log` feature, under which a
/// span with no subscriber still hands its fields to the `log` bridge on every step.)
pub(crate) fn invoke_agent_span(name: &str, state: &AgentState) -> Span {
    tracing::info_span!(
        target: "gen_ai",
        "invoke_agent",
        { OTEL_NAME } = tracing::field::display(format_args!("{OPERATION_INVOKE_AGENT} {name}")),
        { OTEL_KIND } = "internal",
        { GEN_AI_OPERATION_NAME } = OPERATION_INVOKE_AGENT,
        { GEN_AI_AGENT_NAME } = name,
        { GEN_AI_AGENT_ID } = state.agent_id(),
        { AGENTS_EXECUTION_ID } = Empty,
        { AGENTS_STEP_NUMBER } = Empty,
        { GEN_AI_USAGE_INPUT_TOKENS } = Empty,
        { GEN_AI_USAGE_OUTPUT_TOKENS } = Empty,
        { GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS } = Empty,
        { GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS } = Empty,
        { AGENTS_COST_USD } = Empty,
        { AGENTS_STOP_REASON } = Empty,
        { GEN_AI_OUTPUT_MESSAGES } = Empty,
        { ERROR_TYPE } = Empty,
        { OTEL_STATUS_CODE } = Empty,
    )
}

/// Records on an `invoke_agent` span what the step did: execution, step number, usage,
/// cost, the stop reason when the execution finished, failures, and (with `capture`) the
/// step's output messages.
pub(crate) fn record_step(span: &Span, state: &AgentState, capture: bool) {
    if span.is_disabled() {
        return;
    }
    if let Some(execution) = state.execution() {
        span.record(AGENTS_EXECUTION_ID, execution.id());
    }
    let Some(record) = state.step_executions().last() else {
        return;
    };
    let step = record.step();
    span.record(
        AGENTS_STEP_NUMBER,
        i64::try_from(record.step_number()).unwrap_or(i64::MAX),
    );
    record_usage(span, step.usage());
    if let Some(usd) = step.cost().usd() {
        span.record(AGENTS_COST_USD, usd);
    }
    if state.status() != AgentStatus::InProgress {
        if let Some(reason) = state.stop_reason() {
            span.record(AGENTS_STOP_REASON, snake_name(&reason).as_str());
        }
    }
    if let Some(error) = step.errors().first() {
        span.record(ERROR_TYPE, snake_name(&error.error_type).as_str());
        span.record(OTEL_STATUS_CODE, "error");
    } else if state.status() == AgentStatus::Failed {
        span.record(ERROR_TYPE, "execution_failed");
        span.record(OTEL_STATUS_CODE, "error");
    }
    if capture {
        let output = step.output_messages();
        let output: Vec<&messages::Message> = output.iter().collect();
        if let Ok(json) = serde_json::to_string(&output) {
            span.record(GEN_AI_OUTPUT_MESSAGES, json.as_str());
        }
    }
}

/// An `execute_tool {tool}` span (kind internal) for one call.
pub(crate) fn execute_tool_span(tool: &str, call_id: &str) -> Span {
    tracing::info_span!(
        target: "gen_ai",
        "execute_tool",
        { OTEL_NAME } = tracing::field::display(format_args!("{OPERATION_EXECUTE_TOOL} {tool}")),
        { OTEL_KIND } = "internal",
        { GEN_AI_OPERATION_NAME } = OPERATION_EXECUTE_TOOL,
        { GEN_AI_TOOL_NAME } = tool,
        { GEN_AI_TOOL_CALL_ID } = call_id,
        { GEN_AI_TOOL_CALL_ARGUMENTS } = Empty,
        { GEN_AI_TOOL_CALL_RESULT } = Empty,
        { ERROR_TYPE } = Empty,
        { OTEL_STATUS_CODE } = Empty,
    )
}

/// Records a finished call on its `execute_tool` span: `error.type` (the failure kind,
/// `snake_case`) on failure, and (with `capture`) its arguments and result.
pub(crate) fn record_tool(span: &Span, execution: &ToolExecution, capture: bool) {
    if span.is_disabled() {
        return;
    }
    if let Some(kind) = execution.failure_kind() {
        span.record(ERROR_TYPE, snake_name(&kind).as_str());
        span.record(OTEL_STATUS_CODE, "error");
    }
    if capture {
        span.record(
            GEN_AI_TOOL_CALL_ARGUMENTS,
            execution.arguments().to_string().as_str(),
        );
        span.record(GEN_AI_TOOL_CALL_RESULT, execution.result_text().as_str());
    }
}

/// The `snake_case` name serde gives a unit variant (`timed_out`, `cost_limit`).
fn snake_name(value: &impl Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        _ => "other".to_owned(),
    }
}
