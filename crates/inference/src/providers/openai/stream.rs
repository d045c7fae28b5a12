//! Decoding an OpenAI chat completions event stream.

use std::collections::BTreeSet;

use serde_json::Value;

use super::response::{finish_reason, reasoning_of, text_of, usage_from_openai};
use crate::http::event_stream::StreamDecoder;
use crate::http::sse::SseEvent;
use crate::providers::{error_from_value, parse_json, truncated_stream};
use crate::{FinishReason, InferenceError, InferenceEvent, StreamAccumulator};

/// Turns `data:` chunks into events. Tool call fragments are forwarded as
/// [`InferenceEvent::ToolCallDelta`] and assembled; the complete calls are sent as
/// [`InferenceEvent::ToolCallComplete`] just before [`InferenceEvent::Finish`], when `[DONE]`
/// arrives (or the body ends after a finish reason).
#[derive(Default)]
pub(crate) struct OpenAiStreamDecoder {
    accumulator: StreamAccumulator,
    known_calls: BTreeSet<usize>,
    finish: Option<Value>,
    model_recorded: bool,
    done: bool,
}

impl StreamDecoder for OpenAiStreamDecoder {
    fn decode(&mut self, event: &SseEvent) -> Result<Vec<InferenceEvent>, InferenceError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(Vec::new());
        }
        if data == "[DONE]" {
            return self.complete();
        }
        let chunk = parse_json(data)?;
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            return Err(error_from_value(error));
        }
        if !self.model_recorded {
            if let Some(model) = chunk.get("model").and_then(Value::as_str) {
                // The stream is polled inside its `chat` span.
                tracing::Span::current().record(crate::telemetry::GEN_AI_RESPONSE_MODEL, model);
                self.model_recorded = true;
            }
        }
        let mut events = Vec::new();
        let choices = chunk.get("choices").and_then(Value::as_array);
        if let Some(choice) = choices.and_then(|c| c.first()) {
            if let Some(delta) = choice.get("delta") {
                self.delta(delta, &mut events);
            }
            if let Some(reason) = choice.get("finish_reason").filter(|r| r.is_string()) {
                self.finish = Some(reason.clone());
            }
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            events.push(InferenceEvent::Usage {
                usage: usage_from_openai(usage),
            });
        }
        for event in &events {
            self.accumulator.push(event);
        }
        Ok(events)
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn end_of_body(&mut self) -> Result<Vec<InferenceEvent>, InferenceError> {
        if self.finish.is_none() {
            return Err(truncated_stream("`data: [DONE]`"));
        }
        self.complete()
    }
}

impl OpenAiStreamDecoder {
    fn delta(&mut self, delta: &Value, events: &mut Vec<InferenceEvent>) {
        if let Some(reasoning) = reasoning_of(delta) {
            events.push(InferenceEvent::ReasoningDelta { text: reasoning });
        }
        let text = text_of(delta.get("content"));
        if !text.is_empty() {
            events.push(InferenceEvent::TextDelta { text });
        }
        let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) else {
            return;
        };
        for (position, call) in calls.iter().enumerate() {
            let index = call
                .get("index")
                .and_then(Value::as_u64)
                .and_then(|i| usize::try_from(i).ok())
                .unwrap_or(position);
            let function = call.get("function");
            let string = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
            // A server that sends no id gets none made up here: an id like `call_0` would be
            // the same in every reply; the agent's driver gives such calls ids unique across
            // executions.
            self.known_calls.insert(index);
            let id = string(call.get("id")).filter(|id| !id.is_empty());
            let arguments_delta = match function.and_then(|f| f.get("arguments")) {
                Some(Value::String(text)) => text.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            events.push(InferenceEvent::ToolCallDelta {
                index,
                id,
                name: string(function.and_then(|f| f.get("name"))),
                arguments_delta,
            });
        }
    }

    /// The closing events: each complete call, then the finish.
    fn complete(&mut self) -> Result<Vec<InferenceEvent>, InferenceError> {
        self.done = true;
        let calls = self.accumulator.completed_calls()?;
        let reason = match &self.finish {
            Some(reason) => finish_reason(Some(reason), !calls.is_empty()),
            None if calls.is_empty() => FinishReason::Stop,
            None => FinishReason::ToolCalls,
        };
        let mut events: Vec<InferenceEvent> = calls
            .into_iter()
            .map(|(index, call)| InferenceEvent::ToolCallComplete { index, call })
            .collect();
        events.push(InferenceEvent::Finish { reason });
        Ok(events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(lines: &[&str]) -> Vec<Result<Vec<InferenceEvent>, InferenceError>> {
        let mut decoder = OpenAiStreamDecoder::default();
        let mut out: Vec<_> = lines
            .iter()
            .map(|data| {
                decoder.decode(&SseEvent {
                    event: None,
                    data: (*data).to_owned(),
                })
            })
            .collect();
        if !decoder.is_done() {
            out.push(decoder.end_of_body());
        }
        out
    }

    #[test]
    fn a_body_ending_without_done_or_finish_is_an_error() {
        let out = decode(&[r#"{"choices":[{"delta":{"content":"Hel"}}]}"#]);
        let last = out.last().unwrap().as_ref().unwrap_err();
        assert!(matches!(last, InferenceError::Transport { .. }));
        assert!(last.to_string().contains("[DONE]"));
    }

    #[test]
    fn a_finish_reason_without_done_is_enough() {
        let out = decode(&[
            r#"{"choices":[{"delta":{"content":"Hi"},"finish_reason":null}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"length"}]}"#,
        ]);
        let last = out.last().unwrap().as_ref().unwrap();
        assert_eq!(
            last.last(),
            Some(&InferenceEvent::Finish {
                reason: FinishReason::Length
            })
        );
    }

    #[test]
    fn non_json_data_is_malformed() {
        let out = decode(&["{not json"]);
        assert!(matches!(
            out[0],
            Err(InferenceError::MalformedResponse { .. })
        ));
    }
}
