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

/// Ten turns of questions and answers: what persists between runs.
fn persistent_conversation() -> Vec<Message> {
    let mut messages = vec![Message::system("You are a senior engineer. Use the tools.")];
    for turn in 0..2 {
        messages.push(Message::user(format!(
            "Question {turn}: why does orders-{turn} time out?"
        )));
        messages.push(Message::assistant(format!(
            "Answer {turn}: the pool is too small."
        )));
    }
    messages.push(Message::user("Question 2: and orders-2?"));
    messages
}

/// One tool round of the running execution.
fn tool_round() -> Vec<Message> {
    vec![
        Message::assistant_tool_calls([
            ToolCall::new("c1", "read_file", json!({"path": "src/orders_2.rs"})),
            ToolCall::new("c2", "read_file", json!({"path": "config/orders_2.json"})),
        ]),
        Message::tool_result("c1", "read_file", "pub async fn handle_order() { .. }"),
        Message::tool_result("c2", "read_file", "{\"pool_size\": 4}"),
    ]
}

fn tools() -> Vec<ToolSchema> {
    vec![
        ToolSchema::new(
            "search",
            "Search the code",
            json!({"type": "object", "properties": {"pattern": {"type": "string"}}}),
        ),
        ToolSchema::new(
            "read_file",
            "Read a file",
            json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        ),
    ]
}

/// Legacy mode: the tool trace persists, so the whole conversation is the stable prefix: one
/// breakpoint on the last message (a tool result), plus tools and system.
#[tokio::test]
async fn anthropic_cache_breakpoints_legacy_trace() {
    let mut messages = persistent_conversation();
    messages.extend(tool_round());
    let last = messages.len() - 1;
    let request = InferenceRequest::new(messages)
        .with_tools(tools())
        .with_cache_breakpoint(last);
    let body = anthropic_body_for(request, true).await;
    insta::assert_json_snapshot!("anthropic_cache_breakpoints_legacy", body);
    let marks = body.to_string().matches("cache_control").count();
    assert_eq!(marks, 3, "tools, system, end of conversation");
}

/// Separated mode: the persistent conversation ends with the user's question; the execution
/// buffer (one tool round) follows. Breakpoints: tools, system, the question (read by every
/// later request, this execution's and the next one's) and the last tool result (read by this
/// execution's next step).
#[tokio::test]
async fn anthropic_cache_breakpoints_separated_trace() {
    let persistent = persistent_conversation();
    let stable_end = persistent.len() - 1;
    let mut messages = persistent;
    messages.extend(tool_round());
    let request = InferenceRequest::new(messages)
        .with_tools(tools())
        .with_cache_breakpoint(stable_end);
    let body = anthropic_body_for(request, true).await;
    insta::assert_json_snapshot!("anthropic_cache_breakpoints_separated", body);
    let marks = body.to_string().matches("cache_control").count();
    assert_eq!(
        marks, 4,
        "tools, system, end of conversation, end of buffer"
    );
}

#[tokio::test]
async fn anthropic_prompt_caching_can_be_turned_off() {
    let request = InferenceRequest::new(persistent_conversation())
        .with_tools(tools())
        .with_cache_breakpoint(2);
    let body = anthropic_body_for(request, false).await;
    assert!(!body.to_string().contains("cache_control"), "{body}");
    assert_eq!(body["system"], "You are a senior engineer. Use the tools.");
}

async fn anthropic_body_for(request: InferenceRequest, caching: bool) -> serde_json::Value {
    let server = MockServer::start().await;
    capture(&server, "anthropic_text.json").await;
    let model = inference::Anthropic::builder()
        .base_url(server.uri())
        .api_key("sk-ant-test")
        .model("claude-sonnet-5-5")
        .prompt_caching(caching)
        .build()
        .unwrap();
    model.complete(request).await.unwrap();
    received_bodies(&server).await.remove(0)
}

#[tokio::test]
async fn openai_sends_the_configured_prompt_cache_key() {
    let server = MockServer::start().await;
    capture(&server, "openai_text.json").await;
    let model = inference::OpenAiCompatible::builder()
        .base_url(format!("{}/v1", server.uri()))
        .model("gpt-5.4")
        .prompt_cache_key("session-42")
        .build()
        .unwrap();
    model
        .complete(InferenceRequest::new(vec![Message::user("hi")]))
        .await
        .unwrap();
    model
        .complete(
            InferenceRequest::new(vec![Message::user("hi")])
                .with_option("prompt_cache_key", "mine"),
        )
        .await
        .unwrap();
    let bodies = received_bodies(&server).await;
    assert_eq!(bodies[0]["prompt_cache_key"], "session-42");
    assert_eq!(
        bodies[1]["prompt_cache_key"], "mine",
        "a request's own key wins"
    );
    // Without the option, no key is sent.
    let plain = openai(&server, None);
    plain
        .complete(InferenceRequest::new(vec![Message::user("hi")]))
        .await
        .unwrap();
    assert!(received_bodies(&server).await[2]
        .get("prompt_cache_key")
        .is_none());
}
