//! `Anthropic` against a local mock server replaying real provider payloads.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use common::*;
use futures::StreamExt;
use inference::{
    collect_stream, FinishReason, InferenceError, InferenceEvent, InferenceRequest, LanguageModel,
    Message, ToolCall, Usage,
};
use serde_json::json;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const MESSAGES: &str = "/v1/messages";

async fn server_answering(template: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(MESSAGES))
        .and(header("x-api-key", "sk-ant-test-secret"))
        .and(header("anthropic-version", "2023-06-01"))
        .respond_with(template)
        .mount(&server)
        .await;
    server
}

fn request() -> InferenceRequest {
    InferenceRequest::new(vec![
        Message::system("You are a weather assistant."),
        Message::user("Weather and time in Paris?"),
    ])
}

#[tokio::test]
async fn text_with_thinking_and_cache_usage() {
    let server = server_answering(json_fixture("anthropic_text.json")).await;
    let response = anthropic(&server).complete(request()).await.unwrap();
    assert_eq!(response.content(), "Hello! How can I help you today?");
    assert_eq!(
        response.reasoning(),
        Some("Simple greeting; reply in kind.")
    );
    assert_eq!(response.finish_reason(), FinishReason::Stop);
    assert_eq!(
        response.usage(),
        Usage {
            input_tokens: 12,
            output_tokens: 21,
            cache_read_tokens: 2048,
            cache_write_tokens: 100,
            reasoning_tokens: 0,
        }
    );
    assert_eq!(response.id(), Some("msg_01XFDUDYJgAACzvnptvVoYEL"));
    let body = &received_bodies(&server).await[0];
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "You are a weather assistant.",
                "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(body["max_tokens"], 4096);
    assert_eq!(body["messages"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn text_next_to_two_tool_uses() {
    let server = server_answering(json_fixture("anthropic_tool_use.json")).await;
    let response = anthropic(&server).complete(request()).await.unwrap();
    assert_eq!(
        response.content(),
        "I'll check the weather and the time in Paris."
    );
    assert_eq!(response.finish_reason(), FinishReason::ToolCalls);
    assert_eq!(
        response.tool_calls(),
        &[
            ToolCall::new(
                "toolu_01A09q90qw90lq917835lq9",
                "get_weather",
                json!({"city": "Paris", "unit": "celsius"})
            ),
            ToolCall::new(
                "toolu_01B22x81kw11pz002938mm1",
                "get_time",
                json!({"timezone": "Europe/Paris"})
            ),
        ]
    );
}

#[tokio::test]
async fn stream_with_thinking_text_and_split_tool_input() {
    let server = server_answering(sse_fixture("anthropic_stream_tool_use.sse")).await;
    let model = anthropic(&server);
    let events: Vec<InferenceEvent> = model
        .stream(request())
        .await
        .unwrap()
        .map(|e| e.unwrap())
        .collect()
        .await;
    // The first call is complete as soon as its block stops, before the second starts.
    let first_complete = events
        .iter()
        .position(|e| matches!(e, InferenceEvent::ToolCallComplete { index: 0, .. }))
        .unwrap();
    let second_start = events
        .iter()
        .position(|e| matches!(e, InferenceEvent::ToolCallDelta { index: 1, .. }))
        .unwrap();
    assert!(first_complete < second_start);
    assert_eq!(
        events.last(),
        Some(&InferenceEvent::Finish {
            reason: FinishReason::ToolCalls
        })
    );

    let response = collect_stream(model.stream(request()).await.unwrap())
        .await
        .unwrap();
    assert_eq!(response.content(), "Okay, let's check both.");
    assert_eq!(response.reasoning(), Some("Need weather and time."));
    assert_eq!(
        response.tool_calls(),
        &[
            ToolCall::new(
                "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
                "get_weather",
                json!({"city": "Paris"})
            ),
            ToolCall::new(
                "toolu_01W9zL8b2PDaNnqQzbLtYb3s",
                "get_time",
                json!({"timezone": "Europe/Paris"})
            ),
        ]
    );
    assert_eq!(
        response.usage(),
        Usage {
            input_tokens: 472,
            output_tokens: 89,
            cache_read_tokens: 256,
            ..Usage::default()
        }
    );
    assert_eq!(received_bodies(&server).await[0]["stream"], true);
}

#[tokio::test]
async fn an_error_event_ends_the_stream_with_a_typed_error() {
    let server = server_answering(sse_fixture("anthropic_stream_error.sse")).await;
    let items: Vec<_> = anthropic(&server)
        .stream(request())
        .await
        .unwrap()
        .collect()
        .await;
    assert_eq!(
        items,
        vec![
            Ok(InferenceEvent::TextDelta {
                text: "Partial".into()
            }),
            Err(InferenceError::Http {
                status: 529,
                message: "Overloaded".into()
            }),
        ]
    );
}

#[tokio::test]
async fn a_truncated_stream_ends_with_a_typed_error() {
    let server = server_answering(sse_fixture("anthropic_stream_truncated.sse")).await;
    let result = collect_stream(anthropic(&server).stream(request()).await.unwrap()).await;
    let error = result.unwrap_err();
    assert!(error.to_string().contains("message_stop"), "{error}");
}

#[tokio::test]
async fn overloaded_is_retried_then_reported() {
    let server = server_answering(error_fixture(529, "anthropic_error_overloaded.json")).await;
    let error = anthropic(&server).complete(request()).await.unwrap_err();
    assert_eq!(
        error,
        InferenceError::Http {
            status: 529,
            message: "Overloaded".into()
        }
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

#[tokio::test]
async fn a_bad_request_is_not_retried_and_explains_itself() {
    let server = server_answering(error_fixture(400, "anthropic_error_400.json")).await;
    let error = anthropic(&server).complete(request()).await.unwrap_err();
    assert_eq!(error.status(), Some(400));
    assert!(error.to_string().contains("unexpected `tool_use_id`"));
    assert!(!format!("{error:?}").contains("sk-ant-test-secret"));
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn rate_limit_then_success() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(MESSAGES))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "0")
                .set_body_raw(
                    r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}"#,
                    "application/json",
                ),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(MESSAGES))
        .respond_with(json_fixture("anthropic_text.json"))
        .mount(&server)
        .await;
    let response = anthropic(&server).complete(request()).await.unwrap();
    assert_eq!(response.content(), "Hello! How can I help you today?");
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}
