//! Why the model stopped generating.

use serde::{Deserialize, Serialize};

/// A provider's finish reason, normalised.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// A natural stop (`stop`, `end_turn`, `stop_sequence`, `completed`).
    #[default]
    Stop,
    /// The token limit was hit (`length`, `max_tokens`, `incomplete`).
    Length,
    /// The model wants tools run (`tool_calls`, `tool_use`, `function_call`).
    ToolCalls,
    /// A safety filter cut the answer (`content_filter`, `safety`, `refusal`, ...).
    ContentFilter,
    /// The provider reported an error (`error`, `failed`, `malformed_function_call`).
    Error,
    /// Anything else, or nothing.
    Other,
}

impl FinishReason {
    /// Normalises a provider's finish reason string.
    pub fn from_provider(reason: &str) -> Self {
        match reason.trim().to_ascii_lowercase().as_str() {
            "stop" | "end_turn" | "stop_sequence" | "completed" | "eos" => FinishReason::Stop,
            "length" | "max_tokens" | "incomplete" | "model_length" => FinishReason::Length,
            "tool_calls" | "tool_use" | "function_call" => FinishReason::ToolCalls,
            "content_filter" | "safety" | "recitation" | "refusal" | "blocklist"
            | "prohibited_content" | "spii" => FinishReason::ContentFilter,
            "error" | "failed" | "malformed_function_call" => FinishReason::Error,
            _ => FinishReason::Other,
        }
    }

    /// True for `Length`, `ContentFilter` and `Error`: the answer is not usable as is.
    pub fn is_abnormal(self) -> bool {
        matches!(
            self,
            FinishReason::Length | FinishReason::ContentFilter | FinishReason::Error
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_provider_strings() {
        assert_eq!(FinishReason::from_provider("end_turn"), FinishReason::Stop);
        assert_eq!(FinishReason::from_provider("stop"), FinishReason::Stop);
        assert_eq!(
            FinishReason::from_provider("max_tokens"),
            FinishReason::Length
        );
        assert_eq!(FinishReason::from_provider("length"), FinishReason::Length);
        assert_eq!(
            FinishReason::from_provider("tool_use"),
            FinishReason::ToolCalls
        );
        assert_eq!(
            FinishReason::from_provider("tool_calls"),
            FinishReason::ToolCalls
        );
        assert_eq!(
            FinishReason::from_provider("content_filter"),
            FinishReason::ContentFilter
        );
        assert_eq!(
            FinishReason::from_provider("refusal"),
            FinishReason::ContentFilter
        );
        assert_eq!(FinishReason::from_provider("failed"), FinishReason::Error);
        assert_eq!(FinishReason::from_provider(""), FinishReason::Other);
        assert_eq!(
            serde_json::to_string(&FinishReason::ToolCalls).unwrap(),
            "\"tool_calls\""
        );
    }
}
