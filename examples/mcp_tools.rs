//! An MCP server's tools in an agent: connect to a stdio server, list its tools, and let a
//! (scripted) model call one; the server's answer reaches the model and the final answer.
//!
//! Run with `cargo run --example mcp_tools`. Needs an MCP server, started locally over stdio
//! (no network): the command in `MCP_SERVER_COMMAND` (whitespace-separated, e.g.
//! `npx -y @modelcontextprotocol/server-everything stdio`), or the server-everything that
//! `cargo xtask mcp-servers` installs (it writes `~/.cache/agents-rs/mcp/servers.env`). The
//! example calls server-everything's `echo` tool. Without a server it says so and stops (and
//! fails in CI, where `.ci/run` installs one). See docs/mcp.md.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use agents::mcp::{McpClient, McpServer};
use agents::prelude::*;

/// The server command: `MCP_SERVER_COMMAND`, or node + server-everything from the cache.
fn server_command() -> Option<Vec<String>> {
    if let Ok(command) = std::env::var("MCP_SERVER_COMMAND") {
        return Some(command.split_whitespace().map(str::to_owned).collect());
    }
    let cache = match std::env::var_os("AGENTS_MCP_CACHE") {
        Some(dir) => std::path::PathBuf::from(dir),
        None => std::path::PathBuf::from(std::env::var_os("HOME")?).join(".cache/agents-rs/mcp"),
    };
    let env = std::fs::read_to_string(cache.join("servers.env")).ok()?;
    let value = |key: &str| {
        env.lines()
            .filter_map(|line| line.split_once('='))
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.trim().to_owned())
    };
    Some(vec![
        value("AGENTS_MCP_NODE")?,
        value("AGENTS_MCP_EVERYTHING")?,
        "stdio".to_owned(),
    ])
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(command) = server_command().filter(|c| !c.is_empty()) else {
        let message = "no MCP server: set MCP_SERVER_COMMAND or run `cargo xtask mcp-servers`";
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            return Err(message.into());
        }
        eprintln!("SKIPPED: {message}");
        return Ok(());
    };
    let client =
        McpClient::connect(McpServer::stdio(command[0].clone(), command[1..].to_vec())).await?;
    let tools = client.tools().await?;
    println!(
        "the server has {} tools: {}",
        tools.len(),
        tools
            .iter()
            .map(|t| t.name().to_owned())
            .collect::<Vec<_>>()
            .join(", ")
    );

    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([ToolCall::new(
            "c1",
            "echo",
            json!({"message": "hello over MCP"}),
        )]),
        InferenceResponse::text("The server echoed my message."),
    ]);
    let agent = AgentBuilder::new()
        .with_model(model.clone())
        .with_tools(tools)
        .with_separated_tool_trace(true)
        .build()?;
    let done = agent
        .execute(AgentState::new().with_user_message("Say hello through the echo tool."))
        .await?;
    let result = done
        .step_executions()
        .steps()
        .flat_map(|s| {
            s.tool_executions()
                .iter()
                .map(|e| e.result_text())
                .collect::<Vec<_>>()
        })
        .next()
        .ok_or("the echo tool did not run")?;
    println!("echo returned: {result}");
    println!(
        "answer: {}",
        done.final_response().ok_or("no answer")?.text()
    );
    client.close().await?;
    if !result.contains("hello over MCP") {
        return Err(format!("unexpected echo result: {result}").into());
    }
    Ok(())
}
