//! `InferenceRequest` and the pieces it is made of.

use messages::{Messages, SharedSlice};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A tool the model may call: name, description and JSON Schema of its arguments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSchema {
    /// The tool's name.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
}

impl ToolSchema {
    /// A tool schema.
    #[inline]
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters,
        }
    }
}

/// Whether and which tool the model must call.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type", content = "name")]
pub enum ToolChoice {
    /// The model decides (provider default).
    #[default]
    Auto,
    /// The model must not call tools.
    None,
    /// The model must call some tool.
    Required,
    /// The model must call this tool.
    Tool(String),
}

/// The shape of the answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum ResponseFormat {
    /// Free text (provider default).
    #[default]
    Text,
    /// Any JSON object.
    JsonObject,
    /// JSON matching a schema.
    JsonSchema {
        /// A name for the schema.
        name: String,
        /// The JSON Schema.
        schema: Value,
        /// Ask the provider to enforce the schema strictly.
        strict: bool,
    },
}

/// Everything a provider needs for one inference call.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct InferenceRequest {
    /// Model name; `None` means the provider's configured default.
    pub model: Option<String>,
    /// The conversation, system messages included (providers that need a separate system
    /// prompt extract it).
    pub messages: Messages,
    /// Tools the model may call. Shared: an agent hands the same list to every request.
    pub tools: SharedSlice<ToolSchema>,
    /// Tool choice; `None` means the provider default.
    pub tool_choice: Option<ToolChoice>,
    /// Response format; `None` means free text.
    pub response_format: Option<ResponseFormat>,
    /// Maximum completion tokens.
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Whether the model may return several tool calls at once (`None`: provider default).
    pub parallel_tool_calls: Option<bool>,
    /// Free provider options, merged into the request body as given.
    pub options: Map<String, Value>,
    /// Index in `messages` of the last message of the stable part of the conversation: the
    /// prefix the next request repeats unchanged. Providers with explicit prompt caching
    /// (Anthropic) put a cache breakpoint there. `None`: the whole conversation is stable.
    /// The agent drivers set it to the end of the persistent sections, before the execution
    /// buffer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_breakpoint: Option<usize>,
}

impl InferenceRequest {
    /// A request for the given messages, everything else default.
    pub fn new(messages: impl Into<Messages>) -> Self {
        Self {
            messages: messages.into(),
            ..Self::default()
        }
    }

    /// Sets the model.
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Sets the tools.
    #[inline]
    pub fn with_tools(mut self, tools: impl IntoIterator<Item = ToolSchema>) -> Self {
        self.tools = tools.into_iter().collect();
        self
    }

    /// Sets a shared list of tools (no copy; an `Arc<[ToolSchema]>` converts).
    #[inline]
    pub fn with_shared_tools(mut self, tools: impl Into<SharedSlice<ToolSchema>>) -> Self {
        self.tools = tools.into();
        self
    }

    /// Sets the tool choice.
    pub fn with_tool_choice(mut self, choice: ToolChoice) -> Self {
        self.tool_choice = Some(choice);
        self
    }

    /// Sets the response format.
    pub fn with_response_format(mut self, format: ResponseFormat) -> Self {
        self.response_format = Some(format);
        self
    }

    /// Sets the completion token limit.
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Sets the temperature.
    pub fn with_temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Allows or forbids several tool calls in one answer.
    pub fn with_parallel_tool_calls(mut self, parallel: bool) -> Self {
        self.parallel_tool_calls = Some(parallel);
        self
    }

    /// Marks `messages[index]` as the end of the stable prefix (see
    /// [`cache_breakpoint`](Self::cache_breakpoint)).
    pub fn with_cache_breakpoint(mut self, index: usize) -> Self {
        self.cache_breakpoint = Some(index);
        self
    }

    /// Sets a free provider option.
    pub fn with_option(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.options.insert(key.into(), value.into());
        self
    }
}
