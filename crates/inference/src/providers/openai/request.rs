//! Our request and messages as an OpenAI chat completions body, and back.

use messages::{ContentPart, Message, Messages, Role};
use serde_json::{json, Map, Value};

use crate::encoding::array_out::{unserializable, ArrayOut};
use crate::encoding::body::RequestBody;
use crate::encoding::history::{write_all, EncodeCache, MessageWriter};
use crate::encoding::object::{write_object, Splice};
use crate::error::InferenceError;
use crate::model_settings::ModelSettings;
use crate::request::{InferenceRequest, ResponseFormat, ToolChoice, ToolSchema};

/// The chat completions body for `request`. `model` is used when the request names none;
/// `stream` adds `stream` and `stream_options.include_usage`. Free options are merged last,
/// so they override anything set here.
///
/// `developer` messages are sent with role `system` unless `developer_role` is true: many
/// local servers' chat templates only know `system`.
pub fn request_body(
    request: &InferenceRequest,
    model: &str,
    stream: bool,
    developer_role: bool,
) -> Value {
    request_body_with(
        request,
        model,
        stream,
        BodyOptions {
            developer_role,
            tool_result_images: false,
        },
    )
}

/// How [`request_body_with`] writes what the chat completions format leaves open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BodyOptions {
    /// `developer` messages keep their role (else they are sent as `system`).
    pub developer_role: bool,
    /// Images in tool results reach the model: a `tool` message may only hold text, so they
    /// follow the step's tool messages in a `user` message (for models that take images).
    /// Off, the tool message only describes them.
    pub tool_result_images: bool,
}

/// [`request_body`] with every option.
pub fn request_body_with(
    request: &InferenceRequest,
    model: &str,
    stream: bool,
    options: BodyOptions,
) -> Value {
    let writer = OpenAiWriter { options };
    let mut messages = Vec::with_capacity(request.messages.len());
    // Writing to values cannot fail.
    let _ = write_all(&writer, &request.messages, &[], &mut messages);
    let tools = Value::Array(request.tools.iter().map(tool_to_openai).collect());
    Value::Object(body_fields(
        request,
        &ModelSettings::new(model),
        stream,
        Value::Array(messages),
        tools,
    ))
}

/// The body as bytes, byte for byte `serde_json::to_vec` of [`request_body_with`] (with
/// `settings` filling what the request leaves unset and `prompt_cache_key` added unless the
/// request's options set one), reusing from `cache` the bytes of the messages and tools an
/// earlier request of this model already wrote.
pub(crate) fn encode_body(
    request: &InferenceRequest,
    settings: &ModelSettings,
    stream: bool,
    options: BodyOptions,
    prompt_cache_key: Option<&str>,
    cache: &EncodeCache<OpenAiState>,
) -> Result<RequestBody, InferenceError> {
    let mut body = body_fields(request, settings, stream, Value::Null, Value::Null);
    if let Some(key) = prompt_cache_key {
        // A per-request option of the same name wins.
        body.entry("prompt_cache_key")
            .or_insert_with(|| Value::from(key));
    }
    let mut splices = Vec::with_capacity(2);
    // A free option named like a field replaced it: then there is nothing to splice.
    if !request.options.contains_key("messages") {
        let writer = OpenAiWriter { options };
        let encoded = cache.encode(&writer, &request.messages, &[])?;
        splices.push(Splice {
            key: "messages",
            chunks: encoded.chunks,
        });
    }
    if !request.tools.is_empty() && !request.options.contains_key("tools") {
        let tools = cache.tools(&request.tools, || {
            let tools = Value::Array(request.tools.iter().map(tool_to_openai).collect());
            serde_json::to_vec(&tools).map_err(unserializable)
        })?;
        splices.push(Splice {
            key: "tools",
            chunks: vec![tools],
        });
    }
    let mut chunks = Vec::with_capacity(8);
    write_object(&body, splices, &mut chunks)?;
    Ok(RequestBody::from_chunks(chunks))
}

/// The body's fields in order, with `messages` and `tools` (used only when the request has
/// tools) as given.
fn body_fields(
    request: &InferenceRequest,
    settings: &ModelSettings,
    stream: bool,
    messages: Value,
    tools: Value,
) -> Map<String, Value> {
    let mut body = Map::new();
    body.insert("model".into(), json!(settings.model_for(request)));
    body.insert("messages".into(), messages);
    if !request.tools.is_empty() {
        body.insert("tools".into(), tools);
        if let Some(choice) = &request.tool_choice {
            body.insert("tool_choice".into(), tool_choice_to_openai(choice));
        }
        if let Some(parallel) = request.parallel_tool_calls {
            body.insert("parallel_tool_calls".into(), json!(parallel));
        }
    }
    match &request.response_format {
        Some(ResponseFormat::JsonObject) => {
            body.insert("response_format".into(), json!({"type": "json_object"}));
        }
        Some(ResponseFormat::JsonSchema {
            name,
            schema,
            strict,
        }) => {
            body.insert(
                "response_format".into(),
                json!({"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": strict}}),
            );
        }
        Some(ResponseFormat::Text) | None => {}
    }
    if let Some(max_tokens) = request.max_tokens.or(settings.max_tokens) {
        body.insert("max_tokens".into(), json!(max_tokens));
    }
    if let Some(temperature) = request.temperature.or(settings.temperature) {
        body.insert("temperature".into(), json!(temperature));
    }
    if stream {
        body.insert("stream".into(), json!(true));
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    for (key, value) in &request.options {
        body.insert(key.clone(), value.clone());
    }
    body
}

/// Writes the `messages` array: one element per message, `developer` sent as `system`
/// unless the options say otherwise, and with `tool_result_images` a `user` message with the
/// images of a run of tool messages after its last one.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OpenAiWriter {
    pub(crate) options: BodyOptions,
}

/// What [`OpenAiWriter`] carries between messages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct OpenAiState {
    /// Something was written.
    any: bool,
    /// The first tool message of the current run whose images are still to be sent.
    images_from: Option<usize>,
}

impl MessageWriter for OpenAiWriter {
    type State = OpenAiState;

    fn write<O: ArrayOut>(
        &self,
        messages: &Messages,
        index: usize,
        message: &Message,
        mut state: OpenAiState,
        _marked: bool,
        out: &mut O,
    ) -> Result<OpenAiState, InferenceError> {
        let mut first = !state.any;
        if message.role() != Role::Tool {
            if let Some(from) = state.images_from.take() {
                out.element(images_message(messages, from, index), first)?;
                first = false;
            }
        }
        let mut value = if message.role() == Role::Tool && self.options.tool_result_images {
            if state.images_from.is_none() && !non_text_parts(message).is_empty() {
                state.images_from = Some(index);
            }
            tool_message(message, "sent in the next message")
        } else {
            message_to_openai(message)
        };
        if message.role() == Role::Developer && !self.options.developer_role {
            value["role"] = json!("system");
        }
        out.element(value, first)?;
        state.any = true;
        Ok(state)
    }

    fn finish<O: ArrayOut>(
        &self,
        messages: &Messages,
        state: OpenAiState,
        out: &mut O,
    ) -> Result<(), InferenceError> {
        match state.images_from {
            Some(from) => out.element(images_message(messages, from, messages.len()), !state.any),
            None => Ok(()),
        }
    }
}

/// The `user` message that carries the images of the tool messages `from..to`, each
/// introduced by a line naming its call.
fn images_message(messages: &Messages, from: usize, to: usize) -> Value {
    let mut images = Vec::new();
    for message in messages.iter().skip(from).take(to.saturating_sub(from)) {
        let parts = non_text_parts(message);
        if message.role() != Role::Tool || parts.is_empty() {
            continue;
        }
        images.push(json!({"type": "text", "text": format!(
            "The result of tool call {} ({}) includes:",
            message.tool_call_id().unwrap_or_default(),
            message.tool_name().unwrap_or_default()
        )}));
        images.extend(parts.iter().map(|p| p.to_value()));
    }
    json!({"role": "user", "content": images})
}

/// One message in the OpenAI shape: tool calls as `{"id","type":"function","function":{..}}`
/// with arguments as a JSON string, tool results as `{"role":"tool","tool_call_id","content"}`,
/// multi-part user content (images, files, audio) as content parts.
pub fn message_to_openai(message: &Message) -> Value {
    let mut object = Map::new();
    object.insert("role".into(), json!(message.role().as_str()));
    match message.role() {
        Role::Tool => return tool_message(message, "not shown to the model"),
        Role::Assistant => {
            if message.has_tool_calls() {
                let text = message.text();
                let content = if text.is_empty() {
                    Value::Null
                } else {
                    json!(text)
                };
                object.insert("content".into(), content);
                let calls = message
                    .tool_calls()
                    .iter()
                    .map(|c| c.to_openai_value())
                    .collect();
                object.insert("tool_calls".into(), Value::Array(calls));
            } else {
                object.insert("content".into(), json!(message.text()));
            }
        }
        Role::User => {
            object.insert("content".into(), message.content().to_value());
        }
        Role::System | Role::Developer => {
            object.insert("content".into(), json!(message.text()));
        }
    }
    if let Some(name) = message.name().filter(|_| message.role() != Role::Tool) {
        object.insert("name".into(), json!(name));
    }
    Value::Object(object)
}

/// A `tool` message: its text, and a line describing each image or file it carries (a tool
/// message may only hold text), saying where it went (`whereabouts`).
fn tool_message(message: &Message, whereabouts: &str) -> Value {
    let mut text = message.text();
    for part in non_text_parts(message) {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&format!("[{}; {whereabouts}]", describe(part)));
    }
    json!({
        "role": "tool",
        "tool_call_id": message.tool_call_id().unwrap_or_default(),
        "content": text,
    })
}

fn non_text_parts(message: &Message) -> Vec<&ContentPart> {
    message
        .content()
        .parts()
        .iter()
        .filter(|p| p.as_text().is_none())
        .collect()
}

/// `image: image/png, 67 bytes`, `image: https://..`, `file: report.pdf`, `audio: wav`.
fn describe(part: &ContentPart) -> String {
    match part {
        ContentPart::ImageUrl { url, .. } => match url
            .strip_prefix("data:")
            .and_then(|rest| rest.split_once(";base64,"))
        {
            Some((media, data)) => {
                // The decoded size, without decoding.
                let padding = data.bytes().rev().take_while(|b| *b == b'=').count();
                let bytes = (data.len() / 4 * 3).saturating_sub(padding);
                format!("image: {media}, {bytes} bytes")
            }
            None => format!("image: {url}"),
        },
        ContentPart::File {
            file_name, file_id, ..
        } => format!(
            "file: {}",
            file_name
                .as_deref()
                .or(file_id.as_deref())
                .unwrap_or("unnamed")
        ),
        ContentPart::Audio { format, .. } => format!("audio: {format}"),
        ContentPart::Text { text } => text.clone(),
    }
}

/// Reads a message in the OpenAI shape (the reverse of [`message_to_openai`]).
///
/// # Errors
/// [`InferenceError::MalformedResponse`] for an unknown role, bad content parts or tool call
/// arguments that are not JSON.
pub fn message_from_openai(value: &Value) -> Result<Message, InferenceError> {
    Message::from_value(value).map_err(|e| {
        InferenceError::malformed(format!("not an OpenAI message: {e}"), &value.to_string())
    })
}

fn tool_to_openai(tool: &ToolSchema) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        }
    })
}

fn tool_choice_to_openai(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::None => json!("none"),
        ToolChoice::Required => json!("required"),
        ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use messages::ToolCall;

    #[test]
    fn body_has_tools_choice_format_and_options() {
        let request =
            InferenceRequest::new(vec![Message::developer("Be brief."), Message::user("hi")])
                .with_tools([ToolSchema::new("f", "does f", json!({"type": "object"}))])
                .with_tool_choice(ToolChoice::Tool("f".into()))
                .with_parallel_tool_calls(false)
                .with_response_format(ResponseFormat::JsonObject)
                .with_max_tokens(50)
                .with_option("seed", 7)
                .with_option("max_tokens", 60);
        let body = request_body(&request, "default-model", true, false);
        assert_eq!(body["model"], "default-model");
        assert_eq!(body["messages"][0]["role"], "system");
        assert_eq!(body["tool_choice"]["function"]["name"], "f");
        assert_eq!(body["parallel_tool_calls"], false);
        assert_eq!(body["response_format"]["type"], "json_object");
        assert_eq!(body["max_tokens"], 60, "options override fields");
        assert_eq!(body["seed"], 7);
        assert_eq!(body["stream_options"]["include_usage"], true);
        let with_developer = request_body(&request.with_model("m2"), "default-model", false, true);
        assert_eq!(with_developer["messages"][0]["role"], "developer");
        assert_eq!(with_developer["model"], "m2");
        assert!(with_developer.get("stream").is_none());
    }

    #[test]
    fn no_tool_fields_without_tools() {
        let request = InferenceRequest::new(vec![Message::user("hi")])
            .with_tool_choice(ToolChoice::Auto)
            .with_parallel_tool_calls(true);
        let body = request_body(&request, "m", false, false);
        assert!(body.get("tools").is_none());
        assert!(body.get("tool_choice").is_none());
        assert!(body.get("parallel_tool_calls").is_none());
    }

    #[test]
    fn tool_calls_and_results_use_the_openai_shapes() {
        let call = Message::assistant_tool_calls([ToolCall::new("c1", "f", json!({"a": 1}))]);
        assert_eq!(
            message_to_openai(&call),
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\":1}"}}
            ]})
        );
        let result = Message::tool_result("c1", "f", "42");
        assert_eq!(
            message_to_openai(&result),
            json!({"role": "tool", "tool_call_id": "c1", "content": "42"})
        );
    }
}
