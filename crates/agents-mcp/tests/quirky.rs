//! Robustness against a server that crashes, hangs, floods, fails and changes: the Python
//! fixture `fixtures/quirky_server.py` (PyPI `mcp` SDK) over stdio.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use agents_core::{Tool, ToolContext, ToolError};
use agents_mcp::testing::TestServers;
use agents_mcp::{CallError, McpClient, McpError, McpServer};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

async fn quirky(configure: impl FnOnce(McpServer) -> McpServer) -> Option<McpClient> {
    let servers = TestServers::find()?;
    Some(
        McpClient::connect(configure(servers.quirky()))
            .await
            .expect("the fixture server starts"),
    )
}

async fn tool(client: &McpClient, name: &str) -> Arc<dyn Tool> {
    client
        .tools()
        .await
        .expect("tools/list")
        .into_iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

/// The process exists, running or as a zombie (an unreaped child keeps its /proc entry).
fn process_alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

async fn wait_until(deadline: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < deadline {
        if condition() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    condition()
}

#[tokio::test]
async fn a_crash_mid_call_fails_that_call_and_the_next_call_restarts_the_server() {
    let Some(client) = quirky(|s| s).await else {
        return;
    };
    let pid_tool = tool(&client, "pid").await;
    let crash = tool(&client, "crash").await;
    let context = ToolContext::default();
    let first_pid = pid_tool.call(json!({}), &context).await.unwrap();

    let error = crash.call(json!({}), &context).await.unwrap_err();
    assert!(
        error
            .message()
            .contains("stopped during the call to `crash`")
            && error.message().contains("restarted on the next call"),
        "{error}"
    );

    let second_pid = pid_tool.call(json!({}), &context).await.expect("restarted");
    assert_ne!(
        first_pid.content(),
        second_pid.content(),
        "a new process answers"
    );
}

#[tokio::test]
async fn a_server_that_cannot_restart_fails_calls_after_bounded_retries_and_recovers_later() {
    let Some(servers) = TestServers::find() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken");
    // starts the fixture unless the file `broken` exists
    let script = format!(
        "if [ -e '{}' ]; then echo 'broken on purpose' >&2; exit 1; fi; exec '{}' '{}'",
        broken.display(),
        servers.python.display(),
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/quirky_server.py"
        )
    );
    let server = McpServer::stdio("sh", ["-c".to_owned(), script]).with_max_reconnects(2);
    let client = McpClient::connect(server).await.unwrap();
    let crash = tool(&client, "crash").await;
    let echo = tool(&client, "echo").await;
    let context = ToolContext::default();
    crash.call(json!({}), &context).await.unwrap_err();

    std::fs::write(&broken, "").unwrap();
    let started = Instant::now();
    let error = echo.call(json!({"text": "a"}), &context).await.unwrap_err();
    let waited = started.elapsed();
    // three attempts with 200 ms and 400 ms between them
    assert!(
        waited >= Duration::from_millis(600) && waited < Duration::from_secs(10),
        "{waited:?}"
    );
    assert!(error.message().contains("the handshake failed"), "{error}");

    std::fs::remove_file(&broken).unwrap();
    let out = echo.call(json!({"text": "back"}), &context).await.unwrap();
    assert_eq!(out.content(), "back");
}

#[tokio::test]
async fn a_hung_call_times_out_with_a_tool_error_and_is_cancelled_on_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let cancel_file = dir.path().join("cancelled");
    let path = cancel_file.to_string_lossy().into_owned();
    let Some(client) = quirky(|s| {
        s.with_env("QUIRKY_CANCEL_FILE", path)
            .with_call_timeout(Duration::from_millis(700))
    })
    .await
    else {
        return;
    };
    let hang = tool(&client, "hang").await;
    let started = Instant::now();
    let error = hang
        .call(json!({}), &ToolContext::default())
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        error.message().contains("did not answer within 700ms"),
        "{error}"
    );
    assert!(
        wait_until(Duration::from_secs(10), || cancel_file.exists()).await,
        "the server saw notifications/cancelled"
    );
    // the session is still usable
    let echo = tool(&client, "echo").await;
    let out = echo
        .call(json!({"text": "still here"}), &ToolContext::default())
        .await
        .unwrap();
    assert_eq!(out.content(), "still here");
}

#[tokio::test]
async fn cancelling_the_run_sends_notifications_cancelled_for_the_call_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let cancel_file = dir.path().join("cancelled");
    let path = cancel_file.to_string_lossy().into_owned();
    let Some(client) = quirky(|s| s.with_env("QUIRKY_CANCEL_FILE", path)).await else {
        return;
    };
    let hang = tool(&client, "hang").await;
    let context = ToolContext::default();
    let token = context.cancellation.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        token.cancel();
    });
    let started = Instant::now();
    let error = hang.call(json!({}), &context).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        error,
        ToolError::failed("the call to MCP tool `hang` was cancelled")
    );
    assert!(
        wait_until(Duration::from_secs(10), || {
            std::fs::read_to_string(&cancel_file).is_ok_and(|s| s == "cancelled")
        })
        .await,
        "the server's handler was cancelled"
    );
}

#[tokio::test]
async fn a_huge_result_is_cut_to_the_bound_with_a_note() {
    let Some(client) = quirky(|s| s.with_max_result_chars(1_000)).await else {
        return;
    };
    let huge = tool(&client, "huge").await;
    let out = huge
        .call(json!({"chars": 2_000_000}), &ToolContext::default())
        .await
        .unwrap();
    assert!(out.content().starts_with(&"x".repeat(1_000)));
    assert!(out.content().ends_with(
        "[MCP result cut: showing the first 1000 of 2000000 characters; 1999000 left out]"
    ));
    assert!(out.content().len() < 1_200);
}

#[tokio::test]
async fn an_is_error_result_is_a_tool_error_with_the_servers_text() {
    let Some(client) = quirky(|s| s).await else {
        return;
    };
    let fail = tool(&client, "fail").await;
    let error = fail
        .call(json!({}), &ToolContext::default())
        .await
        .unwrap_err();
    assert_eq!(
        error,
        ToolError::failed("the disk is full: free some space and retry")
    );
}

#[tokio::test]
async fn tools_list_changed_is_seen_and_a_removed_tool_answers_with_a_clear_error() {
    let Some(client) = quirky(|s| s.with_prefix("q")).await else {
        return;
    };
    let mut changes = client.tool_changes();
    let add = tool(&client, "q__add_tool").await;
    let remove = tool(&client, "q__remove_tool").await;
    let echo = tool(&client, "q__echo").await;
    let context = ToolContext::default();

    add.call(json!({"name": "fresh"}), &context).await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), changes.changed())
        .await
        .expect("list_changed arrives")
        .unwrap();
    let names: Vec<String> = client
        .tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert!(names.contains(&"q__fresh".to_owned()), "{names:?}");

    remove
        .call(json!({"name": "echo"}), &context)
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(5), changes.changed())
        .await
        .expect("list_changed arrives")
        .unwrap();
    let error = echo
        .call(json!({"text": "hi"}), &context)
        .await
        .unwrap_err();
    assert!(
        error.message().starts_with(
            "MCP server `quirky` no longer offers `echo`; its tools now are: q__crash"
        ),
        "{error}"
    );
    assert!(error.message().contains("q__fresh"), "{error}");
}

#[tokio::test]
async fn schema_quirks_are_normalized() {
    let Some(client) = quirky(|s| s).await else {
        return;
    };
    let infos = client.list_tools().await.unwrap();
    let schema = |name: &str| -> Value {
        infos
            .iter()
            .find(|i| i.name == name)
            .unwrap()
            .input_schema
            .clone()
    };
    assert_eq!(
        schema("no_type"),
        json!({"properties": {"path": {"type": "string"}}, "required": ["path"], "type": "object"})
    );
    assert_eq!(
        schema("no_properties"),
        json!({"type": "object", "properties": {}})
    );
    assert_eq!(
        schema("defs_ref"),
        json!({"type": "object", "properties": {"at": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}}}})
    );
}

#[tokio::test]
async fn the_server_process_is_killed_and_reaped_when_the_client_and_its_tools_drop() {
    let Some(client) = quirky(|s| s).await else {
        return;
    };
    let pid = client.process_id().await.expect("a stdio server has a pid");
    assert!(process_alive(pid));
    let tools = client.tools().await.unwrap();
    drop(client);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(process_alive(pid), "the tools keep the server alive");
    drop(tools);
    assert!(
        wait_until(Duration::from_secs(10), || !process_alive(pid)).await,
        "process {pid} is gone (not even a zombie)"
    );
}

#[tokio::test]
async fn close_stops_the_server_and_later_calls_answer_with_a_tool_error() {
    let Some(client) = quirky(|s| s).await else {
        return;
    };
    let pid = client.process_id().await.unwrap();
    let echo = tool(&client, "echo").await;
    client.close().await.unwrap();
    assert!(wait_until(Duration::from_secs(10), || !process_alive(pid)).await);
    let error = echo
        .call(json!({"text": "x"}), &ToolContext::default())
        .await
        .unwrap_err();
    assert!(error.message().contains("the client was closed"), "{error}");
}

#[tokio::test]
async fn a_server_that_never_answers_the_handshake_hits_the_connect_timeout() {
    // `sleep` reads nothing and writes nothing: a hung server.
    let server = McpServer::stdio("sleep", ["30"]).with_connect_timeout(Duration::from_millis(500));
    let started = Instant::now();
    let error = McpClient::connect(server).await.expect_err("times out");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(matches!(error, McpError::ConnectTimeout { .. }), "{error}");
    assert_eq!(
        error.to_string(),
        "MCP server `sleep`: no answer to the handshake within 500ms; raise the connect timeout or check the server"
    );
}

#[tokio::test]
async fn non_object_arguments_are_rejected_without_a_round_trip() {
    let Some(client) = quirky(|s| s).await else {
        return;
    };
    let error = client
        .call("echo", json!([1, 2]), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(error, CallError::Rejected { .. }));
    assert!(
        error.to_string().contains("must be a JSON object"),
        "{error}"
    );
}

#[tokio::test]
async fn a_stdio_server_gets_the_allow_list_and_its_own_variables_never_the_agents_others() {
    let Some(servers) = TestServers::find() else {
        return;
    };
    // The test process runs under cargo: it has CARGO_* variables (stand-ins for API keys),
    // which are not on the allow-list.
    assert!(std::env::vars().any(|(n, _)| n.starts_with("CARGO")));
    let client = McpClient::connect(servers.quirky().with_env("GIVEN", "yes"))
        .await
        .unwrap();
    let env = tool(&client, "env").await;
    let out = env.call(json!({}), &ToolContext::default()).await.unwrap();
    client.close().await.unwrap();
    let names: Vec<&str> = out.content().lines().collect();
    assert!(names.contains(&"PATH"), "{names:?}");
    assert!(names.contains(&"GIVEN"), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("CARGO")), "{names:?}");
}

#[tokio::test]
async fn inherit_env_passes_the_whole_environment() {
    let Some(servers) = TestServers::find() else {
        return;
    };
    let client = McpClient::connect(servers.quirky().with_inherited_env(true))
        .await
        .unwrap();
    let env = tool(&client, "env").await;
    let out = env.call(json!({}), &ToolContext::default()).await.unwrap();
    client.close().await.unwrap();
    assert!(
        out.content().lines().any(|n| n.starts_with("CARGO")),
        "{}",
        out.content()
    );
}
