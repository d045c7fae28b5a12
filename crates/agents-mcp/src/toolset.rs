//! Several servers at once, with their tool names checked against each other.

use std::collections::HashMap;
use std::sync::Arc;

use agents_core::Tool;

use crate::client::McpClient;
use crate::error::McpError;
use crate::server::McpServer;

/// Connects every server and lists its tools; a tool name offered twice (by two servers, or a
/// server and itself) is an error, never a silent overwrite.
///
/// # Errors
/// The first server that cannot be connected or listed, or [`McpError::DuplicateToolName`].
pub async fn connect_all(
    servers: impl IntoIterator<Item = McpServer>,
) -> Result<(Vec<McpClient>, Vec<Arc<dyn Tool>>), McpError> {
    let mut clients = Vec::new();
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    let mut owners: HashMap<String, String> = HashMap::new();
    for server in servers {
        let client = McpClient::connect(server).await?;
        for tool in client.tools().await? {
            let server_name = client.server().name().to_owned();
            if let Some(first) = owners.insert(tool.name().to_owned(), server_name.clone()) {
                return Err(McpError::DuplicateToolName {
                    name: tool.name().to_owned(),
                    first,
                    second: server_name,
                });
            }
            tools.push(tool);
        }
        clients.push(client);
    }
    Ok((clients, tools))
}
