//! `Message`: one entry of a conversation.

use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::shared_slice::SharedSlice;
use crate::{Content, ContentPart, MessagesError, Metadata, Role, ToolCall};

/// One message of a conversation: who said it, what it says, and, for tool traffic, the typed
/// tool calls (assistant) or the id of the call it answers (tool).
///
/// Immutable in spirit: the `with_*` methods return changed copies.
///
/// Serialized as `{"role", "name"?, "content", "tool_calls"?, "tool_call_id"?, "tool_name"?,
/// "_metadata"?}` with empty fields left out. Reading also accepts `metadata` for `_metadata`
/// and the original library's `_metadata.tool_calls` / `_metadata.tool_call_id` /
/// `_metadata.tool_name` forms.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    role: Role,
    name: Option<String>,
    content: Content,
    tool_calls: SharedSlice<ToolCall>,
    tool_call_id: Option<Arc<str>>,
    tool_name: Option<Arc<str>>,
    metadata: Metadata,
}

impl Message {
    /// A message with the given role and content.
    pub fn new(role: Role, content: impl Into<Content>) -> Self {
        Self {
            role,
            name: None,
            content: content.into(),
            tool_calls: SharedSlice::new(),
            tool_call_id: None,
            tool_name: None,
            metadata: Metadata::new(),
        }
    }

    /// A user message.
    pub fn user(content: impl Into<Content>) -> Self {
        Self::new(Role::User, content)
    }

    /// An assistant message.
    pub fn assistant(content: impl Into<Content>) -> Self {
        Self::new(Role::Assistant, content)
    }

    /// A system message.
    pub fn system(content: impl Into<Content>) -> Self {
        Self::new(Role::System, content)
    }

    /// A developer message.
    pub fn developer(content: impl Into<Content>) -> Self {
        Self::new(Role::Developer, content)
    }

    /// The result of `call` (its id and tool name are shared, not copied).
    pub fn tool_result_for(call: &ToolCall, content: impl Into<Content>) -> Self {
        let mut message = Self::new(Role::Tool, content);
        message.tool_call_id = Some(Arc::clone(call.shared_id()));
        message.tool_name = Some(Arc::clone(call.shared_name()));
        message
    }

    /// The result of the tool call `call_id` to `tool_name`.
    pub fn tool_result(
        call_id: impl Into<String>,
        tool_name: impl Into<String>,
        content: impl Into<Content>,
    ) -> Self {
        let mut message = Self::new(Role::Tool, content);
        message.tool_call_id = Some(Arc::from(call_id.into()));
        message.tool_name = Some(Arc::from(tool_name.into()));
        message
    }

    /// An assistant message that requests the given tool calls.
    pub fn assistant_tool_calls(calls: impl IntoIterator<Item = ToolCall>) -> Self {
        let mut message = Self::new(Role::Assistant, Content::empty());
        message.tool_calls = calls.into_iter().collect();
        message
    }

    /// Who wrote the message.
    pub fn role(&self) -> Role {
        self.role
    }

    /// The optional author name.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The content.
    pub fn content(&self) -> &Content {
        &self.content
    }

    /// The text parts joined with `\n` (empty when there is no text).
    pub fn text(&self) -> String {
        self.content.text_content()
    }

    /// True when the message has text beyond whitespace.
    pub fn has_text(&self) -> bool {
        self.content.has_text()
    }

    /// The tool calls an assistant message requests.
    pub fn tool_calls(&self) -> &[ToolCall] {
        &self.tool_calls
    }

    /// The tool calls, shared (keeping them copies nothing).
    pub fn shared_tool_calls(&self) -> &SharedSlice<ToolCall> {
        &self.tool_calls
    }

    /// True when the message requests tool calls.
    pub fn has_tool_calls(&self) -> bool {
        !self.tool_calls.is_empty()
    }

    /// The call a tool message answers.
    pub fn tool_call_id(&self) -> Option<&str> {
        self.tool_call_id.as_deref()
    }

    /// The tool a tool message comes from.
    pub fn tool_name(&self) -> Option<&str> {
        self.tool_name.as_deref()
    }

    /// True for tool traffic: a tool result, or an assistant message with tool calls.
    pub fn is_tool_trace(&self) -> bool {
        self.role == Role::Tool || (self.role == Role::Assistant && self.has_tool_calls())
    }

    /// The free metadata.
    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// True when the message has no content, no tool calls and no metadata.
    pub fn is_empty(&self) -> bool {
        self.content.is_empty()
            && self.tool_calls.is_empty()
            && self.tool_call_id.is_none()
            && self.metadata.is_empty()
    }

    /// A copy with a metadata entry set.
    pub fn with_metadata(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.metadata.insert(key, value);
        self
    }

    /// A copy with the whole metadata replaced.
    pub fn with_metadata_map(mut self, metadata: Metadata) -> Self {
        self.metadata = metadata;
        self
    }

    /// A copy with an author name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// A copy with another role.
    pub fn with_role(mut self, role: Role) -> Self {
        self.role = role;
        self
    }

    /// A copy with other content.
    pub fn with_content(mut self, content: impl Into<Content>) -> Self {
        self.content = content.into();
        self
    }

    /// A copy with one more content part.
    pub fn with_part(mut self, part: ContentPart) -> Self {
        self.content = self.content.with_part(part);
        self
    }

    /// A copy with the tool calls replaced.
    pub fn with_tool_calls(mut self, calls: impl IntoIterator<Item = ToolCall>) -> Self {
        self.tool_calls = calls.into_iter().collect();
        self
    }

    /// A copy with a shared list of tool calls (no copy; an `Arc<[ToolCall]>` converts).
    pub fn with_shared_tool_calls(mut self, calls: impl Into<SharedSlice<ToolCall>>) -> Self {
        self.tool_calls = calls.into();
        self
    }

    /// The message as JSON in its serialized shape.
    pub fn to_value(&self) -> Value {
        let mut object = Map::new();
        object.insert("role".into(), Value::String(self.role.as_str().into()));
        if let Some(name) = &self.name {
            object.insert("name".into(), Value::String(name.clone()));
        }
        if !self.content.is_empty() || self.content.is_composite() {
            object.insert("content".into(), self.content.to_value());
        }
        if !self.tool_calls.is_empty() {
            let calls = self
                .tool_calls
                .iter()
                .map(|c| serde_json::json!({"id": c.id(), "name": c.name(), "arguments": c.arguments()}))
                .collect();
            object.insert("tool_calls".into(), Value::Array(calls));
        }
        if let Some(id) = &self.tool_call_id {
            object.insert("tool_call_id".into(), Value::String(id.to_string()));
        }
        if let Some(tool_name) = &self.tool_name {
            object.insert("tool_name".into(), Value::String(tool_name.to_string()));
        }
        if !self.metadata.is_empty() {
            object.insert("_metadata".into(), self.metadata.to_value());
        }
        Value::Object(object)
    }

    /// Reads a message from its serialized shape (or the original library's shape).
    ///
    /// # Errors
    /// A [`MessagesError`] naming what is wrong: unknown role, unreadable tool call arguments,
    /// a bad content part, or a value that is not a message object.
    pub fn from_value(value: &Value) -> Result<Self, MessagesError> {
        let invalid = |reason: String| MessagesError::InvalidMessage { reason };
        let object = value
            .as_object()
            .ok_or_else(|| invalid(format!("expected a JSON object, got {value}")))?;
        let role = match object.get("role") {
            Some(Value::String(role)) => role.parse::<Role>()?,
            Some(other) => return Err(invalid(format!("`role` must be a string, got {other}"))),
            None => return Err(invalid("missing `role`".into())),
        };
        let string_field = |key: &str| -> Result<Option<String>, MessagesError> {
            match object.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(other) => Err(invalid(format!("`{key}` must be a string, got {other}"))),
            }
        };
        let mut metadata = match object.get("_metadata").or_else(|| object.get("metadata")) {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) => map.clone(),
            Some(Value::Array(items)) if items.is_empty() => Map::new(),
            Some(other) => {
                return Err(invalid(format!(
                    "`_metadata` must be an object, got {other}"
                )))
            }
        };
        let calls_value = match object.get("tool_calls") {
            Some(calls) if !calls.is_null() => Some(calls.clone()),
            _ => metadata.shift_remove("tool_calls"),
        };
        let tool_calls: SharedSlice<ToolCall> = match calls_value {
            None | Some(Value::Null) => SharedSlice::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(ToolCall::from_value)
                .collect::<Result<Vec<_>, _>>()?
                .into(),
            Some(other) => {
                return Err(invalid(format!("`tool_calls` must be a list, got {other}")))
            }
        };
        let mut tool_call_id = string_field("tool_call_id")?;
        if tool_call_id.is_none() {
            tool_call_id = take_string(&mut metadata, "tool_call_id");
        }
        let mut tool_name = string_field("tool_name")?;
        if tool_name.is_none() {
            tool_name = take_string(&mut metadata, "tool_name");
        }
        let content = match object.get("content") {
            Some(content) => Content::from_value(content)?,
            None => Content::empty(),
        };
        Ok(Self {
            role,
            name: string_field("name")?,
            content,
            tool_calls,
            tool_call_id: tool_call_id.map(Arc::from),
            tool_name: tool_name.map(Arc::from),
            metadata: Metadata::from(metadata),
        })
    }

    /// Reads a message from JSON text.
    ///
    /// # Errors
    /// [`MessagesError::Json`] for text that is not JSON, otherwise as [`Message::from_value`].
    pub fn from_json(text: &str) -> Result<Self, MessagesError> {
        let value: Value = serde_json::from_str(text)?;
        Self::from_value(&value)
    }
}

fn take_string(map: &mut Map<String, Value>, key: &str) -> Option<String> {
    match map.get(key) {
        Some(Value::String(_)) => match map.shift_remove(key) {
            Some(Value::String(s)) => Some(s),
            _ => None,
        },
        _ => None,
    }
}

impl From<&str> for Message {
    /// A plain string is a user message.
    fn from(text: &str) -> Self {
        Message::user(text)
    }
}

impl From<String> for Message {
    /// A plain string is a user message.
    fn from(text: String) -> Self {
        Message::user(text)
    }
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Message::from_value(&value).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serializes_in_the_documented_shape() {
        let call = ToolCall::new("call_1", "get_weather", json!({"city": "Paris"}));
        let asked = Message::assistant_tool_calls([call]);
        assert_eq!(
            asked.to_value(),
            json!({"role":"assistant","tool_calls":[{"id":"call_1","name":"get_weather","arguments":{"city":"Paris"}}]})
        );
        let result = Message::tool_result("call_1", "get_weather", "22°C").with_metadata("ms", 3);
        assert_eq!(
            result.to_value(),
            json!({"role":"tool","content":"22°C","tool_call_id":"call_1","tool_name":"get_weather","_metadata":{"ms":3}})
        );
        assert_eq!(
            Message::user("hi").to_value(),
            json!({"role":"user","content":"hi"})
        );
    }

    #[test]
    fn reads_the_original_metadata_form() {
        let original = json!({
            "role": "assistant",
            "metadata": {"tool_calls": [{"id":"call_1","type":"function","function":{"name":"t","arguments":"{\"a\":\"b\"}"}}], "x": 1}
        });
        let message = Message::from_value(&original).unwrap();
        assert_eq!(
            message.tool_calls(),
            &[ToolCall::new("call_1", "t", json!({"a":"b"}))]
        );
        assert_eq!(message.metadata().keys().collect::<Vec<_>>(), ["x"]);
        assert!(message.is_tool_trace());

        let result = Message::from_value(&json!({
            "role":"tool","content":"Executed",
            "_metadata":{"tool_call_id":"call_1","tool_name":"t","result":"Executed"}
        }))
        .unwrap();
        assert_eq!(result.tool_call_id(), Some("call_1"));
        assert_eq!(result.tool_name(), Some("t"));
        assert!(result.metadata().contains_key("result"));
    }

    #[test]
    fn bad_documents_are_typed_errors() {
        let unknown = Message::from_json(r#"{"role":"robot","content":"x"}"#).unwrap_err();
        assert!(matches!(unknown, MessagesError::UnknownRole { ref role } if role == "robot"));
        let args = Message::from_json(
            r#"{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"f","arguments":"nope"}}]}"#,
        )
        .unwrap_err();
        assert!(matches!(args, MessagesError::InvalidToolArguments { .. }));
        assert!(matches!(
            Message::from_json("[1]").unwrap_err(),
            MessagesError::InvalidMessage { .. }
        ));
        assert!(matches!(
            Message::from_json("{").unwrap_err(),
            MessagesError::Json(_)
        ));
        assert!(serde_json::from_str::<Message>(r#"{"role":"robot"}"#).is_err());
    }

    #[test]
    fn text_and_trace_queries() {
        let m = Message::user(vec![
            ContentPart::text("a"),
            ContentPart::image_url("http://i"),
        ]);
        assert_eq!(m.text(), "a");
        assert!(!m.is_tool_trace());
        assert!(Message::tool_result("1", "t", "x").is_tool_trace());
        assert!(!Message::assistant("done").is_tool_trace());
        assert!(Message::assistant("").is_empty());
    }
}
