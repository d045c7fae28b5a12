//! One runner per session, as a user meets it in the `agents` CLI against a mock
//! OpenAI-compatible server whose model runs one bash command and then answers: a second
//! `agents run --session` (and `agents approve`) on a session in use exits 4 naming the
//! holder, `--wait` waits for it; SIGTERM finishes and commits the step in progress and
//! exits 143, `--resume` finishes the run; SIGKILL leaves no bash process running, and
//! `--resume` takes the dead runner's session at once and tells the model the interrupted
//! call may or may not have taken effect instead of running it again.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

fn agents() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agents"))
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
        "id": "c", "object": "chat.completion", "model": "mock",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}
    }))
}

/// Runs `command` with bash (call id `call_b`) until it sees a tool result, then answers
/// "done".
async fn model(command: String) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(move |request: &Request| {
            let body: Value = serde_json::from_slice(&request.body).unwrap();
            let answered = body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m["role"] == "tool");
            if answered {
                completion(json!({"role": "assistant", "content": "done"}), "stop")
            } else {
                let arguments = json!({ "command": command }).to_string();
                completion(
                    json!({"role": "assistant", "content": null, "tool_calls": [{
                        "id": "call_b", "type": "function",
                        "function": {"name": "bash", "arguments": arguments}}]}),
                    "tool_calls",
                )
            }
        })
        .mount(&server)
        .await;
    server
}

fn session_args(server: &MockServer, dir: &Path) -> Vec<String> {
    vec![
        "run".into(),
        "--base-url".into(),
        format!("{}/v1", server.uri()),
        "--model".into(),
        "mock".into(),
        "--root".into(),
        dir.display().to_string(),
        "--session".into(),
        "s1".into(),
        "--db".into(),
        format!("sqlite://{}", dir.join("sessions.db").display()),
        "--quiet".into(),
    ]
}

fn start(args: &[String], extra: &[&str]) -> Child {
    agents()
        .args(args)
        .args(extra)
        .env("OPENAI_API_KEY", "test")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn run(args: &[String], extra: &[&str]) -> Output {
    start(args, extra).wait_with_output().unwrap()
}

fn wait_for(file: &Path, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !file.exists() || std::fs::read_to_string(file).unwrap_or_default().is_empty() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn lines(file: &Path) -> usize {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .count()
}

fn signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Whether `pid` is a live process (not a zombie).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.starts_with(" Z"))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_runner_exits_4_naming_the_holder_and_waits_with_wait() {
    let dir = tempfile::tempdir().unwrap();
    let counter = dir.path().join("counter");
    let started = dir.path().join("started");
    let server = model(format!(
        "echo x >> {}; echo go > {}; sleep 3",
        counter.display(),
        started.display()
    ))
    .await;
    let args = session_args(&server, dir.path());
    let first = start(&args, &["--prompt", "count"]);
    let holder = first.id();
    wait_for(&started, "the first runner's bash call");

    let second = run(&args, &["--resume"]);
    assert_eq!(second.status.code(), Some(4), "{}", text(&second));
    let said = text(&second);
    assert!(
        said.contains(&format!(
            "session s1 is being run by another process (pid {holder} on "
        )),
        "{said}"
    );
    let mut approve = vec!["approve".to_owned()];
    approve.extend(["--session", "s1", "call_b", "--db"].map(str::to_owned));
    approve.push(format!(
        "sqlite://{}",
        dir.path().join("sessions.db").display()
    ));
    let refused = agents().args(&approve).output().unwrap();
    assert_eq!(refused.status.code(), Some(4), "{}", text(&refused));
    assert!(
        text(&refused).contains("is being run by another process"),
        "{}",
        text(&refused)
    );

    let waited = run(&args, &["--resume", "--wait"]);
    assert_eq!(waited.status.code(), Some(0), "{}", text(&waited));
    assert!(
        text(&waited).contains("waiting for it (--wait)"),
        "{}",
        text(&waited)
    );
    assert!(
        text(&waited).contains("assistant: done"),
        "{}",
        text(&waited)
    );
    let first = first.wait_with_output().unwrap();
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    assert_eq!(lines(&counter), 1, "the command ran once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_commits_the_step_in_progress_and_resume_finishes_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let counter = dir.path().join("counter");
    let started = dir.path().join("started");
    let server = model(format!(
        "echo go > {}; sleep 1; echo x >> {}",
        started.display(),
        counter.display()
    ))
    .await;
    let args = session_args(&server, dir.path());
    let runner = start(&args, &["--prompt", "count"]);
    wait_for(&started, "the bash call");
    signal(runner.id(), "-TERM");
    let stopped = runner.wait_with_output().unwrap();
    assert_eq!(stopped.status.code(), Some(143), "{}", text(&stopped));
    assert!(
        text(&stopped).contains(
            "stopped by SIGTERM after committing the step in progress; continue with `agents \
             run --session s1 --resume`"
        ),
        "{}",
        text(&stopped)
    );
    assert_eq!(lines(&counter), 1, "the step in progress finished");

    let resumed = run(&args, &["--resume"]);
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed));
    assert!(
        text(&resumed).contains("assistant: done"),
        "{}",
        text(&resumed)
    );
    assert_eq!(lines(&counter), 1, "the finished call did not run again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_leaves_no_bash_process_behind() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let server = model(format!(
        "sleep 300 & echo \"$$ $!\" > {}; sleep 300",
        pids.display()
    ))
    .await;
    let args = session_args(&server, dir.path());
    let mut runner = start(&args, &["--prompt", "wait"]);
    wait_for(&pids, "the bash call");
    let children: Vec<u32> = std::fs::read_to_string(&pids)
        .unwrap()
        .split_whitespace()
        .map(|pid| pid.parse().unwrap())
        .collect();
    assert_eq!(children.len(), 2);
    assert!(children.iter().all(|&pid| alive(pid)));
    runner.kill().unwrap();
    runner.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while children.iter().any(|&pid| alive(pid)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<u32> = children.into_iter().filter(|&pid| alive(pid)).collect();
    for pid in &left {
        signal(*pid, "-KILL");
    }
    assert!(
        left.is_empty(),
        "still running after the agent was killed: {left:?}"
    );
}
