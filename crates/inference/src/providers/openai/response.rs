//! Reading an OpenAI chat completions answer.

use messages::ToolCall;
use serde_json::Value;

use crate::providers::{error_from_value, parse_json};
use crate::{FinishReason, InferenceError, InferenceResponse, Usage};

/// Parses a (non-streamed) chat completions answer.
///
/// Tool call arguments arrive as JSON text and are decoded; a call without an id gets
/// `call_<index>`. Some servers (Ollama) say `stop` while returning tool calls: the finish
/// reason is then reported as [`FinishReason::ToolCalls`].
///
/// # Errors
/// [`InferenceError::MalformedResponse`] (with a body excerpt) when the body is not JSON,
/// has no choice, or a tool call's arguments are not JSON; a typed provider error when the
/// body is an error object.
pub fn parse_response(body: &str) -> Result<InferenceResponse, InferenceError> {
    let value = parse_json(body)?;
    if let Some(error) = value.get("error").filter(|e| !e.is_null()) {
        return Err(error_from_value(error));
    }
    let choice = value
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|choices| choices.first())
        .ok_or_else(|| InferenceError::malformed("the answer has no `choices`", body))?;
    let message = choice
        .get("message")
        .ok_or_else(|| InferenceError::malformed("the choice has no `message`", body))?;
    let calls = match message.get("tool_calls") {
        Some(Value::Array(calls)) => calls
            .iter()
            .enumerate()
            .map(|(index, call)| tool_call_from_openai(index, call))
            .collect::<Result<Vec<_>, _>>()?,
        _ => Vec::new(),
    };
    let reason = finish_reason(choice.get("finish_reason"), !calls.is_empty());
    let mut response = InferenceResponse::text(text_of(message.get("content")))
        .with_calls(calls)
        .with_finish_reason(reason);
    if let Some(usage) = value.get("usage").filter(|u| u.is_object()) {
        response = response.with_usage(usage_from_openai(usage));
    }
    if let Some(reasoning) = reasoning_of(message) {
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

/// OpenAI usage as ours. `prompt_tokens` includes cached tokens and `completion_tokens`
/// includes reasoning tokens; ours counts each token once, so that `total()` equals the
/// provider's `total_tokens`.
pub fn usage_from_openai(usage: &Value) -> Usage {
    let count = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
    let prompt = count(usage.get("prompt_tokens"));
    let completion = count(usage.get("completion_tokens"));
    let cached = count(usage.pointer("/prompt_tokens_details/cached_tokens"));
    let reasoning = count(usage.pointer("/completion_tokens_details/reasoning_tokens"));
    Usage {
        input_tokens: prompt.saturating_sub(cached),
        output_tokens: completion.saturating_sub(reasoning),
        cache_read_tokens: cached,
        cache_write_tokens: 0,
        reasoning_tokens: reasoning,
    }
}

/// A finish reason string (or null) normalised; `stop` with tool calls becomes `ToolCalls`.
pub(crate) fn finish_reason(value: Option<&Value>, has_calls: bool) -> FinishReason {
    let reason = match value.and_then(Value::as_str) {
        Some(reason) => FinishReason::from_provider(reason),
        None => FinishReason::Stop,
    };
    if has_calls && reason == FinishReason::Stop {
        FinishReason::ToolCalls
    } else {
        reason
    }
}

/// Reasoning text under `reasoning_content` (DeepSeek, vLLM, llama.cpp) or `reasoning`.
pub(crate) fn reasoning_of(message: &Value) -> Option<String> {
    ["reasoning_content", "reasoning"]
        .iter()
        .filter_map(|key| message.get(*key).and_then(Value::as_str))
        .find(|text| !text.is_empty())
        .map(str::to_owned)
}

/// Content as text: a string, or the text parts of a list.
pub(crate) fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

fn tool_call_from_openai(_index: usize, call: &Value) -> Result<ToolCall, InferenceError> {
    let id = call
        .get("id")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .map_or_else(String::new, str::to_owned);
    let function = call.get("function").unwrap_or(call);
    let name = function
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or_else(|| {
            InferenceError::malformed(format!("tool call `{id}` has no name"), &call.to_string())
        })?;
    let arguments = match function.get("arguments") {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(Value::String(text)) if text.trim().is_empty() => Value::Object(Default::default()),
        Some(Value::String(text)) => serde_json::from_str(text).map_err(|e| {
            InferenceError::malformed(
                format!("arguments of tool call `{id}` ({name}) are not valid JSON: {e}"),
                text,
            )
        })?,
        Some(other) => other.clone(),
    };
    Ok(ToolCall::new(id, name, arguments))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn usage_counts_each_token_once() {
        let usage = usage_from_openai(&json!({
            "prompt_tokens": 100, "completion_tokens": 30, "total_tokens": 130,
            "prompt_tokens_details": {"cached_tokens": 40},
            "completion_tokens_details": {"reasoning_tokens": 10}
        }));
        assert_eq!(usage.input_tokens, 60);
        assert_eq!(usage.cache_read_tokens, 40);
        assert_eq!(usage.output_tokens, 20);
        assert_eq!(usage.reasoning_tokens, 10);
        assert_eq!(usage.total(), 130);
    }

    #[test]
    fn object_arguments_and_missing_ids_are_accepted() {
        let body = json!({"choices": [{"message": {"role": "assistant", "content": "",
            "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]},
            "finish_reason": "stop"}]});
        let response = parse_response(&body.to_string()).unwrap();
        assert_eq!(
            response.tool_calls()[0],
            ToolCall::new("", "f", json!({"a": 1}))
        );
        assert_eq!(response.finish_reason(), FinishReason::ToolCalls);
    }

    #[test]
    fn error_objects_in_a_success_body_are_typed() {
        let error =
            parse_response(r#"{"error":{"message":"slow down","type":"rate_limit_exceeded"}}"#)
                .unwrap_err();
        assert!(error.is_rate_limit());
    }
}
