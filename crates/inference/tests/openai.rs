//! `OpenAiCompatible` against a local mock server replaying real provider payloads.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::time::Duration;

use common::*;
use futures::StreamExt;
use inference::{
    collect_stream, FinishReason, InferenceError, InferenceEvent, InferenceRequest, LanguageModel,
    Message, OpenAiCompatible, RetryPolicy, ToolCall, ToolSchema, Usage,
};
use serde_json::json;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const COMPLETIONS: &str = "/v1/chat/completions";

fn weather_request() -> InferenceRequest {
    InferenceRequest::new(vec![
        Message::system("You are a weather assistant."),
        Message::user("Weather in Paris?"),
    ])
    .with_tools([ToolSchema::new(
        "get_weather",
        "Current weather for a city",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    )])
}

async fn server_answering(template: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(COMPLETIONS))
        .respond_with(template)
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn text_answer_with_usage_reasoning_id_and_model() {
    let server = server_answering(json_fixture("openai_text.json")).await;
    let response = openai(&server, Some("sk-test"))
        .complete(weather_request())
        .await
        .unwrap();
    assert_eq!(response.content(), "It is 22°C and sunny in Paris.");
    assert_eq!(response.finish_reason(), FinishReason::Stop);
    assert!(response.tool_calls().is_empty());
    assert_eq!(
        response.usage(),
        Usage {
            input_tokens: 93,
            output_tokens: 40,
            cache_read_tokens: 1024,
            cache_write_tokens: 0,
            reasoning_tokens: 6,
        }
    );
    assert_eq!(response.usage().total(), 1163);
    assert_eq!(
        response.id(),
        Some("chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG")
    );
    assert_eq!(response.model(), Some("gpt-4o-mini-2024-07-18"));
}

#[tokio::test]
async fn reasoning_content_and_length_finish() {
    let server = server_answering(json_fixture("openai_reasoning.json")).await;
    let response = openai(&server, None)
        .complete(weather_request())
        .await
        .unwrap();
    assert_eq!(
        response.reasoning(),
        Some("The user greets me; answer briefly.")
    );
    assert_eq!(response.finish_reason(), FinishReason::Length);
    assert_eq!(response.usage().reasoning_tokens, 15);
    assert_eq!(response.usage().output_tokens, 5);
}

#[tokio::test]
async fn one_tool_call_with_decoded_arguments() {
    let server = server_answering(json_fixture("openai_tool_calls.json")).await;
    let response = openai(&server, None)
        .complete(weather_request())
        .await
        .unwrap();
    assert_eq!(response.finish_reason(), FinishReason::ToolCalls);
    assert_eq!(response.content(), "");
    assert_eq!(
        response.tool_calls(),
        &[ToolCall::new(
            "call_12345xyz",
            "get_weather",
            json!({"city": "Paris", "unit": "celsius"})
        )]
    );
}

#[tokio::test]
async fn several_tool_calls_keep_order_text_and_ids() {
    let server = server_answering(json_fixture("openai_parallel_tool_calls.json")).await;
    let response = openai(&server, None)
        .complete(weather_request())
        .await
        .unwrap();
    assert_eq!(response.content(), "Let me look both up.");
    let calls: Vec<(&str, &str)> = response
        .tool_calls()
        .iter()
        .map(|c| (c.id(), c.name()))
        .collect();
    assert_eq!(
        calls,
        [
            ("call_weather_1", "get_weather"),
            ("call_time_2", "get_time"),
            ("call_noargs_3", "list_cities")
        ]
    );
    assert_eq!(
        response.tool_calls()[1].arguments(),
        &json!({"timezone": "Europe/Paris"})
    );
    assert_eq!(
        response.tool_calls()[2].arguments(),
        &json!({}),
        "empty arguments mean {{}}"
    );
}

#[tokio::test]
async fn the_key_is_sent_as_bearer_and_never_without_one() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(COMPLETIONS))
        .and(header("authorization", "Bearer sk-test-secret"))
        .respond_with(json_fixture("openai_text.json"))
        .mount(&server)
        .await;
    let with_key = openai(&server, Some("sk-test-secret"));
    with_key.complete(weather_request()).await.unwrap();

    let without_key = openai(&server, None);
    let error = without_key.complete(weather_request()).await.unwrap_err();
    assert_eq!(
        error.status(),
        Some(404),
        "no mock matches a request without the header"
    );
    let requests = server.received_requests().await.unwrap();
    assert!(requests[1].headers.get("authorization").is_none());
    assert!(!format!("{with_key:?}").contains("sk-test-secret"));
}

#[tokio::test]
async fn stream_of_text_collects_into_the_same_answer() {
    let server = server_answering(sse_fixture("openai_stream_text.sse")).await;
    let model = openai(&server, None);
    let stream = model.stream(weather_request()).await.unwrap();
    let response = collect_stream(stream).await.unwrap();
    assert_eq!(response.content(), "It is 22°C in Paris.");
    assert_eq!(response.finish_reason(), FinishReason::Stop);
    assert_eq!(response.usage(), Usage::new(19, 8));
    let body = &received_bodies(&server).await[0];
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
}

#[tokio::test]
async fn stream_assembles_split_tool_arguments_by_index() {
    let server = server_answering(sse_fixture("openai_stream_tool_calls.sse")).await;
    let stream = openai(&server, None)
        .stream(weather_request())
        .await
        .unwrap();
    let events: Vec<InferenceEvent> = stream.map(|e| e.unwrap()).collect().await;

    let fragments: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            InferenceEvent::ToolCallDelta {
                index: 0,
                arguments_delta,
                ..
            } => Some(arguments_delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(fragments, ["", "{\"ci", "ty\": \"Par", "is\"}"]);

    let tail: Vec<&InferenceEvent> = events.iter().rev().take(3).collect();
    assert_eq!(
        tail[0],
        &InferenceEvent::Finish {
            reason: FinishReason::ToolCalls
        }
    );
    assert_eq!(
        tail[1],
        &InferenceEvent::ToolCallComplete {
            index: 1,
            call: ToolCall::new(
                "call_time_2",
                "get_time",
                json!({"timezone": "Europe/Paris"})
            )
        }
    );
    assert_eq!(
        tail[2],
        &InferenceEvent::ToolCallComplete {
            index: 0,
            call: ToolCall::new("call_weather_1", "get_weather", json!({"city": "Paris"}))
        }
    );
    let usage = events.iter().find_map(|e| match e {
        InferenceEvent::Usage { usage } => Some(*usage),
        _ => None,
    });
    assert_eq!(
        usage.map(|u| (u.input_tokens, u.cache_read_tokens)),
        Some((26, 64))
    );
}

#[tokio::test]
async fn a_json_answer_to_a_stream_request_is_replayed_as_events() {
    let server = server_answering(json_fixture("openai_tool_calls.json")).await;
    let stream = openai(&server, None)
        .stream(weather_request())
        .await
        .unwrap();
    let response = collect_stream(stream).await.unwrap();
    assert_eq!(response.tool_calls()[0].id(), "call_12345xyz");
}

#[tokio::test]
async fn a_truncated_stream_ends_with_a_typed_error() {
    let server = server_answering(sse_fixture("openai_stream_truncated.sse")).await;
    let stream = openai(&server, None)
        .stream(weather_request())
        .await
        .unwrap();
    let items: Vec<_> = stream.collect().await;
    assert_eq!(
        items[0],
        Ok(InferenceEvent::TextDelta {
            text: "The weather in".into()
        })
    );
    let last = items.last().unwrap().clone().unwrap_err();
    assert!(matches!(last, InferenceError::Transport { .. }), "{last:?}");
    assert!(last
        .to_string()
        .contains("ended before the answer was complete"));
}

#[tokio::test]
async fn http_errors_carry_the_provider_message_and_are_not_retried() {
    let server = server_answering(error_fixture(401, "openai_error_401.json")).await;
    let error = openai(&server, Some("sk-test-secret"))
        .complete(weather_request())
        .await
        .unwrap_err();
    assert_eq!(error.status(), Some(401));
    assert!(!error.is_retryable());
    assert!(error
        .to_string()
        .starts_with("provider returned HTTP 401: Incorrect API key provided"));
    assert!(!format!("{error:?}").contains("sk-test-secret"));
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn rate_limit_with_retry_after_then_success() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(COMPLETIONS))
        .respond_with(
            error_fixture(429, "openai_error_429.json").insert_header("retry-after-ms", "20"),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(COMPLETIONS))
        .respond_with(json_fixture("openai_text.json"))
        .mount(&server)
        .await;
    let response = openai(&server, None)
        .complete(weather_request())
        .await
        .unwrap();
    assert_eq!(response.content(), "It is 22°C and sunny in Paris.");
    let bodies = received_bodies(&server).await;
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0], bodies[1], "the retry sends the same request");
}

#[tokio::test]
async fn rate_limit_without_retries_is_typed_with_its_delay() {
    let server = server_answering(
        error_fixture(429, "openai_error_429.json").insert_header("retry-after", "2"),
    )
    .await;
    let model = OpenAiCompatible::builder()
        .base_url(format!("{}/v1", server.uri()))
        .model("m")
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let error = model.complete(weather_request()).await.unwrap_err();
    assert!(error.is_rate_limit());
    assert_eq!(error.retry_after(), Some(Duration::from_secs(2)));
    assert!(error.to_string().contains("Rate limit reached for gpt-4o"));
}

#[tokio::test]
async fn server_errors_exhaust_the_retries() {
    let server = server_answering(error_fixture(500, "openai_error_500.json")).await;
    let error = openai(&server, None)
        .complete(weather_request())
        .await
        .unwrap_err();
    assert_eq!(
        error,
        InferenceError::Http {
            status: 500,
            message: "The server had an error while processing your request. Sorry about that!"
                .into()
        }
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

#[tokio::test]
async fn stream_requests_are_retried_until_the_first_byte() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(COMPLETIONS))
        .respond_with(ResponseTemplate::new(503))
        .up_to_n_times(2)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(COMPLETIONS))
        .respond_with(sse_fixture("openai_stream_text.sse"))
        .mount(&server)
        .await;
    let stream = openai(&server, None)
        .stream(weather_request())
        .await
        .unwrap();
    let response = collect_stream(stream).await.unwrap();
    assert_eq!(response.content(), "It is 22°C in Paris.");
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

#[tokio::test]
async fn malformed_json_is_reported_with_an_excerpt() {
    let server = server_answering(json_fixture("openai_malformed.json")).await;
    let error = openai(&server, None)
        .complete(weather_request())
        .await
        .unwrap_err();
    let InferenceError::MalformedResponse { reason, excerpt } = &error else {
        panic!("expected MalformedResponse, got {error:?}");
    };
    assert!(reason.contains("not valid JSON"), "{reason}");
    assert!(excerpt.contains("chatcmpl-x"));
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        1,
        "not retried"
    );
}

#[tokio::test]
async fn invalid_tool_arguments_are_malformed_with_the_arguments_excerpt() {
    let server = server_answering(json_fixture("openai_invalid_arguments.json")).await;
    let error = openai(&server, None)
        .complete(weather_request())
        .await
        .unwrap_err();
    let InferenceError::MalformedResponse { reason, excerpt } = &error else {
        panic!("expected MalformedResponse, got {error:?}");
    };
    assert!(
        reason.contains("call_bad") && reason.contains("get_weather"),
        "{reason}"
    );
    assert_eq!(excerpt, "{\"city\": \"Par");
}

#[tokio::test]
async fn an_html_page_from_a_proxy_is_malformed() {
    let server = server_answering(
        ResponseTemplate::new(200).set_body_raw(fixture("proxy_error.html"), "text/html"),
    )
    .await;
    let model = openai(&server, None);
    let error = model.complete(weather_request()).await.unwrap_err();
    assert!(matches!(error, InferenceError::MalformedResponse { .. }));
    assert!(error.to_string().contains("text/html"));
    assert!(error.to_string().contains("Corporate Proxy"));
    let stream_error = model.stream(weather_request()).await.err().unwrap();
    assert!(stream_error
        .to_string()
        .contains("expected an event stream"));
}

#[tokio::test]
async fn a_slow_server_times_out() {
    let server =
        server_answering(json_fixture("openai_text.json").set_delay(Duration::from_secs(30))).await;
    let model = OpenAiCompatible::builder()
        .base_url(format!("{}/v1", server.uri()))
        .model("m")
        .timeout(Duration::from_millis(100))
        .retry(fast_retries().with_max_attempts(2))
        .build()
        .unwrap();
    let error = model.complete(weather_request()).await.unwrap_err();
    assert_eq!(
        error,
        InferenceError::Timeout {
            after: Duration::from_millis(100)
        }
    );
    assert!(error.is_retryable());
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn a_refused_connection_is_a_transport_error() {
    // A port that was free a moment ago and has no listener now (mock servers are pooled, so
    // dropping one does not close its port).
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let uri = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let model = OpenAiCompatible::builder()
        .base_url(format!("{uri}/v1"))
        .model("m")
        .retry(fast_retries())
        .build()
        .unwrap();
    let error = model.complete(weather_request()).await.unwrap_err();
    assert!(
        matches!(error, InferenceError::Transport { .. }),
        "{error:?}"
    );
}
