//! `McpTool`: one of a server's tools as an agent tool.

use std::sync::Arc;

use agents_core::{Tool, ToolContext, ToolEffects, ToolError, ToolOutput};
use async_trait::async_trait;
use serde_json::Value;

use crate::calls::{ClientInner, McpToolInfo};

/// A server's tool, callable by the model.
///
/// A call becomes `tools/call`. Every failure is a tool error the model reads, never a panic or
/// a hung run: a result the server flags `isError`, a timeout (the call is cancelled on the
/// server), the run's cancellation (the server gets `notifications/cancelled`), a server that
/// stopped (the next call restarts it), a tool the server no longer offers.
pub struct McpTool {
    client: Arc<ClientInner>,
    info: McpToolInfo,
}

impl McpTool {
    pub(crate) fn new(client: Arc<ClientInner>, info: McpToolInfo) -> Self {
        Self { client, info }
    }

    /// The tool as the server describes it.
    pub fn info(&self) -> &McpToolInfo {
        &self.info
    }
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("server", &self.client.server().name())
            .field("name", &self.info.exposed_name)
            .finish()
    }
}

#[async_trait]
impl Tool for McpTool {
    // the model calls the tool by its exposed (prefixed) name, not the server's
    #[allow(clippy::misnamed_getters)]
    fn name(&self) -> &str {
        &self.info.exposed_name
    }

    fn description(&self) -> &str {
        &self.info.description
    }

    fn parameters(&self) -> Value {
        self.info.input_schema.clone()
    }

    fn effects(&self) -> ToolEffects {
        self.info.effects
    }

    async fn call(&self, arguments: Value, context: &ToolContext) -> Result<ToolOutput, ToolError> {
        let result = self
            .client
            .call(&self.info.name, arguments, &context.cancellation)
            .await
            .map_err(|error| ToolError::failed(error.to_string()))?;
        if result.is_error {
            return Err(ToolError::failed(result.text));
        }
        let output = match result.structured {
            // keep the structured value for programs when the model sees exactly its JSON
            Some(value) if serde_json::to_string(&value).is_ok_and(|json| json == result.text) => {
                ToolOutput::json(value)
            }
            _ => ToolOutput::text(result.text),
        };
        Ok(result
            .images
            .into_iter()
            .fold(output, ToolOutput::with_part))
    }
}
