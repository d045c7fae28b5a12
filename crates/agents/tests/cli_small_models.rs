//! `agents run` against a mock OpenAI-compatible server that answers like a small local model:
//! exit codes, tool calls written as text (recovered by default), empty replies and replies
//! cut at the token limit.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::process::{Command, Output};

use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn agents() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agents"))
}

fn completion(content: &str, finish: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "mock",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "finish_reason": finish}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}
    }))
}

/// A server answering with `replies` in order (the last one repeats).
async fn server(replies: &[(&str, &str)]) -> MockServer {
    let server = MockServer::start().await;
    let (last, rest) = replies.split_last().unwrap();
    for (content, finish) in rest {
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(completion(content, finish))
            .up_to_n_times(1)
            .mount(&server)
            .await;
    }
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(completion(last.0, last.1))
        .mount(&server)
        .await;
    server
}

struct Run {
    output: Output,
    root: tempfile::TempDir,
}

impl Run {
    fn code(&self) -> Option<i32> {
        self.output.status.code()
    }
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }
    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }
    fn saved(&self) -> String {
        std::fs::read_to_string(self.root.path().join("state.json")).unwrap_or_default()
    }
}

fn run(server: &MockServer, extra: &[&str]) -> Run {
    run_prompt(server, "What is on my list?", extra)
}

fn run_prompt(server: &MockServer, prompt: &str, extra: &[&str]) -> Run {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("todo.txt"), "buy milk\n").unwrap();
    let output = agents()
        .args(["run", "--base-url", &format!("{}/v1", server.uri())])
        .args(["--model", "mock", "--no-bash", "--prompt", prompt])
        .args(["--root", root.path().to_str().unwrap()])
        .args(["--state", root.path().join("state.json").to_str().unwrap()])
        .args(extra)
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    Run { output, root }
}

const CALL_AS_TEXT: &str = r#"{"name": "read_file", "arguments": {"path": "todo.txt"}}"#;

#[tokio::test]
async fn exit_0_when_the_run_completes_and_calls_written_as_text_run_by_default() {
    let server = server(&[(CALL_AS_TEXT, "stop"), ("Buy milk.", "stop")]).await;
    let run = run(&server, &[]);
    assert_eq!(run.code(), Some(0), "{}\n{}", run.stdout(), run.stderr());
    let stdout = run.stdout();
    // The trace says the call was recovered from text (the server is on 127.0.0.1: a local
    // server, so recovery is on by default), and so does the saved state (its id).
    assert!(
        stdout.contains("-> read_file({\"path\":\"todo.txt\"}) (from text)"),
        "{stdout}"
    );
    assert!(stdout.contains("assistant: Buy milk."), "{stdout}");
    assert!(run.saved().contains("\"recovered_"), "{}", run.saved());
    assert!(run.stderr().is_empty(), "{}", run.stderr());
}

/// `--show-recovered-calls as-written`: the second request shows the model its own call and
/// the result as `<tool_response>` text, with no native call; the saved state keeps the
/// native call either way. A bad value says what to give.
#[tokio::test]
async fn show_recovered_calls_as_written_sends_the_call_back_as_the_model_wrote_it() {
    let server = server(&[(CALL_AS_TEXT, "stop"), ("Buy milk.", "stop")]).await;
    let run = run(&server, &["--show-recovered-calls", "as-written"]);
    assert_eq!(run.code(), Some(0), "{}\n{}", run.stdout(), run.stderr());
    assert!(run.saved().contains("\"recovered_"), "{}", run.saved());
    let requests = model_requests(&server).await;
    let second: serde_json::Value = serde_json::from_slice(&requests[1].body).unwrap();
    let messages = second["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages.iter().filter_map(|m| m["role"].as_str()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"], "{second:#}");
    assert!(
        messages.iter().all(|m| m.get("tool_calls").is_none()),
        "{second:#}"
    );
    let written = messages[2]["content"].as_str().unwrap();
    assert!(written.contains("\"name\": \"read_file\""), "{written}");
    assert_eq!(
        messages[3]["content"].as_str(),
        Some("<tool_response>\n     1\tbuy milk\n</tool_response>")
    );

    let bad = run_prompt(&server, "Hi", &["--show-recovered-calls", "text"]);
    assert_eq!(bad.code(), Some(2), "{}", bad.stderr());
    assert!(
        bad.stderr().contains("native, as-written"),
        "{}",
        bad.stderr()
    );
}

/// Issue 32: a small model answered questions about a file without opening it. The answer
/// is set aside, the person sees that it was, and the call the model makes next runs.
#[tokio::test]
async fn an_answer_about_a_file_given_without_looking_is_set_aside_and_the_file_is_read() {
    let server = server(&[
        ("It says: buy eggs.", "stop"),
        (CALL_AS_TEXT, "stop"),
        ("It says: buy milk.", "stop"),
    ])
    .await;
    let run = run_prompt(&server, "What does todo.txt say?", &[]);
    assert_eq!(run.code(), Some(0), "{}\n{}", run.stdout(), run.stderr());
    let stdout = run.stdout();
    assert!(
        stdout.contains(
            "not the answer (the model answered about a file without looking at it): asking again"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("-> read_file("), "{stdout}");
    assert!(stdout.contains("assistant: It says: buy milk."), "{stdout}");
}

/// The same, when the reply to the nudge makes no call (the 1.5B model wrote "The file ...
/// contains the line: ..." having read nothing): it is dropped, the person is told so, and the
/// first reply is the answer.
#[tokio::test]
async fn a_reply_to_the_nudge_without_a_call_is_dropped_and_the_first_reply_stands() {
    let server = server(&[
        ("It says: buy eggs.", "stop"),
        ("The file todo.txt contains the line: eggs.", "stop"),
    ])
    .await;
    let run = run_prompt(&server, "What does todo.txt say?", &[]);
    assert_eq!(run.code(), Some(0), "{}\n{}", run.stdout(), run.stderr());
    let stdout = run.stdout();
    assert!(
        stdout
            .contains("dropped (the reply to the nudge made no call): the reply before it stands"),
        "{stdout}"
    );
    assert!(stdout.contains("assistant: It says: buy eggs."), "{stdout}");
    assert!(!stdout.contains("assistant: The file"), "{stdout}");
}

#[tokio::test]
async fn no_recover_tool_calls_keeps_the_text_as_the_answer() {
    let server = server(&[(CALL_AS_TEXT, "stop")]).await;
    let run = run(&server, &["--no-recover-tool-calls"]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert!(!run.stdout().contains("-> read_file("), "{}", run.stdout());
    assert!(
        run.stdout().contains("assistant: {\"name\""),
        "{}",
        run.stdout()
    );
}

#[tokio::test]
async fn a_definition_can_turn_recovery_off() {
    let server = server(&[(CALL_AS_TEXT, "stop")]).await;
    let dir = tempfile::tempdir().unwrap();
    let definition = dir.path().join("agent.yaml");
    std::fs::write(
        &definition,
        format!(
            "version: 1\nid: t\nname: T\ndescription: test\nsystem_prompt: Be brief.\n\
             llm: {{ provider: openai, model: mock, base_url: \"{}/v1\", recover_tool_calls: false }}\n\
             capabilities: [files]\n",
            server.uri()
        ),
    )
    .unwrap();
    let run = run(&server, &["--definition", definition.to_str().unwrap()]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert!(!run.stdout().contains("-> read_file("), "{}", run.stdout());
}

#[tokio::test]
async fn exit_1_with_one_line_when_the_error_policy_stops_the_run() {
    // A plain answer cut at the token limit is a model error; the policy stops on it.
    let server = server(&[("It is a lis", "length")]).await;
    let run = run(&server, &[]);
    assert_eq!(run.code(), Some(1), "{}", run.stdout());
    let stderr = run.stderr();
    let error_lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(error_lines.len(), 1, "{stderr}");
    assert!(error_lines[0].contains("stop reason: error"), "{stderr}");
    assert!(error_lines[0].contains("token limit"), "{stderr}");
    // The conversation is saved all the same.
    assert!(
        run.saved().contains("\"status\": \"failed\""),
        "{}",
        run.saved()
    );
}

#[tokio::test]
async fn exit_1_when_the_model_replies_empty_twice() {
    let server = server(&[("", "stop")]).await;
    let run = run(&server, &[]);
    assert_eq!(run.code(), Some(1), "{}", run.stdout());
    assert!(
        run.stderr().contains("stop reason: empty_response"),
        "{}",
        run.stderr()
    );
    let requests = model_requests(&server).await;
    // The reply, one retry with a nudge, then the answer-on-stop synthesis (without tools),
    // which is empty too, so a notice is saved as the answer.
    assert_eq!(
        requests.len(),
        3,
        "one retry with a nudge, then the synthesis"
    );
    let synthesis: serde_json::Value = requests[2].body_json().unwrap();
    assert!(synthesis.get("tools").is_none(), "{synthesis}");
    let saved = run.saved();
    assert!(saved.contains("empty_response"));
    assert!(saved.contains("I could not finish this task"), "{saved}");
    assert!(saved.contains("\"incomplete\": true"), "{saved}");
}

#[tokio::test]
async fn a_reply_cut_at_the_token_limit_is_a_warning_and_its_complete_call_runs() {
    let server = server(&[(CALL_AS_TEXT, "length"), ("Buy milk.", "stop")]).await;
    let run = run(&server, &[]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert!(
        run.stderr().contains("warning: the model's reply was cut"),
        "{}",
        run.stderr()
    );
    assert!(run.stdout().contains("<- read_file:"), "{}", run.stdout());
}

#[test]
fn exit_2_for_bad_usage_or_configuration() {
    let unknown_flag = agents().args(["run", "--no-such-flag"]).output().unwrap();
    assert_eq!(unknown_flag.status.code(), Some(2));

    let no_model = agents()
        .args(["run", "--prompt", "hi"])
        .env_remove("OPENAI_MODEL")
        .output()
        .unwrap();
    assert_eq!(no_model.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&no_model.stderr).contains("no model"));

    let dir = tempfile::tempdir().unwrap();
    let state_file = dir.path().join("broken.json");
    std::fs::write(&state_file, "{\"version\": 1, \"agent_id\": 42}").unwrap();
    let corrupt = agents()
        .args(["run", "--base-url", "http://127.0.0.1:9", "--model", "m"])
        .args(["--prompt", "hi", "--state", state_file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(corrupt.status.code(), Some(2));

    let missing_definition = agents()
        .args([
            "run",
            "--prompt",
            "hi",
            "--definition",
            "/nonexistent/agent.yaml",
        ])
        .output()
        .unwrap();
    assert_eq!(missing_definition.status.code(), Some(2));
}

#[test]
fn run_help_documents_the_exit_codes() {
    let help = agents().args(["run", "--help"]).output().unwrap();
    let text = String::from_utf8_lossy(&help.stdout);
    for needle in [
        "Exit codes:",
        "0    the run completed",
        "1    the run failed",
        "2    bad usage",
        "3    waiting for approval",
        "130  cancelled",
    ] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
    assert!(text.contains("--no-recover-tool-calls"), "{text}");
}

/// The requests `server` received for the model (the `GET /props` that `agents` sends a
/// local server to learn its context size aside).
async fn model_requests(server: &MockServer) -> Vec<wiremock::Request> {
    let mut requests = server.received_requests().await.unwrap();
    requests.retain(|request| request.method.as_str() == "POST");
    requests
}
