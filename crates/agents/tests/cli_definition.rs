//! `agents run --definition` and `agents check`: definition files drive the CLI.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn agents() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agents"))
}

fn completion(message: Value, finish: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "mock",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 40, "completion_tokens": 5, "total_tokens": 45}
    }))
}

fn definition(base_url: &str) -> String {
    format!(
        "version: 1
id: inventory
name: Inventory
description: Answers stock questions
system_prompt: You are the inventory agent.
llm: {{ provider: openai, model: def-model, base_url: '{base_url}' }}
execution: {{ max_steps: 5, trace: legacy }}
tools: {{ deny: [write_file, edit_file, move_file] }}
capabilities: [files, metadata]
"
    )
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

#[tokio::test]
async fn run_takes_prompt_model_tools_and_trace_mode_from_the_definition() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(completion(
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "store_metadata", "arguments": "{\"key\":\"bolts\",\"value\":1200}"}}]}),
            "tool_calls",
        ))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(completion(
            json!({"role": "assistant", "content": "Noted."}),
            "stop",
        ))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "inventory.yaml",
        &definition(&format!("{}/v1", server.uri())),
    );
    let state = dir.path().join("state.json");
    let output = agents()
        .args([
            "run",
            "--definition",
            &file,
            "--prompt",
            "Remember 1200 bolts.",
        ])
        .args([
            "--root",
            dir.path().to_str().unwrap(),
            "--state",
            state.to_str().unwrap(),
        ])
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_MODEL")
        .env_remove("OPENAI_BASE_URL")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        text.contains("-> store_metadata({\"key\":\"bolts\",\"value\":1200})"),
        "{text}"
    );
    assert!(text.contains("assistant: Noted."), "{text}");

    let requests = model_requests(&server).await;
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert_eq!(body["model"], "def-model");
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(
        body["messages"][0]["content"],
        "You are the inventory agent."
    );
    let mut tools: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    tools.sort_unstable();
    assert_eq!(
        tools,
        [
            "list_dir",
            "list_metadata",
            "read_file",
            "read_metadata",
            "search_files",
            "store_metadata"
        ],
        "denied tools and the bash tool (not among the capabilities) are left out"
    );

    // legacy trace from the definition: the tool call persists; the metadata was stored
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    let saved_text = saved.to_string();
    assert!(saved_text.contains("\"bolts\":1200"), "{saved_text}");
    assert!(saved_text.contains("store_metadata"), "{saved_text}");
}

#[test]
fn check_reports_valid_and_invalid_definitions_and_fails_on_any_error() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.yaml", &definition("http://localhost:1/v1"));
    write(
        dir.path(),
        "b.yaml",
        &definition("http://localhost:1/v1").replace("max_steps: 5", "max_steps: five"),
    );
    let output = agents()
        .args(["check", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("ok   inventory ("), "{text}");
    assert!(
        text.contains("b.yaml: `execution.max_steps`: expected an integer, found string \"five\""),
        "{text}"
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("1 definition file(s) are invalid"));

    std::fs::remove_file(dir.path().join("b.yaml")).unwrap();
    let output = agents()
        .args(["check", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(output.status.success());
}

#[test]
fn an_invalid_definition_or_unknown_capability_stops_run_before_any_request() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(
        dir.path(),
        "bad.yaml",
        &definition("http://127.0.0.1:9/v1").replace("trace: legacy", "trace: verbose"),
    );
    let output = agents()
        .args(["run", "--definition", &bad, "-p", "hi"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(
        error.contains("bad.yaml: `execution.trace`: unknown variant `verbose`"),
        "{error}"
    );

    let unknown = write(
        dir.path(),
        "unknown.yaml",
        &definition("http://127.0.0.1:9/v1").replace("[files, metadata]", "[files, teleport]"),
    );
    let output = agents()
        .args(["run", "--definition", &unknown, "-p", "hi"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(
        error.contains(
            "unknown capability `teleport` (known: files, bash, skills, metadata, tool_registry)"
        ),
        "{error}"
    );
}

#[test]
fn trace_flags_are_exclusive() {
    let output = agents()
        .args(["run", "--separated", "--legacy", "-p", "hi", "--model", "m"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot be used with"));
}

/// The requests `server` received for the model (the `GET /props` that `agents` sends a
/// local server to learn its context size aside).
async fn model_requests(server: &MockServer) -> Vec<wiremock::Request> {
    let mut requests = server.received_requests().await.unwrap();
    requests.retain(|request| request.method.as_str() == "POST");
    requests
}
