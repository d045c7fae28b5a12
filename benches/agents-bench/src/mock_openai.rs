//! A tiny OpenAI-compatible server on 127.0.0.1 for benchmarks of the real HTTP provider: it
//! answers the two-step conversation (a `noop` tool call, then [`ANSWER`](crate::ANSWER))
//! at once, deciding from the end of the body (a request whose last message is a tool result
//! gets the answer), so its own cost does not grow with the history.
//!
//! Blocking std sockets on their own threads (one per connection, kept alive), so it needs no
//! runtime and no dependency. It refuses chunked uploads (411): the provider must send a
//! `Content-Length`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use agents_core::Agent;
use agents_processing::TraceRetention;
use inference::OpenAiCompatible;

/// The tool call answer.
const TOOL_CALL: &str = r#"{"id":"r1","object":"chat.completion","model":"mock","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"noop","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}"#;

/// The `http_step` set-up: a mock server, the real [`OpenAiCompatible`] provider against it,
/// and the overhead bench's agent ([`tool_calling_agent`](crate::tool_calling_agent),
/// separated mode) on that provider. The criterion bench, `bench-report` and `loop-profile`
/// measure the same thing.
///
/// # Errors
/// A message when the server cannot start or the provider cannot be made.
pub fn http_step_agent() -> Result<(MockOpenAi, OpenAiCompatible, Agent), String> {
    let server = MockOpenAi::start().map_err(|e| e.to_string())?;
    let model =
        OpenAiCompatible::new(server.base_url(), None, "mock").map_err(|e| e.to_string())?;
    let agent = crate::tool_calling_agent(model.clone(), TraceRetention::Ephemeral);
    Ok((server, model, agent))
}

/// A running mock server; it lives as long as the process.
#[derive(Debug)]
pub struct MockOpenAi {
    address: SocketAddr,
    /// Its chat completions URL, made once: the raw transfers POST to it in their timed loops.
    chat_url: String,
    received: Arc<AtomicU64>,
}

impl MockOpenAi {
    /// Starts the server on a free port of 127.0.0.1.
    ///
    /// # Errors
    /// When no port can be bound.
    pub fn start() -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let address = listener.local_addr()?;
        let received = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&received);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let counter = Arc::clone(&counter);
                std::thread::spawn(move || serve(stream, &counter));
            }
        });
        Ok(Self {
            address,
            chat_url: format!("http://{address}/v1/chat/completions"),
            received,
        })
    }

    /// The base URL for [`inference::OpenAiCompatible`] (`http://127.0.0.1:PORT/v1`).
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.address)
    }

    /// The URL of its chat completions endpoint, where the provider POSTs.
    pub fn chat_url(&self) -> &str {
        &self.chat_url
    }

    /// POSTs `body` to [`MockOpenAi::chat_url`] with `client`, as the provider sends a request
    /// (JSON content type, the body's own length), and reads the whole reply: what moving a
    /// request's bytes costs, without the agent. Returns the reply's length.
    ///
    /// # Errors
    /// When the request or the reply fails.
    pub async fn post_chat(
        &self,
        client: &reqwest::Client,
        body: reqwest::Body,
    ) -> Result<usize, reqwest::Error> {
        let response = client
            .post(self.chat_url())
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await?;
        Ok(response.bytes().await?.len())
    }

    /// Body bytes received so far.
    pub fn bytes_received(&self) -> u64 {
        self.received.load(Ordering::Relaxed)
    }
}

fn serve(stream: TcpStream, received: &AtomicU64) {
    let _ = stream.set_nodelay(true);
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::with_capacity(1 << 16, stream);
    let mut body = Vec::new();
    let mut line = String::new();
    loop {
        let mut length = None;
        let mut chunked = false;
        // Request line and headers.
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            let lower = header.to_ascii_lowercase();
            if let Some(value) = lower.strip_prefix("content-length:") {
                length = value.trim().parse::<usize>().ok();
            }
            if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
                chunked = true;
            }
        }
        let Some(length) = length.filter(|_| !chunked) else {
            let _ = writer.write_all(
                b"HTTP/1.1 411 Length Required\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
            return;
        };
        body.resize(length, 0);
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        received.fetch_add(length as u64, Ordering::Relaxed);
        let answer = if last_role_is_tool(&body) {
            answer_json()
        } else {
            TOOL_CALL.to_owned()
        };
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{answer}",
            answer.len()
        );
        if writer.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}

fn answer_json() -> String {
    format!(
        r#"{{"id":"r2","object":"chat.completion","model":"mock","choices":[{{"index":0,"message":{{"role":"assistant","content":"{}"}},"finish_reason":"stop"}}],"usage":{{"prompt_tokens":12,"completion_tokens":6,"total_tokens":18}}}}"#,
        crate::ANSWER
    )
}

/// Whether the last `"role":` of the body (the last message; tool definitions have none)
/// says `tool`. Looks at the end of the body only.
fn last_role_is_tool(body: &[u8]) -> bool {
    const ROLE: &[u8] = b"\"role\":";
    body.windows(ROLE.len())
        .rposition(|w| w == ROLE)
        .is_some_and(|at| body[at + ROLE.len()..].starts_with(b"\"tool\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_role_decides_the_answer() {
        assert!(last_role_is_tool(
            br#"{"messages":[{"role":"user"},{"role":"tool","content":"ok"}],"tools":[]}"#
        ));
        assert!(!last_role_is_tool(
            br#"{"messages":[{"role":"tool"},{"role":"user","content":"x"}]}"#
        ));
        assert!(!last_role_is_tool(b"{}"));
    }
}
