//! `Tools`: the registry of an agent's tools.

use std::collections::BTreeMap;
use std::sync::Arc;

use inference::ToolSchema;

use super::Tool;

/// An agent's tools by name, in registration order. Registering a name again replaces the
/// earlier tool (later registration wins). Cheap to clone.
#[derive(Clone, Default)]
pub struct Tools {
    order: Vec<String>,
    tools: BTreeMap<String, Arc<dyn Tool>>,
}

impl Tools {
    /// No tools.
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy with `tool` registered.
    pub fn with(mut self, tool: impl Tool + 'static) -> Self {
        self.insert(Arc::new(tool));
        self
    }

    /// Registers a shared tool in place.
    pub fn insert(&mut self, tool: Arc<dyn Tool>) {
        let name = tool.name().to_owned();
        if !self.tools.contains_key(&name) {
            self.order.push(name.clone());
        }
        self.tools.insert(name, tool);
    }

    /// A copy without the tool `name`.
    pub fn without(mut self, name: &str) -> Self {
        self.tools.remove(name);
        self.order.retain(|n| n != name);
        self
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name)
    }

    /// True when a tool called `name` is registered.
    pub fn contains(&self, name: &str) -> bool {
        self.tools.contains_key(name)
    }

    /// Tool names in registration order.
    pub fn names(&self) -> Vec<&str> {
        self.order.iter().map(String::as_str).collect()
    }

    /// Tools in registration order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.order.iter().filter_map(|n| self.tools.get(n))
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// True when there are no tools.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The schemas sent to the model, in registration order.
    pub fn schemas(&self) -> Vec<ToolSchema> {
        self.iter().map(|t| t.schema()).collect()
    }
}

impl std::fmt::Debug for Tools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Tools").field(&self.order).finish()
    }
}

impl FromIterator<Arc<dyn Tool>> for Tools {
    fn from_iter<I: IntoIterator<Item = Arc<dyn Tool>>>(iter: I) -> Self {
        let mut tools = Tools::new();
        for tool in iter {
            tools.insert(tool);
        }
        tools
    }
}
