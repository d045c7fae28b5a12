//! Streaming: `InferenceEvent` and the accumulator that turns events into a response.

use std::collections::BTreeMap;

use messages::ToolCall;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{FinishReason, InferenceError, InferenceResponse, Usage};

/// One event of a streamed answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum InferenceEvent {
    /// A piece of the answer's text.
    TextDelta {
        /// The new text.
        text: String,
    },
    /// A piece of reasoning text.
    ReasoningDelta {
        /// The new text.
        text: String,
    },
    /// A piece of a tool call: the id and name arrive first, the arguments in fragments.
    ToolCallDelta {
        /// Position of the call in the answer.
        index: usize,
        /// The call id, when this delta carries it.
        id: Option<String>,
        /// The tool name, when this delta carries it.
        name: Option<String>,
        /// A fragment of the arguments' JSON text.
        arguments_delta: String,
    },
    /// A tool call whose arguments are complete and parsed.
    ToolCallComplete {
        /// Position of the call in the answer.
        index: usize,
        /// The complete call.
        call: ToolCall,
    },
    /// Token usage (usually near the end).
    Usage {
        /// The usage.
        usage: Usage,
    },
    /// The answer is complete.
    Finish {
        /// Why generation stopped.
        reason: FinishReason,
    },
}

#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
    complete: Option<ToolCall>,
}

/// Builds an [`InferenceResponse`] from stream events, assembling tool call argument fragments
/// into complete calls.
#[derive(Default)]
pub struct StreamAccumulator {
    content: String,
    reasoning: String,
    calls: BTreeMap<usize, PartialCall>,
    usage: Usage,
    finish: Option<FinishReason>,
}

impl StreamAccumulator {
    /// An empty accumulator.
    pub fn new() -> Self {
        Self::default()
    }

    /// Folds one event in.
    pub fn push(&mut self, event: &InferenceEvent) {
        match event {
            InferenceEvent::TextDelta { text } => self.content.push_str(text),
            InferenceEvent::ReasoningDelta { text } => self.reasoning.push_str(text),
            InferenceEvent::ToolCallDelta {
                index,
                id,
                name,
                arguments_delta,
            } => {
                let call = self.calls.entry(*index).or_default();
                if let Some(id) = id.as_ref().filter(|s| !s.is_empty()) {
                    call.id.clone_from(id);
                }
                if let Some(name) = name.as_ref().filter(|s| !s.is_empty()) {
                    call.name.clone_from(name);
                }
                call.arguments.push_str(arguments_delta);
            }
            InferenceEvent::ToolCallComplete { index, call } => {
                self.calls.entry(*index).or_default().complete = Some(call.clone());
            }
            InferenceEvent::Usage { usage } => self.usage = *usage,
            InferenceEvent::Finish { reason } => self.finish = Some(*reason),
        }
    }

    /// True once a `Finish` event was seen.
    pub fn is_finished(&self) -> bool {
        self.finish.is_some()
    }

    /// The calls assembled so far from deltas, parsed (used by providers to emit
    /// `ToolCallComplete` events at the end of a stream).
    ///
    /// # Errors
    /// [`InferenceError::MalformedResponse`] when the assembled arguments are not JSON.
    pub fn completed_calls(&self) -> Result<Vec<(usize, ToolCall)>, InferenceError> {
        self.calls
            .iter()
            .map(|(index, partial)| {
                if let Some(call) = &partial.complete {
                    return Ok((*index, call.clone()));
                }
                let arguments = if partial.arguments.trim().is_empty() {
                    Value::Object(Default::default())
                } else {
                    serde_json::from_str(&partial.arguments).map_err(|e| {
                        InferenceError::malformed(
                            format!(
                                "streamed arguments of tool call `{}` ({}) are not valid JSON: {e}",
                                partial.id, partial.name
                            ),
                            &partial.arguments,
                        )
                    })?
                };
                if partial.name.is_empty() {
                    return Err(InferenceError::malformed(
                        format!("streamed tool call #{index} has no name"),
                        &partial.arguments,
                    ));
                }
                Ok((
                    *index,
                    ToolCall::new(partial.id.clone(), partial.name.clone(), arguments),
                ))
            })
            .collect()
    }

    /// The finished response.
    ///
    /// # Errors
    /// [`InferenceError::MalformedResponse`] when a tool call's arguments are not JSON.
    pub fn finish(self) -> Result<InferenceResponse, InferenceError> {
        let calls: Vec<ToolCall> = self
            .completed_calls()?
            .into_iter()
            .map(|(_, c)| c)
            .collect();
        let reason = self.finish.unwrap_or(if calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        });
        let mut response = InferenceResponse::text(self.content)
            .with_calls(calls)
            .with_finish_reason(reason)
            .with_usage(self.usage);
        if !self.reasoning.is_empty() {
            response = response.with_reasoning(self.reasoning);
        }
        Ok(response)
    }
}

/// The events a complete response streams as (text, each call, usage, finish).
pub fn response_to_events(response: &InferenceResponse) -> Vec<InferenceEvent> {
    let mut events = Vec::new();
    if let Some(reasoning) = response.reasoning() {
        events.push(InferenceEvent::ReasoningDelta {
            text: reasoning.to_owned(),
        });
    }
    if !response.content().is_empty() {
        events.push(InferenceEvent::TextDelta {
            text: response.content().to_owned(),
        });
    }
    for (index, call) in response.tool_calls().iter().enumerate() {
        events.push(InferenceEvent::ToolCallDelta {
            index,
            id: Some(call.id().to_owned()),
            name: Some(call.name().to_owned()),
            arguments_delta: call.arguments_json(),
        });
        events.push(InferenceEvent::ToolCallComplete {
            index,
            call: call.clone(),
        });
    }
    if !response.usage().is_empty() {
        events.push(InferenceEvent::Usage {
            usage: response.usage(),
        });
    }
    events.push(InferenceEvent::Finish {
        reason: response.finish_reason(),
    });
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn assembles_split_tool_arguments() {
        let mut acc = StreamAccumulator::new();
        let events = [
            InferenceEvent::TextDelta {
                text: "Let me ".into(),
            },
            InferenceEvent::TextDelta {
                text: "check.".into(),
            },
            InferenceEvent::ToolCallDelta {
                index: 0,
                id: Some("c1".into()),
                name: Some("w".into()),
                arguments_delta: "{\"ci".into(),
            },
            InferenceEvent::ToolCallDelta {
                index: 1,
                id: Some("c2".into()),
                name: Some("t".into()),
                arguments_delta: "".into(),
            },
            InferenceEvent::ToolCallDelta {
                index: 0,
                id: None,
                name: None,
                arguments_delta: "ty\":\"Paris\"}".into(),
            },
            InferenceEvent::Usage {
                usage: Usage::new(3, 4),
            },
            InferenceEvent::Finish {
                reason: FinishReason::ToolCalls,
            },
        ];
        for e in &events {
            acc.push(e);
        }
        let response = acc.finish().unwrap();
        assert_eq!(response.content(), "Let me check.");
        assert_eq!(
            response.tool_calls()[0],
            ToolCall::new("c1", "w", json!({"city": "Paris"}))
        );
        assert_eq!(response.tool_calls()[1].arguments(), &json!({}));
        assert_eq!(response.usage(), Usage::new(3, 4));
    }

    #[test]
    fn broken_arguments_are_a_typed_error() {
        let mut acc = StreamAccumulator::new();
        acc.push(&InferenceEvent::ToolCallDelta {
            index: 0,
            id: Some("c".into()),
            name: Some("f".into()),
            arguments_delta: "{\"a\":".into(),
        });
        assert!(matches!(
            acc.finish(),
            Err(InferenceError::MalformedResponse { .. })
        ));
    }

    #[test]
    fn events_of_a_response_rebuild_it() {
        let original =
            InferenceResponse::with_tool_calls([ToolCall::new("c", "f", json!({"x": 1}))])
                .with_content("hi")
                .with_usage(Usage::new(1, 2));
        let mut acc = StreamAccumulator::new();
        for e in response_to_events(&original) {
            acc.push(&e);
        }
        assert_eq!(acc.finish().unwrap(), original);
    }
}
