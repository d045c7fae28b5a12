//! Small tools, and a conversation of one call, for the unit tests of this crate.

use agents_core::{Tool, ToolContext, ToolError, ToolOutput};
use async_trait::async_trait;
use serde_json::{json, Value};

/// A tool answering with a fixed function of its arguments.
pub(crate) struct FnTool {
    name: &'static str,
    description: &'static str,
    parameters: Value,
    run: fn(&Value) -> Result<String, String>,
}

#[async_trait]
impl Tool for FnTool {
    fn name(&self) -> &str {
        self.name
    }

    fn description(&self) -> &str {
        self.description
    }

    fn parameters(&self) -> Value {
        self.parameters.clone()
    }

    async fn call(&self, arguments: Value, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        (self.run)(&arguments)
            .map(ToolOutput::text)
            .map_err(ToolError::failed)
    }
}

/// `get_weather{city}` answering `Sunny in <city>`.
pub(crate) fn weather_tool() -> FnTool {
    FnTool {
        name: "get_weather",
        description: "Current weather for a city.",
        parameters: json!({
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"]
        }),
        run: |args| Ok(format!("Sunny in {}", args["city"].as_str().unwrap_or("?"))),
    }
}

/// `echo{text}` answering its text.
pub(crate) fn echo_tool() -> FnTool {
    FnTool {
        name: "echo",
        description: "Repeats the text.",
        parameters: json!({
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"]
        }),
        run: |args| Ok(args["text"].as_str().unwrap_or_default().to_owned()),
    }
}

/// The conversation of `request`, one call of `tool` with `arguments`, and the call's
/// `result`: an execution for the checks that read what the tools returned.
pub(crate) fn after_one_call(
    request: &str,
    tool: &str,
    arguments: Value,
    result: &str,
) -> messages::Messages {
    let call = messages::ToolCall::new("c1", tool, arguments);
    messages::Messages::new()
        .appended(messages::Message::user(request))
        .appended(messages::Message::assistant_tool_calls([call.clone()]))
        .appended(messages::Message::tool_result_for(&call, result))
}

/// A conversation of one earlier turn (a question and its answer), then `request` and one
/// call per entry of `calls` (a tool name and its arguments), each answered "ok": an
/// execution for the checks that read which calls named which files.
pub(crate) fn execution(request: &str, calls: &[(&str, Value)]) -> messages::Messages {
    use messages::{Message, Messages, ToolCall};
    let mut conversation = Messages::new()
        .appended(Message::user("Which port does config.ini set?"))
        .appended(Message::assistant("8472."))
        .appended(Message::user(request));
    for (i, (name, arguments)) in calls.iter().enumerate() {
        let call = ToolCall::new(format!("call_{i}"), *name, arguments.clone());
        conversation = conversation
            .appended(Message::assistant_tool_calls([call.clone()]))
            .appended(Message::tool_result_for(&call, "ok"));
    }
    conversation
}

/// Tools with these names that do nothing (for the checks that read tool names).
pub(crate) fn named_tools(names: &[&str]) -> agents_core::Tools {
    names.iter().fold(agents_core::Tools::new(), |tools, name| {
        tools.with(agents_core::FunctionTool::new(
            *name,
            "A file tool.",
            |_: serde_json::Value| async move { Ok::<_, String>(String::new()) },
        ))
    })
}

/// `read_file`, which only reads (`ToolEffects::ReadOnly`), and `edit_file`, which declares
/// nothing and so may change anything; both do nothing.
pub(crate) fn reader_and_editor() -> agents_core::Tools {
    let tools = named_tools(&["edit_file"]);
    tools.with(
        agents_core::FunctionTool::new("read_file", "Reads.", |_: serde_json::Value| async move {
            Ok::<_, String>(String::new())
        })
        .with_effects(agents_core::ToolEffects::ReadOnly),
    )
}
