//! `CachedContext`: the request parts an agent sends the same way every step (configuration,
//! held by the [`Agent`](crate::Agent), never by the state).

use inference::{ResponseFormat, ToolChoice, ToolSchema};
use messages::{Messages, SharedSlice};
use serde::{Deserialize, Serialize};

/// The parts of an inference request that do not change between steps (system prompt, tool
/// schemas, tool choice, response format), so drivers and provider prompt caches can reuse them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CachedContext {
    /// System prompt messages, sent before the conversation.
    #[serde(default, skip_serializing_if = "Messages::is_empty")]
    pub messages: Messages,
    /// Tool schemas.
    #[serde(default, skip_serializing_if = "<[ToolSchema]>::is_empty")]
    pub tools: SharedSlice<ToolSchema>,
    /// Tool choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Response format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_format: Option<ResponseFormat>,
}

impl CachedContext {
    /// The tool schemas to offer: those of the agent's registry when it has tools (they are the
    /// ones the executor can run), else the cached ones.
    pub fn tool_schemas(&self, tools: &crate::tools::registry::Tools) -> SharedSlice<ToolSchema> {
        if tools.is_empty() {
            self.tools.clone()
        } else {
            tools.schemas()
        }
    }

    /// An empty context.
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy with these system messages.
    pub fn with_messages(mut self, messages: impl Into<Messages>) -> Self {
        self.messages = messages.into();
        self
    }

    /// A copy with these tool schemas.
    pub fn with_tools(mut self, tools: impl IntoIterator<Item = ToolSchema>) -> Self {
        self.tools = tools.into_iter().collect();
        self
    }

    /// A copy with this tool choice.
    pub fn with_tool_choice(mut self, choice: ToolChoice) -> Self {
        self.tool_choice = Some(choice);
        self
    }

    /// A copy with this response format.
    pub fn with_response_format(mut self, format: ResponseFormat) -> Self {
        self.response_format = Some(format);
        self
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
            && self.tools.is_empty()
            && self.tool_choice.is_none()
            && self.response_format.is_none()
    }
}
