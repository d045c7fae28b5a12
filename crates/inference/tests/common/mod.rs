//! Helpers shared by the provider tests: fixtures, fast retry policies, mock responses.

#![allow(dead_code)]

use std::time::Duration;

use inference::{Anthropic, OpenAiCompatible, RetryPolicy};
use serde_json::Value;
use wiremock::{MockServer, ResponseTemplate};

/// The text of `tests/fixtures/<name>`.
pub fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

/// Three attempts with millisecond delays, so retry tests stay fast.
pub fn fast_retries() -> RetryPolicy {
    RetryPolicy::default()
        .with_max_attempts(3)
        .with_delays(Duration::from_millis(1), Duration::from_millis(5))
}

/// An OpenAI-compatible client for the mock server.
pub fn openai(server: &MockServer, key: Option<&str>) -> OpenAiCompatible {
    OpenAiCompatible::builder()
        .base_url(format!("{}/v1", server.uri()))
        .api_key(key)
        .model("gpt-4o-mini")
        .retry(fast_retries())
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

/// An Anthropic client for the mock server.
pub fn anthropic(server: &MockServer) -> Anthropic {
    Anthropic::builder()
        .base_url(server.uri())
        .api_key("sk-ant-test-secret")
        .model("claude-sonnet-4-5")
        .retry(fast_retries())
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

/// A 200 answer with a JSON fixture.
pub fn json_fixture(name: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(fixture(name), "application/json")
}

/// A 200 answer with an SSE fixture.
pub fn sse_fixture(name: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(fixture(name), "text/event-stream")
}

/// An error answer with a JSON body.
pub fn error_fixture(status: u16, name: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_raw(fixture(name), "application/json")
}

/// The JSON bodies the mock server received, in order.
pub async fn received_bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}
