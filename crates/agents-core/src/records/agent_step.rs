//! `AgentStep`: what one step of the loop produced.

use std::sync::Arc;

use inference::{FinishReason, InferenceResponse, Usage};
use messages::{Message, Messages, ToolCall};
use serde::{Deserialize, Serialize};

use crate::records::agent_error::AgentError;
use crate::records::cost::RunCost;
use crate::records::step_error::StepError;
use crate::records::tool_execution::{ToolExecution, ToolExecutions};

/// The kind of a step, derived from its content.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentStepType {
    /// The model asked for tools and they ran.
    ToolExecution,
    /// The model answered.
    FinalResponse,
    /// The step failed (an error, or a failed tool execution).
    Error,
}

/// Everything a driver puts into an [`AgentStep`], for [`AgentStep::from_parts`]. Usage and
/// finish reason come from the inference response.
#[derive(Clone, Debug, Default)]
pub struct StepParts {
    /// The step's id: a driver passes the one its agent gives the step
    /// ([`StepContext::step_id`](crate::StepContext::step_id)), so no other id is made and
    /// replaced; `None` makes a fresh uuid v7.
    pub id: Option<Arc<str>>,
    /// The messages the model was given.
    pub input_messages: Messages,
    /// Tool calls and results (or ReAct thoughts and observations).
    pub trace_messages: Messages,
    /// The model's answer.
    pub response_messages: Messages,
    /// The tool calls run in the step, with their outcomes.
    pub tool_executions: ToolExecutions,
    /// What the model returned.
    pub inference_response: Option<InferenceResponse>,
    /// What went wrong, if anything.
    pub errors: Vec<StepError>,
}

/// An immutable snapshot of one step: what went in, what came out, what it cost.
///
/// The output is split in two (the point of the project): `trace_messages` are the tool
/// invocations and results (or ReAct thoughts and observations) and `response_messages` are the
/// model's answer. [`AgentStep::output_messages`] gives both, trace first.
///
/// Built by drivers:
///
/// ```
/// use agents_core::AgentStep;
/// use inference::InferenceResponse;
/// use messages::Message;
///
/// let response = InferenceResponse::text("Hello!");
/// let step = AgentStep::new(vec![Message::user("Hi")])
///     .with_response_messages(vec![response.to_message()])
///     .with_inference_response(response);
/// assert_eq!(step.output_messages().len(), 1);
/// assert_eq!(step.step_type(), agents_core::AgentStepType::FinalResponse);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentStep {
    id: Arc<str>,
    #[serde(default)]
    input_messages: Messages,
    #[serde(default)]
    trace_messages: Messages,
    #[serde(default)]
    response_messages: Messages,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    inference_response: Option<InferenceResponse>,
    #[serde(default, skip_serializing_if = "ToolExecutions::is_empty")]
    tool_executions: ToolExecutions,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    errors: Vec<StepError>,
    #[serde(default)]
    usage: Usage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    finish_reason: Option<FinishReason>,
    #[serde(default, skip_serializing_if = "RunCost::is_zero")]
    cost: RunCost,
}

impl AgentStep {
    /// An empty step (fresh uuid) with the messages the model was given.
    #[inline]
    pub fn new(input_messages: impl Into<Messages>) -> Self {
        Self {
            id: crate::ids::new_id(),
            input_messages: input_messages.into(),
            trace_messages: Messages::new(),
            response_messages: Messages::new(),
            inference_response: None,
            tool_executions: ToolExecutions::new(),
            errors: Vec::new(),
            usage: Usage::default(),
            finish_reason: None,
            cost: RunCost::zero(),
        }
    }

    /// A step built from all its parts at once: what a driver has after the model answered
    /// and the tools ran. The same as [`new`](Self::new) followed by the `with_*` methods,
    /// without moving the step from one builder call to the next.
    ///
    /// ```
    /// use agents_core::{AgentStep, StepParts};
    /// use inference::InferenceResponse;
    /// use messages::Message;
    ///
    /// let response = InferenceResponse::text("Hello!");
    /// let step = AgentStep::from_parts(StepParts {
    ///     input_messages: vec![Message::user("Hi")].into(),
    ///     response_messages: response.to_message().into(),
    ///     inference_response: Some(response),
    ///     ..StepParts::default()
    /// });
    /// assert_eq!(step.output_messages().len(), 1);
    /// assert_eq!(step.finish_reason(), Some(inference::FinishReason::Stop));
    /// ```
    #[inline]
    pub fn from_parts(parts: StepParts) -> Self {
        let (usage, finish_reason) = match &parts.inference_response {
            Some(response) => (response.usage(), Some(response.finish_reason())),
            None => (Usage::default(), None),
        };
        Self {
            id: parts.id.unwrap_or_else(crate::ids::new_id),
            input_messages: parts.input_messages,
            trace_messages: parts.trace_messages,
            response_messages: parts.response_messages,
            inference_response: parts.inference_response,
            tool_executions: parts.tool_executions,
            errors: parts.errors,
            usage,
            finish_reason,
            cost: RunCost::zero(),
        }
    }

    /// A step exactly as a serialized document records it: its id, parts, usage and finish
    /// reason as written (not derived again from the inference response).
    pub(crate) fn from_record(
        parts: StepParts,
        usage: Usage,
        finish_reason: Option<FinishReason>,
    ) -> Self {
        Self {
            usage,
            finish_reason,
            ..Self::from_parts(parts)
        }
    }

    /// A failed step: the input and one error.
    pub fn failure(input_messages: impl Into<Messages>, error: &AgentError) -> Self {
        Self::new(input_messages).with_error(StepError::from(error))
    }

    pub(crate) fn shared_id(&self) -> &Arc<str> {
        &self.id
    }

    /// A copy with another id (a `&str`, a `String`, or a shared `Arc<str>`, kept as is).
    pub fn with_id(mut self, id: impl Into<Arc<str>>) -> Self {
        self.id = id.into();
        self
    }

    /// A copy with the model's response; usage and finish reason are taken from it.
    #[inline]
    pub fn with_inference_response(mut self, response: InferenceResponse) -> Self {
        self.usage = response.usage();
        self.finish_reason = Some(response.finish_reason());
        self.inference_response = Some(response);
        self
    }

    /// A copy with the tool trace (assistant tool-call messages and tool results, or ReAct
    /// thoughts and observations).
    #[inline]
    pub fn with_trace_messages(mut self, messages: impl Into<Messages>) -> Self {
        self.trace_messages = messages.into();
        self
    }

    /// A copy with the answer messages.
    #[inline]
    pub fn with_response_messages(mut self, messages: impl Into<Messages>) -> Self {
        self.response_messages = messages.into();
        self
    }

    /// A copy with the tool executions.
    #[inline]
    pub fn with_tool_executions(mut self, executions: ToolExecutions) -> Self {
        self.tool_executions = executions;
        self
    }

    /// A copy with one more error.
    #[inline]
    pub fn with_error(mut self, error: impl Into<StepError>) -> Self {
        self.errors.push(error.into());
        self
    }

    /// A copy with another usage (e.g. the sum of several inference calls).
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = usage;
        self
    }

    /// A copy with another finish reason.
    pub fn with_finish_reason(mut self, reason: FinishReason) -> Self {
        self.finish_reason = Some(reason);
        self
    }

    /// The step's id: a uuid v7 made with the step (or the one given); its
    /// [`StepExecution`](crate::StepExecution) has the same id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// What the model was given.
    pub fn input_messages(&self) -> &Messages {
        &self.input_messages
    }

    /// Tool invocations and results (or ReAct thought/action/observation text).
    pub fn trace_messages(&self) -> &Messages {
        &self.trace_messages
    }

    /// The model's answer.
    pub fn response_messages(&self) -> &Messages {
        &self.response_messages
    }

    /// Trace then response (the legacy view of everything the step produced).
    pub fn output_messages(&self) -> Messages {
        self.trace_messages.concat(&self.response_messages)
    }

    /// The model's response, when the step got one.
    pub fn inference_response(&self) -> Option<&InferenceResponse> {
        self.inference_response.as_ref()
    }

    /// The tool calls that ran.
    pub fn tool_executions(&self) -> &ToolExecutions {
        &self.tool_executions
    }

    /// The tool calls the model asked for (those of the response, else those executed).
    pub fn requested_tool_calls(&self) -> Vec<ToolCall> {
        match &self.inference_response {
            Some(response) if response.has_tool_calls() => response.tool_calls().to_vec(),
            _ => self.tool_executions.calls(),
        }
    }

    /// True when the model asked for tool calls.
    pub fn has_tool_calls(&self) -> bool {
        self.inference_response
            .as_ref()
            .is_some_and(InferenceResponse::has_tool_calls)
            || !self.tool_executions.is_empty()
    }

    /// The errors recorded on the step (failed tool executions are not repeated here; see
    /// [`AgentStep::has_errors`]).
    pub fn errors(&self) -> &[StepError] {
        &self.errors
    }

    /// True when the step recorded errors or a tool execution failed.
    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty() || self.tool_executions.has_errors()
    }

    /// Every error message: failed tool executions first, then the step's errors.
    pub fn error_messages(&self) -> Vec<String> {
        self.tool_executions
            .errors()
            .map(tool_error_line)
            .chain(self.errors.iter().map(|e| e.message.clone()))
            .collect()
    }

    /// Tokens used by the step.
    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// What the step cost, priced by the agent that recorded it (its
    /// [`ModelCatalog`](inference::ModelCatalog), the model the inference reported); zero
    /// for a step not recorded by an agent yet.
    pub fn cost(&self) -> RunCost {
        self.cost
    }

    /// A copy with this cost (the agent sets it when it records the step).
    pub fn with_cost(mut self, cost: RunCost) -> Self {
        self.cost = cost;
        self
    }

    /// Why the model stopped, when the step got a response.
    pub fn finish_reason(&self) -> Option<FinishReason> {
        self.finish_reason
    }

    /// The step's kind: `Error` if anything failed, else `ToolExecution` if the model asked for
    /// tools, else `FinalResponse`.
    pub fn step_type(&self) -> AgentStepType {
        if self.has_errors() {
            AgentStepType::Error
        } else if self.has_tool_calls() {
            AgentStepType::ToolExecution
        } else {
            AgentStepType::FinalResponse
        }
    }

    /// The last assistant answer of the step: non-empty text and no tool calls.
    pub fn final_response(&self) -> Option<&Message> {
        final_assistant_message(&self.response_messages)
    }

    /// [`final_response`](Self::final_response), shared (keeping it copies nothing).
    pub fn final_response_shared(&self) -> Option<&Arc<Message>> {
        self.response_messages
            .iter_shared()
            .filter(|m| is_final_answer(m))
            .last()
    }
}

fn is_final_answer(message: &Message) -> bool {
    message.role() == messages::Role::Assistant && !message.has_tool_calls() && message.has_text()
}

/// The last assistant message with non-empty text and no tool calls.
pub(crate) fn final_assistant_message(messages: &Messages) -> Option<&Message> {
    messages.iter().rev().find(|m| is_final_answer(m))
}

/// How a failed tool execution reads among a step's errors: "tool `name`: message".
pub(crate) fn tool_error_line(execution: &ToolExecution) -> String {
    format!(
        "tool `{}`: {}",
        execution.name(),
        execution.error_message().unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::records::tool_execution::ToolFailureKind;

    #[test]
    fn step_type_is_derived() {
        let call = ToolCall::new("c1", "search", json!({"q": "x"}));
        let answer = AgentStep::new(Messages::new())
            .with_inference_response(InferenceResponse::text("done"))
            .with_response_messages(vec![Message::assistant("done")]);
        assert_eq!(answer.step_type(), AgentStepType::FinalResponse);
        assert_eq!(
            answer.final_response().map(Message::text).as_deref(),
            Some("done")
        );

        let now = chrono::Utc::now();
        let ok = ToolExecution::success(call.clone(), "found", now, now);
        let tools = AgentStep::new(Messages::new())
            .with_inference_response(InferenceResponse::with_tool_calls([call.clone()]))
            .with_tool_executions(vec![ok].into());
        assert_eq!(tools.step_type(), AgentStepType::ToolExecution);
        assert!(tools.final_response().is_none());

        let failed = ToolExecution::failure(call, ToolFailureKind::Failed, "down", now, now);
        let broken = tools.clone().with_tool_executions(vec![failed].into());
        assert_eq!(broken.step_type(), AgentStepType::Error);
        assert_eq!(broken.error_messages(), vec!["tool `search`: down"]);

        let failure = AgentStep::failure(Messages::new(), &AgentError::driver("no model"));
        assert_eq!(failure.step_type(), AgentStepType::Error);
        assert_eq!(
            failure.errors()[0].error_type,
            crate::records::error_type::ErrorType::Model
        );
    }
}
