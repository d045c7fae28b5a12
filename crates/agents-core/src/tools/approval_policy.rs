//! `ApprovalPolicy`: which tool calls wait for a person's approval (agent configuration; the
//! state holds only the waiting calls and the decisions).

use std::collections::BTreeSet;
use std::sync::Arc;

use messages::ToolCall;

type Predicate = Arc<dyn Fn(&ToolCall) -> bool + Send + Sync>;

/// Which tool calls need a person's approval before they run: calls of the named tools, and
/// calls any predicate accepts. Empty (nothing needs approval) by default. Cheap to clone.
///
/// ```
/// use agents_core::ApprovalPolicy;
/// use messages::ToolCall;
/// use serde_json::json;
///
/// let policy = ApprovalPolicy::new()
///     .with_tools(["write_file"])
///     .with_predicate(|call| {
///         call.name() == "bash"
///             && call.arguments()["command"].as_str().is_some_and(|c| c.starts_with("rm "))
///     });
/// assert!(policy.requires(&ToolCall::new("1", "write_file", json!({}))));
/// assert!(policy.requires(&ToolCall::new("2", "bash", json!({"command": "rm -rf build"}))));
/// assert!(!policy.requires(&ToolCall::new("3", "bash", json!({"command": "ls"}))));
/// ```
#[derive(Clone, Default)]
pub struct ApprovalPolicy {
    tools: BTreeSet<String>,
    predicates: Vec<Predicate>,
}

impl ApprovalPolicy {
    /// Nothing needs approval.
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy in which every call of these tools needs approval.
    pub fn with_tools<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools.extend(names.into_iter().map(Into::into));
        self
    }

    /// A copy in which every call `predicate` accepts needs approval.
    pub fn with_predicate(
        mut self,
        predicate: impl Fn(&ToolCall) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.predicates.push(Arc::new(predicate));
        self
    }

    /// Whether `call` waits for a person's approval.
    pub fn requires(&self, call: &ToolCall) -> bool {
        self.tools.contains(call.name()) || self.predicates.iter().any(|p| p(call))
    }

    /// Whether no call needs approval.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty() && self.predicates.is_empty()
    }

    /// The tools whose every call needs approval.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(String::as_str)
    }
}

impl std::fmt::Debug for ApprovalPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalPolicy")
            .field("tools", &self.tools)
            .field("predicates", &self.predicates.len())
            .finish()
    }
}
