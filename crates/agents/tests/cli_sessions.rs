//! `agents run --session` and `agents sessions ...` as a user runs them, against a mock
//! OpenAI-compatible server and a SQLite file.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::process::{Command, Output};

use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

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

#[tokio::test]
async fn a_session_keeps_the_conversation_across_runs_and_can_be_listed_shown_exported_deleted() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "c", "object": "chat.completion", "model": "mock",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Noted."},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}
        })))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("s.db").display());
    let state_file = dir.path().join("state.json");
    let run = |prompt: &str| {
        agents()
            .args(["run", "--base-url", &format!("{}/v1", server.uri())])
            .args(["--model", "mock", "--no-bash", "--root"])
            .arg(dir.path())
            .args([
                "--session",
                "chat-42",
                "--db",
                &db,
                "--transcript",
                "--prompt",
                prompt,
            ])
            .arg("--state")
            .arg(&state_file)
            .env_remove("OPENAI_API_KEY")
            .output()
            .unwrap()
    };
    let first = run("remember milk");
    assert!(first.status.success(), "{}", text(&first));
    assert!(
        text(&first).contains("assistant: Noted."),
        "{}",
        text(&first)
    );
    let second = run("and eggs");
    let out = text(&second);
    assert!(second.status.success(), "{out}");
    assert!(
        out.contains("user: remember milk") && out.contains("user: and eggs"),
        "{out}"
    );
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&state_file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the state file is private");
    }

    let sessions = |args: &[&str]| {
        agents()
            .arg("sessions")
            .args(args)
            .args(["--db", &db])
            .output()
            .unwrap()
    };
    let list = sessions(&["list"]);
    assert!(
        text(&list).contains("chat-42") && text(&list).contains("remember milk"),
        "{}",
        text(&list)
    );
    let show = sessions(&["show", "chat-42", "--version", "1"]);
    assert!(show.status.success(), "{}", text(&show));
    assert!(
        text(&show).contains("remember milk") && !text(&show).contains("and eggs"),
        "{}",
        text(&show)
    );
    let export = sessions(&["export", "chat-42"]);
    let document: serde_json::Value = serde_json::from_slice(&export.stdout).unwrap();
    assert_eq!(document["version"], 5);
    // A finished run resumes to itself.
    let resume = agents()
        .args([
            "run",
            "--base-url",
            &format!("{}/v1", server.uri()),
            "--model",
            "mock",
            "--no-bash",
        ])
        .args(["--session", "chat-42", "--db", &db, "--resume"])
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    assert!(resume.status.success(), "{}", text(&resume));

    assert!(sessions(&["delete", "chat-42"]).status.success());
    let gone = sessions(&["show", "chat-42"]);
    assert!(!gone.status.success());
    assert!(
        text(&gone).contains("no session `chat-42`"),
        "{}",
        text(&gone)
    );
    let bad = sessions(&["show", ""]);
    assert!(
        text(&bad).contains("invalid session name"),
        "{}",
        text(&bad)
    );
}
