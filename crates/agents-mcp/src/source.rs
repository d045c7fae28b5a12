//! [`McpToolSource`]: a server's tools as an agent [`ToolSource`], refreshed between steps when
//! the server announces `notifications/tools/list_changed`.

use std::sync::Arc;

use agents_core::{Tool, ToolSource};
use async_trait::async_trait;
use tokio::sync::{watch, Mutex};

use crate::client::McpClient;

/// Which tools of the server the agent gets (by the name the agent sees, prefix included).
type NameFilter = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// The last list fetched, with the server's list version it was fetched at.
type Fetched = Option<(u64, Vec<Arc<dyn Tool>>)>;

/// A server's tools for `Agent::with_tool_source` / `AgentBuilder::with_tool_source`: the
/// agent asks before every step, and the list is fetched again (`tools/list`) only after the
/// server said it changed. When that fetch fails, the last good list stays (and a warning is
/// logged): a flaky server does not take its tools away mid-run.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use agents_core::ToolSource;
/// use agents_mcp::{McpClient, McpServer};
///
/// let client = McpClient::connect(McpServer::stdio("my-server", ["--stdio"])).await?;
/// let source = client.tool_source().with_filter(|name| name != "delete_everything");
/// let tools = source.tools().await; // what the agent offers at its next step
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct McpToolSource {
    client: McpClient,
    changes: watch::Receiver<u64>,
    filter: Option<NameFilter>,
    cached: Arc<Mutex<Fetched>>,
}

impl std::fmt::Debug for McpToolSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpToolSource")
            .field("client", &self.client)
            .field("filtered", &self.filter.is_some())
            .finish_non_exhaustive()
    }
}

impl McpToolSource {
    pub(crate) fn new(client: McpClient) -> Self {
        Self {
            changes: client.tool_changes(),
            client,
            filter: None,
            cached: Arc::default(),
        }
    }

    /// A copy offering only the tools whose name (prefix included) `keep` accepts, also among
    /// tools the server adds later.
    pub fn with_filter(mut self, keep: impl Fn(&str) -> bool + Send + Sync + 'static) -> Self {
        self.filter = Some(Arc::new(keep));
        self
    }
}

#[async_trait]
impl ToolSource for McpToolSource {
    async fn tools(&self) -> Vec<Arc<dyn Tool>> {
        let version = *self.changes.borrow();
        let mut cached = self.cached.lock().await;
        if let Some((seen, tools)) = cached.as_ref() {
            if *seen == version {
                return tools.clone();
            }
        }
        match self.client.tools().await {
            Ok(tools) => {
                let tools: Vec<Arc<dyn Tool>> = tools
                    .into_iter()
                    .filter(|tool| self.filter.as_ref().is_none_or(|keep| keep(tool.name())))
                    .collect();
                *cached = Some((version, tools.clone()));
                tools
            }
            Err(error) => {
                tracing::warn!(
                    server = self.client.server().name(),
                    error = %agents_core::error_chain(&error),
                    "could not list the MCP server's tools again; the agent keeps the last list"
                );
                cached
                    .as_ref()
                    .map(|(_, tools)| tools.clone())
                    .unwrap_or_default()
            }
        }
    }
}
