//! The `agents` binary against hostile or broken input: state files that are huge, not files,
//! or world-readable; replies full of terminal escape sequences; secrets in the environment of
//! bash commands.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn completion(message: serde_json::Value, finish: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "mock",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}
    }))
}

/// `agents run` against `base_url` in `root`, with `extra` arguments.
fn agents_run(base_url: &str, root: &Path, extra: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agents"));
    command
        .args(["run", "--base-url", base_url, "--model", "mock"])
        .args(["--root", root.to_str().unwrap(), "--prompt", "go"])
        .args(extra)
        .env_remove("OPENAI_API_KEY");
    command
}

/// Runs `command`, killing it if it is still running after `limit` (a hang is a failure, not
/// a stuck test run).
fn output_within(mut command: Command, limit: Duration) -> Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            panic!("`agents` still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// A server whose model first calls `tool` with `arguments`, then answers `answer`.
async fn calling_then_answering(
    tool: &str,
    arguments: serde_json::Value,
    answer: &str,
) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(completion(
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": tool, "arguments": arguments.to_string()}}]}),
            "tool_calls",
        ))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(completion(
            json!({"role": "assistant", "content": answer}),
            "stop",
        ))
        .mount(&server)
        .await;
    server
}

async fn answering(message: serde_json::Value) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(completion(message, "stop"))
        .mount(&server)
        .await;
    server
}

#[cfg(unix)]
#[tokio::test]
async fn the_state_file_is_saved_private_and_whole() {
    use std::os::unix::fs::PermissionsExt;
    let server = answering(json!({"role": "assistant", "content": "Saved."})).await;
    let root = tempfile::tempdir().unwrap();
    let state = root.path().join("conversation.json");
    let output = agents_run(
        &format!("{}/v1", server.uri()),
        root.path(),
        &["--no-bash", "--state", state.to_str().unwrap()],
    )
    .output()
    .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mode = std::fs::metadata(&state).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "mode {mode:o}");
    // Made world-readable by someone: the next save is private again.
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o644)).unwrap();
    let again = agents_run(
        &format!("{}/v1", server.uri()),
        root.path(),
        &["--no-bash", "--state", state.to_str().unwrap()],
    )
    .output()
    .unwrap();
    assert!(again.status.success());
    let mode = std::fs::metadata(&state).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "a resave keeps it private: {mode:o}");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    let messages = &saved["message_store"]["sections"][0]["messages"];
    assert_eq!(messages.as_array().map(Vec::len), Some(4), "{saved}");
    let names: Vec<String> = std::fs::read_dir(root.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        ["conversation.json"],
        "no temporary file left behind"
    );
}

#[test]
fn a_state_file_past_the_size_limit_is_refused_and_left_untouched() {
    let root = tempfile::tempdir().unwrap();
    let state = root.path().join("huge.json");
    // Sparse: 256 MiB + 1 byte without writing them.
    let file = std::fs::File::create(&state).unwrap();
    file.set_len(256 * 1024 * 1024 + 1).unwrap();
    drop(file);
    let output = output_within(
        agents_run(
            "http://127.0.0.1:9/v1",
            root.path(),
            &["--state", state.to_str().unwrap()],
        ),
        Duration::from_secs(30),
    );
    assert!(!output.status.success());
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(
        error.contains("is larger than the limit of 268435456 bytes"),
        "{error}"
    );
    assert_eq!(
        std::fs::metadata(&state).unwrap().len(),
        256 * 1024 * 1024 + 1
    );
}

#[cfg(unix)]
#[test]
fn a_state_path_that_is_a_fifo_is_refused_instead_of_blocking() {
    let root = tempfile::tempdir().unwrap();
    let fifo = root.path().join("state.fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let output = output_within(
        agents_run(
            "http://127.0.0.1:9/v1",
            root.path(),
            &["--state", fifo.to_str().unwrap()],
        ),
        Duration::from_secs(30),
    );
    assert!(!output.status.success());
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(error.contains("is not a regular file"), "{error}");
}

#[tokio::test]
async fn terminal_escape_sequences_from_the_model_and_tools_are_shown_not_executed() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(
        root.path().join("evil.txt"),
        "file says \u{1b}]0;pwned\u{7}hi",
    )
    .unwrap();
    let server = calling_then_answering(
        "read_file",
        json!({"path": "evil.txt"}),
        "\u{1b}[2J\u{1b}[31mred\u{1b}[0m\rdone",
    )
    .await;
    let output = agents_run(
        &format!("{}/v1", server.uri()),
        root.path(),
        &["--no-bash", "--transcript"],
    )
    .output()
    .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{text}");
    assert!(
        !text
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "raw control characters reached the terminal: {text:?}"
    );
    assert!(
        text.contains("assistant: \\u{1b}[2J\\u{1b}[31mred\\u{1b}[0m\\rdone"),
        "{text}"
    );
    assert!(text.contains("file says \\u{1b}]0;pwned\\u{7}hi"), "{text}");
}

#[tokio::test]
async fn bash_commands_see_no_api_key_unless_the_user_passes_it() {
    let root = tempfile::tempdir().unwrap();
    let server = calling_then_answering(
        "bash",
        json!({"command": "echo key=${OPENAI_API_KEY:-absent} listed=${MY_DEPLOY_TOKEN:-absent} other=${MY_OTHER_TOKEN:-absent}"}),
        "ok",
    )
    .await;
    let mut command = agents_run(
        &format!("{}/v1", server.uri()),
        root.path(),
        &["--bash-env", "MY_DEPLOY_TOKEN"],
    );
    command
        .env("OPENAI_API_KEY", "sk-must-not-leak")
        .env("MY_DEPLOY_TOKEN", "deploy-123")
        .env("MY_OTHER_TOKEN", "other-456");
    let output = command.output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{text}");
    assert!(
        text.contains("<- bash: key=absent listed=deploy-123 other=absent"),
        "{text}"
    );
}

/// A definition file `name.yaml` in `dir` whose `llm` section adds `setting` (`key: value`).
fn definition_with_llm_setting(dir: &Path, name: &str, setting: &str) -> PathBuf {
    let definition = dir.join(format!("{name}.yaml"));
    std::fs::write(
        &definition,
        format!(
            "version: 1\nid: {name}\nname: {name}\ndescription: d\nsystem_prompt: s\n\
             llm: {{ provider: openai, model: mock, {setting} }}\n"
        ),
    )
    .unwrap();
    definition
}

/// Asserts that 0 is refused as `flag`'s value and as the definition's `llm.<key>`.
fn zero_is_refused(root: &Path, flag: &str, key: &str) {
    let output = agents_run("http://127.0.0.1:9/v1", root, &[flag, "0"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains(flag));
    let definition = definition_with_llm_setting(root, "zero", &format!("{key}: 0"));
    let output = Command::new(env!("CARGO_BIN_EXE_agents"))
        .args(["check", definition.to_str().unwrap()])
        .output()
        .unwrap();
    let shown = printed(&output);
    assert!(!output.status.success(), "{shown}");
    assert!(
        shown.contains(&format!("`llm.{key}`: must be greater than 0")),
        "{shown}"
    );
}

/// What `agents` printed, stdout then stderr.
fn printed(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A model server on 127.0.0.1 that answers after `delay`.
async fn answering_after(delay: Duration) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(
            completion(
                json!({"role": "assistant", "content": "Slow but sure."}),
                "stop",
            )
            .set_delay(delay),
        )
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn a_request_timeout_from_the_flag_or_the_definition_cuts_a_slow_model_request() {
    let root = tempfile::tempdir().unwrap();
    let definition = definition_with_llm_setting(root.path(), "slow", "request_timeout_sec: 1");
    let definition = definition.to_str().unwrap();
    // The requests each case sends, every one cut at one second: the provider makes three
    // attempts per step; the flags' agent retries a failed step three times, a definition
    // that names no error policy stops at the first; a step limit of one leaves no room for
    // the retry, and the run fails all the same (it used to end "completed", exit 0).
    let cases: [(&[&str], usize); 3] = [
        (&["--request-timeout", "1"], 12),
        (&["--definition", definition], 3),
        (&["--request-timeout", "1", "--max-steps", "1"], 3),
    ];
    // They run at once, each against its own server, which answers after 1.5 s.
    let mut running = Vec::new();
    for (extra, requests) in cases {
        let server = answering_after(Duration::from_millis(1500)).await;
        let mut command = agents_run(&format!("{}/v1", server.uri()), root.path(), extra);
        command.args(["--answer-on-stop", "nothing"]);
        let child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        running.push((extra, requests, server, child));
    }
    for (extra, requests, server, child) in running {
        let output = child.wait_with_output().unwrap();
        let shown = printed(&output);
        assert!(!output.status.success(), "{extra:?}: {shown}");
        assert!(shown.contains("timed out after 1.0s"), "{extra:?}: {shown}");
        assert!(!shown.contains("Slow but sure."), "{extra:?}: {shown}");
        let sent = model_requests(&server).await.len();
        assert_eq!(sent, requests, "{extra:?}: {shown}");
    }
    // Without either, a server on 127.0.0.1 has minutes, and the answer arrives.
    let server = answering_after(Duration::from_millis(1500)).await;
    let output = output_within(
        agents_run(&format!("{}/v1", server.uri()), root.path(), &[]),
        Duration::from_secs(60),
    );
    let shown = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{shown}");
    assert!(shown.contains("Slow but sure."), "{shown}");
}

#[test]
fn a_request_timeout_of_zero_is_refused_by_the_flag_and_the_definition() {
    let root = tempfile::tempdir().unwrap();
    zero_is_refused(root.path(), "--request-timeout", "request_timeout_sec");
}

#[tokio::test]
async fn a_context_window_from_the_flag_the_definition_or_llama_server_bounds_a_read() {
    let root = tempfile::tempdir().unwrap();
    let log: String = (1..=600)
        .map(|i| format!("2026-11-29 10:00:00 INFO request {i} served\n"))
        .collect();
    std::fs::write(root.path().join("server.log"), log).unwrap();
    let definition = definition_with_llm_setting(root.path(), "small", "context_window: 8000");
    // The flag, the definition, or nothing given to a server that says it serves 8,000
    // tokens (llama-server's `GET /props`).
    let cases: [&[&str]; 3] = [
        &["--context-window", "8000"],
        &["--definition", definition.to_str().unwrap()],
        &[],
    ];
    for extra in cases {
        let server =
            calling_then_answering("read_file", json!({"path": "server.log"}), "Read it.").await;
        let props = json!({"default_generation_settings": {"n_ctx": 8000}, "total_slots": 1});
        Mock::given(method("GET"))
            .and(path("/props"))
            .respond_with(ResponseTemplate::new(200).set_body_json(props))
            .mount(&server)
            .await;
        let output = output_within(
            agents_run(&format!("{}/v1", server.uri()), root.path(), extra),
            Duration::from_secs(60),
        );
        assert!(output.status.success(), "{extra:?}: {}", printed(&output));
        let requests = model_requests(&server).await;
        let body: serde_json::Value = serde_json::from_slice(&requests[1].body).unwrap();
        let result = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|message| message["role"] == "tool")
            .and_then(|message| message["content"].as_str())
            .unwrap()
            .to_owned();
        // An 8,000-token window: 2,000 characters, whole lines, and how to go on.
        assert!(result.chars().count() <= 2_000, "{extra:?}: {result}");
        assert!(result.contains("     1\t2026-11-29"), "{extra:?}: {result}");
        assert!(
            result.ends_with(
                "or find the lines you need with search_files (a word as pattern, this file as \
                 path))"
            ),
            "{extra:?}: {result}"
        );
    }
    zero_is_refused(root.path(), "--context-window", "context_window");
}

/// The requests `server` received for the model (the `GET /props` that `agents` sends a
/// local server to learn its context size aside).
async fn model_requests(server: &MockServer) -> Vec<wiremock::Request> {
    let mut requests = server.received_requests().await.unwrap();
    requests.retain(|request| request.method.as_str() == "POST");
    requests
}
