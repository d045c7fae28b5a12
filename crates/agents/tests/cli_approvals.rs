//! Human approval in the `agents` CLI as a user meets it, against a mock OpenAI-compatible
//! server: a `--session` run that needs a decision exits 3 and prints the waiting call,
//! `agents approve` / `agents reject` decide in another process, `agents run --resume`
//! continues; and the interactive prompt, driven through a pseudo-terminal (`script`).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

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

/// Asks to write `notes.txt` until it sees a tool result, then answers with that result.
async fn model() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(|request: &Request| {
            let body: Value = serde_json::from_slice(&request.body).unwrap();
            let results: Vec<String> = body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["role"] == "tool")
                .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
                .collect();
            match results.last() {
                // An error told in the model's own words (a pasted error is not an answer).
                Some(result) if result.starts_with("Error:") => completion(
                    json!({"role": "assistant", "content": "The call did not run."}),
                    "stop",
                ),
                Some(result) => completion(
                    json!({"role": "assistant", "content": format!("tool said: {result}")}),
                    "stop",
                ),
                None => completion(
                    json!({"role": "assistant", "content": null, "tool_calls": [{
                        "id": "call_w", "type": "function",
                        "function": {"name": "write_file",
                                     "arguments": "{\"path\":\"notes.txt\",\"content\":\"hi\"}"}}]}),
                    "tool_calls",
                ),
            }
        })
        .mount(&server)
        .await;
    server
}

fn run_args(server: &MockServer, root: &Path) -> Vec<String> {
    vec![
        "run".into(),
        "--base-url".into(),
        format!("{}/v1", server.uri()),
        "--model".into(),
        "mock".into(),
        "--no-bash".into(),
        "--root".into(),
        root.display().to_string(),
        "--require-approval".into(),
        "write_file".into(),
    ]
}

#[tokio::test]
async fn a_session_run_waits_with_exit_code_3_and_resumes_after_a_decision_elsewhere() {
    let server = model().await;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("work");
    std::fs::create_dir(&root).unwrap();
    let db = format!("sqlite://{}", dir.path().join("s.db").display());
    let session = ["--session", "job", "--db", &db];

    let first = agents()
        .args(run_args(&server, &root))
        .args(session)
        .args(["--prompt", "write the notes"])
        .stdin(Stdio::null())
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let out = text(&first);
    assert_eq!(first.status.code(), Some(3), "{out}");
    assert!(out.contains("waiting for approval"), "{out}");
    assert!(
        out.contains("call_w") && out.contains("write_file"),
        "{out}"
    );
    assert!(
        !root.join("notes.txt").exists(),
        "nothing ran before the decision"
    );

    // Edited arguments that do not fit the tool are refused; the right ones are recorded.
    let bad = agents()
        .args(["approve", "--session", "job", "--db", &db, "call_w"])
        .args(["--with", r#"{"path": 3}"#])
        .output()
        .unwrap();
    assert!(!bad.status.success(), "{}", text(&bad));
    assert!(text(&bad).contains("call_w"), "{}", text(&bad));
    let approve = agents()
        .args(["approve", "--session", "job", "--db", &db, "call_w"])
        .args(["--with", r#"{"path": "notes.txt", "content": "edited"}"#])
        .output()
        .unwrap();
    assert!(approve.status.success(), "{}", text(&approve));
    assert!(text(&approve).contains("--resume"), "{}", text(&approve));
    let twice = agents()
        .args([
            "reject",
            "--session",
            "job",
            "--db",
            &db,
            "call_w",
            "--reason",
            "no",
        ])
        .output()
        .unwrap();
    assert!(!twice.status.success());
    assert!(text(&twice).contains("already decided"), "{}", text(&twice));

    let resumed = agents()
        .args(run_args(&server, &root))
        .args(session)
        .arg("--resume")
        .stdin(Stdio::null())
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let out = text(&resumed);
    assert!(resumed.status.success(), "{out}");
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "edited"
    );
    assert!(out.contains("assistant: tool said:"), "{out}");
}

#[tokio::test]
async fn a_non_interactive_run_decides_by_approve_or_rejects() {
    let server = model().await;
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        agents()
            .args(run_args(&server, dir.path()))
            .args(extra)
            .args(["--prompt", "write the notes"])
            .stdin(Stdio::null())
            .env_remove("OPENAI_API_KEY")
            .output()
            .unwrap()
    };
    let rejected = run(&[]);
    assert!(rejected.status.success(), "{}", text(&rejected));
    assert!(
        text(&rejected).contains("did not approve"),
        "{}",
        text(&rejected)
    );
    assert!(!dir.path().join("notes.txt").exists());

    let approved = run(&["--approve", "write_file"]);
    assert!(approved.status.success(), "{}", text(&approved));
    // The answer of the resumed run is printed once (it was printed twice).
    assert_eq!(
        text(&approved).matches("assistant: ").count(),
        1,
        "{}",
        text(&approved)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "hi"
    );
}

#[tokio::test]
async fn the_interactive_prompt_asks_on_a_terminal() {
    let server = model().await;
    let dir = tempfile::tempdir().unwrap();
    // `script` gives the CLI a pseudo-terminal as stdin and forwards ours into it.
    let command = std::iter::once(env!("CARGO_BIN_EXE_agents").to_owned())
        .chain(run_args(&server, dir.path()))
        .chain(["--prompt".into(), "'write the notes'".into()])
        .collect::<Vec<_>>()
        .join(" ");
    let mut child = Command::new("script")
        .args(["-qfec", &command, "/dev/null"])
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Answer "no" with a reason once the prompt is there (the pty buffers the input).
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"n\nnot in this folder\n").unwrap();
    let output = child.wait_with_output().unwrap();
    drop(stdin);
    let out = text(&output);
    assert!(
        out.contains("Allow write_file (call call_w, fingerprint ")
            && out.contains("  content: hi")
            && out.contains("[y]es / [n]o / [e]dit / [a]lways for this tool"),
        "{out}"
    );
    assert!(out.contains("not in this folder"), "{out}");
    assert!(!dir.path().join("notes.txt").exists(), "{out}");
}

/// A model that writes a long file whose middle holds what a person should see before saying
/// yes (the hidden tail of a command ran after `y` when prompts cut arguments at 200 characters).
async fn long_write_model(content: &str) -> MockServer {
    let server = MockServer::start().await;
    let arguments = json!({"path": "notes.txt", "content": content}).to_string();
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(move |request: &Request| {
            let body: Value = serde_json::from_slice(&request.body).unwrap();
            if body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m["role"] == "tool")
            {
                completion(json!({"role": "assistant", "content": "written"}), "stop")
            } else {
                completion(
                    json!({"role": "assistant", "content": null, "tool_calls": [{
                        "id": "call_w", "type": "function",
                        "function": {"name": "write_file", "arguments": arguments}}]}),
                    "tool_calls",
                )
            }
        })
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn a_long_argument_shows_head_and_tail_and_yes_waits_until_all_of_it_was_viewed() {
    let content = format!(
        "line one\nline two\n{}\nrm -rf ~ # HIDDEN-MIDDLE\n{}\nlast line",
        "a".repeat(2000),
        "b".repeat(2000)
    );
    let server = long_write_model(&content).await;
    let dir = tempfile::tempdir().unwrap();
    let command = std::iter::once(env!("CARGO_BIN_EXE_agents").to_owned())
        .chain(run_args(&server, dir.path()))
        .chain(["--prompt".into(), "'write the notes'".into()])
        .collect::<Vec<_>>()
        .join(" ");
    let mut child = Command::new("script")
        .args(["-qfec", &command, "/dev/null"])
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"y\nv\ny\n").unwrap();
    let output = child.wait_with_output().unwrap();
    drop(stdin);
    let out = text(&output).replace("\r\n", "\n");
    // Real line breaks, the head and the tail, and how much is hidden.
    assert!(out.contains("  content: line one\n    line two\n"), "{out}");
    assert!(out.contains("characters hidden, [v]iew all"), "{out}");
    assert!(out.contains("last line"), "{out}");
    let refused = out
        .find("part of the arguments is hidden: [v]iew all of them first")
        .expect("the first y is refused");
    let shown = out.find("HIDDEN-MIDDLE").expect("the middle is shown on v");
    assert!(refused < shown, "{out}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        content,
        "the second y approved the call: {out}"
    );
}

/// Calls write_file as call_w: "hi" for the first message, "evil" once a second one arrives.
async fn swapping_model() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(|request: &Request| {
            let body: Value = serde_json::from_slice(&request.body).unwrap();
            let messages = body["messages"].as_array().unwrap();
            let last = messages.last().unwrap();
            if last["role"] == "tool" {
                return completion(json!({"role": "assistant", "content": "done"}), "stop");
            }
            let content = if last["content"].as_str().unwrap_or_default().contains("second") {
                "evil"
            } else {
                "hi"
            };
            completion(
                json!({"role": "assistant", "content": null, "tool_calls": [{
                    "id": "call_w", "type": "function",
                    "function": {"name": "write_file",
                                 "arguments": json!({"path": "notes.txt", "content": content}).to_string()}}]}),
                "tool_calls",
            )
        })
        .mount(&server)
        .await;
    server
}

/// The `ID@FINGERPRINT` of the (last) waiting call in an exit-3 report.
fn waiting_call(report: &str) -> (String, String) {
    let line = report
        .lines()
        .rfind(|l| l.starts_with("  ") && l.contains("  write_file"))
        .unwrap_or_else(|| panic!("no waiting call in {report}"));
    let (id, fingerprint) = line
        .split_whitespace()
        .next()
        .unwrap()
        .rsplit_once('@')
        .unwrap();
    assert_eq!(fingerprint.len(), 12, "{line}");
    (id.to_owned(), fingerprint.to_owned())
}

#[tokio::test]
async fn a_decision_is_bound_to_the_call_shown_not_to_whatever_waits_under_its_id_now() {
    let server = swapping_model().await;
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("s.db").display());
    let session = ["--session", "job", "--db", &db];
    let run = |prompt: &str| {
        agents()
            .args(run_args(&server, dir.path()))
            .args(session)
            .args(["--prompt", prompt])
            .stdin(Stdio::null())
            .env_remove("OPENAI_API_KEY")
            .output()
            .unwrap()
    };
    let first = run("write the notes");
    assert_eq!(first.status.code(), Some(3), "{}", text(&first));
    let (shown_id, shown_fp) = waiting_call(&text(&first));
    assert_eq!(shown_id, "call_w");

    // Another message replaces the waiting call with a different one under the same id
    // (the server's `call_w`, in a new execution): its fingerprint differs.
    let second = run("second message");
    assert_eq!(second.status.code(), Some(3), "{}", text(&second));
    let (new_id, new_fp) = waiting_call(&text(&second));
    assert_ne!(new_fp, shown_fp);

    // Approving what was shown does not approve the new call (it ran before: issue 28).
    let stale = agents()
        .args(["approve", "--session", "job", "--db", &db])
        .arg(format!("{shown_id}@{shown_fp}"))
        .output()
        .unwrap();
    assert!(!stale.status.success(), "{}", text(&stale));
    assert!(
        text(&stale).contains("is not the one you were shown"),
        "{}",
        text(&stale)
    );
    let swapped = agents()
        .args(["approve", "--session", "job", "--db", &db, &new_id])
        .args(["--expect", &shown_fp])
        .output()
        .unwrap();
    assert!(!swapped.status.success(), "{}", text(&swapped));
    assert!(
        text(&swapped).contains("is not the one you were shown"),
        "{}",
        text(&swapped)
    );
    assert!(!dir.path().join("notes.txt").exists());

    // With the fingerprint of the call as it is, the decision is recorded.
    let approved = agents()
        .args(["approve", "--session", "job", "--db", &db])
        .arg(format!("{new_id}@{new_fp}"))
        .output()
        .unwrap();
    assert!(approved.status.success(), "{}", text(&approved));
}
