//! `UseStructuredOutput`: the model hands over data that must match a registered JSON schema.

use std::sync::Arc;

use agents_core::{
    arguments_schema, validate_arguments, AgentError, AgentState, Next, Tool, ToolContext,
    ToolError, ToolOutput,
};
use agents_processing::StateProcessor;
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use crate::{AgentBuilder, AgentCapability};

/// The name of the tool [`UseStructuredOutput`] installs.
pub const STRUCTURED_OUTPUT_TOOL: &str = "structured_output";

/// One registered schema: its name (what the model passes as `schema`), a description, the
/// JSON Schema of the data and the state metadata key the data is stored under.
#[derive(Clone, Debug)]
pub struct OutputSchema {
    /// The name the model uses.
    pub name: String,
    /// What the data is for.
    pub description: String,
    /// The JSON Schema the data must match.
    pub schema: Value,
    /// The metadata key the accepted data is stored under.
    pub metadata_key: String,
}

/// Gives the agent a `structured_output{schema, data}` tool.
///
/// `data` is checked against the named schema: required fields, types, enums and unknown
/// fields (when the schema forbids them), nested objects and arrays included. A mismatch goes
/// back to the model as a tool error naming every problem, so it can correct itself; accepted
/// data is stored in the state's metadata under the schema's key after the step
/// ([`UseStructuredOutput::read`] reads it back typed).
#[derive(Clone, Debug, Default)]
pub struct UseStructuredOutput {
    schemas: Vec<OutputSchema>,
}

impl UseStructuredOutput {
    /// No schemas yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `T`'s schema under `name`, stored under the metadata key `name`.
    pub fn with_schema<T: JsonSchema>(
        self,
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        self.with_json_schema(name, description, arguments_schema::<T>())
    }

    /// Registers a JSON Schema under `name`, stored under the metadata key `name`.
    pub fn with_json_schema(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        schema: Value,
    ) -> Self {
        let name = name.into();
        self.schemas.push(OutputSchema {
            metadata_key: name.clone(),
            name,
            description: description.into(),
            schema,
        });
        self
    }

    /// Stores the last registered schema's data under `key` instead of its name.
    pub fn stored_as(mut self, key: impl Into<String>) -> Self {
        if let Some(last) = self.schemas.last_mut() {
            last.metadata_key = key.into();
        }
        self
    }

    /// The data stored under `key` in `state`, deserialized.
    ///
    /// # Errors
    /// The deserialization error when the stored data does not fit `T`.
    pub fn read<T: DeserializeOwned>(
        state: &AgentState,
        key: &str,
    ) -> Option<Result<T, serde_json::Error>> {
        state
            .metadata()
            .get(key)
            .map(|value| serde_json::from_value(value.clone()))
    }
}

impl AgentCapability for UseStructuredOutput {
    fn name(&self) -> &str {
        "structured_output"
    }

    fn install(&self, builder: AgentBuilder) -> AgentBuilder {
        if self.schemas.is_empty() {
            return builder.with_capability_error(self.name(), "no schema registered");
        }
        let schemas: Arc<[OutputSchema]> = self.schemas.clone().into();
        builder
            .with_tool(StructuredOutputTool::new(Arc::clone(&schemas)))
            .with_processor(PersistStructuredOutput { schemas })
    }
}

struct StructuredOutputTool {
    schemas: Arc<[OutputSchema]>,
    description: String,
}

impl StructuredOutputTool {
    fn new(schemas: Arc<[OutputSchema]>) -> Self {
        let mut description = String::from(
            "Submit structured data. `data` must match the JSON Schema of the chosen `schema`:",
        );
        for schema in schemas.iter() {
            description.push_str(&format!(
                "\n- {}: {}\n  schema: {}",
                schema.name, schema.description, schema.schema
            ));
        }
        Self {
            schemas,
            description,
        }
    }
}

#[async_trait]
impl Tool for StructuredOutputTool {
    fn name(&self) -> &str {
        STRUCTURED_OUTPUT_TOOL
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        let names: Vec<&str> = self.schemas.iter().map(|s| s.name.as_str()).collect();
        // With one schema the model gets it inline, where it is most likely to follow it.
        let data = match &*self.schemas {
            [only] => only.schema.clone(),
            _ => json!({"type": "object", "description": "The data, matching the schema."}),
        };
        json!({
            "type": "object",
            "properties": {
                "schema": {"type": "string", "enum": names, "description": "Which schema `data` follows."},
                "data": data
            },
            "required": ["schema", "data"]
        })
    }

    async fn call(
        &self,
        arguments: Value,
        _context: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let name = arguments
            .get("schema")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let Some(schema) = self.schemas.iter().find(|s| s.name == name) else {
            let names: Vec<&str> = self.schemas.iter().map(|s| s.name.as_str()).collect();
            return Err(ToolError::invalid_arguments(format!(
                "unknown schema `{name}`; available: {}",
                names.join(", ")
            )));
        };
        let data = arguments.get("data").cloned().unwrap_or(Value::Null);
        let mut problems = Vec::new();
        check_value("data", &schema.schema, &data, &mut problems);
        if !problems.is_empty() {
            return Err(ToolError::invalid_arguments(format!(
                "`data` does not match schema `{name}`: {}. Fix these and call {STRUCTURED_OUTPUT_TOOL} again.",
                problems.join("; ")
            )));
        }
        Ok(ToolOutput::json(json!({
            "accepted": true,
            "schema": name,
            "stored_as": schema.metadata_key,
        })))
    }
}

/// Checks `value` against `schema`: the top level through agents-core's argument validator,
/// then nested objects and array items recursively.
fn check_value(path: &str, schema: &Value, value: &Value, problems: &mut Vec<String>) {
    let Some(object) = schema.as_object() else {
        return;
    };
    let expected = object.get("type").and_then(Value::as_str);
    if expected == Some("object") || object.contains_key("properties") {
        if !value.is_object() {
            problems.push(format!("`{path}` must be an object"));
            return;
        }
        if let Err(message) = validate_arguments(schema, value) {
            problems.push(format!("in `{path}`: {message}"));
        }
        if let (Some(properties), Some(fields)) = (
            object.get("properties").and_then(Value::as_object),
            value.as_object(),
        ) {
            for (key, sub_schema) in properties {
                if let Some(field) = fields.get(key) {
                    let nested = sub_schema.get("type").and_then(Value::as_str);
                    if matches!(nested, Some("object") | Some("array")) {
                        check_value(&format!("{path}.{key}"), sub_schema, field, problems);
                    }
                }
            }
        }
    } else if expected == Some("array") {
        let Some(items) = value.as_array() else {
            problems.push(format!("`{path}` must be an array"));
            return;
        };
        if let Some(item_schema) = object.get("items") {
            for (index, item) in items.iter().enumerate() {
                let wrapper = json!({"type": "object", "properties": {"item": item_schema}, "required": ["item"]});
                check_value(
                    &format!("{path}[{index}]"),
                    &wrapper,
                    &json!({ "item": item }),
                    problems,
                );
            }
        }
    }
}

/// After each step, stores the data of accepted `structured_output` calls in metadata.
struct PersistStructuredOutput {
    schemas: Arc<[OutputSchema]>,
}

#[async_trait]
impl StateProcessor for PersistStructuredOutput {
    fn name(&self) -> &str {
        "PersistStructuredOutput"
    }

    async fn process(&self, state: AgentState, next: Next<'_>) -> Result<AgentState, AgentError> {
        let state = next.run(state).await?;
        let Some(step) = state.current_step() else {
            return Ok(state);
        };
        let mut stored = Vec::new();
        for execution in step.tool_executions().iter() {
            if execution.name() != STRUCTURED_OUTPUT_TOOL || execution.has_error() {
                continue;
            }
            let arguments = execution.arguments();
            let name = arguments.get("schema").and_then(Value::as_str);
            let Some(schema) = self.schemas.iter().find(|s| Some(s.name.as_str()) == name) else {
                continue;
            };
            if let Some(data) = arguments.get("data") {
                stored.push((schema.metadata_key.clone(), data.clone()));
            }
        }
        Ok(stored
            .into_iter()
            .fold(state, |state, (key, data)| state.with_metadata(key, data)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_problems_are_named_with_their_path() {
        let schema = json!({
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "author": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
                "tags": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["title", "author"]
        });
        let mut problems = Vec::new();
        check_value(
            "data",
            &schema,
            &json!({"title": 3, "author": {}, "tags": ["a", 1]}),
            &mut problems,
        );
        let text = problems.join("; ");
        assert!(text.contains("title"), "{text}");
        assert!(text.contains("data.author"), "{text}");
        assert!(text.contains("data.tags[1]"), "{text}");

        let mut ok = Vec::new();
        check_value(
            "data",
            &schema,
            &json!({"title": "x", "author": {"name": "y"}, "tags": ["a"]}),
            &mut ok,
        );
        assert!(ok.is_empty(), "{ok:?}");
    }
}
