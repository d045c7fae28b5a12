//! Snapshots of the exact bodies each provider receives for one conversation: system prompt,
//! user text with an image, an assistant turn with text and two tool calls, the two tool
//! results, tools, tool choice and options. Bodies are captured from the mock server.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use common::*;
use inference::{
    InferenceRequest, LanguageModel, Message, ResponseFormat, ToolCall, ToolChoice, ToolSchema,
};
use messages::ContentPart;
use serde_json::json;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer};

fn conversation() -> InferenceRequest {
    InferenceRequest::new(vec![
        Message::system("You are a travel assistant. Use tools for live data."),
        Message::user("Which city is this, and what is the weather and time there?")
            .with_part(ContentPart::image_url("data:image/png;base64,iVBORw0KGgoAAAANSUhEUg=="))
            .with_part(ContentPart::image_url("https://example.com/eiffel.jpg")),
        Message::assistant_tool_calls([
            ToolCall::new("call_weather_1", "get_weather", json!({"city": "Paris"})),
            ToolCall::new("call_time_2", "get_time", json!({"timezone": "Europe/Paris"})),
        ])
        .with_content("That is Paris. Let me check both."),
        Message::tool_result("call_weather_1", "get_weather", "22°C and sunny"),
        Message::tool_result("call_time_2", "get_time", "14:05"),
    ])
    .with_tools([
        ToolSchema::new(
            "get_weather",
            "Current weather for a city",
            json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        ),
        ToolSchema::new(
            "get_time",
            "Local time in a timezone",
            json!({"type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"]}),
        ),
    ])
    .with_tool_choice(ToolChoice::Auto)
    .with_parallel_tool_calls(true)
    .with_max_tokens(512)
    .with_temperature(0.0)
    .with_option("metadata", json!({"user_id": "u-42"}))
}

async fn capture(server: &MockServer, fixture: &str) {
    Mock::given(method("POST"))
        .respond_with(json_fixture(fixture))
        .mount(server)
        .await;
}

#[tokio::test]
async fn openai_request_body() {
    let server = MockServer::start().await;
    capture(&server, "openai_text.json").await;
    openai(&server, Some("sk-test"))
        .complete(conversation())
        .await
        .unwrap();
    insta::assert_json_snapshot!("openai_request_body", received_bodies(&server).await[0]);
}

#[tokio::test]
async fn openai_request_body_with_json_schema() {
    let server = MockServer::start().await;
    capture(&server, "openai_text.json").await;
    let request = InferenceRequest::new(vec![Message::user("Give me a city.")])
        .with_response_format(ResponseFormat::JsonSchema {
            name: "city".into(),
            schema: json!({"type": "object", "properties": {"name": {"type": "string"}}}),
            strict: true,
        });
    let _stream = openai(&server, None).stream(request).await.unwrap();
    insta::assert_json_snapshot!(
        "openai_stream_request_with_json_schema",
        received_bodies(&server).await[0]
    );
}

#[tokio::test]
async fn anthropic_request_body() {
    let server = MockServer::start().await;
    capture(&server, "anthropic_text.json").await;
    anthropic(&server).complete(conversation()).await.unwrap();
    insta::assert_json_snapshot!("anthropic_request_body", received_bodies(&server).await[0]);
}
