//! The HTTP layer under hostile servers: streams that stall, dribble or send one endless
//! line, and redirects that would carry the API key to another server. The stream servers
//! are raw TCP servers on 127.0.0.1 (one thread each, stopped with the test), the redirect
//! targets wiremock servers on other ports (another port is another origin).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use futures::StreamExt;
use inference::{
    Anthropic, InferenceError, InferenceEvent, InferenceRequest, LanguageModel, Message,
    OpenAiCompatible,
};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// What the raw server writes after the response headers.
#[derive(Clone, Copy)]
enum Behaviour {
    /// One complete event, then silence with the connection open.
    StallAfterOneEvent,
    /// One byte of a comment every 50 ms, forever: never silent, never done.
    Dribble,
    /// `data: ` and then 10 MB without a line end.
    HugeLine,
}

const FIRST_EVENT: &str = "data: {\"id\":\"1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n";

/// A server on 127.0.0.1 answering every connection with `behaviour`. It stops when the
/// returned guard is dropped (its connections end when their writes fail or the flag drops).
struct RawServer {
    address: String,
    stop: Arc<AtomicBool>,
}

impl Drop for RawServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop.
        let _ = TcpStream::connect(self.address.trim_start_matches("http://"));
    }
}

fn raw_server(behaviour: Behaviour) -> RawServer {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    thread::spawn(move || {
        for connection in listener.incoming() {
            if flag.load(Ordering::SeqCst) {
                return;
            }
            let Ok(connection) = connection else { continue };
            let flag = flag.clone();
            thread::spawn(move || serve(connection, behaviour, &flag));
        }
    });
    RawServer { address, stop }
}

fn serve(mut connection: TcpStream, behaviour: Behaviour, stop: &AtomicBool) {
    // Read the request head and body (small), then answer.
    let mut request = Vec::new();
    let mut buffer = [0u8; 4096];
    connection
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    while let Ok(n) = connection.read(&mut buffer) {
        if n == 0 {
            break;
        }
        request.extend_from_slice(&buffer[..n]);
        if let Some(head_end) = find(&request, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&request[..head_end]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if request.len() >= head_end + 4 + length {
                break;
            }
        }
    }
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
    if connection.write_all(head.as_bytes()).is_err() {
        return;
    }
    let _ = match behaviour {
        Behaviour::StallAfterOneEvent => connection.write_all(FIRST_EVENT.as_bytes()).map(|()| {
            while !stop.load(Ordering::SeqCst) {
                thread::sleep(Duration::from_millis(20));
            }
        }),
        Behaviour::Dribble => (|| {
            connection.write_all(b":")?;
            while !stop.load(Ordering::SeqCst) {
                thread::sleep(Duration::from_millis(50));
                connection.write_all(b"x")?;
            }
            Ok(())
        })(),
        Behaviour::HugeLine => (|| {
            connection.write_all(b"data: ")?;
            let block = vec![b'a'; 64 * 1024];
            for _ in 0..160 {
                connection.write_all(&block)?;
            }
            Ok::<(), std::io::Error>(())
        })(),
    };
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn request() -> InferenceRequest {
    InferenceRequest::new(vec![Message::user("Hello")])
}

fn openai_for(base: &str) -> inference::OpenAiCompatibleBuilder {
    OpenAiCompatible::builder()
        .base_url(format!("{base}/v1"))
        .model("m")
        .max_attempts(1)
        .timeout(Duration::from_secs(5))
}

/// Every item of the stream, up to the first error.
async fn drain(model: &OpenAiCompatible) -> (Vec<InferenceEvent>, Option<InferenceError>) {
    let mut stream = model.stream(request()).await.unwrap();
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(event) => events.push(event),
            Err(error) => return (events, Some(error)),
        }
    }
    (events, None)
}

#[tokio::test]
async fn a_stream_that_stalls_ends_with_a_retryable_idle_timeout() {
    let server = raw_server(Behaviour::StallAfterOneEvent);
    let model = openai_for(&server.address)
        .stream_idle_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let started = Instant::now();
    let (events, error) = drain(&model).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, InferenceEvent::TextDelta { text } if text == "Hel")),
        "{events:?}"
    );
    let error = error.expect("the stream must end with an error");
    assert_eq!(
        error,
        InferenceError::Timeout {
            after: Duration::from_millis(300)
        }
    );
    assert!(error.is_retryable() && error.is_timeout());
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_stream_that_dribbles_ends_at_its_deadline_not_retryable() {
    let server = raw_server(Behaviour::Dribble);
    let model = openai_for(&server.address)
        .stream_idle_timeout(Duration::from_millis(500))
        .stream_deadline(Duration::from_millis(1200))
        .build()
        .unwrap();
    let started = Instant::now();
    let (events, error) = drain(&model).await;
    let elapsed = started.elapsed();
    assert!(events.is_empty(), "{events:?}");
    let error = error.expect("the stream must end with an error");
    assert_eq!(
        error,
        InferenceError::StreamDeadline {
            after: Duration::from_millis(1200)
        }
    );
    assert!(error.is_timeout() && !error.is_retryable());
    assert!(error.to_string().contains("stream_deadline"), "{error}");
    assert!(elapsed >= Duration::from_millis(1100), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
}

#[tokio::test]
async fn a_ten_megabyte_line_is_refused_with_a_typed_error() {
    let server = raw_server(Behaviour::HugeLine);
    // The default limit (8 MiB) is below the line.
    let model = openai_for(&server.address).build().unwrap();
    let (events, error) = drain(&model).await;
    assert!(events.is_empty(), "{events:?}");
    let error = error.expect("the stream must end with an error");
    assert_eq!(error, InferenceError::EventTooLarge { limit: 8 << 20 });
    assert!(!error.is_retryable());
    assert!(error.to_string().contains("max_event_bytes"), "{error}");
    // A lower limit applies as set.
    let model = openai_for(&server.address)
        .max_event_bytes(1000)
        .build()
        .unwrap();
    let (_, error) = drain(&model).await;
    assert_eq!(error, Some(InferenceError::EventTooLarge { limit: 1000 }));
}

#[tokio::test]
async fn a_body_past_the_limit_is_refused_with_a_typed_error_not_read_whole() {
    // 33 MiB of a JSON answer, over the default 32 MiB (it was read whole: 64 MiB passed)
    let huge = format!(
        "{{\"id\":\"x\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{{\"index\":0,\"message\":{{\"role\":\"assistant\",\"content\":\"{}\"}},\"finish_reason\":\"stop\"}}]}}",
        "a".repeat(33 << 20)
    );
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(huge, "application/json"))
        .mount(&server)
        .await;
    let model = openai_for(&server.uri()).build().unwrap();
    let error = model.complete(request()).await.unwrap_err();
    assert_eq!(error, InferenceError::BodyTooLarge { limit: 32 << 20 });
    assert!(!error.is_retryable());
    assert!(error.to_string().contains("max_body_bytes"), "{error}");
    // A lower limit applies as set, to error bodies and to JSON answers of a stream request.
    let model = openai_for(&server.uri())
        .max_body_bytes(1000)
        .build()
        .unwrap();
    assert_eq!(
        model.stream(request()).await.err(),
        Some(InferenceError::BodyTooLarge { limit: 1000 })
    );
}

/// A server that redirects every request to `target` with `status`.
async fn redirecting_to(target: &str, status: u16) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(status).insert_header("location", target))
        .mount(&server)
        .await;
    server
}

/// A server that answers everything (it must not be reached).
async fn answering_everything() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(common::json_fixture("anthropic_text.json"))
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn credentials_do_not_follow_a_redirect_to_another_origin() {
    let elsewhere = answering_everything().await;
    for status in [301u16, 302, 307, 308] {
        let target = format!("{}/v1/messages", elsewhere.uri());
        let origin = redirecting_to(&target, status).await;
        let model = Anthropic::builder()
            .base_url(origin.uri())
            .api_key("sk-ant-secret-key")
            .header("x-gateway-token", "gw-secret-token")
            .model("claude")
            .max_attempts(1)
            .build()
            .unwrap();
        let error = model.complete(request()).await.unwrap_err();
        assert_eq!(error.status(), Some(status), "{error}");
        assert!(!error.is_retryable());
        let message = error.to_string();
        assert!(message.contains(&target), "{message}");
        assert!(message.contains("base URL"), "{message}");
        assert!(!message.contains("secret"), "{message}");
    }
    let reached = elsewhere.received_requests().await.unwrap();
    assert!(
        reached.is_empty(),
        "the other server received {} request(s), with headers {:?}",
        reached.len(),
        reached.first().map(|r| &r.headers)
    );
}

#[tokio::test]
async fn an_openai_key_does_not_follow_a_redirect_to_another_port() {
    let elsewhere = answering_everything().await;
    let origin = redirecting_to(&format!("{}/v1/chat/completions", elsewhere.uri()), 307).await;
    let model = openai_for(&origin.uri())
        .api_key("sk-openai-secret")
        .header("OpenAI-Organization", "org-secret")
        .build()
        .unwrap();
    let error = model.stream(request()).await.err().unwrap();
    assert_eq!(error.status(), Some(307));
    assert!(elsewhere.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_redirect_within_the_same_server_is_followed_with_the_key() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(
            ResponseTemplate::new(307)
                .insert_header("location", format!("{}/moved/v1/messages", server.uri())),
        )
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/moved/v1/messages"))
        .and(wiremock::matchers::header("x-api-key", "sk-ant-secret-key"))
        .respond_with(common::json_fixture("anthropic_text.json"))
        .mount(&server)
        .await;
    let model = Anthropic::builder()
        .base_url(server.uri())
        .api_key("sk-ant-secret-key")
        .model("claude")
        .max_attempts(1)
        .build()
        .unwrap();
    let response = model.complete(request()).await.unwrap();
    assert!(!response.content().is_empty());
}

#[test]
fn debug_output_shows_no_header_value() {
    let builder = OpenAiCompatible::builder()
        .api_key("sk-openai-secret")
        .header("OpenAI-Organization", "org-secret-value")
        .header("x-gateway-token", "gw-secret-value")
        .model("m");
    let built = builder.clone().build().unwrap();
    let anthropic = Anthropic::builder()
        .api_key("sk-ant-secret")
        .header("anthropic-beta", "beta-secret-value")
        .model("claude");
    let anthropic_built = anthropic.clone().build().unwrap();
    for debug in [
        format!("{builder:?}"),
        format!("{built:?}"),
        format!("{anthropic:?}"),
        format!("{anthropic_built:?}"),
    ] {
        assert!(!debug.contains("secret"), "{debug}");
        // The names are still there, for diagnosis.
        assert!(
            debug.contains("OpenAI-Organization")
                || debug.contains("openai-organization")
                || debug.contains("anthropic-beta"),
            "{debug}"
        );
    }
}
