//! End-to-end tests against a real OpenAI-compatible server (OpenAI, llama.cpp
//! `llama-server`, Ollama, vLLM, LM Studio). Ignored by default; run with
//! `cargo test -p inference --test e2e_openai -- --ignored` after setting `OPENAI_BASE_URL`
//! (and `OPENAI_MODEL`, plus `OPENAI_API_KEY` when the server needs one). See README.md.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    missing_docs
)]

use std::time::Duration;

use inference::{
    collect_stream, InferenceRequest, LanguageModel, Message, OpenAiCompatible, ToolSchema,
};
use serde_json::{json, Value};

/// The client from the environment, or `None` (with a message) when `OPENAI_BASE_URL` is unset.
fn model() -> Option<OpenAiCompatible> {
    if std::env::var("OPENAI_BASE_URL").map_or(true, |v| v.trim().is_empty()) {
        eprintln!("skipped: set OPENAI_BASE_URL (and OPENAI_MODEL) to run the end-to-end tests");
        return None;
    }
    let model = std::env::var("OPENAI_MODEL").unwrap_or_else(|_| "local".to_owned());
    let client = OpenAiCompatible::builder()
        .base_url(std::env::var("OPENAI_BASE_URL").unwrap())
        .api_key(std::env::var("OPENAI_API_KEY").ok().as_deref())
        .model(model)
        .timeout(Duration::from_secs(180))
        .build()
        .expect("client from the environment");
    Some(client)
}

#[tokio::test]
#[ignore = "needs a real server: set OPENAI_BASE_URL and run with --ignored"]
async fn plain_completion() {
    let Some(model) = model() else { return };
    let request = InferenceRequest::new(vec![
        Message::system("You answer in one short sentence."),
        Message::user("What is the capital of France?"),
    ])
    .with_max_tokens(64)
    .with_temperature(0.0);
    let response = model.complete(request).await.unwrap();
    assert!(
        response.content().to_lowercase().contains("paris"),
        "{response:?}"
    );
    assert!(
        response.usage().input_tokens > 0,
        "usage is reported: {response:?}"
    );
}

#[tokio::test]
#[ignore = "needs a real server: set OPENAI_BASE_URL and run with --ignored"]
async fn tool_call_in_tool_calls_or_as_json_text() {
    let Some(model) = model() else { return };
    let request = InferenceRequest::new(vec![
        Message::system("You are a helpful assistant. Use the tools when they help."),
        Message::user("What is the weather in Paris right now?"),
    ])
    .with_tools([ToolSchema::new(
        "get_weather",
        "Get the current weather for a city",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    )])
    .with_max_tokens(128)
    .with_temperature(0.0);
    let response = model.complete(request).await.unwrap();
    let (name, arguments) = match response.tool_calls().first() {
        Some(call) => (call.name().to_owned(), call.arguments().clone()),
        // Small local models often write the call as JSON text instead.
        None => {
            let text = response
                .content()
                .trim()
                .trim_start_matches("```json")
                .trim_matches('`');
            let value: Value = serde_json::from_str(text.trim())
                .unwrap_or_else(|_| panic!("neither tool_calls nor JSON text: {response:?}"));
            (
                value["name"].as_str().unwrap_or_default().to_owned(),
                value["arguments"].clone(),
            )
        }
    };
    assert_eq!(name, "get_weather");
    assert!(
        arguments["city"]
            .as_str()
            .unwrap_or_default()
            .contains("Paris"),
        "{arguments}"
    );
}

#[tokio::test]
#[ignore = "needs a real server: set OPENAI_BASE_URL and run with --ignored"]
async fn streamed_completion() {
    let Some(model) = model() else { return };
    let request = InferenceRequest::new(vec![Message::user(
        "Count from 1 to 5, separated by spaces.",
    )])
    .with_max_tokens(32)
    .with_temperature(0.0);
    let response = collect_stream(model.stream(request).await.unwrap())
        .await
        .unwrap();
    assert!(response.content().contains('3'), "{response:?}");
}
