//! Against the reference server npm `@modelcontextprotocol/server-everything`, over stdio and
//! over streamable HTTP on 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use agents_core::{Tool, ToolContext};
use agents_mcp::testing::TestServers;
use agents_mcp::{connect_all, McpClient, McpError};
use serde_json::json;

fn find<'a>(tools: &'a [Arc<dyn Tool>], name: &str) -> &'a Arc<dyn Tool> {
    tools
        .iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

/// A client of server-everything over stdio and its tools; `None` when the server is missing.
async fn everything_stdio() -> Option<(McpClient, Vec<Arc<dyn Tool>>)> {
    let servers = TestServers::find()?;
    let client = McpClient::connect(servers.everything_stdio())
        .await
        .unwrap();
    let tools = client.tools().await.unwrap();
    Some((client, tools))
}

#[tokio::test]
async fn stdio_tools_are_listed_and_called_with_text_structured_and_image_results() {
    let Some((client, tools)) = everything_stdio().await else {
        return;
    };
    let echo = find(&tools, "echo");
    assert_eq!(echo.description(), "Echoes back the input string");
    assert_eq!(echo.parameters()["type"], "object");
    assert_eq!(echo.parameters()["properties"]["message"]["type"], "string");
    let context = ToolContext::default();

    let out = echo
        .call(json!({"message": "hello"}), &context)
        .await
        .unwrap();
    assert_eq!(out.content(), "Echo: hello");

    let sum = find(&tools, "get-sum")
        .call(json!({"a": 2, "b": 40}), &context)
        .await
        .unwrap();
    assert_eq!(sum.content(), "The sum of 2 and 40 is 42.");

    let weather = find(&tools, "get-structured-content")
        .call(json!({"location": "Chicago"}), &context)
        .await
        .unwrap();
    let expected = json!({"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82});
    assert_eq!(
        weather.value(),
        Some(&expected),
        "the structured value is kept"
    );
    assert_eq!(
        weather.content(),
        expected.to_string(),
        "and shown once as JSON"
    );

    let image = find(&tools, "get-tiny-image")
        .call(json!({}), &context)
        .await
        .unwrap();
    // The image is a part (a `data:` URI), not text; the text is the server's words.
    assert!(!image.content().contains("base64"), "{}", image.content());
    assert_eq!(image.parts().len(), 1, "{:?}", image.parts());
    let messages::ContentPart::ImageUrl { url, .. } = &image.parts()[0] else {
        panic!("not an image: {:?}", image.parts());
    };
    assert!(url.starts_with("data:image/png;base64,iVBOR"), "{url}");
    client.close().await.unwrap();
}

#[tokio::test]
async fn invalid_arguments_come_back_as_a_tool_error_for_the_model() {
    let Some((_client, tools)) = everything_stdio().await else {
        return;
    };
    let error = find(&tools, "get-sum")
        .call(json!({"a": "two"}), &ToolContext::default())
        .await
        .unwrap_err();
    // the TypeScript SDK answers with an isError result naming the bad field
    assert!(
        error
            .message()
            .contains("Invalid arguments for tool get-sum")
            && error.message().contains("expected number, received string"),
        "{error}"
    );
}

#[tokio::test]
async fn two_servers_offering_the_same_names_need_a_prefix() {
    let Some(servers) = TestServers::find() else {
        return;
    };
    let error = connect_all([
        servers.everything_stdio(),
        servers.everything_stdio().with_name("again"),
    ])
    .await
    .err()
    .expect("a collision");
    assert!(matches!(error, McpError::DuplicateToolName { .. }));
    assert!(
        error.to_string().starts_with("MCP tool name `echo` is offered by both `everything` and `again`: give one of the servers a prefix"),
        "{error}"
    );

    let (clients, tools) = connect_all([
        servers.everything_stdio(),
        servers.everything_stdio().with_prefix("ev"),
    ])
    .await
    .unwrap();
    assert_eq!(clients.len(), 2);
    let echo = find(&tools, "ev__echo");
    let out = echo
        .call(json!({"message": "prefixed"}), &ToolContext::default())
        .await
        .unwrap();
    assert_eq!(out.content(), "Echo: prefixed");
    find(&tools, "echo");
}

#[tokio::test]
async fn streamable_http_tools_work_with_custom_headers() {
    let Some(servers) = TestServers::find() else {
        return;
    };
    let http = servers.start_everything_http(0).unwrap();
    let client = McpClient::connect(
        agents_mcp::McpServer::http(http.url()).with_header("Authorization", "Bearer test-token"),
    )
    .await
    .unwrap();
    let tools = client.tools().await.unwrap();
    let out = find(&tools, "echo")
        .call(json!({"message": "over http"}), &ToolContext::default())
        .await
        .unwrap();
    assert_eq!(out.content(), "Echo: over http");
    client.close().await.unwrap();
}

#[tokio::test]
async fn an_http_server_that_restarts_is_reconnected_on_the_next_call() {
    let Some(servers) = TestServers::find() else {
        return;
    };
    let http = servers.start_everything_http(0).unwrap();
    let port = http.port();
    let client = McpClient::connect(
        agents_mcp::McpServer::http(http.url())
            .with_call_timeout(Duration::from_secs(10))
            .with_connect_timeout(Duration::from_secs(10))
            .with_max_reconnects(1),
    )
    .await
    .unwrap();
    let tools = client.tools().await.unwrap();
    let echo = find(&tools, "echo");
    let context = ToolContext::default();
    echo.call(json!({"message": "1"}), &context).await.unwrap();

    drop(http); // killed and reaped
    let started = Instant::now();
    let error = echo
        .call(json!({"message": "2"}), &context)
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(30), "no hang");
    assert!(!error.message().is_empty());

    let _http = servers.start_everything_http(port).unwrap();
    let mut answer = None;
    // the first call after the restart may still see the old session; a bounded second try
    for _ in 0..3 {
        if let Ok(out) = echo.call(json!({"message": "3"}), &context).await {
            answer = Some(out);
            break;
        }
    }
    assert_eq!(answer.expect("reconnected").content(), "Echo: 3");
}
