//! MCP end to end: an agent (scripted model) calls a tool of npm server-everything and answers
//! with its result in both trace modes; `mcp_servers:` in a definition; the `agents mcp` CLI.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::process::Command;
use std::sync::Arc;

use agents::definition::AgentDefinition;
use agents::mcp::testing::TestServers;
use agents::mcp::{connect_all, McpClient};
use agents::prelude::*;
use serde_json::json;

async fn run_agent_with_mcp_tool(separated: bool) {
    let Some(servers) = TestServers::find() else {
        return;
    };
    let client = McpClient::connect(servers.everything_stdio())
        .await
        .unwrap();
    let model = Arc::new(ScriptedModel::new([
        InferenceResponse::with_tool_calls([ToolCall::new(
            "call_1",
            "get-sum",
            json!({"a": 20, "b": 22}),
        )]),
        InferenceResponse::text("20 + 22 = 42, says the calculator."),
    ]));
    let agent = AgentBuilder::new()
        .with_shared_model(model.clone())
        .with_tools(client.tools().await.unwrap())
        .with_separated_tool_trace(separated)
        .with_max_steps(5)
        .build()
        .unwrap();
    let done = agent
        .execute(AgentState::new().with_user_message("What is 20 + 22?"))
        .await
        .unwrap();
    assert_eq!(done.status(), AgentStatus::Completed);
    assert_eq!(
        done.final_response().unwrap().text(),
        "20 + 22 = 42, says the calculator."
    );

    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    let schema = requests[0]
        .tools
        .iter()
        .find(|t| t.name == "get-sum")
        .unwrap();
    assert_eq!(schema.parameters["properties"]["a"]["type"], "number");
    let tool_result = requests[1]
        .messages
        .iter()
        .find(|m| m.tool_call_id() == Some("call_1"))
        .expect("the model saw the tool result");
    assert_eq!(tool_result.text(), "The sum of 20 and 22 is 42.");

    let persisted: Vec<String> = done.messages().iter().map(|m| m.text()).collect();
    if separated {
        assert_eq!(
            persisted.len(),
            2,
            "question and answer only: {persisted:?}"
        );
    } else {
        assert!(
            persisted.contains(&"The sum of 20 and 22 is 42.".to_owned()),
            "{persisted:?}"
        );
    }
    client.close().await.unwrap();
}

#[tokio::test]
async fn an_agent_calls_an_mcp_tool_and_answers_with_its_result_separated_trace() {
    run_agent_with_mcp_tool(true).await;
}

#[tokio::test]
async fn an_agent_calls_an_mcp_tool_and_answers_with_its_result_legacy_trace() {
    run_agent_with_mcp_tool(false).await;
}

#[tokio::test]
async fn mcp_servers_in_a_definition_give_the_agent_prefixed_tools() {
    let Some(servers) = TestServers::find() else {
        return;
    };
    let yaml = format!(
        "version: 1\nid: calc\nname: Calc\ndescription: adds\nsystem_prompt: Add.\nllm: {{ provider: scripted, model: m }}\n\
         mcp_servers:\n  - {{ name: everything, command: '{}', args: ['{}', stdio], prefix: ev, timeout: 20, env: {{ GREETING: '${{HOME}}' }} }}\n",
        servers.node.display(),
        servers.everything.display()
    );
    let definition = AgentDefinition::from_yaml_str(&yaml, "calc.yaml").unwrap();
    let server = definition.mcp_servers[0].to_server().unwrap();
    assert_eq!(server.prefix(), Some("ev"));
    assert_eq!(server.call_timeout(), std::time::Duration::from_secs(20));
    let (_clients, tools) = connect_all([server]).await.unwrap();
    let echo = tools.iter().find(|t| t.name() == "ev__echo").unwrap();
    let out = echo
        .call(json!({"message": "hi"}), &ToolContext::default())
        .await
        .unwrap();
    assert_eq!(out.content(), "Echo: hi");

    // the duplicate check of the builder still applies to unprefixed MCP tools
    let client = McpClient::connect(servers.everything_stdio())
        .await
        .unwrap();
    let tools = client.tools().await.unwrap();
    let error = AgentBuilder::new()
        .with_model(ScriptedModel::new([]))
        .with_tools(tools.clone())
        .with_tools(tools)
        .build()
        .expect_err("duplicate names are a build error");
    assert!(
        error.to_string().starts_with("duplicate tool name `echo`"),
        "{error}"
    );
}

#[test]
fn the_cli_lists_and_calls_a_servers_tools() {
    let Some(servers) = TestServers::find() else {
        return;
    };
    let command = format!(
        "'{}' '{}' stdio",
        servers.node.display(),
        servers.everything.display()
    );
    let agents = || Command::new(env!("CARGO_BIN_EXE_agents"));

    let listed = agents()
        .args(["mcp", "tools", "--command", &command])
        .output()
        .unwrap();
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let text = String::from_utf8(listed.stdout).unwrap();
    assert!(
        text.starts_with(
            "echo\n  Echoes back the input string\n  parameters: {\"type\":\"object\""
        ),
        "{text}"
    );
    assert!(text.contains("\nget-sum\n"), "{text}");

    let called = agents()
        .args([
            "mcp",
            "call",
            "echo",
            "--args",
            r#"{"message": "from the cli"}"#,
            "--command",
            &command,
        ])
        .output()
        .unwrap();
    assert!(
        called.status.success(),
        "{}",
        String::from_utf8_lossy(&called.stderr)
    );
    assert_eq!(
        String::from_utf8(called.stdout).unwrap(),
        "Echo: from the cli\n"
    );

    let failed = agents()
        .args([
            "mcp",
            "call",
            "get-sum",
            "--args",
            r#"{"a": "x"}"#,
            "--command",
            &command,
        ])
        .output()
        .unwrap();
    assert_eq!(failed.status.code(), Some(1));
    let stderr = String::from_utf8(failed.stderr).unwrap();
    assert!(
        stderr.starts_with("error: the tool reported an error: "),
        "{stderr}"
    );

    let bad_json = agents()
        .args([
            "mcp",
            "call",
            "echo",
            "--args",
            "{nope",
            "--command",
            &command,
        ])
        .output()
        .unwrap();
    assert_eq!(bad_json.status.code(), Some(1));
    assert!(String::from_utf8(bad_json.stderr)
        .unwrap()
        .contains("--args is not valid JSON"));
}

#[test]
fn agents_check_validates_mcp_servers() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.yaml");
    std::fs::write(
        &file,
        "version: 1\nid: a\nname: A\ndescription: d\nsystem_prompt: p\nllm: { provider: openai, model: m }\nmcp_servers:\n  - { url: 'ftp://x' }\n",
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_agents"))
        .arg("check")
        .arg(&file)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        all.contains("`mcp_servers[0].url`: expected an http:// or https:// URL"),
        "{all}"
    );
}

#[tokio::test]
async fn a_tool_the_server_adds_mid_run_is_offered_and_run_at_the_next_step() {
    let Some(servers) = TestServers::find() else {
        return;
    };
    let client = McpClient::connect(servers.quirky().with_prefix("q"))
        .await
        .unwrap();
    let mut changes = client.tool_changes();
    let model = Arc::new(ScriptedModel::new([
        InferenceResponse::with_tool_calls([ToolCall::new(
            "call_1",
            "q__add_tool",
            json!({"name": "fresh"}),
        )]),
        InferenceResponse::with_tool_calls([ToolCall::new("call_2", "q__fresh", json!({}))]),
        InferenceResponse::text("The new tool answered."),
    ]));
    let agent = AgentBuilder::new()
        .with_shared_model(model.clone())
        .with_tool_source(Arc::new(client.tool_source()))
        .with_max_steps(5)
        .build()
        .unwrap();

    let state = agent
        .step(AgentState::new().with_user_message("Add a tool, then use it."))
        .await
        .unwrap();
    // The server announces its new list (notifications/tools/list_changed).
    tokio::time::timeout(std::time::Duration::from_secs(10), changes.changed())
        .await
        .expect("list_changed arrives")
        .unwrap();
    let done = agent.execute(state).await.unwrap();

    assert_eq!(done.status(), AgentStatus::Completed);
    let offered = |i: usize| -> Vec<String> {
        model.requests()[i]
            .tools
            .iter()
            .map(|t| t.name.clone())
            .collect()
    };
    assert!(
        !offered(0).contains(&"q__fresh".to_owned()),
        "{:?}",
        offered(0)
    );
    assert!(
        offered(1).contains(&"q__fresh".to_owned()),
        "{:?}",
        offered(1)
    );
    let fresh = done
        .steps()
        .flat_map(|s| s.tool_executions().iter())
        .find(|e| e.name() == "q__fresh")
        .expect("the new tool ran");
    assert!(!fresh.has_error(), "{}", fresh.result_text());
    assert_eq!(fresh.result_text(), "fresh: {}");
    client.close().await.unwrap();
}

/// server-everything's image tool through an agent: the image is a part of the tool result,
/// which Anthropic's `tool_result` carries as an `image` block, and which an OpenAI-compatible
/// request describes in the tool message, or (with `tool_result_images`) sends in a `user`
/// message after the step's tool messages. Both trace modes; the state round-trips through
/// JSON with the image.
#[tokio::test]
async fn an_mcp_image_reaches_the_request_as_an_image_part_where_the_provider_takes_one() {
    use inference::providers::{anthropic, openai};
    let Some(servers) = TestServers::find() else {
        return;
    };
    let client = McpClient::connect(servers.everything_stdio())
        .await
        .unwrap();
    for separated in [true, false] {
        let model = Arc::new(ScriptedModel::new([
            InferenceResponse::with_tool_calls([ToolCall::new(
                "call_img",
                "get-tiny-image",
                json!({}),
            )]),
            InferenceResponse::text("It is the MCP logo."),
        ]));
        let agent = AgentBuilder::new()
            .with_shared_model(model.clone())
            .with_tools(client.tools().await.unwrap())
            .with_separated_tool_trace(separated)
            .build()
            .unwrap();
        let done = agent
            .execute(AgentState::new().with_user_message("Show me the tiny image."))
            .await
            .unwrap();
        assert_eq!(done.final_response().unwrap().text(), "It is the MCP logo.");
        let request = &model.requests()[1];

        let (_, blocks) = anthropic::messages_to_anthropic(request.messages.iter());
        let result = blocks
            .iter()
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .find(|b| b["type"] == "tool_result")
            .expect("a tool_result block");
        let image = result["content"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["type"] == "image")
            .unwrap_or_else(|| panic!("an image block in {result}"));
        assert_eq!(image["source"]["type"], "base64");
        assert_eq!(image["source"]["media_type"], "image/png");

        let described = openai::request_body(request, "m", false, false);
        let tool = described["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "tool")
            .unwrap()
            .clone();
        let text = tool["content"].as_str().unwrap();
        assert!(
            text.contains("[image: image/png, ") && text.contains("not shown to the model"),
            "{text}"
        );
        assert!(
            !described.to_string().contains("base64,"),
            "no image data without support"
        );

        let options = openai::BodyOptions {
            developer_role: false,
            tool_result_images: true,
        };
        let shown = openai::request_body_with(request, "m", false, options);
        let messages = shown["messages"].as_array().unwrap();
        let at = messages.iter().position(|m| m["role"] == "tool").unwrap();
        assert_eq!(messages[at + 1]["role"], "user", "{shown}");
        let parts = messages[at + 1]["content"].as_array().unwrap();
        assert!(parts[0]["text"].as_str().unwrap().contains("call_img"));
        assert!(parts[1]["image_url"]["url"]
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,"));

        // The image survives saving and loading the state.
        let reloaded = AgentState::from_json(&done.to_json().unwrap()).unwrap();
        assert_eq!(reloaded, done);
    }
    client.close().await.unwrap();
}
