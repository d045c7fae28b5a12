//! `agents chat` as a person uses it: through a pseudo-terminal (the binary runs under
//! `script -qfec`, which gives it a terminal and passes our keystrokes on), against a scripted
//! OpenAI-compatible server (wiremock answering from the request it gets) and against llmock.
//! The screen text is asserted.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// A program on a pseudo-terminal, and everything it has written to it.
struct Terminal {
    child: Child,
    keys: ChildStdin,
    screen: Arc<Mutex<String>>,
    /// How much of the screen earlier `expect`s consumed.
    seen: usize,
}

impl Terminal {
    fn spawn(args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut line = shell_quote(env!("CARGO_BIN_EXE_agents"));
        for arg in args {
            line.push(' ');
            line.push_str(&shell_quote(arg));
        }
        let mut command = Command::new("script");
        command
            .args(["-qfec", &line, "/dev/null"])
            .env("TERM", "xterm")
            .env("NO_COLOR", "1")
            .env_remove("OPENAI_API_KEY")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command
            .spawn()
            .expect("`script` (util-linux) runs the chat on a terminal");
        let keys = child.stdin.take().unwrap();
        let screen = Arc::new(Mutex::new(String::new()));
        let mut out = child.stdout.take().unwrap();
        let sink = Arc::clone(&screen);
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(n) = out.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buffer[..n]));
            }
        });
        Self {
            child,
            keys,
            screen,
            seen: 0,
        }
    }

    /// Waits until `text` appears on the screen after what earlier calls matched; returns
    /// the screen from there to the end of the match.
    fn expect(&mut self, text: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            {
                let screen = self.screen.lock().unwrap();
                if let Some(at) = screen[self.seen..].find(text) {
                    let end = self.seen + at + text.len();
                    let shown = screen[self.seen..end].to_owned();
                    self.seen = end;
                    return shown;
                }
            }
            assert!(
                Instant::now() < deadline,
                "`{text}` did not appear; the screen after the last match:\n{}",
                &self.screen.lock().unwrap()[self.seen..]
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn type_line(&mut self, line: &str) {
        self.keys.write_all(line.as_bytes()).unwrap();
        self.keys.write_all(b"\r").unwrap();
        self.keys.flush().unwrap();
    }

    fn press(&mut self, key: &[u8]) {
        self.keys.write_all(key).unwrap();
        self.keys.flush().unwrap();
    }

    /// Waits for the program to end (at most 30 s) and returns the whole screen.
    fn finish(mut self) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "the chat did not exit; screen:\n{}",
                    self.screen.lock().unwrap()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(100));
        let screen = self.screen.lock().unwrap().clone();
        screen
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// One server-sent-events body: the chunks, then `[DONE]`.
fn sse(chunks: &[Value]) -> ResponseTemplate {
    let mut body = String::new();
    for chunk in chunks {
        body.push_str(&format!("data: {chunk}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

fn chunk(delta: Value, finish: Option<&str>) -> Value {
    let mut chunk = json!({
        "id": "c", "object": "chat.completion.chunk", "model": "mock",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]
    });
    if finish.is_some() {
        chunk["usage"] = json!({"prompt_tokens": 40, "completion_tokens": 8, "total_tokens": 48});
    }
    chunk
}

fn text_reply(text: &str) -> ResponseTemplate {
    // two pieces, so the text really streams
    let (first, second) = text.split_at(text.len() / 2);
    sse(&[
        chunk(json!({"role": "assistant", "content": first}), None),
        chunk(json!({"content": second}), None),
        chunk(json!({}), Some("stop")),
    ])
}

/// `text` streamed in pieces of `size` characters (as a small local model streams).
fn small_chunks(text: &str, size: usize) -> ResponseTemplate {
    let chars: Vec<char> = text.chars().collect();
    let mut chunks = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    for piece in chars.chunks(size) {
        chunks.push(chunk(
            json!({"content": piece.iter().collect::<String>()}),
            None,
        ));
    }
    chunks.push(chunk(json!({}), Some("stop")));
    sse(&chunks)
}

fn tool_call(name: &str, arguments: Value) -> ResponseTemplate {
    sse(&[
        chunk(
            json!({"role": "assistant", "content": null, "tool_calls": [{
                "index": 0, "id": "call_1", "type": "function",
                "function": {"name": name, "arguments": arguments.to_string()}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
    ])
}

/// The scripted model: it answers from the last message of the request. A question about
/// "the list" reads `todo.txt`, one asked "from memory" is answered without looking; "slow" runs a slow bash command; a tool result is summed up
/// (with a terminal escape sequence the chat must not send raw); anything else is echoed with
/// the number of messages the model was sent.
struct Scripted;

impl Respond for Scripted {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let messages = body["messages"].as_array().unwrap();
        let last = messages.last().unwrap();
        let content = last["content"].as_str().unwrap_or_default();
        if last["role"] == "tool" {
            return text_reply(&format!(
                "The list says: {}\u{1b}]0;owned\u{7}",
                content.trim()
            ));
        }
        if content.contains("the list") || content.contains("Call a tool to read it now") {
            // (The second: the nudge after an answer about a file given without looking.)
            return tool_call("read_file", json!({"path": "todo.txt"}));
        }
        if content.contains("from memory") {
            return text_reply("It says to buy eggs.");
        }
        if content.contains("markdown") {
            return text_reply("## Steps\n- run `ls` **now**\ndone");
        }
        if content.contains("fruits") {
            // The last item has no newline: the reply ends there.
            return small_chunks("Fruits:\n- apple\n- banana\n* cherry", 2);
        }
        if content.contains("as text") {
            // A small model's call: a plan, then the call in a fence, written as text.
            return small_chunks(
                "I'll read the list:\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"todo.txt\"}}\n```",
                3,
            );
        }
        if content.contains("example") {
            // Call-shaped, but naming no tool: nothing runs, and it is shown as written.
            return small_chunks(
                "An example:\n```json\n{\"name\": \"widget\", \"arguments\": {\"size\": 3}}\n```\nThat is all.",
                3,
            );
        }
        if content.contains("slow") {
            return tool_call("bash", json!({"command": "sleep 30; echo finished"}));
        }
        text_reply(&format!(
            "You said {content:?}; I was sent {} messages.",
            messages.len()
        ))
    }
}

async fn scripted_server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(Scripted)
        .mount(&server)
        .await;
    server
}

fn chat_args<'a>(server: &'a str, root: &'a Path, history: &'a Path) -> Vec<&'a str> {
    vec![
        "chat",
        "--base-url",
        server,
        "--model",
        "mock",
        "--root",
        root.to_str().unwrap(),
        "--history",
        history.to_str().unwrap(),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn a_three_turn_chat_with_a_tool_call_trace_reset_save_and_load() {
    let server = scripted_server().await;
    let url = format!("{}/v1", server.uri());
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("todo.txt"), "buy milk\n").unwrap();
    let history = dir.path().join("history");
    let saved = dir.path().join("saved.json");
    let mut args = chat_args(&url, dir.path(), &history);
    args.push("--no-bash");
    let mut chat = Terminal::spawn(&args, &[]);
    chat.expect("agents chat: model openai-compatible/mock, ");
    chat.expect("you> ");

    // turn 1: a tool call, one line with its status, then the streamed answer
    chat.type_line("What is on the list?");
    let turn = chat.expect("you> ");
    assert!(
        turn.contains(r#"> read_file({"path":"todo.txt"}) ... ok ("#),
        "{turn}"
    );
    assert!(
        turn.contains("assistant: The list says: ")
            && turn.contains("buy milk\\u{1b}]0;owned\\u{7}"),
        "the escape sequence is shown, not sent: {turn}"
    );
    assert!(!turn.contains('\u{7}'), "{turn}");
    assert!(
        turn.contains("1 step(s)") || turn.contains("2 step(s)"),
        "{turn}"
    );

    // turn 2: the conversation goes on (separated mode: 2 messages + system + new question)
    chat.type_line("thanks");
    let turn = chat.expect("you> ");
    assert!(
        turn.contains(r#"assistant: You said "thanks"; I was sent 4 messages."#),
        "{turn}"
    );

    chat.type_line("/trace");
    let trace = chat.expect("you> ");
    assert!(trace.contains("the last turn called no tools"), "{trace}");

    // multi-line input: a line ending in a backslash continues
    chat.type_line("first line \\");
    chat.type_line("second line");
    let turn = chat.expect("I was sent 6 messages.");
    assert!(
        turn.contains(r#"You said "first line \nsecond line"; I was sent 6 messages."#),
        "{turn}"
    );
    chat.expect("you> ");

    chat.type_line("/usage");
    let usage = chat.expect("you> ");
    assert!(
        usage.contains("tokens: input 160, cached input 0, output 32, total 192; unknown price (192 tokens without a price)"),
        "{usage}"
    );

    chat.type_line(&format!("/save {}", saved.display()));
    chat.expect("saved 6 messages to");
    chat.expect("you> ");

    chat.type_line("/reset");
    chat.expect("new conversation");
    chat.expect("you> ");
    chat.type_line("hello again");
    let turn = chat.expect("you> ");
    assert!(turn.contains("I was sent 2 messages."), "{turn}");

    chat.type_line(&format!("/load {}", saved.display()));
    chat.expect("loaded 6 messages from");
    chat.expect("you> ");
    chat.type_line("and now?");
    let turn = chat.expect("you> ");
    assert!(turn.contains("I was sent 8 messages."), "{turn}");

    let corrupt = dir.path().join("corrupt.json");
    std::fs::write(&corrupt, "{\"messages\": [").unwrap();
    chat.type_line(&format!("/load {}", corrupt.display()));
    let error = chat.expect("you> ");
    assert!(error.contains("cannot resume from"), "{error}");
    chat.type_line("/bogus");
    chat.expect("unknown command `/bogus`; /help lists the commands");
    chat.expect("you> ");

    // /mode legacy: from now on the tool trace persists (8 messages + 4 of a tool turn)
    chat.type_line("/mode legacy");
    chat.expect("mode: legacy");
    chat.expect("you> ");
    chat.type_line("What is on the list?");
    chat.expect("The list says:");
    chat.expect("you> ");
    chat.type_line("thanks");
    let turn = chat.expect("you> ");
    assert!(turn.contains("I was sent 14 messages."), "{turn}");

    chat.press(b"\x04"); // Ctrl-D leaves
    let screen = chat.finish();
    assert!(!screen.contains("\u{1b}[2m"), "NO_COLOR: no styling");
    let history = std::fs::read_to_string(&history).unwrap();
    assert!(history.contains("What is on the list?"), "{history}");
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&saved).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    assert!(saved.to_string().contains("buy milk"), "{saved}");
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_cancels_a_slow_tool_and_the_conversation_goes_on() {
    let server = scripted_server().await;
    let url = format!("{}/v1", server.uri());
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("history");
    let saved = dir.path().join("after-cancel.json");
    let mut chat = Terminal::spawn(&chat_args(&url, dir.path(), &history), &[]);
    chat.expect("you> ");
    chat.type_line("do something slow");
    chat.expect(r#"> bash({"command":"sleep 30; echo finished"}) ..."#);
    let started = Instant::now();
    chat.press(b"\x03");
    let turn = chat.expect("you> ");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the sleep was cut short"
    );
    assert!(turn.contains("cancelling"), "{turn}");
    assert!(
        turn.contains("assistant: I could not finish this task"),
        "the notice is the turn's answer: {turn}"
    );
    assert!(turn.contains("stopped: user_requested"), "{turn}");

    // the history is valid: the next turn runs, and the cancelled call has its result
    chat.type_line("still there?");
    let turn = chat.expect("you> ");
    assert!(turn.contains(r#"You said "still there?""#), "{turn}");
    chat.type_line(&format!("/save {}", saved.display()));
    chat.expect("saved ");

    // Ctrl-C at the prompt asks first; a second one leaves
    chat.press(b"\x03");
    chat.expect("(Ctrl-C again or Ctrl-D to leave)");
    chat.press(b"\x03");
    chat.finish();
    let saved = std::fs::read_to_string(&saved).unwrap();
    assert!(saved.contains("user_requested"), "{saved}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_chat_resumes_where_it_left_off() {
    let server = scripted_server().await;
    let url = format!("{}/v1", server.uri());
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("history");
    let db = format!("sqlite://{}", dir.path().join("s.db").display());
    let mut args = chat_args(&url, dir.path(), &history);
    args.extend(["--no-bash", "--session", "talk", "--db", &db]);
    let mut chat = Terminal::spawn(&args, &[]);
    chat.expect("session talk (0 messages)");
    chat.expect("you> ");
    chat.type_line("remember this");
    chat.expect("I was sent 2 messages.");
    chat.type_line("/exit");
    chat.finish();

    let mut chat = Terminal::spawn(&args, &[]);
    chat.expect("session talk (2 messages)");
    chat.expect("you> ");
    chat.type_line("what did I say?");
    chat.expect("I was sent 4 messages.");
    chat.type_line("/reset");
    chat.expect("/reset does not apply to a session");
    chat.type_line("/exit");
    chat.finish();
}

/// The same chat against llmock (`cargo xtask e2e` starts it and sets E2E_LLMOCK_URL): the
/// tool loop and streaming of a third-party OpenAI-compatible server, through the terminal.
#[tokio::test(flavor = "multi_thread")]
async fn a_chat_against_llmock_calls_a_tool_and_answers() {
    // `.ci/run` runs the workspace tests first (no llmock yet), then `cargo xtask e2e`, which
    // starts llmock and runs this test again with the variable set; like the e2e crate's
    // tests, it skips loudly without it.
    let Ok(url) = std::env::var("E2E_LLMOCK_URL") else {
        eprintln!("SKIPPED: E2E_LLMOCK_URL is not set; run `cargo xtask e2e` (it starts llmock) to run this test");
        return;
    };
    let url = format!("{}/v1", url.trim_end_matches('/'));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "llmock notes\n").unwrap();
    let history = dir.path().join("history");
    let mut args = chat_args(&url, dir.path(), &history);
    args[4] = "gpt-4o-mini";
    args.push("--no-bash");
    let mut chat = Terminal::spawn(&args, &[]);
    chat.expect("you> ");
    chat.type_line("List the files, please.");
    let turn = chat.expect("you> ");
    assert!(
        turn.contains(" ... ok (") || turn.contains(" ... error ("),
        "a tool line: {turn}"
    );
    assert!(turn.contains("assistant: "), "{turn}");
    chat.type_line("/trace");
    let trace = chat.expect("you> ");
    assert!(trace.contains("1. "), "{trace}");
    chat.press(b"\x04");
    chat.finish();
}

/// `agents run` on a terminal shows a spinner on stderr while it waits for the model, erased
/// before the answer; `--quiet` hides it (a pipe never gets it: see cli_run.rs).
#[tokio::test(flavor = "multi_thread")]
async fn run_shows_a_spinner_on_a_terminal_unless_quiet() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(text_reply("Hello there.").set_delay(Duration::from_millis(700)))
        .mount(&server)
        .await;
    let url = format!("{}/v1", server.uri());
    let dir = tempfile::tempdir().unwrap();
    let args = |quiet: bool| {
        let mut args = vec![
            "run",
            "--base-url",
            &url,
            "--model",
            "mock",
            "--no-bash",
            "--stream",
            "--root",
            dir.path().to_str().unwrap(),
            "-p",
            "hi",
        ];
        if quiet {
            args.push("--quiet");
        }
        args.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    let loud = args(false);
    let mut run = Terminal::spawn(&loud.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    run.expect("step 1: waiting for the model");
    run.expect("Hello there.");
    let screen = run.finish();
    assert!(screen.contains("[Completed] 1 step(s)"), "{screen}");

    let quiet = args(true);
    let run = Terminal::spawn(&quiet.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    let screen = run.finish();
    assert!(screen.contains("Hello there."), "{screen}");
    assert!(!screen.contains("waiting for the model"), "{screen}");
}

#[tokio::test(flavor = "multi_thread")]
async fn approval_prompts_appear_inline_and_always_holds_for_the_rest_of_the_chat() {
    let server = scripted_server().await;
    let url = format!("{}/v1", server.uri());
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("todo.txt"), "buy milk\n").unwrap();
    let history = dir.path().join("history");
    let mut args = chat_args(&url, dir.path(), &history);
    args.extend(["--no-bash", "--require-approval", "read_file"]);
    let mut chat = Terminal::spawn(&args, &[]);
    chat.expect("you> ");

    // yes: the call runs and its result reaches the model
    chat.type_line("What is on the list?");
    chat.expect("Allow read_file (call call_1, fingerprint ");
    chat.expect("  path: todo.txt");
    chat.expect("[y]es / [n]o / [e]dit / [a]lways for this tool");
    chat.type_line("y");
    let turn = chat.expect("you> ");
    assert!(
        turn.contains("The list says: ") && turn.contains("buy milk"),
        "{turn}"
    );

    // no, with a reason: the model reads the reason, the file is not read
    chat.type_line("What is on the list?");
    chat.expect("Allow read_file");
    chat.type_line("n");
    chat.expect("Reason");
    chat.type_line("not today");
    let turn = chat.expect("you> ");
    assert!(turn.contains("not today"), "{turn}");
    assert!(!turn.contains("buy milk"), "{turn}");

    // always: approved now and never asked again in this chat
    chat.type_line("What is on the list?");
    chat.expect("Allow read_file");
    chat.type_line("a");
    let turn = chat.expect("you> ");
    assert!(turn.contains("buy milk"), "{turn}");
    chat.type_line("What is on the list?");
    let turn = chat.expect("you> ");
    assert!(
        turn.contains("buy milk") && !turn.contains("Allow"),
        "{turn}"
    );
    chat.type_line("/exit");
    chat.finish();
}

/// `/mode` rebuilds the agent in another trace mode; the calls `--require-approval` names
/// still wait for the person (they once ran unasked after a `/mode`).
#[tokio::test(flavor = "multi_thread")]
async fn a_mode_change_keeps_the_calls_that_need_approval_waiting() {
    let server = scripted_server().await;
    let url = format!("{}/v1", server.uri());
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("todo.txt"), "buy milk\n").unwrap();
    let history = dir.path().join("history");
    let mut args = chat_args(&url, dir.path(), &history);
    args.extend(["--no-bash", "--require-approval", "read_file"]);
    let mut chat = Terminal::spawn(&args, &[]);
    chat.expect("you> ");
    chat.type_line("/mode separated");
    chat.expect("mode: separated");
    chat.expect("you> ");
    chat.type_line("What is on the list?");
    chat.expect("Allow read_file (call call_1, fingerprint ");
    chat.type_line("n");
    chat.expect("Reason");
    chat.type_line("not now");
    let turn = chat.expect("you> ");
    assert!(!turn.contains("buy milk"), "{turn}");
    chat.type_line("/exit");
    chat.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn on_a_colour_terminal_the_answer_is_rendered_as_markdown() {
    let server = scripted_server().await;
    let url = format!("{}/v1", server.uri());
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("history");
    let args = chat_args(&url, dir.path(), &history);
    // NO_COLOR empty: colour is on (the chat is on a terminal).
    let mut chat = Terminal::spawn(&args, &[("NO_COLOR", "")]);
    chat.expect("you> ");
    chat.type_line("show me markdown");
    let turn = chat.expect("you> ");
    assert!(
        turn.contains("\u{1b}[1mSteps\u{1b}[0m"),
        "the heading is bold: {turn:?}"
    );
    assert!(
        turn.contains("• run \u{1b}[36mls\u{1b}[0m \u{1b}[1mnow\u{1b}[0m"),
        "the bullet, code and bold: {turn:?}"
    );
    assert!(
        turn.contains("done"),
        "the last line, without a newline: {turn:?}"
    );
    assert!(
        !turn.contains("## Steps") && !turn.contains("**now**"),
        "{turn:?}"
    );
    chat.type_line("/exit");
    chat.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_list_streamed_in_small_pieces_has_a_bullet_on_every_item() {
    let server = scripted_server().await;
    let url = format!("{}/v1", server.uri());
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("history");
    let args = chat_args(&url, dir.path(), &history);
    let mut chat = Terminal::spawn(&args, &[("NO_COLOR", "")]);
    chat.expect("you> ");
    chat.type_line("list three fruits");
    let turn = chat.expect("you> ");
    for item in ["• apple", "• banana", "• cherry"] {
        assert!(turn.contains(item), "{item}: {turn:?}");
    }
    assert!(
        !turn.contains("- ") && !turn.contains("* cherry"),
        "every item is a bullet, the last one too: {turn:?}"
    );
    chat.type_line("/exit");
    chat.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_written_as_text_is_shown_once_as_the_tool_line() {
    let server = scripted_server().await;
    let url = format!("{}/v1", server.uri());
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("todo.txt"), "buy milk\n").unwrap();
    let history = dir.path().join("history");
    let mut args = chat_args(&url, dir.path(), &history);
    args.push("--no-bash");
    let mut chat = Terminal::spawn(&args, &[]);
    chat.expect("you> ");
    chat.type_line("Read todo.txt, with the call as text.");
    let turn = chat.expect("you> ");
    assert!(turn.contains("assistant: I'll read the list:"), "{turn}");
    assert_eq!(
        turn.matches("> read_file(").count(),
        1,
        "the call is shown once, as the tool line: {turn}"
    );
    assert!(
        // marked as recovered from text, so a person knows the model did not call it natively
        turn.contains(r#"> read_file({"path":"todo.txt"}) (from text) ... ok ("#),
        "{turn}"
    );
    assert!(
        !turn.contains("```") && !turn.contains(r#""name""#),
        "the fenced JSON is not shown: {turn}"
    );

    // A call-shaped block in a reply that runs nothing is text, shown as written.
    chat.type_line("Show an example call.");
    let turn = chat.expect("you> ");
    assert!(
        turn.contains("An example:\r\n```json\r\n{\"name\": \"widget\", \"arguments\": {\"size\": 3}}\r\n```\r\nThat is all."),
        "{turn:?}"
    );
    assert!(!turn.contains("> widget"), "{turn}");
    chat.type_line("/exit");
    chat.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_set_aside_is_marked_before_the_model_is_asked_again() {
    let server = scripted_server().await;
    let url = format!("{}/v1", server.uri());
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("todo.txt"), "buy milk\n").unwrap();
    let history = dir.path().join("history");
    let mut args = chat_args(&url, dir.path(), &history);
    args.push("--no-bash");
    let mut chat = Terminal::spawn(&args, &[]);
    chat.expect("you> ");
    chat.type_line("Answer from memory: what does todo.txt say?");
    let turn = chat.expect("you> ");
    let set_aside = turn
        .find(
            "(not the answer: the model answered about a file without looking at it; asking again)",
        )
        .unwrap_or_else(|| panic!("the set-aside reply is marked: {turn}"));
    let guess = turn.find("It says to buy eggs.").unwrap();
    let call = turn.find("> read_file(").unwrap();
    let answer = turn
        .find("The list says: ")
        .unwrap_or_else(|| panic!("the answer follows: {turn}"));
    assert!(
        guess < set_aside && set_aside < call && call < answer,
        "{turn}"
    );
    assert!(turn[answer..].contains("buy milk"), "{turn}");
    chat.type_line("/exit");
    chat.finish();
}
