//! `tools{action: list|help|search}`: the model discovers the agent's tools and reads a tool's
//! full description and parameters on demand.

use std::sync::Arc;

use agents_core::{Tool, ToolContext, ToolError, ToolOutput};
use async_trait::async_trait;
use serde_json::{json, Value};

use crate::{AgentBuilder, AgentCapability};

/// The name of the registry tool.
pub const TOOL_REGISTRY_TOOL: &str = "tools";

/// The `tools` tool over a fixed set of tools.
#[derive(Clone)]
pub struct ToolRegistryTool {
    tools: Arc<Vec<Arc<dyn Tool>>>,
}

impl std::fmt::Debug for ToolRegistryTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.tools.iter().map(|t| t.name()).collect();
        f.debug_struct("ToolRegistryTool")
            .field("tools", &names)
            .finish()
    }
}

impl ToolRegistryTool {
    /// A registry of `tools` (sorted by name; itself is not listed).
    pub fn new(tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> Self {
        let mut tools: Vec<Arc<dyn Tool>> = tools
            .into_iter()
            .filter(|t| t.name() != TOOL_REGISTRY_TOOL)
            .collect();
        tools.sort_by(|a, b| a.name().cmp(b.name()));
        Self {
            tools: Arc::new(tools),
        }
    }

    fn names(&self) -> String {
        let names: Vec<&str> = self.tools.iter().map(|t| t.name()).collect();
        if names.is_empty() {
            "(none)".to_owned()
        } else {
            names.join(", ")
        }
    }

    fn list(&self, tools: &[&Arc<dyn Tool>], limit: usize) -> Value {
        let entries: Vec<Value> = tools
            .iter()
            .take(limit)
            .map(|t| json!({"name": t.name(), "summary": summary(t.description())}))
            .collect();
        json!({"success": true, "count": entries.len(), "total": tools.len(), "tools": entries})
    }
}

/// The first line (or sentence) of a description, at most 120 characters.
fn summary(description: &str) -> String {
    let line = description.lines().next().unwrap_or_default().trim();
    let sentence = line.find(". ").map_or(line, |end| &line[..=end]);
    if sentence.chars().count() > 120 {
        let cut: String = sentence.chars().take(117).collect();
        format!("{cut}...")
    } else {
        sentence.to_owned()
    }
}

#[async_trait]
impl Tool for ToolRegistryTool {
    fn name(&self) -> &str {
        TOOL_REGISTRY_TOOL
    }

    fn description(&self) -> &str {
        "Discover the available tools: action `list` names them, `help` with `tool` shows one tool's description and parameters, `search` with `query` finds tools by name or description."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["list", "help", "search"]},
                "tool": {"type": "string", "description": "For help: the tool's name"},
                "query": {"type": "string", "description": "For search: words to look for"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100}
            },
            "required": ["action"]
        })
    }

    fn effects(&self) -> agents_core::ToolEffects {
        // It reads and changes nothing.
        agents_core::ToolEffects::ReadOnly
    }

    async fn call(
        &self,
        arguments: Value,
        _context: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let text = |name: &str| arguments.get(name).and_then(Value::as_str).map(str::trim);
        let limit = match arguments.get("limit") {
            None | Some(Value::Null) => 100,
            Some(value) => match value.as_u64() {
                Some(n @ 1..=100) => n as usize,
                _ => {
                    return Err(ToolError::invalid_arguments(format!(
                        "`limit` must be an integer from 1 to 100, found {value}"
                    )))
                }
            },
        };
        match text("action") {
            Some("list") => Ok(ToolOutput::json(
                self.list(&self.tools.iter().collect::<Vec<_>>(), limit),
            )),
            Some("help") => {
                let name = text("tool").filter(|n| !n.is_empty()).ok_or_else(|| {
                    ToolError::invalid_arguments("`help` needs `tool`: the tool's name")
                })?;
                let tool = self
                    .tools
                    .iter()
                    .find(|t| t.name() == name)
                    .ok_or_else(|| {
                        ToolError::failed(format!(
                            "Unknown tool '{name}'. Available tools: {}",
                            self.names()
                        ))
                    })?;
                Ok(ToolOutput::json(json!({
                    "success": true,
                    "tool": {
                        "name": tool.name(),
                        "description": tool.description(),
                        "parameters": tool.parameters(),
                    }
                })))
            }
            Some("search") => {
                let query = text("query")
                    .filter(|q| !q.is_empty())
                    .ok_or_else(|| {
                        ToolError::invalid_arguments("`search` needs `query`: words to look for")
                    })?
                    .to_lowercase();
                let words: Vec<&str> = query.split_whitespace().collect();
                let found: Vec<&Arc<dyn Tool>> = self
                    .tools
                    .iter()
                    .filter(|t| {
                        let haystack = format!("{} {}", t.name(), t.description()).to_lowercase();
                        words.iter().all(|w| haystack.contains(w))
                    })
                    .collect();
                Ok(ToolOutput::json(self.list(&found, limit)))
            }
            Some(other) => Err(ToolError::invalid_arguments(format!(
                "unknown action '{other}'; use list, help or search"
            ))),
            None => Err(ToolError::invalid_arguments(
                "missing `action`: list, help or search",
            )),
        }
    }
}

/// Installs the `tools` tool over the tools the builder holds when this capability is
/// installed (add it after the other tools and capabilities).
#[derive(Clone, Copy, Debug, Default)]
pub struct UseToolRegistry;

impl AgentCapability for UseToolRegistry {
    fn name(&self) -> &str {
        "tool_registry"
    }

    fn install(&self, builder: AgentBuilder) -> AgentBuilder {
        let tool = ToolRegistryTool::new(builder.tools().iter().cloned());
        builder.with_tool(tool)
    }
}
