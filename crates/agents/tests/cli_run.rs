//! `agents run` as scripts and people meet it: the answer printed once, an answer on every
//! stop (`--answer-on-stop`, `execution.answer_on_stop`), `--output json`, and Ctrl-C
//! (SIGINT) cancelling a run, saving it and exiting 130.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

fn agents() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agents"));
    command.env_remove("OPENAI_API_KEY");
    command
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn completion(message: Value, finish: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "mock",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60,
                  "prompt_tokens_details": {"cached_tokens": 20}}
    }))
}

fn tool_call(name: &str, arguments: Value) -> ResponseTemplate {
    completion(
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1",
            "type": "function", "function": {"name": name, "arguments": arguments.to_string()}}]}),
        "tool_calls",
    )
}

/// Reads `todo.txt` when the last message is the user's, answers after a tool result; a
/// prompt with "loop" only ever calls tools; with "slow", a slow bash command.
struct Scripted;

impl Respond for Scripted {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let messages = body["messages"].as_array().unwrap();
        let first_user = messages
            .iter()
            .find(|m| m["role"] == "user")
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_owned();
        let last = messages.last().unwrap();
        if first_user.contains("slow") {
            return tool_call("bash", json!({"command": "sleep 30; echo finished"}));
        }
        if first_user.contains("loop") && body.get("tools").is_some() {
            return tool_call("list_dir", json!({"path": "."}));
        }
        if last["role"] == "tool" || first_user.contains("loop") {
            return completion(
                json!({"role": "assistant", "content": "You need to buy milk."}),
                "stop",
            );
        }
        tool_call("read_file", json!({"path": "todo.txt"}))
    }
}

async fn server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(Scripted)
        .mount(&server)
        .await;
    server
}

fn run(server: &MockServer, root: &std::path::Path, extra: &[&str]) -> Command {
    let mut command = agents();
    command
        .args(["run", "--base-url", &format!("{}/v1", server.uri())])
        .args(["--model", "mock", "--root"])
        .arg(root)
        .args(extra);
    command
}

#[tokio::test]
async fn the_answer_is_printed_once_and_the_usage_line_is_labelled() {
    let server = server().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("todo.txt"), "buy milk\n").unwrap();
    let output = run(
        &server,
        dir.path(),
        &["--no-bash", "-p", "What is on my list?"],
    )
    .output()
    .unwrap();
    let out = text(&output);
    assert!(output.status.success(), "{out}");
    assert_eq!(out.matches("You need to buy milk.").count(), 1, "{out}");
    assert!(
        out.contains(
            "[Completed] 2 step(s); tokens: input 60, cached input 40, output 20, total 120; unknown price"
        ),
        "{out}"
    );
    assert!(
        !out.contains("waiting for the model"),
        "no spinner when stderr is not a terminal: {out}"
    );
}

#[tokio::test]
async fn answer_on_stop_from_the_flag_and_from_the_definition() {
    let server = server().await;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let base = [
        "--no-bash",
        "--max-steps",
        "2",
        "--legacy",
        "-p",
        "loop forever",
    ];

    // legacy mode's default is nothing: no answer at all
    let output = run(&server, dir.path(), &base).output().unwrap();
    let out = text(&output);
    assert_eq!(
        output.status.code(),
        Some(0),
        "a step limit is not a failure: {out}"
    );
    assert!(!out.contains("assistant:"), "{out}");

    // --answer-on-stop notice: a plain note, printed once, saved with its metadata
    let output = run(&server, dir.path(), &base)
        .args(["--answer-on-stop", "notice", "--state"])
        .arg(&state)
        .output()
        .unwrap();
    let out = text(&output);
    assert_eq!(
        output.status.code(),
        Some(0),
        "a step limit is not a failure: {out}"
    );
    assert_eq!(
        out.matches("assistant: I could not finish this task")
            .count(),
        1,
        "{out}"
    );
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert!(
        saved.to_string().contains(r#""incomplete":true"#),
        "{saved}"
    );

    // synthesize: one more model call, without tools, answers
    let output = run(&server, dir.path(), &base)
        .args(["--answer-on-stop", "synthesize"])
        .output()
        .unwrap();
    let out = text(&output);
    assert_eq!(
        out.matches("assistant: You need to buy milk.").count(),
        1,
        "{out}"
    );

    // the same from a definition file
    let definition = dir.path().join("agent.yaml");
    std::fs::write(
        &definition,
        "version: 1\nid: a\nname: A\ndescription: d\nsystem_prompt: p\n\
         llm: {provider: openai, model: mock}\n\
         execution: {max_steps: 2, trace: legacy, answer_on_stop: notice}\ncapabilities: [files]\n",
    )
    .unwrap();
    let output = run(&server, dir.path(), &["-p", "loop forever", "--definition"])
        .arg(&definition)
        .output()
        .unwrap();
    let out = text(&output);
    assert!(
        out.contains("assistant: I could not finish this task"),
        "{out}"
    );

    let output = run(&server, dir.path(), &base)
        .args(["--answer-on-stop", "sometimes"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output).contains("`sometimes` is not one of synthesize, notice, nothing"),
        "{}",
        text(&output)
    );
}

#[tokio::test]
async fn output_json_is_one_object_for_scripts() {
    let server = server().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("todo.txt"), "buy milk\n").unwrap();
    let output = run(
        &server,
        dir.path(),
        &["--no-bash", "--output", "json", "-p", "What is on my list?"],
    )
    .output()
    .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let stdout = String::from_utf8(output.stdout).unwrap();
    let object: Value = serde_json::from_str(&stdout).expect("stdout is exactly one JSON object");
    insta::assert_json_snapshot!("run_output_json", object);
}

/// Spawns `agents run`, waits until its output shows `marker`, and returns it with what it
/// printed so far (collected as it runs).
fn spawn_until(mut command: Command, marker: &str) -> (std::process::Child, Arc<Mutex<String>>) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let seen = Arc::new(Mutex::new(String::new()));
    for mut pipe in [
        Box::new(child.stdout.take().unwrap()) as Box<dyn Read + Send>,
        Box::new(child.stderr.take().unwrap()),
    ] {
        let seen = Arc::clone(&seen);
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                seen.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buffer[..n]));
            }
        });
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while !seen.lock().unwrap().contains(marker) {
        assert!(
            Instant::now() < deadline,
            "`{marker}` never appeared: {}",
            seen.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    (child, seen)
}

fn interrupt(child: &std::process::Child) {
    let pid = rustix::process::Pid::from_raw(i32::try_from(child.id()).unwrap()).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
}

fn wait(child: &mut std::process::Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("agents run did not exit after SIGINT");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test]
async fn sigint_cancels_the_run_saves_the_conversation_and_exits_130() {
    let server = server().await;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let mut command = run(&server, dir.path(), &["-p", "something slow", "--state"]);
    command.arg(&state);
    let (mut child, seen) = spawn_until(command, "-> bash(");
    interrupt(&child);
    let status = wait(&mut child);
    std::thread::sleep(Duration::from_millis(100));
    let out = seen.lock().unwrap().clone();
    assert_eq!(status.code(), Some(130), "{out}");
    assert_eq!(
        out.matches("assistant: I could not finish this task")
            .count(),
        1,
        "{out}"
    );
    assert!(out.contains("cancelled with Ctrl-C"), "{out}");
    let saved = std::fs::read_to_string(&state).unwrap();
    let saved_state = agents::prelude::AgentState::from_json(&saved).unwrap();
    assert_eq!(
        saved_state.stop_reason(),
        Some(agents::prelude::StopReason::UserRequested)
    );
    // separated mode: the question and the notice persist; no dangling tool call
    let transcript = saved_state.messages().to_transcript();
    assert!(transcript.contains("something slow"), "{transcript}");
    assert!(transcript.contains("could not finish"), "{transcript}");
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&state).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

#[tokio::test]
async fn sigint_cancels_a_session_run_which_stays_committed() {
    let server = server().await;
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("s.db").display());
    let mut command = run(
        &server,
        dir.path(),
        &["-p", "something slow", "--session", "s1", "--db", &db],
    );
    command.arg("--quiet");
    let (mut child, seen) = spawn_until(command, "-> bash(");
    interrupt(&child);
    let status = wait(&mut child);
    assert_eq!(status.code(), Some(130), "{}", seen.lock().unwrap());
    let export = agents()
        .args(["sessions", "export", "s1", "--db", &db])
        .output()
        .unwrap();
    let exported = String::from_utf8_lossy(&export.stdout);
    assert!(exported.contains("user_requested"), "{exported}");
}
