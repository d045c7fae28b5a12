//! Served agents whose model is llmock: the `agents` binary as `agents mcp serve --addr`,
//! asked through the MCP streamable HTTP transport (`initialize`, then `tools/call ask`), and
//! as `agents a2a serve`, asked with A2A `message/send`; both answers are llmock's text (each
//! of its replies names the model it was asked for, a name only the definition holds), so the
//! served turn went through a real OpenAI-compatible server. Needs `cargo xtask e2e`
//! (llmock, and the `agents` binary it builds first).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use agents_e2e::{report, server};
use serde_json::{json, Value};

const TOKEN: &str = "e2e-served-token-0123456789";
/// The model the definition asks llmock for; llmock's replies name it.
const MODEL: &str = "e2e-served-model";

/// The `agents` binary: `E2E_AGENTS_BIN`, or the one cargo built beside this test (in
/// `target/<profile>/`; `cargo xtask e2e` builds it before running the tests).
fn agents_bin() -> PathBuf {
    if let Some(bin) = std::env::var_os("E2E_AGENTS_BIN") {
        return bin.into();
    }
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(Path::parent).unwrap();
    let bin = profile_dir.join(format!("agents{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.exists(),
        "{} is not built: run `cargo build -p agents --bin agents` (cargo xtask e2e does), \
         or set E2E_AGENTS_BIN",
        bin.display()
    );
    bin
}

/// A definition for an agent with no tools whose model is llmock's OpenAI endpoint.
fn definition(dir: &Path, llmock: &str) -> PathBuf {
    let file = dir.join("llmock-helper.yaml");
    std::fs::write(
        &file,
        format!(
            "version: 1
id: llmock-helper
name: llmock-helper
description: Answers through llmock
system_prompt: You help.
llm: {{ provider: openai, model: {MODEL}, base_url: '{llmock}/v1' }}
"
        ),
    )
    .unwrap();
    file
}

/// A server process, stopped by its pid when the test ends.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Served {
    /// Starts `agents SUBCOMMAND serve --addr 127.0.0.1:0 ...` and returns it with the address
    /// it printed (its first line on stdout).
    fn start(subcommand: &str, definition: &Path, dir: &Path) -> (Self, String) {
        let mut child = Command::new(agents_bin())
            .args([subcommand, "serve", "--addr", "127.0.0.1:0", "--definition"])
            .arg(definition)
            .arg("--db")
            .arg(format!(
                "sqlite://{}",
                dir.join(format!("{subcommand}.db")).display()
            ))
            .env("AGENTS_SERVE_TOKEN", TOKEN)
            // `cargo xtask e2e` points these at llama-server; the definition names llmock.
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("OPENAI_MODEL")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(
            !line.trim().is_empty(),
            "agents {subcommand} serve printed nothing"
        );
        (Self(child), line.trim().to_owned())
    }

    /// SIGTERM by pid, then waits for a clean exit.
    fn stop(mut self) {
        let pid = self.0.id().to_string();
        assert!(Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success());
        for _ in 0..200 {
            if let Some(status) = self.0.try_wait().unwrap() {
                assert!(status.success(), "the server exited with {status}");
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("the server did not stop within 10 s of SIGTERM");
    }
}

/// One MCP message over streamable HTTP: the session id the server gave (if any) and, for a
/// request, its response (read from JSON or from the server-sent events).
async fn mcp_post(
    http: &reqwest::Client,
    endpoint: &str,
    session: Option<&str>,
    message: Value,
) -> (Option<String>, Option<Value>) {
    let mut request = http
        .post(endpoint)
        .bearer_auth(TOKEN)
        .header("Accept", "application/json, text/event-stream")
        .json(&message);
    if let Some(session) = session {
        request = request
            .header("Mcp-Session-Id", session)
            .header("MCP-Protocol-Version", "2025-11-25");
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    assert!(
        status.is_success(),
        "{status}: {}",
        response.text().await.unwrap()
    );
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let Some(id) = message.get("id").cloned() else {
        return (session, None);
    };
    let is_sse = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let body = response.text().await.unwrap();
    let answer = if is_sse {
        body.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .find(|event| event.get("id") == Some(&id))
            .unwrap_or_else(|| panic!("no response to request {id} in: {body}"))
    } else {
        serde_json::from_str(&body).unwrap()
    };
    (session, Some(answer))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_mcp_serve_answers_ask_through_llmock_over_streamable_http() {
    let Some(llmock) = server("E2E_LLMOCK_URL") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let definition = definition(dir.path(), &llmock);
    let started = Instant::now();
    let (served, url) = Served::start("mcp", &definition, dir.path());
    let endpoint = url.split('?').next().unwrap().to_owned();
    let http = reqwest::Client::new();

    let (session, initialized) = mcp_post(
        &http,
        &endpoint,
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "agents-e2e", "version": "0"}}}),
    )
    .await;
    let initialized = initialized.unwrap();
    assert!(
        initialized["result"]["capabilities"]["tools"].is_object(),
        "{initialized}"
    );
    let session = session.expect("a stateful server names its MCP session");
    mcp_post(
        &http,
        &endpoint,
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    let asked = Instant::now();
    let (_, answer) = mcp_post(
        &http,
        &endpoint,
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "ask", "arguments": {"prompt": "Hello there, who answers?"}}}),
    )
    .await;
    let answer = answer.unwrap();
    let ask_ms = asked.elapsed().as_millis();
    let result = &answer["result"];
    assert_eq!(result["isError"], json!(false), "{answer}");
    assert_eq!(
        result["structuredContent"]["status"], "answered",
        "{answer}"
    );
    let text = result["structuredContent"]["text"].as_str().unwrap();
    assert!(text.contains(MODEL), "llmock's answer came back: {answer}");
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains(text),
        "{answer}"
    );
    served.stop();
    report(&format!(
        "llmock behind `agents mcp serve` (streamable HTTP): ask answered in {ask_ms} ms \
         ({} ms with the server's start and stop): {text:?}",
        started.elapsed().as_millis()
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_a2a_serve_answers_message_send_through_llmock() {
    let Some(llmock) = server("E2E_LLMOCK_URL") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let definition = definition(dir.path(), &llmock);
    let started = Instant::now();
    let (served, url) = Served::start("a2a", &definition, dir.path());
    let http = reqwest::Client::new();

    let sent = Instant::now();
    let response: Value = http
        .post(&url)
        .bearer_auth(TOKEN)
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {
            "message": {"kind": "message", "messageId": "m-1", "role": "user",
                        "parts": [{"kind": "text", "text": "Hello there, who answers?"}]}}}),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let send_ms = sent.elapsed().as_millis();
    assert!(response.get("error").is_none(), "{response}");
    let task = &response["result"];
    assert_eq!(task["kind"], "task", "{response}");
    assert_eq!(task["status"]["state"], "completed", "{response}");
    let texts: Vec<&str> = task["artifacts"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(
            task["status"]["message"]
                .as_object()
                .map(|_| &task["status"]["message"]),
        )
        .flat_map(|holder| holder["parts"].as_array().into_iter().flatten())
        .filter_map(|part| part["text"].as_str())
        .collect();
    assert!(!texts.is_empty(), "{response}");
    let text = texts[0];
    assert!(
        text.contains(MODEL),
        "llmock's answer came back: {response}"
    );
    served.stop();
    report(&format!(
        "llmock behind `agents a2a serve`: message/send answered in {send_ms} ms ({} ms with \
         the server's start and stop): {text:?}",
        started.elapsed().as_millis()
    ));
}
