//! `agents serve` as a user runs it: the URL with the token on stdout, the token required, a
//! foreign Host refused, the console showing a stored session, a graceful stop on SIGTERM,
//! and clear refusals of unsafe options.

#![cfg(feature = "serve")]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use agents::prelude::*;
use agents::sessions::SqliteSessionStore;

const TOKEN: &str = "cli-serve-test-token-0123456789";

/// The server, killed (by its pid, through the handle) if a test fails before stopping it.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `GET path` with extra header lines; the status code and the body.
fn get(port: u16, path: &str, headers: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\n{headers}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer[9..12].parse().unwrap();
    let body = answer
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_owned();
    (status, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_prints_its_url_needs_its_token_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sessions.db");
    {
        let store = SqliteSessionStore::open(&db).await.unwrap();
        let agent = AgentBuilder::new()
            .with_model(ScriptedModel::new([InferenceResponse::text(
                "Hello there.",
            )]))
            .build()
            .unwrap();
        agent
            .session(&store, "greeting")
            .send("Say hello <b>please</b>")
            .await
            .unwrap();
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_agents"))
        .args(["serve", "--addr", "127.0.0.1:0", "--db"])
        .arg(&db)
        .env("AGENTS_SERVE_TOKEN", TOKEN)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let mut server = Server(child);
    let url = line.trim();
    let rest = url.strip_prefix("http://127.0.0.1:").unwrap();
    let (port, query) = rest.split_once('/').unwrap();
    let port: u16 = port.parse().unwrap();
    assert_eq!(query, format!("?token={TOKEN}"), "{url}");

    let host = format!("Host: 127.0.0.1:{port}\r\n");
    assert_eq!(get(port, "/", &host).0, 401);
    assert_eq!(
        get(
            port,
            "/",
            &format!("{host}Authorization: Bearer wrong-token-0000000\r\n")
        )
        .0,
        403
    );
    let bearer = format!("Authorization: Bearer {TOKEN}\r\n");
    assert_eq!(
        get(port, "/", &format!("Host: evil.example:{port}\r\n{bearer}")).0,
        403,
        "DNS rebinding"
    );
    let (status, body) = get(port, "/", &format!("{host}{bearer}"));
    assert_eq!(status, 200);
    assert!(
        body.contains("Say hello &lt;b&gt;please&lt;/b&gt;"),
        "{body}"
    );
    let (status, body) = get(port, "/sessions/greeting", &format!("{host}{bearer}"));
    assert_eq!(status, 200);
    assert!(body.contains("Hello there."));
    assert!(!body.contains("chat-form"), "no --definition: no chat");

    // SIGTERM: a clean exit.
    let pid = rustix::process::Pid::from_child(&server.0);
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = server.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no exit after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status}");
    let mut stderr = String::new();
    server
        .0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(stderr.contains("stopped"), "{stderr}");
}

#[test]
fn unsafe_options_are_refused_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let run = |args: &[&str], token: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_agents"));
        command.arg("serve").args(args).arg("--db").arg(&db);
        match token {
            Some(token) => command.env("AGENTS_SERVE_TOKEN", token),
            None => command.env_remove("AGENTS_SERVE_TOKEN"),
        };
        command.output().unwrap()
    };
    let open = run(&["--no-auth", "--addr", "0.0.0.0:0"], None);
    assert!(!open.status.success());
    assert!(String::from_utf8_lossy(&open.stderr).contains("loopback"));
    let short = run(&["--addr", "127.0.0.1:0"], Some("short"));
    assert!(!short.status.success());
    assert!(String::from_utf8_lossy(&short.stderr).contains("at least 16"));
}
