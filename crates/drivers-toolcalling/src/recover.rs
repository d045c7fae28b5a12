//! Recovering tool calls that a model wrote as JSON text instead of native tool calls.
//!
//! Small local models served by llama.cpp often pick the right tool and arguments but write the
//! call as text (`{"name": "get_weather", "arguments": {"city": "Paris"}}`, sometimes in a code
//! fence or between `<tool_call>` tags), so the response's `tool_calls` stays empty.
//! [`recover_tool_calls_from_content`] turns such text back into calls, but only when every
//! call it finds names a known tool and carries the tool's required arguments: ordinary
//! answers that happen to contain JSON are left alone.

use agents_core::Tools;
use messages::ToolCall;
use serde_json::{Map, Value};

use inference::lenient_json::{json_values, parse_lenient};

/// Prefix of the ids given to recovered calls (`recovered_1`, `recovered_2`, ...).
pub const RECOVERED_ID_PREFIX: &str = "recovered_";

/// The tool calls written as JSON in `content`, or `None` when the text is not (only) a set of
/// valid calls to the given tools.
///
/// Accepted shapes, alone or as a list: `{"name", "arguments"}`, `{"tool", "args" | "arguments"
/// | "parameters" | "input"}`, `{"function": {"name", "arguments"}}` and
/// `{"tool_calls": [...]}`; arguments may be an object or a JSON string holding one. The text
/// may sit in a code fence, between `<tool_call>` tags, or next to prose. Each call must name a
/// tool in `tools`, with an object of arguments containing the tool schema's required
/// parameters. Recovered calls get the ids `recovered_1`, `recovered_2`, ... in order.
///
/// ```
/// use agents_core::{Tool, ToolContext, ToolError, ToolOutput, Tools};
/// use drivers_toolcalling::recover_tool_calls_from_content;
/// use serde_json::{json, Value};
///
/// struct Weather;
/// #[async_trait::async_trait]
/// impl Tool for Weather {
///     fn name(&self) -> &str { "get_weather" }
///     fn description(&self) -> &str { "Weather for a city" }
///     fn parameters(&self) -> Value {
///         json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
///     }
///     async fn call(&self, _: Value, _: &ToolContext) -> Result<ToolOutput, ToolError> {
///         Ok(ToolOutput::text("sunny"))
///     }
/// }
///
/// let tools = Tools::new().with(Weather);
/// let text = "```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n```";
/// let calls = recover_tool_calls_from_content(text, &tools).unwrap();
/// assert_eq!(calls[0].id(), "recovered_1");
/// assert_eq!(calls[0].arguments(), &json!({"city": "Paris"}));
///
/// assert!(recover_tool_calls_from_content("It is sunny in Paris.", &tools).is_none());
/// assert!(recover_tool_calls_from_content(r#"{"name": "other", "arguments": {}}"#, &tools).is_none());
/// ```
pub fn recover_tool_calls_from_content(content: &str, tools: &Tools) -> Option<Vec<ToolCall>> {
    if tools.is_empty() || content.trim().is_empty() {
        return None;
    }
    let text = content
        .replace("<tool_call>", "\n")
        .replace("</tool_call>", "\n");
    let values = json_values(&text);
    let calls = calls_from_values(&values, tools)?;
    Some(
        calls
            .into_iter()
            .enumerate()
            .map(|(i, (name, arguments))| {
                ToolCall::new(format!("{RECOVERED_ID_PREFIX}{}", i + 1), name, arguments)
            })
            .collect(),
    )
}

/// The `(name, arguments)` pairs described by `value` when it is a call or a list of calls
/// in one of the accepted shapes, without checking them against any tools.
pub(crate) fn call_shapes(value: &Value) -> Option<Vec<(String, Value)>> {
    match value {
        Value::Array(items) if !items.is_empty() => items
            .iter()
            .map(single_call_shape)
            .collect::<Option<Vec<_>>>(),
        Value::Object(object) => match object.get("tool_calls") {
            Some(inner @ Value::Array(_)) if object.len() == 1 => call_shapes(inner),
            _ => single_call_shape(value).map(|call| vec![call]),
        },
        _ => None,
    }
}

/// Takes the calls from the candidate values: when the text holds one list or one call object,
/// that; when it holds several call objects side by side (one per line), all of them.
fn calls_from_values(values: &[Value], tools: &Tools) -> Option<Vec<(String, Value)>> {
    // One candidate (a list, or a single call) describing valid calls wins.
    for value in values {
        if let Some(calls) = call_shapes(value).and_then(|calls| checked(calls, tools)) {
            // Several call objects side by side: gather every candidate that is a valid call.
            if value.is_object() && values.len() > 1 {
                let all: Option<Vec<_>> = values
                    .iter()
                    .filter(|v| v.is_object())
                    .map(|v| single_call_shape(v).and_then(|c| checked(vec![c], tools)))
                    .collect::<Option<Vec<_>>>()
                    .map(|lists| lists.into_iter().flatten().collect());
                if let Some(all) = all {
                    return Some(all);
                }
            }
            return Some(calls);
        }
    }
    None
}

fn single_call_shape(value: &Value) -> Option<(String, Value)> {
    let object = value.as_object()?;
    if let Some(function) = object.get("function").and_then(Value::as_object) {
        return name_and_arguments(function);
    }
    name_and_arguments(object)
}

fn name_and_arguments(object: &Map<String, Value>) -> Option<(String, Value)> {
    let name = ["name", "tool", "tool_name", "function"]
        .iter()
        .find_map(|key| object.get(*key).and_then(Value::as_str))?;
    let arguments = ["arguments", "args", "parameters", "input"]
        .iter()
        .find_map(|key| object.get(*key))
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));
    let arguments = match arguments {
        Value::String(text) => parse_lenient(&text)?,
        other => other,
    };
    Some((name.to_owned(), arguments))
}

/// The calls, when every one names a known tool with an arguments object holding the required
/// parameters.
fn checked(calls: Vec<(String, Value)>, tools: &Tools) -> Option<Vec<(String, Value)>> {
    for (name, arguments) in &calls {
        let tool = tools.get(name)?;
        let arguments = arguments.as_object()?;
        let parameters = tool.parameters();
        let required = parameters
            .get("required")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let has_all = required
            .iter()
            .filter_map(Value::as_str)
            .all(|key| arguments.get(key).is_some_and(|v| !v.is_null()));
        if !has_all {
            return None;
        }
    }
    Some(calls)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tools::{echo_tool, weather_tool};
    use serde_json::json;

    fn tools() -> Tools {
        Tools::new().with(weather_tool()).with(echo_tool())
    }

    fn recovered(text: &str) -> Option<Vec<(String, String, Value)>> {
        recover_tool_calls_from_content(text, &tools()).map(|calls| {
            calls
                .into_iter()
                .map(|c| {
                    (
                        c.id().to_owned(),
                        c.name().to_owned(),
                        c.arguments().clone(),
                    )
                })
                .collect()
        })
    }

    #[test]
    fn name_and_arguments_object() {
        assert_eq!(
            recovered(r#"{"name": "get_weather", "arguments": {"city": "Paris"}}"#),
            Some(vec![(
                "recovered_1".into(),
                "get_weather".into(),
                json!({"city": "Paris"})
            )])
        );
    }

    #[test]
    fn code_fence_and_tool_call_tags() {
        let fenced =
            "```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n```";
        assert_eq!(
            recovered(fenced).map(|c| c[0].2.clone()),
            Some(json!({"city": "Oslo"}))
        );
        let tagged =
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n</tool_call>";
        assert_eq!(
            recovered(tagged).map(|c| c[0].2.clone()),
            Some(json!({"city": "Rome"}))
        );
    }

    #[test]
    fn tool_with_parameters_args_or_input_variants() {
        for key in ["parameters", "args", "input", "arguments"] {
            let text = format!(r#"{{"tool": "get_weather", "{key}": {{"city": "Paris"}}}}"#);
            assert_eq!(
                recovered(&text).map(|c| c[0].1.clone()),
                Some("get_weather".to_owned()),
                "key {key}"
            );
        }
    }

    #[test]
    fn openai_function_shape_with_string_arguments() {
        let text = r#"{"type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}"#;
        assert_eq!(
            recovered(text).map(|c| c[0].2.clone()),
            Some(json!({"city": "Paris"}))
        );
    }

    #[test]
    fn a_list_of_calls_gets_numbered_ids() {
        let text = r#"[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "echo", "arguments": {"text": "hi"}}]"#;
        let calls = recovered(text).unwrap_or_default();
        assert_eq!(
            calls
                .iter()
                .map(|c| (c.0.as_str(), c.1.as_str()))
                .collect::<Vec<_>>(),
            vec![("recovered_1", "get_weather"), ("recovered_2", "echo")]
        );
    }

    #[test]
    fn tool_calls_wrapper_and_calls_on_separate_lines() {
        let wrapped = r#"{"tool_calls": [{"name": "echo", "arguments": {"text": "a"}}]}"#;
        assert_eq!(recovered(wrapped).map(|c| c.len()), Some(1));
        let lines = "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}";
        let calls = recovered(lines).unwrap_or_default();
        assert_eq!(
            calls.iter().map(|c| c.2.clone()).collect::<Vec<_>>(),
            vec![json!({"city": "Paris"}), json!({"city": "Rome"})]
        );
    }

    #[test]
    fn unknown_tool_missing_required_or_non_object_arguments_are_not_recovered() {
        assert_eq!(
            recovered(r#"{"name": "launch_rocket", "arguments": {}}"#),
            None
        );
        assert_eq!(
            recovered(r#"{"name": "get_weather", "arguments": {}}"#),
            None
        );
        assert_eq!(
            recovered(r#"{"name": "get_weather", "arguments": {"city": null}}"#),
            None
        );
        assert_eq!(
            recovered(r#"{"name": "get_weather", "arguments": ["Paris"]}"#),
            None
        );
        // One bad call in a list spoils the list.
        assert_eq!(
            recovered(r#"[{"name": "get_weather", "arguments": {"city": "P"}}, {"name": "nope"}]"#),
            None
        );
    }

    #[test]
    fn ordinary_answers_are_left_alone() {
        assert_eq!(recovered("It is 22°C and sunny in Paris."), None);
        assert_eq!(
            recovered(r#"The data is {"city": "Paris", "temp": 22}."#),
            None
        );
        assert_eq!(recovered(""), None);
        assert_eq!(
            recover_tool_calls_from_content(
                r#"{"name": "get_weather", "arguments": {"city": "Paris"}}"#,
                &Tools::new()
            ),
            None
        );
    }
}
