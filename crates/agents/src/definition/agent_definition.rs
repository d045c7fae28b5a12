//! `AgentDefinition`: the parsed contents of one agent definition file (YAML, version 1).

use std::time::Duration;

use agents_core::{AnswerOnStop, ErrorPolicy};
use agents_processing::TraceRetention;
use inference::ModelSettings;
use serde::{Deserialize, Serialize};

use super::DefinitionError;
use crate::capabilities::files::names_tool;
use crate::AgentBuilder;

/// One agent, as described by a definition file.
///
/// ```yaml
/// version: 1
/// id: helper
/// name: Helper
/// description: Answers questions about the project
/// system_prompt: |
///   You are a careful assistant.
/// llm: { provider: openai, model: gpt-4o-mini, temperature: 0.2, recover_tool_calls: true }
/// execution: { max_steps: 8, timeout_sec: 120, error_policy: retry_tool_errors, trace: separated,
///              answer_on_stop: synthesize }
/// tools: { deny: [bash] }
/// approval: { required: [write_file] }
/// capabilities: [files, bash]
/// metadata: { cost_tier: low }
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentDefinition {
    /// Format version; must be 1.
    pub version: u32,
    /// Unique id (non-empty); later definitions with the same id replace earlier ones.
    pub id: String,
    /// Display name (non-empty).
    pub name: String,
    /// What the agent is for (non-empty).
    pub description: String,
    /// The system prompt (trimmed, non-empty).
    pub system_prompt: String,
    /// Which model to talk to.
    pub llm: LlmSettings,
    /// Limits, error policy and trace mode.
    #[serde(default)]
    pub execution: ExecutionSettings,
    /// Which tools the agent may use.
    #[serde(default, skip_serializing_if = "ToolPolicy::is_empty")]
    pub tools: ToolPolicy,
    /// Which tool calls wait for a person's approval (see `docs/approvals.md`).
    #[serde(default, skip_serializing_if = "ApprovalSettings::is_empty")]
    pub approval: ApprovalSettings,
    /// Capability names (for example `files`, `bash`, `skills`, `metadata`, `tool_registry`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<String>,
    /// MCP servers whose tools the agent gets (see [`McpServerDefinition`](super::McpServerDefinition)).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: Vec<super::McpServerDefinition>,
    /// Remote A2A agents the agent can call as tools (see
    /// [`A2aAgentDefinition`](super::A2aAgentDefinition)).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub a2a_agents: Vec<super::A2aAgentDefinition>,
    /// Free-form data for the application.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub metadata: serde_json::Map<String, serde_json::Value>,
}

/// The `llm` section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmSettings {
    /// The wire protocol.
    pub provider: LlmProvider,
    /// The model name (non-empty).
    pub model: String,
    /// The endpoint, when not the provider's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Output token limit per inference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Whether tool calls the model writes as JSON text are recognised and run (default: on;
    /// see `AgentBuilder::with_content_tool_call_recovery`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recover_tool_calls: Option<bool>,
    /// Seconds one request to the model may take before it is cancelled and retried
    /// (default: 120, or 600 when `base_url` is a loopback or private address; see
    /// `inference::HttpSettings`). Applied where the model is built (the CLI), since a
    /// definition does not build it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_timeout_sec: Option<u64>,
    /// Tokens the model's context holds, over the model catalog's (a local server's `-c`):
    /// it bounds each tool result the model sees and sizes context warnings (see
    /// `AgentBuilder::with_context_window`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
}

impl LlmSettings {
    /// The model name and sampling settings of this section, as the one [`ModelSettings`]
    /// value the builder and the providers take.
    pub fn model_settings(&self) -> ModelSettings {
        ModelSettings {
            model: self.model.clone(),
            temperature: self.temperature,
            max_tokens: self.max_tokens,
        }
    }
}

/// The endpoint's protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LlmProvider {
    /// OpenAI chat completions and compatible servers.
    Openai,
    /// Anthropic messages.
    Anthropic,
    /// A scripted model (tests and demos).
    Scripted,
}

/// The `execution` section; every field is optional.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecutionSettings {
    /// Step limit per execution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<usize>,
    /// Token limit per execution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Wall-clock limit per execution, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_sec: Option<u64>,
    /// How errors are handled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_policy: Option<ErrorPolicyName>,
    /// Retries for the retrying policies (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_policy_max_retries: Option<u32>,
    /// What of the tool trace persists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceMode>,
    /// With `trace: masked`, how many of the latest executions keep their tool outputs
    /// (default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub masked_executions: Option<usize>,
    /// What the conversation gets when an execution stops without an answer:
    /// `synthesize`, `notice` or `nothing` (default: synthesize in separated and digest
    /// modes, nothing in legacy mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_on_stop: Option<AnswerOnStop>,
}

/// The error policies a definition can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorPolicyName {
    /// [`ErrorPolicy::stop_on_any_error`].
    StopOnAnyError,
    /// [`ErrorPolicy::retry_tool_errors`].
    RetryToolErrors,
    /// [`ErrorPolicy::ignore_tool_errors`].
    IgnoreToolErrors,
    /// [`ErrorPolicy::retry_all`].
    RetryAll,
}

/// What of the tool trace persists in the conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceMode {
    /// Every tool call and result persists.
    Legacy,
    /// Only questions and answers persist; the trace lives in the execution buffer.
    Separated,
    /// Questions, answers and a short digest of the tool calls persist.
    Digest,
    /// Every tool call and result persists, but outputs older than the last
    /// `masked_executions` executions become placeholders (observation masking).
    Masked,
}

/// The `tools` section: allow and deny lists of tool names.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolPolicy {
    /// When present, only these tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow: Option<Vec<String>>,
    /// Never these tools (wins over `allow`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
}

/// The `approval` section: `required` lists the tools whose every call waits for a person's
/// approval (the run suspends until the call is approved, edited or rejected).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalSettings {
    /// Tools whose calls need approval.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required: Vec<String>,
}

impl ApprovalSettings {
    /// `true` when no tool needs approval.
    pub fn is_empty(&self) -> bool {
        self.required.is_empty()
    }
}

impl AgentDefinition {
    /// The definition as YAML (round-trips through [`Self::from_yaml_str`]).
    ///
    /// # Errors
    /// [`DefinitionError::Syntax`] if serialization fails (it does not for valid definitions).
    pub fn to_yaml(&self) -> Result<String, DefinitionError> {
        serde_yaml::to_string(self).map_err(|e| DefinitionError::Syntax {
            file: self.id.clone(),
            message: e.to_string(),
        })
    }

    /// The error policy the definition names (stop on any error when it names none).
    pub fn error_policy(&self) -> ErrorPolicy {
        let retries = self.execution.error_policy_max_retries.unwrap_or(3);
        match self.execution.error_policy {
            None | Some(ErrorPolicyName::StopOnAnyError) => ErrorPolicy::stop_on_any_error(),
            Some(ErrorPolicyName::RetryToolErrors) => ErrorPolicy::retry_tool_errors(retries),
            Some(ErrorPolicyName::IgnoreToolErrors) => ErrorPolicy::ignore_tool_errors(),
            Some(ErrorPolicyName::RetryAll) => ErrorPolicy::retry_all(retries),
        }
    }

    /// The trace retention the definition names (legacy when it names none).
    pub fn trace_retention(&self) -> TraceRetention {
        match self.execution.trace {
            None | Some(TraceMode::Legacy) => TraceRetention::Full,
            Some(TraceMode::Separated) => TraceRetention::Ephemeral,
            Some(TraceMode::Digest) => TraceRetention::digest(300),
            Some(TraceMode::Masked) => TraceRetention::masked(
                self.execution
                    .masked_executions
                    .unwrap_or(agents_processing::DEFAULT_MASKED_EXECUTIONS),
            ),
        }
    }

    /// Applies the prompt, model settings, limits, error policy, trace mode and the tools that
    /// need approval to `builder`.
    ///
    /// The model itself, the tools and the capabilities are the caller's: they need endpoints,
    /// keys and directories a definition does not hold. Filter tools with [`Self::tools`].
    pub fn configure(&self, builder: AgentBuilder) -> AgentBuilder {
        let mut builder = builder
            .with_system_prompt(self.system_prompt.clone())
            .with_model_settings(self.llm.model_settings())
            .with_error_policy(self.error_policy())
            .with_trace_retention(self.trace_retention());
        if let Some(recover) = self.llm.recover_tool_calls {
            builder = builder.with_content_tool_call_recovery(recover);
        }
        if let Some(tokens) = self.llm.context_window {
            builder = builder.with_context_window(tokens);
        }
        if let Some(max_steps) = self.execution.max_steps {
            builder = builder.with_max_steps(max_steps);
        }
        if let Some(max_tokens) = self.execution.max_tokens {
            builder = builder.with_token_limit(max_tokens);
        }
        if let Some(seconds) = self.execution.timeout_sec {
            builder = builder.with_time_limit(Duration::from_secs(seconds));
        }
        if let Some(answer) = self.execution.answer_on_stop {
            builder = builder.with_answer_on_stop(answer);
        }
        if !self.approval.is_empty() {
            builder = builder.with_approval_required(self.approval.required.iter().cloned());
        }
        builder
    }
}

impl ToolPolicy {
    /// `true` when neither list is given.
    pub fn is_empty(&self) -> bool {
        self.allow.is_none() && self.deny.is_empty()
    }

    /// Whether a tool of this name may be used. `append_file` counts as named where
    /// `write_file` is (see [`names_tool`](crate::capabilities::files::names_tool)): a
    /// definition that denies `write_file` denies appending too.
    pub fn permits(&self, tool: &str) -> bool {
        let named = |list: &[String]| names_tool(list.iter().map(String::as_str), tool);
        let allowed = self.allow.as_deref().is_none_or(named);
        allowed && !named(&self.deny)
    }
}
