//! `agents mcp serve` and `agents a2a serve` against clients nobody here wrote: the Python
//! MCP SDK's client (stdio and streamable HTTP: list, call, a two-turn session, progress,
//! cancel, approval; approvals asked through elicitation, over the `initialize` handshake and
//! the newest protocol), the MCP Inspector's CLI mode (list and call), the `a2a-sdk` Python
//! client (send, stream, get, cancel, input-required and approve); and our A2A client tool
//! (`a2a_agents:`) against our own A2A server and against an agent written with `a2a-sdk`'s
//! server. The served agents' model is a mock OpenAI-compatible server (wiremock).
//!
//! The clients come from `cargo xtask mcp-servers` (pinned, cached under
//! `~/.cache/agents-rs/mcp`). Without them these tests skip loudly; with `CI=true` they fail.

#![cfg(feature = "serve")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    missing_docs
)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const TOKEN: &str = "interop-test-token-0123456789";

/// What `cargo xtask mcp-servers` installed, or `None` (after saying so) off CI.
struct Clients {
    python: PathBuf,
    node: Option<PathBuf>,
    inspector: Option<PathBuf>,
}

fn clients(what: &str) -> Option<Clients> {
    let cache = std::env::var_os("AGENTS_MCP_CACHE").map_or_else(
        || PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/agents-rs/mcp"),
        PathBuf::from,
    );
    let env = std::fs::read_to_string(cache.join("servers.env")).unwrap_or_default();
    let get = |key: &str| {
        env.lines()
            .find_map(|line| line.strip_prefix(&format!("{key}=")))
            .map(PathBuf::from)
            .filter(|p| p.exists())
    };
    let python = get("AGENTS_MCP_PYTHON").filter(|python| {
        Command::new(python)
            .args(["-c", "import a2a, mcp, httpx2"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    let Some(python) = python else {
        let message = format!(
            "skipping {what}: the Python mcp and a2a-sdk clients are not installed; run `cargo xtask mcp-servers`"
        );
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{message}");
        #[allow(clippy::print_stderr)]
        {
            eprintln!("{message}");
        }
        return None;
    };
    Some(Clients {
        python,
        node: get("AGENTS_MCP_NODE"),
        inspector: get("AGENTS_MCP_INSPECTOR"),
    })
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/interop")
        .join(name)
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A server process, killed by its pid (through the handle) when the test ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Server {
    /// Starts `command` and returns it with the first line it prints on stdout.
    fn start(mut command: Command) -> (Self, String) {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(!line.is_empty(), "the server printed nothing");
        (Self(child), line.trim().to_owned())
    }

    /// Sends SIGTERM and waits for the exit.
    fn terminate(mut self) -> std::process::ExitStatus {
        let pid = self.0.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        for _ in 0..200 {
            if let Some(status) = self.0.try_wait().unwrap() {
                return status;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the server did not stop within 10 s of SIGTERM");
    }
}

/// One chat completion, as JSON or (when the request asked to stream) as server-sent events
/// (the text in two pieces).
fn completion(body: &Value, message: Value, finish: &str) -> ResponseTemplate {
    if body["stream"] == json!(true) {
        let mut chunks = Vec::new();
        let mut delta = message.clone();
        if let Some(content) = message["content"].as_str() {
            let middle = content.len() / 2;
            let middle = (0..=middle)
                .rev()
                .find(|i| content.is_char_boundary(*i))
                .unwrap_or(0);
            delta["content"] = json!(&content[..middle]);
            chunks.push(json!({"role": "assistant", "content": &content[..middle]}));
            chunks.push(json!({"content": &content[middle..]}));
        } else {
            if let Some(calls) = delta["tool_calls"].as_array_mut() {
                for (index, call) in calls.iter_mut().enumerate() {
                    call["index"] = json!(index);
                }
            }
            chunks.push(delta);
        }
        let mut events = String::new();
        for chunk in chunks {
            let event = json!({"id": "c", "object": "chat.completion.chunk", "model": "mock",
                "choices": [{"index": 0, "delta": chunk, "finish_reason": null}]});
            events.push_str(&format!("data: {event}\n\n"));
        }
        let last = json!({"id": "c", "object": "chat.completion.chunk", "model": "mock",
            "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}});
        events.push_str(&format!("data: {last}\n\ndata: [DONE]\n\n"));
        // `set_body_raw`, not `set_body_string`: wiremock's string body forces `text/plain`
        // over any content-type header, and the provider rightly refuses a stream sent so.
        return ResponseTemplate::new(200).set_body_raw(events, "text/event-stream");
    }
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "c", "object": "chat.completion", "model": "mock",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}
    }))
}

/// The served agents' model: "turn N: PROMPT" (N counts the user messages), 30 s late for a
/// prompt with "slow", a `write_file` call for one with "write", and "note written: RESULT"
/// after a tool result ("The call was rejected ..." after a failed one).
async fn served_model() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(|request: &Request| {
            let body: Value = serde_json::from_slice(&request.body).unwrap();
            let messages = body["messages"].as_array().unwrap();
            let last = messages.last().unwrap();
            if last["role"] == "tool" {
                let result = last["content"].as_str().unwrap_or_default();
                if result.starts_with("Error:") {
                    // Told in its own words, with the person's reason: a pasted error is not
                    // an answer.
                    let reason = result
                        .split_once("Their reason: ")
                        .map(|(_, reason)| format!(" (their reason: {reason})"))
                        .unwrap_or_default();
                    return completion(
                        &body,
                        json!({"role": "assistant",
                               "content": format!("The call was rejected, nothing was written{reason}.")}),
                        "stop",
                    );
                }
                return completion(
                    &body,
                    json!({"role": "assistant", "content": format!("note written: {result}")}),
                    "stop",
                );
            }
            let users: Vec<&str> = messages
                .iter()
                .filter(|m| m["role"] == "user")
                .map(|m| m["content"].as_str().unwrap_or_default())
                .collect();
            let prompt = users.last().copied().unwrap_or_default();
            if prompt.contains("write") {
                return completion(
                    &body,
                    json!({"role": "assistant", "content": null, "tool_calls": [{
                        "id": "call_w", "type": "function",
                        "function": {"name": "write_file",
                                     "arguments": "{\"path\":\"note.txt\",\"content\":\"hi\"}"}}]}),
                    "tool_calls",
                );
            }
            let answer = completion(
                &body,
                json!({"role": "assistant", "content": format!("turn {}: {prompt}", users.len())}),
                "stop",
            );
            if prompt.contains("slow") {
                answer.set_delay(Duration::from_secs(30))
            } else {
                answer
            }
        })
        .mount(&server)
        .await;
    server
}

/// A definition for an agent on `model` with the file tools, `write_file` needing approval.
fn served_definition(dir: &Path, model: &MockServer) -> PathBuf {
    served_definition_with(dir, model, "")
}

/// [`served_definition`] with `extra` lines of YAML.
fn served_definition_with(dir: &Path, model: &MockServer, extra: &str) -> PathBuf {
    let file = dir.join("served.yaml");
    std::fs::write(
        &file,
        format!(
            "version: 1
id: helper
name: helper
description: Answers with the turn number
system_prompt: You help.
llm: {{ provider: openai, model: mock, base_url: '{}/v1' }}
approval: {{ required: [write_file] }}
capabilities: [files, bash]
{extra}",
            model.uri()
        ),
    )
    .unwrap();
    file
}

fn agents() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agents"));
    command
        .env_remove("OPENAI_API_KEY")
        .env("AGENTS_SERVE_TOKEN", TOKEN);
    command
}

fn sqlite(dir: &Path) -> String {
    format!("sqlite://{}", dir.join("sessions.db").display())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_mcp_client_over_stdio_lists_asks_continues_cancels_and_approves() {
    let Some(clients) = clients("the MCP stdio client test") else {
        return;
    };
    let model = served_model().await;
    let dir = tempfile::tempdir().unwrap();
    let definition = served_definition(dir.path(), &model);
    let output = Command::new(&clients.python)
        .arg(script("mcp_client.py"))
        .args(["stdio", env!("CARGO_BIN_EXE_agents")])
        .arg(&definition)
        .arg(sqlite(dir.path()))
        .current_dir(dir.path())
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let out = text(&output);
    assert!(output.status.success(), "{out}");
    assert!(out.contains("all checks passed"), "{out}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("note.txt")).unwrap(),
        "hi",
        "the approved call wrote its file"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_mcp_client_over_http_and_the_server_stops_on_sigterm() {
    let Some(clients) = clients("the MCP HTTP client test") else {
        return;
    };
    let model = served_model().await;
    let dir = tempfile::tempdir().unwrap();
    let definition = served_definition(dir.path(), &model);
    let mut command = agents();
    command
        .args(["mcp", "serve", "--addr", "127.0.0.1:0", "--definition"])
        .arg(&definition)
        .args(["--db", &sqlite(dir.path()), "--root"])
        .arg(dir.path());
    let (server, url) = Server::start(command);
    assert!(url.contains(&format!("/mcp?token={TOKEN}")), "{url}");
    let endpoint = url.split('?').next().unwrap().to_owned();
    let port: u16 = endpoint
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();

    // The access rules every server shares: a token, and our own Host.
    let (status, _) = post(port, "/mcp", "", "{}");
    assert_eq!(status, 401);
    let (status, _) = post(
        port,
        "/mcp",
        &format!("Authorization: Bearer {TOKEN}\r\nHost: evil.example:{port}\r\n"),
        "{}",
    );
    assert_eq!(status, 403);

    let output = Command::new(&clients.python)
        .arg(script("mcp_client.py"))
        .args(["http", &endpoint, TOKEN])
        .output()
        .unwrap();
    let out = text(&output);
    assert!(output.status.success(), "{out}");
    assert!(out.contains("all checks passed"), "{out}");
    assert!(server.terminate().success());
}

/// The model reads a rejected call's result and answers (by default a rejection ends the run
/// as failed, with the rejection's text).
const LET_REJECTIONS_THROUGH: &str = "execution: { error_policy: ignore_tool_errors }\n";

/// Runs `mcp_elicitation.py` (a client whose person declines, rejects, cancels, then approves,
/// over the `initialize` handshake and over the newest protocol) with `transport`'s arguments.
fn run_elicitation_client(python: &Path, dir: &Path, transport: &[&std::ffi::OsStr]) {
    let note = dir.join("note.txt");
    let output = Command::new(python)
        .arg(script("mcp_elicitation.py"))
        .arg(&note)
        .args(transport)
        .current_dir(dir)
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let out = text(&output);
    assert!(output.status.success(), "{out}");
    assert!(out.contains("all checks passed"), "{out}");
    // Both ways of asking ran: `elicitation/create` requests (legacy) and an
    // InputRequiredResult the SDK answered by retrying (the newest protocol).
    assert!(out.contains("legacy: protocol 2025-"), "{out}");
    assert!(out.contains("auto: protocol 2026-07-28"), "{out}");
    eprintln!("{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_mcp_client_with_elicitation_over_stdio_approves_and_rejects_in_ask() {
    let Some(clients) = clients("the MCP elicitation stdio test") else {
        return;
    };
    let model = served_model().await;
    let dir = tempfile::tempdir().unwrap();
    let definition = served_definition_with(dir.path(), &model, LET_REJECTIONS_THROUGH);
    let db = sqlite(dir.path());
    run_elicitation_client(
        &clients.python,
        dir.path(),
        &[
            "stdio".as_ref(),
            env!("CARGO_BIN_EXE_agents").as_ref(),
            definition.as_os_str(),
            db.as_ref(),
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_mcp_client_with_elicitation_over_http_approves_and_rejects_in_ask() {
    let Some(clients) = clients("the MCP elicitation HTTP test") else {
        return;
    };
    let model = served_model().await;
    let dir = tempfile::tempdir().unwrap();
    let definition = served_definition_with(dir.path(), &model, LET_REJECTIONS_THROUGH);
    let mut command = agents();
    command
        .args(["mcp", "serve", "--addr", "127.0.0.1:0", "--definition"])
        .arg(&definition)
        .args(["--db", &sqlite(dir.path()), "--root"])
        .arg(dir.path());
    let (server, url) = Server::start(command);
    let endpoint = url.split('?').next().unwrap().to_owned();
    run_elicitation_client(
        &clients.python,
        dir.path(),
        &["http".as_ref(), endpoint.as_ref(), TOKEN.as_ref()],
    );
    assert!(server.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_elicitation_a_client_that_declares_it_still_gets_the_waiting_calls() {
    let Some(clients) = clients("the MCP --no-elicitation test") else {
        return;
    };
    let model = served_model().await;
    let dir = tempfile::tempdir().unwrap();
    let definition = served_definition(dir.path(), &model);
    let mut command = agents();
    command
        .args([
            "mcp",
            "serve",
            "--no-elicitation",
            "--addr",
            "127.0.0.1:0",
            "--definition",
        ])
        .arg(&definition)
        .args(["--db", &sqlite(dir.path()), "--root"])
        .arg(dir.path());
    let (server, url) = Server::start(command);
    let endpoint = url.split('?').next().unwrap().to_owned();
    let program = r#"
import sys, anyio, httpx2
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client

asked = []

async def person(context, params):
    asked.append(params)
    return types.ElicitResult(action="accept", content={"approve": True})

async def main():
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {sys.argv[2]}"}, timeout=60)
    async with Client(streamable_http_client(sys.argv[1], http_client=http), elicitation_callback=person) as client:
        result = await client.call_tool("ask", {"prompt": "please write the note"})
        print("status", result.structured_content["status"], "asked", len(asked), flush=True)

anyio.run(main)
"#;
    let output = Command::new(&clients.python)
        .args(["-c", program, &endpoint, TOKEN])
        .output()
        .unwrap();
    let out = text(&output);
    assert!(output.status.success(), "{out}");
    assert!(out.contains("status waiting asked 0"), "{out}");
    assert!(!dir.path().join("note.txt").exists());
    assert!(server.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_inspector_cli_lists_and_calls_ask() {
    let Some(clients) = clients("the MCP Inspector test") else {
        return;
    };
    let (Some(node), Some(inspector)) = (clients.node, clients.inspector) else {
        let message =
            "skipping the MCP Inspector test: it is not installed; run `cargo xtask mcp-servers`";
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{message}");
        eprintln!("{message}");
        return;
    };
    let model = served_model().await;
    let dir = tempfile::tempdir().unwrap();
    let definition = served_definition(dir.path(), &model);
    let db = sqlite(dir.path());
    let inspect = |extra: &[&str]| {
        let output = Command::new(&node)
            .arg(&inspector)
            .args([
                "--cli",
                env!("CARGO_BIN_EXE_agents"),
                "mcp",
                "serve",
                "--definition",
            ])
            .arg(&definition)
            .args(["--db", &db])
            .args(extra)
            .current_dir(dir.path())
            .env_remove("OPENAI_API_KEY")
            .output()
            .unwrap();
        let out = text(&output);
        assert!(output.status.success(), "{out}");
        out
    };
    let listed = inspect(&["--method", "tools/list"]);
    assert!(
        listed.contains("\"ask\"") && listed.contains("\"approve\""),
        "{listed}"
    );
    let called = inspect(&[
        "--method",
        "tools/call",
        "--tool-name",
        "ask",
        "--tool-arg",
        "prompt=hello inspector",
    ]);
    assert!(called.contains("turn 1: hello inspector"), "{called}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_a2a_sdk_client_sends_streams_gets_cancels_and_approves() {
    let Some(clients) = clients("the A2A client test") else {
        return;
    };
    let model = served_model().await;
    let dir = tempfile::tempdir().unwrap();
    let definition = served_definition(dir.path(), &model);
    let mut command = agents();
    command
        .args(["a2a", "serve", "--addr", "127.0.0.1:0", "--definition"])
        .arg(&definition)
        .args(["--db", &sqlite(dir.path()), "--root"])
        .arg(dir.path());
    let (server, url) = Server::start(command);
    let port: u16 = url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches('/')
        .parse()
        .unwrap();

    let (status, _) = get(port, "/.well-known/agent-card.json", "");
    assert_eq!(status, 401, "the card needs the token too");
    let (status, card) = get(
        port,
        "/.well-known/agent-card.json",
        &format!("Authorization: Bearer {TOKEN}\r\n"),
    );
    assert_eq!(status, 200);
    let card: Value = serde_json::from_str(&card).unwrap();
    assert_eq!(card["supportedInterfaces"][0]["protocolVersion"], "1.0");
    assert_eq!(card["supportedInterfaces"][0]["url"], url.as_str());
    let (status, _) = get(
        port,
        "/.well-known/agent-card.json",
        &format!("Authorization: Bearer {TOKEN}\r\nOrigin: http://evil.example\r\n"),
    );
    assert_eq!(status, 403);

    let output = Command::new(&clients.python)
        .arg(script("a2a_client.py"))
        .args([&url, TOKEN])
        .output()
        .unwrap();
    let out = text(&output);
    assert!(output.status.success(), "{out}");
    assert!(out.contains("all checks passed"), "{out}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("note.txt")).unwrap(),
        "hi"
    );
    assert!(server.terminate().success());
}

/// The caller's model: calls every A2A tool once, then answers with what they said.
async fn caller_model() -> MockServer {
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
            if !results.is_empty() {
                return completion(
                    &body,
                    json!({"role": "assistant", "content": format!("they said: {}", results.join(" | "))}),
                    "stop",
                );
            }
            let call = |id: &str, name: &str, message: &str| {
                json!({"id": id, "type": "function", "function": {
                    "name": name, "arguments": json!({"message": message}).to_string()}})
            };
            completion(
                &body,
                json!({"role": "assistant", "content": null, "tool_calls": [
                    call("c1", "helper", "from the caller"),
                    call("c2", "shouter", "hello python"),
                    call("c3", "slowpoke", "a slow question"),
                ]}),
                "tool_calls",
            )
        })
        .mount(&server)
        .await;
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_a2a_tool_calls_our_a2a_server_and_an_a2a_sdk_agent_with_a_timeout() {
    let Some(clients) = clients("the A2A client tool test") else {
        return;
    };
    let model = served_model().await;
    let dir = tempfile::tempdir().unwrap();
    let definition = served_definition(dir.path(), &model);
    let mut command = agents();
    command
        .args(["a2a", "serve", "--addr", "127.0.0.1:0", "--definition"])
        .arg(&definition)
        .args(["--db", &sqlite(dir.path())]);
    let (_ours, ours) = Server::start(command);

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut python = Command::new(&clients.python);
    python.arg(script("a2a_sdk_agent.py")).arg(port.to_string());
    let (_theirs, theirs) = Server::start(python);

    let caller = caller_model().await;
    let caller_definition = dir.path().join("caller.yaml");
    // `ignore_tool_errors`: the model reads the slow agent's timeout and answers anyway.
    std::fs::write(
        &caller_definition,
        format!(
            "version: 1
id: caller
name: caller
description: Asks the remote agents
system_prompt: You delegate.
llm: {{ provider: openai, model: mock, base_url: '{}/v1' }}
execution: {{ error_policy: ignore_tool_errors }}
capabilities: [files]
a2a_agents:
  - name: helper
    url: {ours}
    token: ${{HELPER_TOKEN}}
  - name: shouter
    url: {theirs}
  - name: slowpoke
    url: {ours}
    token: ${{HELPER_TOKEN}}
    timeout: 2
",
            caller.uri()
        ),
    )
    .unwrap();
    let output = agents()
        .args(["run", "--definition"])
        .arg(&caller_definition)
        .args(["--prompt", "ask around", "--root"])
        .arg(dir.path())
        .env("HELPER_TOKEN", TOKEN)
        .env_remove("AGENTS_SERVE_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let out = text(&output);
    assert!(output.status.success(), "{out}");
    assert!(
        out.contains("turn 1: from the caller"),
        "ours answered: {out}"
    );
    assert!(
        out.contains("[task a2a-"),
        "the task id is given back: {out}"
    );
    assert!(
        out.contains("python agent says: HELLO PYTHON"),
        "theirs answered: {out}"
    );
    assert!(
        out.contains("did not answer within 2 seconds"),
        "the timeout holds: {out}"
    );
}

fn request(port: u16, head: &str, body: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(stream, "{head}Connection: close\r\n\r\n{body}").unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer[9..12].parse().unwrap();
    let body = answer
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_owned();
    (status, body)
}

fn get(port: u16, path: &str, headers: &str) -> (u16, String) {
    let host = if headers.contains("Host:") {
        String::new()
    } else {
        format!("Host: 127.0.0.1:{port}\r\n")
    };
    request(port, &format!("GET {path} HTTP/1.1\r\n{host}{headers}"), "")
}

fn post(port: u16, path: &str, headers: &str, body: &str) -> (u16, String) {
    let host = if headers.contains("Host:") {
        String::new()
    } else {
        format!("Host: 127.0.0.1:{port}\r\n")
    };
    request(
        port,
        &format!(
            "POST {path} HTTP/1.1\r\n{host}{headers}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            body.len()
        ),
        body,
    )
}
