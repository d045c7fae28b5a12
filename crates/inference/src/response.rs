//! `InferenceResponse`: what a model answered.

use messages::{Message, SharedSlice, ToolCall};
use serde::{Deserialize, Serialize};

use crate::{FinishReason, Usage};

/// A model's answer: text, tool calls, finish reason, usage.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct InferenceResponse {
    content: String,
    #[serde(skip_serializing_if = "<[ToolCall]>::is_empty")]
    tool_calls: SharedSlice<ToolCall>,
    finish_reason: FinishReason,
    usage: Usage,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<String>,
}

impl InferenceResponse {
    /// A plain text answer (finish reason `Stop`).
    pub fn text(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            finish_reason: FinishReason::Stop,
            ..Self::default()
        }
    }

    /// An answer that requests tool calls (finish reason `ToolCalls`).
    pub fn with_tool_calls(calls: impl IntoIterator<Item = ToolCall>) -> Self {
        Self {
            tool_calls: calls.into_iter().collect(),
            finish_reason: FinishReason::ToolCalls,
            ..Self::default()
        }
    }

    /// The text of the answer (may be empty).
    pub fn content(&self) -> &str {
        &self.content
    }

    /// The requested tool calls.
    pub fn tool_calls(&self) -> &[ToolCall] {
        &self.tool_calls
    }

    /// The tool calls, shared (keeping them copies nothing).
    pub fn shared_tool_calls(&self) -> &SharedSlice<ToolCall> {
        &self.tool_calls
    }

    /// True when the answer requests tool calls.
    pub fn has_tool_calls(&self) -> bool {
        !self.tool_calls.is_empty()
    }

    /// Why generation stopped.
    pub fn finish_reason(&self) -> FinishReason {
        self.finish_reason
    }

    /// Tokens used.
    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// Reasoning text, when the provider returns it.
    pub fn reasoning(&self) -> Option<&str> {
        self.reasoning.as_deref()
    }

    /// The provider's response id.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// The model that answered, as the provider reports it.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// Sets the usage.
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = usage;
        self
    }

    /// Sets the text.
    pub fn with_content(mut self, content: impl Into<String>) -> Self {
        self.content = content.into();
        self
    }

    /// Replaces the tool calls (the finish reason is left as is).
    pub fn with_calls(mut self, calls: impl IntoIterator<Item = ToolCall>) -> Self {
        self.tool_calls = calls.into_iter().collect();
        self
    }

    /// Sets the finish reason.
    pub fn with_finish_reason(mut self, reason: FinishReason) -> Self {
        self.finish_reason = reason;
        self
    }

    /// Sets the reasoning text.
    pub fn with_reasoning(mut self, reasoning: impl Into<String>) -> Self {
        self.reasoning = Some(reasoning.into());
        self
    }

    /// Sets the provider's response id.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Sets the model name.
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// The answer as an assistant message (text and tool calls).
    pub fn to_message(&self) -> Message {
        Message::assistant(self.content.as_str()).with_shared_tool_calls(self.tool_calls.clone())
    }
}
