//! Metadata tools: the model keeps notes in the agent state's metadata with `store_metadata`,
//! reads them back with `read_metadata` and lists them with `list_metadata`.
//!
//! `store_metadata` only validates; the [`PersistMetadata`] processor writes the values of the
//! step's successful `store_metadata` calls into the state's metadata after the step, so the
//! state stays the single place that changes. [`UseMetadataTools`] installs both.

use std::sync::Arc;

use agents_core::{AgentError, AgentState, Next, Tool, ToolContext, ToolError, ToolOutput};
use agents_processing::StateProcessor;
use async_trait::async_trait;
use serde_json::{json, Value};

use crate::{AgentBuilder, AgentCapability};

/// The name of the storing tool.
pub const STORE_METADATA_TOOL: &str = "store_metadata";

/// Limits on what the model may store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetadataPolicy {
    /// Keys the model may not write (used by other capabilities).
    pub reserved_keys: Vec<String>,
    /// The largest value, in bytes of JSON.
    pub max_value_bytes: usize,
    /// The most keys the metadata may hold.
    pub max_keys: usize,
}

impl Default for MetadataPolicy {
    fn default() -> Self {
        Self {
            reserved_keys: ["tasks", "skills", "self_critic", "context_metadata"]
                .map(str::to_owned)
                .to_vec(),
            max_value_bytes: 65_536,
            max_keys: 50,
        }
    }
}

impl MetadataPolicy {
    /// Checks a write of `value` under `key` against `current` metadata.
    ///
    /// # Errors
    /// A message for the model: empty or reserved key, value too large, too many keys.
    pub fn check(
        &self,
        key: &str,
        value: &Value,
        current: &messages::Metadata,
    ) -> Result<usize, String> {
        if key.trim().is_empty() {
            return Err("The key must be a non-empty string.".into());
        }
        if self.reserved_keys.iter().any(|k| k == key) {
            return Err(format!(
                "The key '{key}' is reserved. Use another key (reserved: {}).",
                self.reserved_keys.join(", ")
            ));
        }
        let bytes = value.to_string().len();
        if bytes > self.max_value_bytes {
            return Err(format!(
                "The value is {bytes} bytes of JSON; the limit is {} bytes. Store a shorter value.",
                self.max_value_bytes
            ));
        }
        if !current.contains_key(key) && current.len() >= self.max_keys {
            return Err(format!(
                "The metadata already holds {} keys (the limit). Overwrite an existing key instead.",
                current.len()
            ));
        }
        Ok(bytes)
    }
}

/// `store_metadata{key, value}`.
#[derive(Clone, Debug, Default)]
pub struct StoreMetadataTool {
    policy: Arc<MetadataPolicy>,
}

impl StoreMetadataTool {
    /// A tool enforcing `policy`.
    pub fn new(policy: MetadataPolicy) -> Self {
        Self {
            policy: Arc::new(policy),
        }
    }
}

fn key_argument(arguments: &Value) -> Result<&str, ToolError> {
    match arguments.get("key") {
        Some(Value::String(key)) => Ok(key.as_str()),
        Some(other) => Err(ToolError::invalid_arguments(format!(
            "`key` must be a string, found {other}"
        ))),
        None => Err(ToolError::invalid_arguments("missing `key`")),
    }
}

#[async_trait]
impl Tool for StoreMetadataTool {
    fn name(&self) -> &str {
        STORE_METADATA_TOOL
    }

    fn description(&self) -> &str {
        "Store a value (any JSON) under a key in the agent's metadata, to remember it for later steps and turns."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "key": {"type": "string", "description": "Where to store the value"},
                "value": {"description": "The value (string, number, object, ...)"}
            },
            "required": ["key", "value"]
        })
    }

    async fn call(&self, arguments: Value, context: &ToolContext) -> Result<ToolOutput, ToolError> {
        let key = key_argument(&arguments)?;
        let value = arguments
            .get("value")
            .ok_or_else(|| ToolError::invalid_arguments("missing `value`"))?;
        let bytes = self
            .policy
            .check(key, value, &context.metadata)
            .map_err(ToolError::failed)?;
        let replaced = context.metadata.contains_key(key);
        Ok(ToolOutput::json(json!({
            "success": true,
            "key": key,
            "bytes": bytes,
            "replaced": replaced,
        })))
    }
}

/// `read_metadata{key}`.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadMetadataTool;

#[async_trait]
impl Tool for ReadMetadataTool {
    fn name(&self) -> &str {
        "read_metadata"
    }

    fn description(&self) -> &str {
        "Read the value stored under a key in the agent's metadata."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"key": {"type": "string", "description": "The key to read"}},
            "required": ["key"]
        })
    }

    fn effects(&self) -> agents_core::ToolEffects {
        // It reads and changes nothing.
        agents_core::ToolEffects::ReadOnly
    }

    async fn call(&self, arguments: Value, context: &ToolContext) -> Result<ToolOutput, ToolError> {
        let key = key_argument(&arguments)?;
        match context.metadata.get(key) {
            Some(value) => Ok(ToolOutput::json(json!({"key": key, "value": value}))),
            None => {
                let keys: Vec<&str> = context.metadata.keys().collect();
                Err(ToolError::failed(format!(
                    "No metadata stored under '{key}'. Stored keys: {}",
                    if keys.is_empty() {
                        "(none)".to_owned()
                    } else {
                        keys.join(", ")
                    }
                )))
            }
        }
    }
}

/// `list_metadata{}`: `{count, keys: [{key, type}]}`.
#[derive(Clone, Copy, Debug, Default)]
pub struct ListMetadataTool;

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[async_trait]
impl Tool for ListMetadataTool {
    fn name(&self) -> &str {
        "list_metadata"
    }

    fn description(&self) -> &str {
        "List the keys stored in the agent's metadata, with the type of each value."
    }

    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }

    fn effects(&self) -> agents_core::ToolEffects {
        // It reads and changes nothing.
        agents_core::ToolEffects::ReadOnly
    }

    async fn call(
        &self,
        _arguments: Value,
        context: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let keys: Vec<Value> = context
            .metadata
            .iter()
            .map(|(key, value)| json!({"key": key, "type": type_name(value)}))
            .collect();
        Ok(ToolOutput::json(json!({"count": keys.len(), "keys": keys})))
    }
}

/// After each step, writes the values of the step's successful `store_metadata` calls into the
/// state's metadata (in call order, so a later call for the same key wins).
#[derive(Clone, Copy, Debug, Default)]
pub struct PersistMetadata;

#[async_trait]
impl StateProcessor for PersistMetadata {
    async fn process(&self, state: AgentState, next: Next<'_>) -> Result<AgentState, AgentError> {
        let state = next.run(state).await?;
        let Some(step) = state.current_step() else {
            return Ok(state);
        };
        let writes: Vec<(String, Value)> = step
            .tool_executions()
            .iter()
            .filter(|e| e.name() == STORE_METADATA_TOOL && !e.has_error())
            .filter_map(|e| {
                let key = e.arguments().get("key")?.as_str()?.to_owned();
                Some((key, e.arguments().get("value")?.clone()))
            })
            .collect();
        if writes.is_empty() {
            return Ok(state);
        }
        let mut metadata = state.metadata().clone();
        for (key, value) in writes {
            metadata.insert(key, value);
        }
        Ok(state.with_metadata_map(metadata))
    }
}

/// Installs `store_metadata`, `read_metadata`, `list_metadata` and [`PersistMetadata`].
#[derive(Clone, Debug, Default)]
pub struct UseMetadataTools {
    policy: MetadataPolicy,
}

impl UseMetadataTools {
    /// The tools with the default policy (64 KiB values, 50 keys, reserved keys refused).
    pub fn new() -> Self {
        Self::default()
    }

    /// The tools with another policy.
    pub fn with_policy(policy: MetadataPolicy) -> Self {
        Self { policy }
    }
}

impl AgentCapability for UseMetadataTools {
    fn name(&self) -> &str {
        "metadata"
    }

    fn install(&self, builder: AgentBuilder) -> AgentBuilder {
        builder
            .with_tool(StoreMetadataTool::new(self.policy.clone()))
            .with_tool(ReadMetadataTool)
            .with_tool(ListMetadataTool)
            .with_processor(PersistMetadata)
    }
}
