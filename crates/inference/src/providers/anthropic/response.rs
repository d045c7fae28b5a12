//! Reading an Anthropic messages answer.

use messages::ToolCall;
use serde_json::Value;

use crate::providers::{error_from_value, parse_json};
use crate::{FinishReason, InferenceError, InferenceResponse, Usage};

/// Parses a (non-streamed) messages answer: text blocks become the content, `tool_use`
/// blocks tool calls, `thinking` blocks the reasoning.
///
/// # Errors
/// [`InferenceError::MalformedResponse`] (with a body excerpt) when the body is not JSON or
/// has no `content`; a typed provider error for an `error` body.
pub fn parse_response(body: &str) -> Result<InferenceResponse, InferenceError> {
    let value = parse_json(body)?;
    if value.get("type").and_then(Value::as_str) == Some("error") {
        return Err(error_from_value(value.get("error").unwrap_or(&Value::Null)));
    }
    let blocks = value
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| InferenceError::malformed("the answer has no `content` list", body))?;
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut calls = Vec::new();
    for block in blocks {
        let field = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or_default();
        match field("type") {
            "text" => text.push_str(field("text")),
            "thinking" => reasoning.push_str(field("thinking")),
            "tool_use" => {
                if field("name").is_empty() {
                    return Err(InferenceError::malformed(
                        "a `tool_use` block has no name",
                        &block.to_string(),
                    ));
                }
                let input = block.get("input").cloned().unwrap_or(Value::Null);
                calls.push(ToolCall::new(field("id"), field("name"), input));
            }
            _ => {}
        }
    }
    let reason = match value.get("stop_reason").and_then(Value::as_str) {
        Some(reason) => FinishReason::from_provider(reason),
        None if calls.is_empty() => FinishReason::Stop,
        None => FinishReason::ToolCalls,
    };
    let mut response = InferenceResponse::text(text)
        .with_calls(calls)
        .with_finish_reason(reason);
    if let Some(usage) = value.get("usage") {
        response = response.with_usage(usage_from_anthropic(usage, Usage::default()));
    }
    if !reasoning.is_empty() {
        response = response.with_reasoning(reasoning);
    }
    if let Some(id) = value.get("id").and_then(Value::as_str) {
        response = response.with_id(id);
    }
    if let Some(model) = value.get("model").and_then(Value::as_str) {
        response = response.with_model(model);
    }
    Ok(response)
}

/// Anthropic usage over `base`: fields present in `usage` replace those of `base` (a stream's
/// `message_delta` repeats only some of them).
pub fn usage_from_anthropic(usage: &Value, base: Usage) -> Usage {
    let count = |key: &str, old: u64| usage.get(key).and_then(Value::as_u64).unwrap_or(old);
    Usage {
        input_tokens: count("input_tokens", base.input_tokens),
        output_tokens: count("output_tokens", base.output_tokens),
        cache_read_tokens: count("cache_read_input_tokens", base.cache_read_tokens),
        cache_write_tokens: count("cache_creation_input_tokens", base.cache_write_tokens),
        reasoning_tokens: base.reasoning_tokens,
    }
}
