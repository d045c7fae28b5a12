//! `validate`: checking a decision against the available tools.

use agents_core::Tools;
use messages::ToolCall;
use serde_json::{Map, Value};

use crate::decision::{DecisionKind, ReActDecision};
use crate::decision_error::{describe, DecisionError};

/// A decision that fits the tools: a call with schema-checked arguments, or a non-empty answer.
#[derive(Clone, Debug, PartialEq)]
pub enum ValidatedDecision {
    /// Call `tool` with `args`.
    CallTool {
        /// The model's reasoning.
        thought: String,
        /// A registered tool's name.
        tool: String,
        /// The arguments: only the parameters the schema knows, without nulls.
        args: Map<String, Value>,
    },
    /// Answer the user.
    FinalAnswer {
        /// The model's reasoning.
        thought: String,
        /// The answer (not empty).
        answer: String,
    },
}

impl ValidatedDecision {
    /// The model's reasoning for this step.
    pub fn thought(&self) -> &str {
        match self {
            ValidatedDecision::CallTool { thought, .. }
            | ValidatedDecision::FinalAnswer { thought, .. } => thought,
        }
    }

    /// The decision kind.
    pub fn kind(&self) -> DecisionKind {
        match self {
            ValidatedDecision::CallTool { .. } => DecisionKind::CallTool,
            ValidatedDecision::FinalAnswer { .. } => DecisionKind::FinalAnswer,
        }
    }

    /// The tool call with the given id, for a `CallTool` decision.
    pub fn tool_call(&self, id: impl Into<String>) -> Option<ToolCall> {
        match self {
            ValidatedDecision::CallTool { tool, args, .. } => Some(ToolCall::new(
                id,
                tool.as_str(),
                Value::Object(args.clone()),
            )),
            ValidatedDecision::FinalAnswer { .. } => None,
        }
    }
}

/// Checks `decision` against `tools`.
///
/// For `call_tool`: the tool must be registered (the error lists the available ones), `args`
/// must be a JSON object (missing `args` counts as `{}`); keys the tool's schema does not
/// declare and `null` values are dropped; every required parameter must be present, and each
/// argument whose schema names a JSON `type` must have that type. For `final_answer`: the
/// answer must not be empty.
///
/// # Errors
/// The first [`DecisionError`] found; its text is meant to be sent back to the model.
///
/// ```
/// use drivers_react::{validate, DecisionError, ReActDecision};
/// use agents_core::Tools;
///
/// let decision = ReActDecision::call_tool("", "fly", serde_json::json!({}));
/// assert_eq!(validate(&decision, &Tools::new()), Err(DecisionError::NoTools));
/// ```
pub fn validate(
    decision: &ReActDecision,
    tools: &Tools,
) -> Result<ValidatedDecision, DecisionError> {
    match decision.kind {
        DecisionKind::FinalAnswer => {
            let answer = decision
                .answer
                .as_deref()
                .map(str::trim)
                .unwrap_or_default();
            if answer.is_empty() {
                return Err(DecisionError::MissingAnswer);
            }
            Ok(ValidatedDecision::FinalAnswer {
                thought: decision.thought.clone(),
                answer: answer.to_owned(),
            })
        }
        DecisionKind::CallTool => validate_call(decision, tools),
    }
}

fn validate_call(
    decision: &ReActDecision,
    tools: &Tools,
) -> Result<ValidatedDecision, DecisionError> {
    if tools.is_empty() {
        return Err(DecisionError::NoTools);
    }
    let name = decision
        .tool
        .as_deref()
        .filter(|n| !n.trim().is_empty())
        .ok_or(DecisionError::MissingTool)?;
    let tool = tools.get(name).ok_or_else(|| DecisionError::UnknownTool {
        tool: name.to_owned(),
        instead: tools
            .known_as(name)
            .into_iter()
            .map(str::to_owned)
            .collect(),
        available: tools.names().into_iter().map(str::to_owned).collect(),
    })?;
    let given = match &decision.args {
        Value::Null => Map::new(),
        Value::Object(map) => map.clone(),
        other => {
            return Err(DecisionError::ArgsNotObject {
                tool: name.to_owned(),
                found: describe(other),
            })
        }
    };
    let schema = tool.parameters();
    let args = known_arguments(given, &schema);
    let missing: Vec<String> = required(&schema)
        .filter(|key| !args.contains_key(*key))
        .map(str::to_owned)
        .collect();
    if !missing.is_empty() {
        return Err(DecisionError::MissingArguments {
            tool: name.to_owned(),
            missing,
        });
    }
    check_types(name, &args, &schema)?;
    Ok(ValidatedDecision::CallTool {
        thought: decision.thought.clone(),
        tool: name.to_owned(),
        args,
    })
}

/// The arguments without nulls and, when the schema declares `properties`, without keys it
/// does not declare.
fn known_arguments(given: Map<String, Value>, schema: &Value) -> Map<String, Value> {
    let properties = schema.get("properties").and_then(Value::as_object);
    given
        .into_iter()
        .filter(|(key, value)| {
            let known = properties.is_none_or(|p| p.contains_key(key));
            if !known {
                tracing::debug!(argument = %key, "dropping an argument the tool schema does not declare");
            }
            known && !value.is_null()
        })
        .collect()
}

fn required(schema: &Value) -> impl Iterator<Item = &str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

fn check_types(tool: &str, args: &Map<String, Value>, schema: &Value) -> Result<(), DecisionError> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    for (key, value) in args {
        let allowed: Vec<&str> = match properties.get(key).and_then(|p| p.get("type")) {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => continue,
        };
        if !allowed.is_empty() && !allowed.iter().any(|t| has_type(value, t)) {
            return Err(DecisionError::InvalidArgument {
                tool: tool.to_owned(),
                argument: key.clone(),
                expected: allowed.join(" or "),
                found: describe(value),
            });
        }
    }
    Ok(())
}

fn has_type(value: &Value, json_type: &str) -> bool {
    match json_type {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "null" => value.is_null(),
        // Unknown type names are not ours to judge.
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tools::tools;
    use serde_json::json;

    fn call(tool: &str, args: Value) -> Result<ValidatedDecision, DecisionError> {
        validate(&ReActDecision::call_tool("t", tool, args), &tools())
    }

    #[test]
    fn valid_call_keeps_known_arguments_and_drops_nulls() {
        let decision = call("add", json!({"a": 1, "b": 2.0, "c": null, "extra": "x"})).unwrap();
        assert_eq!(
            decision.tool_call("id_1"),
            Some(ToolCall::new("id_1", "add", json!({"a": 1, "b": 2.0})))
        );
        assert_eq!(decision.thought(), "t");
    }

    #[test]
    fn unknown_tool_lists_the_available_ones() {
        assert_eq!(
            call("multiply", json!({})).map_err(|e| e.to_string()),
            Err("unknown tool `multiply`; available tools: add, search".into())
        );
    }

    #[test]
    fn a_tool_called_by_another_name_of_its_job_is_named_to_use_instead() {
        assert_eq!(
            call("webSearch", json!({"query": "x"})).map_err(|e| e.to_string()),
            Err(
                "unknown tool `webSearch`; for what `webSearch` does, use `search`; available \
                 tools: add, search"
                    .into()
            )
        );
    }

    #[test]
    fn args_must_be_an_object() {
        assert_eq!(
            call("add", json!([1, 2])).map_err(|e| e.to_string()),
            Err("`args` for tool `add` must be a JSON object of named arguments, got a list ([1,2])".into())
        );
    }

    #[test]
    fn missing_required_arguments_are_named_nulls_count_as_missing() {
        assert_eq!(
            call("add", json!({"a": 1, "b": null})),
            Err(DecisionError::MissingArguments {
                tool: "add".into(),
                missing: vec!["b".into()]
            })
        );
        assert_eq!(
            call("add", Value::Null),
            Err(DecisionError::MissingArguments {
                tool: "add".into(),
                missing: vec!["a".into(), "b".into()]
            })
        );
    }

    #[test]
    fn argument_types_follow_the_schema() {
        assert_eq!(
            call("add", json!({"a": "1", "b": 2})).map_err(|e| e.to_string()),
            Err("argument `a` of tool `add` must be number, got a string (\"1\")".into())
        );
        assert_eq!(
            call("search", json!({"query": "x", "limit": 2.5})).map_err(|e| e.to_string()),
            Err("argument `limit` of tool `search` must be integer, got a number (2.5)".into())
        );
        assert!(call("search", json!({"query": "x", "limit": 3})).is_ok());
    }

    #[test]
    fn missing_tool_name_and_final_answer_rules() {
        let mut decision = ReActDecision::call_tool("t", "", json!({}));
        assert_eq!(
            validate(&decision, &tools()),
            Err(DecisionError::MissingTool)
        );
        decision.tool = None;
        assert_eq!(
            validate(&decision, &tools()),
            Err(DecisionError::MissingTool)
        );
        let empty = ReActDecision::final_answer("t", "  ");
        assert_eq!(
            validate(&empty, &tools()),
            Err(DecisionError::MissingAnswer)
        );
        let answer = ReActDecision::final_answer("t", " 42 ");
        assert_eq!(
            validate(&answer, &Tools::new()),
            Ok(ValidatedDecision::FinalAnswer {
                thought: "t".into(),
                answer: "42".into()
            })
        );
    }
}
