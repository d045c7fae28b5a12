//! Both providers against llmock: text, tool calls, streaming tool-call deltas, usage, retries
//! under injected 429s, and typed errors under broken streams.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::Duration;

use agents_e2e::server;
use futures::StreamExt;
use inference::{
    collect_stream, Anthropic, InferenceError, InferenceEvent, InferenceRequest, LanguageModel,
    OpenAiCompatible, RetryPolicy, ToolSchema,
};
use messages::Message;
use serde_json::json;

fn weather_tool() -> ToolSchema {
    ToolSchema::new(
        "get_weather",
        "Get the current weather for a city",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    )
}

fn openai(url: &str) -> OpenAiCompatible {
    openai_with_attempts(url, 8)
}

/// [`openai`] making up to `attempts` attempts per request.
fn openai_with_attempts(url: &str, attempts: u32) -> OpenAiCompatible {
    OpenAiCompatible::builder()
        .base_url(format!("{url}/v1"))
        .api_key("e2e-key")
        .model("gpt-4o-mini")
        .retry(
            RetryPolicy::default()
                .with_max_attempts(attempts)
                .with_delays(Duration::from_millis(20), Duration::from_millis(200)),
        )
        .build()
        .unwrap()
}

fn anthropic(url: &str) -> Anthropic {
    Anthropic::builder()
        .base_url(format!("{url}/anthropic"))
        .api_key("e2e-key")
        .model("claude-3-5-haiku-latest")
        .build()
        .unwrap()
}

fn models(url: &str) -> Vec<(&'static str, Box<dyn LanguageModel>)> {
    vec![
        ("openai", Box::new(openai(url))),
        ("anthropic", Box::new(anthropic(url))),
    ]
}

#[tokio::test]
async fn text_tool_calls_and_usage_from_both_providers() {
    let Some(url) = server("E2E_LLMOCK_URL") else {
        return;
    };
    for (name, model) in models(&url) {
        let text = model
            .complete(InferenceRequest::new(vec![Message::user("Say hello.")]))
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!text.content().is_empty(), "{name}: empty text");
        assert!(text.usage().total() > 0, "{name}: no usage");

        let request = InferenceRequest::new(vec![Message::user("What is the weather in Paris?")])
            .with_tools([weather_tool()]);
        let call = model.complete(request.clone()).await.unwrap();
        assert_eq!(call.tool_calls().len(), 1, "{name}: {call:?}");
        let tool_call = call.tool_calls()[0].clone();
        assert_eq!(tool_call.name(), "get_weather");
        assert!(
            tool_call.arguments().get("city").is_some(),
            "{name}: {:?}",
            tool_call.arguments()
        );

        // The tool result goes back; the next answer is text.
        let mut follow_up = request.clone();
        follow_up.messages = follow_up
            .messages
            .appended(Message::assistant_tool_calls([tool_call.clone()]))
            .appended(Message::tool_result(
                tool_call.id(),
                "get_weather",
                "22°C and sunny",
            ));
        let answer = model.complete(follow_up).await.unwrap();
        assert!(!answer.has_tool_calls(), "{name}: {answer:?}");
        assert!(!answer.content().is_empty());
    }
}

#[tokio::test]
async fn streaming_tool_call_deltas_assemble_into_calls() {
    let Some(url) = server("E2E_LLMOCK_URL") else {
        return;
    };
    for (name, model) in models(&url) {
        let request = InferenceRequest::new(vec![Message::user("Weather in Rome?")])
            .with_tools([weather_tool()]);
        let mut stream = model.stream(request.clone()).await.unwrap();
        let mut deltas = 0;
        let mut events = Vec::new();
        while let Some(event) = stream.next().await {
            let event = event.unwrap_or_else(|e| panic!("{name}: {e}"));
            if matches!(event, InferenceEvent::ToolCallDelta { .. }) {
                deltas += 1;
            }
            events.push(event);
        }
        assert!(deltas >= 1, "{name}: no tool call deltas in {events:?}");
        let response = collect_stream(model.stream(request).await.unwrap())
            .await
            .unwrap();
        assert_eq!(response.tool_calls()[0].name(), "get_weather", "{name}");
        assert!(response.tool_calls()[0].arguments().is_object());
    }
}

#[tokio::test]
async fn injected_429s_are_retried_until_they_succeed() {
    let Some(url) = server("E2E_LLMOCK_429_URL") else {
        return;
    };
    // llmock answers 429 to 30% of requests at random. With 20 attempts a request fails
    // only when all 20 draw a 429 (0.3^20, about 3e-11); 8 attempts (0.3^8, about 7e-5 per
    // request) failed one CI run in the ten requests below.
    let model = openai_with_attempts(&url, 20);
    for i in 0..10 {
        let answer = model
            .complete(InferenceRequest::new(vec![Message::user(format!(
                "request {i}"
            ))]))
            .await
            .unwrap_or_else(|e| panic!("request {i} failed despite retries: {e}"));
        assert!(!answer.content().is_empty());
    }
    let no_retry = OpenAiCompatible::builder()
        .base_url(format!("{url}/v1"))
        .model("m")
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let mut rate_limited = 0;
    for _ in 0..20 {
        if let Err(error) = no_retry
            .complete(InferenceRequest::new(vec![Message::user("hi")]))
            .await
        {
            assert!(error.is_rate_limit(), "{error:?}");
            rate_limited += 1;
        }
    }
    assert!(rate_limited > 0, "llmock injected no 429 in 20 requests");
}

async fn broken_stream_gives_typed_error(variable: &str) {
    let Some(url) = server(variable) else { return };
    for (name, model) in models(&url) {
        let request =
            InferenceRequest::new(vec![Message::user("Tell me a story about a lighthouse.")]);
        let outcome = match model.stream(request).await {
            Ok(stream) => collect_stream(stream).await,
            Err(error) => Err(error),
        };
        match outcome {
            Err(InferenceError::Transport { .. } | InferenceError::MalformedResponse { .. }) => {}
            Err(other) => panic!("{name}: unexpected error class {other:?}"),
            Ok(response) => panic!("{name}: a broken stream was accepted: {response:?}"),
        }
    }
}

#[tokio::test]
async fn truncated_streams_are_typed_errors() {
    broken_stream_gives_typed_error("E2E_LLMOCK_TRUNCATE_URL").await;
}

#[tokio::test]
async fn malformed_streams_are_typed_errors() {
    broken_stream_gives_typed_error("E2E_LLMOCK_MALFORMED_URL").await;
}
