//! `Tools`: the registry of an agent's tools.

use std::collections::BTreeMap;
use std::sync::Arc;

use inference::ToolSchema;
use messages::SharedSlice;

use crate::records::tool_effects::ToolEffects;

use crate::tools::tool::Tool;

/// An agent's tools by name, in registration order. Registering a name again replaces the
/// earlier tool (later registration wins).
///
/// Cheap to clone (one shared allocation). The schemas sent to the model are built once, when
/// a tool is registered, and shared by every request.
#[derive(Clone, Default)]
pub struct Tools {
    inner: Arc<Registry>,
}

#[derive(Clone, Default)]
struct Registry {
    order: Vec<String>,
    tools: BTreeMap<String, Arc<dyn Tool>>,
    schemas: SharedSlice<ToolSchema>,
}

impl Registry {
    fn refresh_schemas(&mut self) {
        self.schemas = self
            .order
            .iter()
            .filter_map(|n| self.tools.get(n))
            .map(|t| t.schema())
            .collect();
    }
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
        let registry = Arc::make_mut(&mut self.inner);
        let name = tool.name().to_owned();
        if !registry.tools.contains_key(&name) {
            registry.order.push(name.clone());
        }
        registry.tools.insert(name, tool);
        registry.refresh_schemas();
    }

    /// A copy without the tool `name`.
    pub fn without(mut self, name: &str) -> Self {
        if self.contains(name) {
            let registry = Arc::make_mut(&mut self.inner);
            registry.tools.remove(name);
            registry.order.retain(|n| n != name);
            registry.refresh_schemas();
        }
        self
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.inner.tools.get(name)
    }

    /// The declared effects of the tool `name`; a tool that is not registered counts as
    /// [`ToolEffects::SideEffecting`] (nothing is assumed harmless).
    pub fn effects(&self, name: &str) -> ToolEffects {
        self.get(name)
            .map_or(ToolEffects::SideEffecting, |tool| tool.effects())
    }

    /// True when a tool called `name` is registered.
    pub fn contains(&self, name: &str) -> bool {
        self.inner.tools.contains_key(name)
    }

    /// Tool names in registration order.
    pub fn names(&self) -> Vec<&str> {
        self.inner.order.iter().map(String::as_str).collect()
    }

    /// Tools in registration order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.inner
            .order
            .iter()
            .filter_map(|n| self.inner.tools.get(n))
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.inner.order.len()
    }

    /// True when there are no tools.
    pub fn is_empty(&self) -> bool {
        self.inner.order.is_empty()
    }

    /// The schemas sent to the model, in registration order (built at registration, shared).
    pub fn schemas(&self) -> SharedSlice<ToolSchema> {
        self.inner.schemas.clone()
    }

    /// The schema of the tool `name`, as sent to the model (built at registration).
    pub fn schema(&self, name: &str) -> Option<&ToolSchema> {
        let position = self.inner.order.iter().position(|n| n == name)?;
        self.inner.schemas.get(position)
    }
}

impl std::fmt::Debug for Tools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Tools").field(&self.inner.order).finish()
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
