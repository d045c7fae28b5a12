//! Decoding an Anthropic messages event stream.

use std::collections::HashMap;

use serde_json::Value;

use super::response::usage_from_anthropic;
use crate::http::event_stream::StreamDecoder;
use crate::http::sse::SseEvent;
use crate::providers::{error_from_value, parse_json, truncated_stream};
use crate::{FinishReason, InferenceError, InferenceEvent, StreamAccumulator, Usage};

/// Turns `message_start` / `content_block_*` / `message_delta` / `message_stop` events into
/// ours. A tool call is complete (and sent as [`InferenceEvent::ToolCallComplete`]) when its
/// block stops; `error` events end the stream with a typed error.
#[derive(Default)]
pub(crate) struct AnthropicStreamDecoder {
    accumulator: StreamAccumulator,
    /// Block index -> tool call index, for `tool_use` blocks.
    tool_blocks: HashMap<u64, usize>,
    completed: Vec<usize>,
    usage: Usage,
    stop_reason: Option<String>,
    done: bool,
}

impl StreamDecoder for AnthropicStreamDecoder {
    fn decode(&mut self, event: &SseEvent) -> Result<Vec<InferenceEvent>, InferenceError> {
        if event.data.trim().is_empty() {
            return Ok(Vec::new());
        }
        let data = parse_json(&event.data)?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .or(event.event.as_deref())
            .unwrap_or_default();
        let events = match kind {
            "message_start" => {
                if let Some(model) = data.pointer("/message/model").and_then(Value::as_str) {
                    // The stream is polled inside its `chat` span.
                    tracing::Span::current().record(crate::telemetry::GEN_AI_RESPONSE_MODEL, model);
                }
                if let Some(usage) = data.pointer("/message/usage") {
                    self.usage = usage_from_anthropic(usage, self.usage);
                }
                Vec::new()
            }
            "content_block_start" => self.block_start(&data),
            "content_block_delta" => self.block_delta(&data),
            "content_block_stop" => self.block_stop(&data)?,
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_owned());
                }
                match data.get("usage") {
                    Some(usage) => {
                        self.usage = usage_from_anthropic(usage, self.usage);
                        vec![InferenceEvent::Usage { usage: self.usage }]
                    }
                    None => Vec::new(),
                }
            }
            "message_stop" => self.complete()?,
            "error" => return Err(error_from_value(data.get("error").unwrap_or(&data))),
            _ => Vec::new(),
        };
        for event in &events {
            self.accumulator.push(event);
        }
        Ok(events)
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn end_of_body(&mut self) -> Result<Vec<InferenceEvent>, InferenceError> {
        if self.stop_reason.is_none() {
            return Err(truncated_stream("`message_stop`"));
        }
        self.complete()
    }
}

impl AnthropicStreamDecoder {
    fn block_start(&mut self, data: &Value) -> Vec<InferenceEvent> {
        let block = data.get("content_block").unwrap_or(&Value::Null);
        let text = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or_default();
        match text("type") {
            "text" if !text("text").is_empty() => vec![InferenceEvent::TextDelta {
                text: text("text").to_owned(),
            }],
            "thinking" if !text("thinking").is_empty() => vec![InferenceEvent::ReasoningDelta {
                text: text("thinking").to_owned(),
            }],
            "tool_use" => {
                let index = self.tool_blocks.len();
                self.tool_blocks.insert(block_index(data), index);
                // The input is `{}` here and arrives in `input_json_delta`s; a proxy may send
                // it whole instead.
                let arguments_delta = match block.get("input") {
                    Some(Value::Object(input)) if !input.is_empty() => {
                        Value::Object(input.clone()).to_string()
                    }
                    _ => String::new(),
                };
                vec![InferenceEvent::ToolCallDelta {
                    index,
                    id: Some(text("id").to_owned()),
                    name: Some(text("name").to_owned()),
                    arguments_delta,
                }]
            }
            _ => Vec::new(),
        }
    }

    fn block_delta(&mut self, data: &Value) -> Vec<InferenceEvent> {
        let delta = data.get("delta").unwrap_or(&Value::Null);
        let text = |key: &str| delta.get(key).and_then(Value::as_str).unwrap_or_default();
        match text("type") {
            "text_delta" if !text("text").is_empty() => vec![InferenceEvent::TextDelta {
                text: text("text").to_owned(),
            }],
            "thinking_delta" if !text("thinking").is_empty() => {
                vec![InferenceEvent::ReasoningDelta {
                    text: text("thinking").to_owned(),
                }]
            }
            "input_json_delta" => match self.tool_blocks.get(&block_index(data)) {
                Some(index) => vec![InferenceEvent::ToolCallDelta {
                    index: *index,
                    id: None,
                    name: None,
                    arguments_delta: text("partial_json").to_owned(),
                }],
                None => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    fn block_stop(&mut self, data: &Value) -> Result<Vec<InferenceEvent>, InferenceError> {
        let Some(index) = self.tool_blocks.get(&block_index(data)).copied() else {
            return Ok(Vec::new());
        };
        self.complete_calls(|i| i == index)
    }

    /// `ToolCallComplete` for the calls selected by `which` that were not completed yet.
    fn complete_calls(
        &mut self,
        which: impl Fn(usize) -> bool,
    ) -> Result<Vec<InferenceEvent>, InferenceError> {
        let mut events = Vec::new();
        for (index, call) in self.accumulator.completed_calls()? {
            if which(index) && !self.completed.contains(&index) {
                self.completed.push(index);
                events.push(InferenceEvent::ToolCallComplete { index, call });
            }
        }
        Ok(events)
    }

    fn complete(&mut self) -> Result<Vec<InferenceEvent>, InferenceError> {
        self.done = true;
        let mut events = self.complete_calls(|_| true)?;
        let reason = match &self.stop_reason {
            Some(reason) => FinishReason::from_provider(reason),
            None if self.tool_blocks.is_empty() => FinishReason::Stop,
            None => FinishReason::ToolCalls,
        };
        events.push(InferenceEvent::Finish { reason });
        Ok(events)
    }
}

fn block_index(data: &Value) -> u64 {
    data.get("index").and_then(Value::as_u64).unwrap_or(0)
}
