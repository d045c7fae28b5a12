//! `parse_decision`: reading a ReAct decision leniently from a model's reply.

use inference::lenient_json::{json_values, parse_lenient};
use serde_json::{Map, Value};

use crate::decision::{DecisionKind, ReActDecision};
use crate::decision_error::{describe, DecisionError};

/// Keys that mark an object as a decision (rather than, say, example data in prose).
const DECISION_KEYS: [&str; 5] = ["type", "tool", "answer", "action", "thought"];

/// Reads a decision from a model's reply.
///
/// Lenient about the wrapping, strict about the meaning: the JSON object may sit in a code
/// fence, between prose, or carry trailing commas; `args` may be given as a JSON string, and
/// under the names `arguments`, `action_input`, `parameters` or `input`; `tool` may be called
/// `action`; `type` accepts a few spellings (`call_tool`, `tool_call`, `final_answer`,
/// `final`, any case) and, when missing, is inferred from the presence of `tool` or `answer`.
/// Checking the decision against the tools is [`validate`](crate::validate)'s job.
///
/// # Errors
/// A [`DecisionError`] when there is no JSON object, or a field has the wrong type or value.
///
/// ```
/// use drivers_react::{parse_decision, DecisionKind};
///
/// let reply = "Let me look that up.\n```json\n{\"thought\": \"need weather\", \"type\": \"call_tool\",\n \"tool\": \"get_weather\", \"args\": {\"city\": \"Paris\"},}\n```";
/// let decision = parse_decision(reply).unwrap();
/// assert_eq!(decision.kind, DecisionKind::CallTool);
/// assert_eq!(decision.tool.as_deref(), Some("get_weather"));
///
/// assert!(parse_decision("I think the answer is 4.").is_err());
/// ```
pub fn parse_decision(text: &str) -> Result<ReActDecision, DecisionError> {
    let values = json_values(text);
    let object = values
        .iter()
        .filter_map(Value::as_object)
        .find(|o| DECISION_KEYS.iter().any(|k| o.contains_key(*k)))
        .or_else(|| values.iter().find_map(Value::as_object))
        .ok_or(DecisionError::NoJson)?;
    decision_from_object(object)
}

fn decision_from_object(object: &Map<String, Value>) -> Result<ReActDecision, DecisionError> {
    let thought = match object.get("thought") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.trim().to_owned(),
        Some(other) => other.to_string(),
    };
    let declared_kind = match object.get("type") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(kind_from_str(s)?),
        Some(other) => return Err(wrong_type("type", "a string", other)),
    };
    let tool = tool_name(object, declared_kind)?;
    let answer = match object.get("answer").or_else(|| object.get("final_answer")) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => Some(other.to_string()),
    };
    let kind = match declared_kind {
        Some(kind) => kind,
        None if tool.is_some() => DecisionKind::CallTool,
        None if answer.is_some() => DecisionKind::FinalAnswer,
        None => return Err(DecisionError::MissingKind),
    };
    let args = ["args", "arguments", "action_input", "parameters", "input"]
        .iter()
        .find_map(|k| object.get(*k))
        .cloned()
        .map(args_from_value)
        .unwrap_or(Value::Null);
    Ok(ReActDecision {
        thought,
        kind,
        tool,
        args,
        answer,
    })
}

fn tool_name(
    object: &Map<String, Value>,
    kind: Option<DecisionKind>,
) -> Result<Option<String>, DecisionError> {
    match object.get("tool") {
        Some(Value::String(s)) if !s.trim().is_empty() => return Ok(Some(s.trim().to_owned())),
        None | Some(Value::Null) | Some(Value::String(_)) => {}
        Some(other) => return Err(wrong_type("tool", "a string (the tool's name)", other)),
    }
    // `action` as the tool name (LangChain style), unless it is the decision kind itself.
    match object.get("action") {
        Some(Value::String(s)) if !s.trim().is_empty() => {
            if kind.is_none() && kind_from_str(s).is_ok() {
                return Ok(None);
            }
            Ok(Some(s.trim().to_owned()))
        }
        _ => Ok(None),
    }
}

fn kind_from_str(text: &str) -> Result<DecisionKind, DecisionError> {
    let normalized = text.trim().to_lowercase().replace(['-', ' '], "_");
    match normalized.as_str() {
        "call_tool" | "tool_call" | "call" | "tool" | "action" => Ok(DecisionKind::CallTool),
        "final_answer" | "final" | "answer" | "finish" => Ok(DecisionKind::FinalAnswer),
        _ => Err(DecisionError::UnknownKind {
            found: format!("{text:?}"),
        }),
    }
}

/// Arguments given as a JSON string holding an object are unwrapped.
fn args_from_value(value: Value) -> Value {
    if let Value::String(text) = &value {
        if let Some(parsed @ Value::Object(_)) = parse_lenient(text) {
            return parsed;
        }
    }
    value
}

fn wrong_type(field: &str, expected: &str, found: &Value) -> DecisionError {
    DecisionError::WrongFieldType {
        field: field.to_owned(),
        expected: expected.to_owned(),
        found: describe(found),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bare_call_tool_decision() {
        let d = parse_decision(
            r#"{"thought": "t", "type": "call_tool", "tool": "search", "args": {"q": "x"}}"#,
        )
        .unwrap();
        assert_eq!(
            d,
            ReActDecision::call_tool("t", "search", json!({"q": "x"}))
        );
    }

    #[test]
    fn final_answer_with_prose_around_and_trailing_comma() {
        let d = parse_decision(
            "Sure.\n{\"thought\": \"done\", \"type\": \"final_answer\", \"answer\": \"Paris\",}\nBye",
        )
        .unwrap();
        assert_eq!(d, ReActDecision::final_answer("done", "Paris"));
    }

    #[test]
    fn decision_inside_a_code_fence() {
        let text = "```json\n{\"type\": \"final_answer\", \"answer\": \"4\"}\n```";
        assert_eq!(parse_decision(text).unwrap().answer.as_deref(), Some("4"));
    }

    #[test]
    fn example_data_before_the_decision_is_skipped() {
        let text = r#"The data {"x": 1} is loaded. {"type": "final_answer", "answer": "1"}"#;
        assert_eq!(
            parse_decision(text).unwrap().kind,
            DecisionKind::FinalAnswer
        );
    }

    #[test]
    fn args_as_json_string_and_alias_names() {
        let d = parse_decision(r#"{"type": "call_tool", "tool": "s", "args": "{\"q\": \"x\"}"}"#)
            .unwrap();
        assert_eq!(d.args, json!({"q": "x"}));
        let d = parse_decision(r#"{"thought": "t", "action": "s", "action_input": {"q": "y"}}"#)
            .unwrap();
        assert_eq!(
            (d.kind, d.tool.as_deref()),
            (DecisionKind::CallTool, Some("s"))
        );
        assert_eq!(d.args, json!({"q": "y"}));
    }

    #[test]
    fn kind_spellings_and_inference() {
        let d = parse_decision(r#"{"type": "Final Answer", "answer": "a"}"#).unwrap();
        assert_eq!(d.kind, DecisionKind::FinalAnswer);
        let d = parse_decision(r#"{"type": "tool_call", "tool": "s"}"#).unwrap();
        assert_eq!(d.kind, DecisionKind::CallTool);
        let d = parse_decision(r#"{"answer": "a"}"#).unwrap();
        assert_eq!(d.kind, DecisionKind::FinalAnswer);
        let d = parse_decision(r#"{"tool": "s", "args": {}}"#).unwrap();
        assert_eq!(d.kind, DecisionKind::CallTool);
    }

    #[test]
    fn errors_say_what_is_wrong() {
        assert_eq!(parse_decision("no json here"), Err(DecisionError::NoJson));
        assert_eq!(parse_decision("[1, 2]"), Err(DecisionError::NoJson));
        assert_eq!(
            parse_decision(r#"{"thought": "hmm"}"#),
            Err(DecisionError::MissingKind)
        );
        assert_eq!(
            parse_decision(r#"{"type": "dance"}"#),
            Err(DecisionError::UnknownKind {
                found: "\"dance\"".into()
            })
        );
        assert_eq!(
            parse_decision(r#"{"type": "call_tool", "tool": 5}"#).map_err(|e| e.to_string()),
            Err("field `tool` must be a string (the tool's name), got a number (5)".into())
        );
        assert_eq!(
            parse_decision(r#"{"type": 1}"#).map_err(|e| e.to_string()),
            Err("field `type` must be a string, got a number (1)".into())
        );
    }
}
