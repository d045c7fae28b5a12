//! Our request and messages as an Anthropic messages body, and back.

use std::collections::HashMap;

use messages::{Content, Message, Messages, Role, ToolCall};
use serde_json::{json, Map, Value};

use super::content::{block_to_part, part_to_block};
use crate::encoding::array_out::{unserializable, ArrayOut};
use crate::encoding::body::RequestBody;
use crate::encoding::history::{write_all, EncodeCache, MessageWriter};
use crate::encoding::object::{write_object, Splice};
use crate::error::InferenceError;
use crate::model_settings::ModelSettings;
use crate::request::{InferenceRequest, ResponseFormat, ToolChoice};

/// The `/v1/messages` body for `request`: system and developer messages become `system`,
/// `max_tokens` falls back to `default_max_tokens` (Anthropic requires it), free options are
/// merged last. Anthropic has no JSON mode, so a JSON response format becomes an instruction
/// at the end of the system prompt.
///
/// With `prompt_caching`, the body carries `cache_control` breakpoints (at most the API's
/// four): on the last tool definition, on the system prompt, on the end of the stable
/// conversation ([`InferenceRequest::cache_breakpoint`], else the last message) and on the
/// last message when it comes later (a growing tool trace is then read from the cache by the
/// next step of the same run).
pub fn request_body(
    request: &InferenceRequest,
    model: &str,
    default_max_tokens: u32,
    stream: bool,
    prompt_caching: bool,
) -> Value {
    let marks = if prompt_caching {
        message_breakpoints(request)
    } else {
        Vec::new()
    };
    let mut messages = Vec::with_capacity(request.messages.len());
    // Writing to values cannot fail.
    let _ = write_all(&AnthropicWriter, &request.messages, &marks, &mut messages);
    let system = system_texts(request.messages.iter());
    let settings = ModelSettings::new(model).with_max_tokens(default_max_tokens);
    Value::Object(body_fields(
        request,
        &settings,
        stream,
        prompt_caching,
        system,
        Value::Array(messages),
        tools_value(request, prompt_caching),
    ))
}

/// The body as bytes, byte for byte `serde_json::to_vec` of [`request_body`] (with
/// `settings` filling what the request leaves unset, [`DEFAULT_MAX_TOKENS`] when neither sets
/// a limit), reusing from `cache` the bytes of the messages and tools an earlier request of
/// this model already wrote.
///
/// [`DEFAULT_MAX_TOKENS`]: super::DEFAULT_MAX_TOKENS
pub(crate) fn encode_body(
    request: &InferenceRequest,
    settings: &ModelSettings,
    stream: bool,
    prompt_caching: bool,
    cache: &EncodeCache<AnthropicState>,
) -> Result<RequestBody, InferenceError> {
    let mut splices = Vec::with_capacity(2);
    // A free option named like a field replaced it: then there is nothing to splice, but
    // the system prompt still comes from the messages.
    let system = if request.options.contains_key("messages") {
        system_texts(request.messages.iter())
    } else {
        let marks = if prompt_caching {
            message_breakpoints(request)
        } else {
            Vec::new()
        };
        let encoded = cache.encode(&AnthropicWriter, &request.messages, &marks)?;
        splices.push(Splice {
            key: "messages",
            chunks: encoded.chunks,
        });
        system_texts(
            encoded
                .system
                .iter()
                .filter_map(|i| request.messages.get(*i)),
        )
    };
    if !request.tools.is_empty() && !request.options.contains_key("tools") {
        let tools = cache.tools(&request.tools, || {
            serde_json::to_vec(&tools_value(request, prompt_caching)).map_err(unserializable)
        })?;
        splices.push(Splice {
            key: "tools",
            chunks: vec![tools],
        });
    }
    let settings = ModelSettings {
        max_tokens: settings.max_tokens.or(Some(super::DEFAULT_MAX_TOKENS)),
        ..settings.clone()
    };
    let body = body_fields(
        request,
        &settings,
        stream,
        prompt_caching,
        system,
        Value::Null,
        Value::Null,
    );
    let mut chunks = Vec::with_capacity(8);
    write_object(&body, splices, &mut chunks)?;
    Ok(RequestBody::from_chunks(chunks))
}

/// The body's fields in order, with `messages` and `tools` (used only when the request has
/// tools) as given; `settings.max_tokens` is the limit for a request that sets none.
fn body_fields(
    request: &InferenceRequest,
    settings: &ModelSettings,
    stream: bool,
    prompt_caching: bool,
    system: Option<String>,
    messages: Value,
    tools: Value,
) -> Map<String, Value> {
    let system = [system, format_instruction(request.response_format.as_ref())]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("\n\n");
    let mut body = Map::new();
    body.insert("model".into(), json!(settings.model_for(request)));
    if let Some(max_tokens) = request.max_tokens.or(settings.max_tokens) {
        body.insert("max_tokens".into(), json!(max_tokens));
    }
    if !system.is_empty() && prompt_caching {
        body.insert(
            "system".into(),
            json!([{"type": "text", "text": system, "cache_control": ephemeral()}]),
        );
    } else if !system.is_empty() {
        body.insert("system".into(), json!(system));
    }
    body.insert("messages".into(), messages);
    if !request.tools.is_empty() {
        body.insert("tools".into(), tools);
        if let Some(choice) = tool_choice(request) {
            body.insert("tool_choice".into(), choice);
        }
    }
    if let Some(temperature) = request.temperature.or(settings.temperature) {
        body.insert("temperature".into(), json!(temperature));
    }
    if stream {
        body.insert("stream".into(), json!(true));
    }
    for (key, value) in &request.options {
        body.insert(key.clone(), value.clone());
    }
    body
}

/// The tool definitions, the last one with a breakpoint when caching.
fn tools_value(request: &InferenceRequest, prompt_caching: bool) -> Value {
    let mut tools: Vec<Value> = request
        .tools
        .iter()
        .map(
            |t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}),
        )
        .collect();
    if let Some(last) = tools.last_mut() {
        if prompt_caching {
            last["cache_control"] = ephemeral();
        }
    }
    Value::Array(tools)
}

/// The system prompt: the texts of the system and developer messages among `messages`,
/// joined with a blank line.
fn system_texts<'a>(messages: impl IntoIterator<Item = &'a Message>) -> Option<String> {
    let texts: Vec<String> = messages
        .into_iter()
        .filter(|m| m.role().is_system())
        .map(Message::text)
        .filter(|t| !t.is_empty())
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n\n"))
}

/// Splits a conversation into the system prompt (system and developer texts joined with a
/// blank line) and Anthropic messages: assistant tool calls become `tool_use` blocks after
/// the assistant's text, and consecutive tool results become one user message of
/// `tool_result` blocks.
pub fn messages_to_anthropic<'a>(
    messages: impl IntoIterator<Item = &'a Message>,
) -> (Option<String>, Vec<Value>) {
    let messages: Messages = messages.into_iter().cloned().collect();
    let mut out = Vec::with_capacity(messages.len());
    // Writing to values cannot fail.
    let _ = write_all(&AnthropicWriter, &messages, &[], &mut out);
    (system_texts(messages.iter()), out)
}

/// Writes the `messages` array: system and developer messages are left out (their text goes
/// to `system`), assistant tool calls become `tool_use` blocks after the assistant's text,
/// and consecutive tool results become one user message of `tool_result` blocks. System text
/// does not split a run of tool results. A marked message gets a `cache_control` breakpoint
/// on its last content block (see [`message_breakpoints`] for marks on system messages).
#[derive(Clone, Copy, Debug)]
pub(crate) struct AnthropicWriter;

/// What [`AnthropicWriter`] carries between messages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct AnthropicState {
    /// Something was written.
    any: bool,
    /// A user message of tool results is open.
    results_open: bool,
}

impl MessageWriter for AnthropicWriter {
    type State = AnthropicState;

    fn write<O: ArrayOut>(
        &self,
        _messages: &Messages,
        _index: usize,
        message: &Message,
        state: AnthropicState,
        marked: bool,
        out: &mut O,
    ) -> Result<AnthropicState, InferenceError> {
        let value = match message.role() {
            Role::System | Role::Developer => return Ok(state),
            Role::Tool => {
                let mut block = tool_result_block(message);
                if marked {
                    block["cache_control"] = ephemeral();
                }
                if !state.results_open {
                    out.open_group("user", !state.any)?;
                }
                out.group_item(block, !state.results_open)?;
                return Ok(AnthropicState {
                    any: true,
                    results_open: true,
                });
            }
            Role::Assistant => assistant_message(message),
            Role::User => json!({"role": "user", "content": content_value(message.content())}),
        };
        let mut value = value;
        if marked {
            mark_message(&mut value);
        }
        if state.results_open {
            out.close_group()?;
        }
        out.element(value, !state.any)?;
        Ok(AnthropicState {
            any: true,
            results_open: false,
        })
    }

    fn finish<O: ArrayOut>(
        &self,
        _messages: &Messages,
        state: AnthropicState,
        out: &mut O,
    ) -> Result<(), InferenceError> {
        if state.results_open {
            out.close_group()?;
        }
        Ok(())
    }
}

/// Reads Anthropic messages back (the reverse of [`messages_to_anthropic`]): the system
/// prompt becomes a leading system message, `tool_result` blocks become tool messages (named
/// after the `tool_use` they answer), `tool_use` blocks become tool calls.
///
/// # Errors
/// [`InferenceError::MalformedResponse`] for a message without a known role.
pub fn messages_from_anthropic(
    system: Option<&str>,
    messages: &[Value],
) -> Result<Vec<Message>, InferenceError> {
    let mut out: Vec<Message> = system.map(Message::system).into_iter().collect();
    let mut tool_names: HashMap<String, String> = HashMap::new();
    for value in messages {
        let role = value.get("role").and_then(Value::as_str);
        let blocks = match value.get("content") {
            Some(Value::String(text)) => vec![json!({"type": "text", "text": text})],
            Some(Value::Array(blocks)) => blocks.clone(),
            _ => Vec::new(),
        };
        match role {
            Some("assistant") => {
                let message = assistant_from_blocks(&blocks);
                for call in message.tool_calls() {
                    tool_names.insert(call.id().to_owned(), call.name().to_owned());
                }
                out.push(message);
            }
            Some("user") => out.extend(user_from_blocks(&blocks, &tool_names)),
            _ => {
                return Err(InferenceError::malformed(
                    "an Anthropic message must have role `user` or `assistant`",
                    &value.to_string(),
                ))
            }
        }
    }
    Ok(out)
}

/// Positions of the messages that get a breakpoint, ascending: the end of the stable
/// conversation and the last message. A system message cannot carry one (its text moves to
/// `system`), so its breakpoint goes to the message sent just before it: the last message
/// before it that is not a system message (none when there is none).
fn message_breakpoints(request: &InferenceRequest) -> Vec<usize> {
    let messages = &request.messages;
    let Some(last) = messages.len().checked_sub(1) else {
        return Vec::new();
    };
    let stable = request
        .cache_breakpoint
        .filter(|i| *i < last)
        .unwrap_or(last);
    let sent_at_or_before = |mut index: usize| loop {
        match messages.get(index) {
            Some(message) if !message.role().is_system() => return Some(index),
            Some(_) => index = index.checked_sub(1)?,
            None => return None,
        }
    };
    let mut marks: Vec<usize> = [stable, last]
        .into_iter()
        .filter_map(sent_at_or_before)
        .collect();
    marks.dedup();
    marks
}

/// `{"type": "ephemeral"}`: the default five-minute cache.
fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// Puts a breakpoint on the last block of a list; false for an empty list.
fn mark_last(blocks: &mut [Value]) -> bool {
    match blocks.last_mut() {
        Some(block) => {
            block["cache_control"] = ephemeral();
            true
        }
        None => false,
    }
}

/// Puts a breakpoint on the last content block of a message (plain text becomes one text
/// block). Empty text cannot carry one and is left alone.
fn mark_message(message: &mut Value) {
    let content = &mut message["content"];
    if let Value::String(text) = content {
        if text.is_empty() {
            return;
        }
        *content = json!([{"type": "text", "text": std::mem::take(text)}]);
    }
    if let Value::Array(blocks) = content {
        mark_last(blocks);
    }
}

fn assistant_message(message: &Message) -> Value {
    if !message.has_tool_calls() && !message.content().is_composite() {
        return json!({"role": "assistant", "content": message.text()});
    }
    let mut blocks: Vec<Value> = message
        .content()
        .parts()
        .iter()
        .filter_map(part_to_block)
        .collect();
    blocks.extend(message.tool_calls().iter().map(|call| {
        json!({"type": "tool_use", "id": call.id(), "name": call.name(), "input": call.arguments()})
    }));
    json!({"role": "assistant", "content": blocks})
}

fn tool_result_block(message: &Message) -> Value {
    json!({
        "type": "tool_result",
        "tool_use_id": message.tool_call_id().unwrap_or_default(),
        "content": content_value(message.content()),
    })
}

/// Plain text as a string, anything else as blocks.
fn content_value(content: &Content) -> Value {
    if !content.is_composite() {
        return json!(content.text_content());
    }
    Value::Array(content.parts().iter().filter_map(part_to_block).collect())
}

fn content_from_blocks(blocks: &[Value]) -> Content {
    Content::from_parts(
        blocks
            .iter()
            .filter_map(block_to_part)
            .filter(|p| !p.is_empty()),
    )
}

fn assistant_from_blocks(blocks: &[Value]) -> Message {
    let calls: Vec<ToolCall> = blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
        .map(|b| {
            let text = |key: &str| b.get(key).and_then(Value::as_str).unwrap_or_default();
            ToolCall::new(
                text("id"),
                text("name"),
                b.get("input").cloned().unwrap_or(Value::Null),
            )
        })
        .collect();
    Message::assistant(content_from_blocks(blocks)).with_tool_calls(calls)
}

fn user_from_blocks(blocks: &[Value], tool_names: &HashMap<String, String>) -> Vec<Message> {
    let mut out = Vec::new();
    let mut rest = Vec::new();
    for block in blocks {
        if block.get("type").and_then(Value::as_str) != Some("tool_result") {
            rest.push(block.clone());
            continue;
        }
        let id = block
            .get("tool_use_id")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let content = match block.get("content") {
            Some(Value::String(text)) => Content::text(text.clone()),
            Some(Value::Array(inner)) => content_from_blocks(inner),
            _ => Content::empty(),
        };
        let name = tool_names.get(id).cloned().unwrap_or_default();
        out.push(Message::tool_result(id, name, content));
    }
    if !rest.is_empty() || out.is_empty() {
        out.push(Message::user(content_from_blocks(&rest)));
    }
    out
}

fn tool_choice(request: &InferenceRequest) -> Option<Value> {
    let mut choice = match &request.tool_choice {
        None if request.parallel_tool_calls == Some(false) => json!({"type": "auto"}),
        None => return None,
        Some(ToolChoice::Auto) => json!({"type": "auto"}),
        Some(ToolChoice::None) => return Some(json!({"type": "none"})),
        Some(ToolChoice::Required) => json!({"type": "any"}),
        Some(ToolChoice::Tool(name)) => json!({"type": "tool", "name": name}),
    };
    if request.parallel_tool_calls == Some(false) {
        choice["disable_parallel_tool_use"] = json!(true);
    }
    Some(choice)
}

fn format_instruction(format: Option<&ResponseFormat>) -> Option<String> {
    match format? {
        ResponseFormat::Text => None,
        ResponseFormat::JsonObject => {
            Some("Answer with a single JSON object and nothing else.".to_owned())
        }
        ResponseFormat::JsonSchema { name, schema, .. } => Some(format!(
            "Answer with a single JSON object and nothing else. It must match the JSON Schema \
             `{name}`:\n{schema}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ToolSchema;

    #[test]
    fn consecutive_tool_results_share_one_user_message() {
        let conversation = [
            Message::system("Be brief."),
            Message::user("Weather and time in Paris?"),
            Message::assistant_tool_calls([
                ToolCall::new("a", "weather", json!({"city": "Paris"})),
                ToolCall::new("b", "time", json!({})),
            ])
            .with_content("Checking."),
            Message::tool_result("a", "weather", "22°C"),
            Message::tool_result("b", "time", "14:00"),
        ];
        let (system, messages) = messages_to_anthropic(conversation.iter());
        assert_eq!(system.as_deref(), Some("Be brief."));
        assert_eq!(messages.len(), 3);
        assert_eq!(
            messages[1]["content"][0],
            json!({"type": "text", "text": "Checking."})
        );
        assert_eq!(messages[1]["content"][2]["type"], "tool_use");
        assert_eq!(messages[2]["content"].as_array().unwrap().len(), 2);
        let back = messages_from_anthropic(system.as_deref(), &messages).unwrap();
        assert_eq!(back, conversation.to_vec());
    }

    #[test]
    fn tool_choice_and_parallel_flag() {
        let request = InferenceRequest::new(vec![Message::user("hi")])
            .with_tools([ToolSchema::new("f", "", json!({"type": "object"}))])
            .with_tool_choice(ToolChoice::Required)
            .with_parallel_tool_calls(false)
            .with_response_format(ResponseFormat::JsonObject);
        let body = request_body(&request, "claude", 4096, false, false);
        assert_eq!(
            body["tool_choice"],
            json!({"type": "any", "disable_parallel_tool_use": true})
        );
        assert_eq!(body["max_tokens"], 4096);
        assert!(body["system"].as_str().unwrap().contains("JSON object"));
        assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
    }
}
