//! Our request and messages as an Anthropic messages body, and back.

use std::collections::HashMap;

use messages::{Content, Message, Role, ToolCall};
use serde_json::{json, Map, Value};

use super::content::{block_to_part, part_to_block};
use crate::{InferenceError, InferenceRequest, ResponseFormat, ToolChoice};

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
    let (system, messages) = convert_messages(request.messages.iter(), &marks);
    let system = [system, format_instruction(request.response_format.as_ref())]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("\n\n");
    let mut body = Map::new();
    let model = request
        .model
        .as_deref()
        .filter(|m| !m.is_empty())
        .unwrap_or(model);
    body.insert("model".into(), json!(model));
    body.insert(
        "max_tokens".into(),
        json!(request.max_tokens.unwrap_or(default_max_tokens)),
    );
    if !system.is_empty() && prompt_caching {
        body.insert(
            "system".into(),
            json!([{"type": "text", "text": system, "cache_control": ephemeral()}]),
        );
    } else if !system.is_empty() {
        body.insert("system".into(), json!(system));
    }
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
        let mut tools = Value::Array(tools);
        if let Some(last) = tools.as_array_mut().and_then(|t| t.last_mut()) {
            if prompt_caching {
                last["cache_control"] = ephemeral();
            }
        }
        body.insert("tools".into(), tools);
        if let Some(choice) = tool_choice(request) {
            body.insert("tool_choice".into(), choice);
        }
    }
    if let Some(temperature) = request.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if stream {
        body.insert("stream".into(), json!(true));
    }
    for (key, value) in &request.options {
        body.insert(key.clone(), value.clone());
    }
    Value::Object(body)
}

/// Splits a conversation into the system prompt (system and developer texts joined with a
/// blank line) and Anthropic messages: assistant tool calls become `tool_use` blocks after
/// the assistant's text, and consecutive tool results become one user message of
/// `tool_result` blocks.
pub fn messages_to_anthropic<'a>(
    messages: impl IntoIterator<Item = &'a Message>,
) -> (Option<String>, Vec<Value>) {
    convert_messages(messages, &[])
}

/// [`messages_to_anthropic`], with a `cache_control` breakpoint on the last content block of
/// each message whose position is in `marks`. A system message cannot carry one (its text
/// moves to `system`): the breakpoint goes to the block sent just before it.
fn convert_messages<'a>(
    messages: impl IntoIterator<Item = &'a Message>,
    marks: &[usize],
) -> (Option<String>, Vec<Value>) {
    let mut system = Vec::new();
    let mut out: Vec<Value> = Vec::new();
    let mut results: Vec<Value> = Vec::new();
    for (index, message) in messages.into_iter().enumerate() {
        let marked = marks.contains(&index);
        if message.role() == Role::Tool {
            results.push(tool_result_block(message));
            if marked {
                mark_last(&mut results);
            }
            continue;
        }
        // System text moves to `system`, so it must not split a run of tool results.
        if !results.is_empty() && !message.role().is_system() {
            out.push(json!({"role": "user", "content": std::mem::take(&mut results)}));
        }
        match message.role() {
            Role::System | Role::Developer => {
                let text = message.text();
                if !text.is_empty() {
                    system.push(text);
                }
                if marked && !mark_last(&mut results) {
                    if let Some(last) = out.last_mut() {
                        mark_message(last);
                    }
                }
                continue;
            }
            Role::Assistant => out.push(assistant_message(message)),
            Role::User | Role::Tool => {
                out.push(json!({"role": "user", "content": content_value(message.content())}));
            }
        }
        if marked {
            if let Some(last) = out.last_mut() {
                mark_message(last);
            }
        }
    }
    if !results.is_empty() {
        out.push(json!({"role": "user", "content": results}));
    }
    let system = (!system.is_empty()).then(|| system.join("\n\n"));
    (system, out)
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

/// Positions of the messages that get a breakpoint: the end of the stable conversation and
/// the last message.
fn message_breakpoints(request: &InferenceRequest) -> Vec<usize> {
    let Some(last) = request.messages.len().checked_sub(1) else {
        return Vec::new();
    };
    let stable = request
        .cache_breakpoint
        .filter(|i| *i < last)
        .unwrap_or(last);
    if stable == last {
        vec![last]
    } else {
        vec![stable, last]
    }
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
