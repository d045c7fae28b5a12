//! The `agents` binary as a user runs it: the demo, a run against a mock OpenAI-compatible
//! server, saving and resuming a conversation, and a corrupt state file.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::process::Command;

use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn agents() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agents"))
}

fn completion(message: serde_json::Value, finish: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "mock",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}
    }))
}

#[test]
fn the_demo_runs_without_an_endpoint_and_separated_mode_sends_fewer_tokens() {
    let output = agents().arg("demo").output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("[turn 3] assistant:"), "{text}");
    let total = text
        .lines()
        .find(|l| l.trim_start().starts_with("total|"))
        .unwrap();
    let numbers: Vec<f64> = total
        .split('|')
        .skip(1)
        .map(|c| c.trim().trim_end_matches('%').parse().unwrap())
        .collect();
    assert!(
        numbers[1] < numbers[0],
        "separated {} < legacy {}",
        numbers[1],
        numbers[0]
    );
    assert!(numbers[2] > 30.0, "saved {}%", numbers[2]);
    assert!(text.contains("separated 6 messages"));
}

#[tokio::test]
async fn run_against_a_mock_server_saves_and_resumes_the_conversation() {
    let server = MockServer::start().await;
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("todo.txt"), "buy milk\n").unwrap();
    // Turn 1: a tool call, then an answer. Turn 2: an answer.
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(completion(
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "read_file", "arguments": "{\"path\":\"todo.txt\"}"}}]}),
            "tool_calls",
        ))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(completion(
            json!({"role": "assistant", "content": "You need to buy milk."}),
            "stop",
        ))
        .mount(&server)
        .await;
    let state_file = root.path().join("conversation.json");
    let run = |prompt: &str| {
        agents()
            .args([
                "run",
                "--base-url",
                &format!("{}/v1", server.uri()),
                "--model",
                "mock",
                "--no-bash",
            ])
            .args([
                "--root",
                root.path().to_str().unwrap(),
                "--state",
                state_file.to_str().unwrap(),
            ])
            .args(["--transcript", "--prompt", prompt])
            .env_remove("OPENAI_API_KEY")
            .output()
            .unwrap()
    };
    let first = run("What is on my list?");
    let text = String::from_utf8_lossy(&first.stdout);
    assert!(
        first.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(
        text.contains("-> read_file({\"path\":\"todo.txt\"})"),
        "{text}"
    );
    assert!(
        text.contains("<- read_file:") && text.contains("buy milk"),
        "{text}"
    );
    assert!(text.contains("assistant: You need to buy milk."), "{text}");
    assert!(
        text.contains("tokens: input 100, cached input 0, output 20, total 120"),
        "{text}"
    );
    // `mock` is in no catalog: no made-up price.
    assert!(text.contains("unknown price"), "{text}");

    let second = run("Anything else?");
    let text = String::from_utf8_lossy(&second.stdout);
    assert!(second.status.success(), "{text}");
    assert!(
        text.contains("persisted conversation (4 messages)"),
        "{text}"
    );
    assert!(
        text.contains("user: What is on my list?"),
        "resumed from the file: {text}"
    );
}

#[test]
fn a_corrupt_state_file_is_an_error_and_is_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let state_file = dir.path().join("broken.json");
    std::fs::write(&state_file, "{\"version\": 1, \"agent_id\": 42}").unwrap();
    let output = agents()
        .args([
            "run",
            "--base-url",
            "http://127.0.0.1:9",
            "--model",
            "m",
            "--prompt",
            "hi",
        ])
        .args(["--state", state_file.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(error.contains("cannot resume from"), "{error}");
    assert_eq!(
        std::fs::read_to_string(&state_file).unwrap(),
        "{\"version\": 1, \"agent_id\": 42}"
    );
}

#[tokio::test]
async fn observation_masking_from_the_command_line_hides_old_tool_outputs() {
    let server = MockServer::start().await;
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("todo.txt"), "buy milk\n").unwrap();
    // Turn 1: a tool call, then an answer. Turns 2 and 3: an answer.
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(completion(
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "read_file", "arguments": "{\"path\":\"todo.txt\"}"}}]}),
            "tool_calls",
        ))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(completion(
            json!({"role": "assistant", "content": "You need to buy milk."}),
            "stop",
        ))
        .mount(&server)
        .await;
    let state_file = root.path().join("conversation.json");
    let run = |prompt: &str, trace: &[&str]| {
        agents()
            .args(["run", "--base-url", &format!("{}/v1", server.uri())])
            .args(["--model", "mock", "--no-bash"])
            .args(trace)
            .args(["--root", root.path().to_str().unwrap()])
            .args(["--state", state_file.to_str().unwrap(), "--prompt", prompt])
            .env_remove("OPENAI_API_KEY")
            .output()
            .unwrap()
    };
    let masked = ["--trace", "masked", "--masked-executions", "2"];
    let saved = || std::fs::read_to_string(&state_file).unwrap();
    for (turn, prompt) in ["What is on my list?", "Anything else?"].iter().enumerate() {
        let output = run(prompt, &masked);
        assert!(output.status.success(), "turn {}: {output:?}", turn + 1);
    }
    // Two executions, both kept: the tool's output is still in the conversation.
    assert!(!saved().contains("omitted"), "{}", saved());
    let third = run("Thanks!", &masked);
    assert!(third.status.success(), "{third:?}");
    let text = saved();
    assert!(text.contains("(output of read_file omitted"), "{text}");
    assert!(text.contains("observation_masked"), "{text}");

    let wrong = run("Hi", &["--trace", "separated", "--masked-executions", "2"]);
    assert_eq!(wrong.status.code(), Some(2), "{wrong:?}");
    assert!(
        String::from_utf8_lossy(&wrong.stderr).contains("--masked-executions applies to"),
        "{wrong:?}"
    );
}
