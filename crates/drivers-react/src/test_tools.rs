//! Small tools for the unit tests of this crate.

use agents_core::{Tool, ToolContext, ToolError, ToolOutput, Tools};
use async_trait::async_trait;
use serde_json::{json, Value};

/// `add{a, b}` (numbers) returning the sum.
pub(crate) struct Add;

#[async_trait]
impl Tool for Add {
    fn name(&self) -> &str {
        "add"
    }

    fn description(&self) -> &str {
        "Adds two numbers."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"]
        })
    }

    async fn call(&self, args: Value, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        let a = args["a"].as_f64().ok_or("a is not a number")?;
        let b = args["b"].as_f64().ok_or("b is not a number")?;
        Ok(ToolOutput::json(json!(a + b)))
    }
}

/// `search{query, limit?}` returning a canned line.
pub(crate) struct Search;

#[async_trait]
impl Tool for Search {
    fn name(&self) -> &str {
        "search"
    }

    fn description(&self) -> &str {
        "Searches the web."
    }

    fn other_names(&self) -> &[&str] {
        &["web_search", "google"]
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["query"]
        })
    }

    async fn call(&self, args: Value, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(format!(
            "results for {}",
            args["query"].as_str().unwrap_or_default()
        )))
    }
}

/// `add` and `search`.
pub(crate) fn tools() -> Tools {
    Tools::new().with(Add).with(Search)
}
