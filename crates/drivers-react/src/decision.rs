//! `ReActDecision`: what the model decides at each ReAct step.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The two things a ReAct step can decide.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionKind {
    /// Call a tool and look at its result.
    CallTool,
    /// Stop and answer the user.
    FinalAnswer,
}

impl DecisionKind {
    /// The wire name: `call_tool` or `final_answer`.
    pub fn as_str(self) -> &'static str {
        match self {
            DecisionKind::CallTool => "call_tool",
            DecisionKind::FinalAnswer => "final_answer",
        }
    }
}

/// One decision as the model writes it:
/// `{"thought": "...", "type": "call_tool", "tool": "...", "args": {...}}` or
/// `{"thought": "...", "type": "final_answer", "answer": "..."}`.
///
/// A decision read by [`parse_decision`](crate::parse_decision) is not yet checked against the
/// tools; [`validate`](crate::validate) does that.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReActDecision {
    /// The model's short reasoning for this step.
    #[serde(default)]
    pub thought: String,
    /// Call a tool or answer.
    #[serde(rename = "type")]
    pub kind: DecisionKind,
    /// The tool to call (`call_tool`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The tool's arguments (`call_tool`); `null` when the model gave none.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub args: Value,
    /// The answer for the user (`final_answer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
}

impl ReActDecision {
    /// A decision to call `tool` with `args`.
    pub fn call_tool(thought: impl Into<String>, tool: impl Into<String>, args: Value) -> Self {
        Self {
            thought: thought.into(),
            kind: DecisionKind::CallTool,
            tool: Some(tool.into()),
            args,
            answer: None,
        }
    }

    /// A decision to answer with `answer`.
    pub fn final_answer(thought: impl Into<String>, answer: impl Into<String>) -> Self {
        Self {
            thought: thought.into(),
            kind: DecisionKind::FinalAnswer,
            tool: None,
            args: Value::Null,
            answer: Some(answer.into()),
        }
    }

    /// The decision as the JSON text a model would write.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serializes_with_type_tag_and_without_empty_fields() {
        let call = ReActDecision::call_tool("need data", "search", json!({"q": "rust"}));
        assert_eq!(
            serde_json::to_value(&call).ok(),
            Some(
                json!({"thought": "need data", "type": "call_tool", "tool": "search", "args": {"q": "rust"}})
            )
        );
        let answer = ReActDecision::final_answer("done", "42");
        assert_eq!(
            serde_json::to_value(&answer).ok(),
            Some(json!({"thought": "done", "type": "final_answer", "answer": "42"}))
        );
    }

    #[test]
    fn round_trips_through_json() {
        let call = ReActDecision::call_tool("t", "search", json!({"q": "rust"}));
        let back: ReActDecision = serde_json::from_str(&call.to_json()).unwrap();
        assert_eq!(back, call);
    }
}
