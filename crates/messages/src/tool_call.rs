//! `ToolCall`: a model's request to run a tool.

use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::excerpt::excerpt;
use crate::MessagesError;

/// A request from the model to call the tool `name` with JSON `arguments`.
///
/// Serialized as `{"id", "name", "arguments": {..}}`. Deserialization also accepts the OpenAI
/// form `{"id", "type": "function", "function": {"name", "arguments": "<json string>"}}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolCall {
    id: Arc<str>,
    name: Arc<str>,
    /// Shared: a call is copied into its execution, events and hooks, and its arguments (a
    /// whole file's content, say) are not copied with it.
    arguments: Arc<Value>,
}

impl ToolCall {
    /// A tool call. `arguments` is usually a JSON object; `null` becomes `{}`.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        Self {
            id: Arc::from(id.into()),
            name: Arc::from(name.into()),
            arguments: Arc::new(normalize_arguments(arguments)),
        }
    }

    /// The call id the tool result must refer to (may be empty for drivers without ids).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The call id itself, shared: a tool's context or result refers to the call without a
    /// copy of its id.
    pub fn shared_id(&self) -> &Arc<str> {
        &self.id
    }

    pub(crate) fn shared_name(&self) -> &Arc<str> {
        &self.name
    }

    /// The arguments as JSON.
    pub fn arguments(&self) -> &Value {
        &self.arguments
    }

    /// The arguments as compact JSON text (what OpenAI-style providers want).
    pub fn arguments_json(&self) -> String {
        self.arguments.to_string()
    }

    /// A copy with another id.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Arc::from(id.into());
        self
    }

    /// A copy with other arguments.
    pub fn with_arguments(mut self, arguments: Value) -> Self {
        self.arguments = Arc::new(normalize_arguments(arguments));
        self
    }

    /// The OpenAI wire form: `{"id","type":"function","function":{"name","arguments":"<json>"}}`.
    pub fn to_openai_value(&self) -> Value {
        serde_json::json!({
            "id": &*self.id,
            "type": "function",
            "function": {"name": &*self.name, "arguments": self.arguments_json()},
        })
    }

    /// Reads a tool call in either the native or the OpenAI form.
    ///
    /// # Errors
    /// [`MessagesError::InvalidToolCall`] when the name is missing,
    /// [`MessagesError::InvalidToolArguments`] when `arguments` is a string that is not JSON.
    pub fn from_value(value: &Value) -> Result<Self, MessagesError> {
        let object = value
            .as_object()
            .ok_or_else(|| MessagesError::InvalidToolCall {
                reason: format!("expected an object, got {value}"),
            })?;
        let id = object
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let source: &Map<String, Value> = match object.get("function") {
            Some(Value::Object(function)) => function,
            _ => object,
        };
        let name = source
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .ok_or_else(|| MessagesError::InvalidToolCall {
                reason: format!("tool call `{id}` has no `name`"),
            })?
            .to_owned();
        let arguments = match source.get("arguments") {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(Value::String(text)) => parse_arguments(text, &id, &name)?,
            Some(other) => other.clone(),
        };
        Ok(Self::new(id, name, arguments))
    }
}

fn parse_arguments(text: &str, id: &str, name: &str) -> Result<Value, MessagesError> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    serde_json::from_str(text).map_err(|e| MessagesError::InvalidToolArguments {
        call_id: id.to_owned(),
        tool: name.to_owned(),
        reason: format!("`{}` is not valid JSON ({e})", excerpt(text, 80)),
    })
}

/// `null` and the PHP-style empty list `[]` both mean "no arguments".
fn normalize_arguments(arguments: Value) -> Value {
    match arguments {
        Value::Null => Value::Object(Map::new()),
        Value::Array(items) if items.is_empty() => Value::Object(Map::new()),
        other => other,
    }
}

impl<'de> Deserialize<'de> for ToolCall {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        ToolCall::from_value(&value).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_native_and_openai_forms() {
        let native =
            ToolCall::from_value(&json!({"id":"c1","name":"f","arguments":{"a":1}})).unwrap();
        let openai = ToolCall::from_value(
            &json!({"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}),
        )
        .unwrap();
        assert_eq!(native, openai);
        assert_eq!(native.arguments(), &json!({"a":1}));
        assert_eq!(
            openai.to_openai_value()["function"]["arguments"],
            json!("{\"a\":1}")
        );
    }

    #[test]
    fn invalid_argument_string_is_a_typed_error() {
        let err = ToolCall::from_value(
            &json!({"id":"c9","function":{"name":"f","arguments":"{not json"}}),
        )
        .unwrap_err();
        assert!(
            matches!(err, MessagesError::InvalidToolArguments { ref call_id, .. } if call_id == "c9")
        );
        assert!(err.to_string().contains("{not json"));
    }

    #[test]
    fn empty_arguments_become_an_empty_object() {
        for args in [json!(null), json!([]), json!("")] {
            let call = ToolCall::from_value(&json!({"name":"f","arguments":args})).unwrap();
            assert_eq!(call.arguments(), &json!({}));
        }
        assert!(ToolCall::from_value(&json!({"arguments":{}})).is_err());
    }
}
