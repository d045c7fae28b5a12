//! `ToolSource`: tools that can change while an agent runs (an MCP server announcing a new
//! tool list), asked for before every step.

use std::borrow::Cow;
use std::sync::Arc;

use async_trait::async_trait;

use crate::tools::registry::Tools;
use crate::tools::tool::Tool;

/// A provider of tools whose list may change between steps. The agent asks every source
/// before each step and offers the model its own tools plus the sources' (a source's tool
/// whose name an agent tool or an earlier source already has is left out, with a warning).
///
/// `tools` is called once per step: make it cheap when nothing changed (keep the last list
/// and refresh only when told the list changed), and when refreshing fails return the last
/// good list and log why, so that a flaky server does not take its tools away mid-run.
///
/// ```
/// use std::sync::Arc;
/// use agents_core::{FunctionTool, Tool, ToolSource};
///
/// struct Clock;
///
/// #[async_trait::async_trait]
/// impl ToolSource for Clock {
///     async fn tools(&self) -> Vec<Arc<dyn Tool>> {
///         let now = FunctionTool::new("now", "The time", |_: serde_json::Value| async {
///             Ok::<_, agents_core::ToolError>("12:00".to_owned())
///         });
///         vec![Arc::new(now)]
///     }
/// }
/// ```
#[async_trait]
pub trait ToolSource: Send + Sync {
    /// The source's tools now.
    async fn tools(&self) -> Vec<Arc<dyn Tool>>;
}

/// `tools` plus the tools of `sources`, first name wins; `tools` itself when there are no
/// sources (no copy).
pub(crate) async fn merged<'a>(
    tools: &'a Tools,
    sources: &[Arc<dyn ToolSource>],
) -> Cow<'a, Tools> {
    if sources.is_empty() {
        return Cow::Borrowed(tools);
    }
    let mut merged = tools.clone();
    for source in sources {
        for tool in source.tools().await {
            if merged.contains(tool.name()) {
                tracing::warn!(
                    tool = tool.name(),
                    "a tool source offers a tool whose name is taken; it is left out (give the source a prefix)"
                );
                continue;
            }
            merged.insert(tool);
        }
    }
    Cow::Owned(merged)
}
