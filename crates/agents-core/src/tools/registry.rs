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

    /// The tools, in registration order, that give `name` among their
    /// [other names](Tool::other_names): what to point a model to when it calls a tool by a
    /// name it knows from elsewhere. Empty when `name` is a tool's own name.
    ///
    /// ```
    /// use agents_core::{FunctionTool, ToolContext, ToolError, Tools};
    /// use serde_json::{json, Value};
    ///
    /// let write = FunctionTool::untyped(
    ///     "write_file",
    ///     "Write a file, creating its folders.",
    ///     json!({"type": "object"}),
    ///     |_: Value, _: ToolContext| async { Ok::<_, ToolError>("written") },
    /// )
    /// .with_other_names(&["create_file", "mkdir"]);
    /// let tools = Tools::new().with(write);
    /// assert_eq!(tools.known_as("createFile"), vec!["write_file"]);
    /// assert_eq!(tools.known_as("MKDIR"), vec!["write_file"]);
    /// assert!(tools.known_as("write_file").is_empty());
    /// assert!(tools.known_as("delete_file").is_empty());
    /// ```
    pub fn known_as(&self, name: &str) -> Vec<&str> {
        if self.contains(name) {
            return Vec::new();
        }
        let wanted = comparable_name(name);
        if wanted.is_empty() {
            return Vec::new();
        }
        self.iter()
            .filter(|tool| {
                tool.other_names()
                    .iter()
                    .any(|other| comparable_name(other) == wanted)
            })
            .map(|tool| tool.name())
            .collect()
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

/// `name` as [`Tool::other_names`] compares it: its ASCII letters and digits, lower-cased
/// (`createFolder`, `create-folder` and `create_folder` are one name). Other characters
/// are left out; at most 64 characters are kept, so a model's huge "name" costs little.
/// The clause an unknown-tool error adds when other tools do the job a name stands for:
/// "; for what `create_folder` does, use `write_file` or `bash`", or nothing when `instead` is
/// empty. One wording for every driver's error (see [`Tools::known_as`]).
///
/// ```
/// use agents_core::tools::doing_the_job_clause;
///
/// assert_eq!(
///     doing_the_job_clause("mkdir", &["write_file", "bash"]),
///     "; for what `mkdir` does, use `write_file` or `bash`"
/// );
/// assert_eq!(doing_the_job_clause::<&str>("fly", &[]), "");
/// ```
pub fn doing_the_job_clause<S: AsRef<str>>(name: &str, instead: &[S]) -> String {
    if instead.is_empty() {
        return String::new();
    }
    let named: Vec<String> = instead
        .iter()
        .map(|tool| format!("`{}`", tool.as_ref()))
        .collect();
    format!("; for what `{name}` does, use {}", named.join(" or "))
}

fn comparable_name(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .take(64)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}
