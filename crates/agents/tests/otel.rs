//! OpenTelemetry export (feature `otel`): the `chat {model}` span and its gen_ai attributes
//! through an in-memory exporter, and end to end from the `agents` binary to an OTLP/HTTP
//! receiver on 127.0.0.1 whose requests are decoded with `opentelemetry-proto`.

#![cfg(feature = "otel")]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use agents::inference::{
    collect_stream, InferenceRequest, LanguageModel, Message, OpenAiCompatible,
};
use opentelemetry::trace::{SpanKind, Status, TracerProvider as _};
use opentelemetry::Value;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use prost::Message as _;
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// Keeps every exported span.
#[derive(Clone, Debug, Default)]
struct Collected(Arc<Mutex<Vec<SpanData>>>);

impl SpanExporter for Collected {
    fn export(&self, batch: Vec<SpanData>) -> impl Future<Output = OTelSdkResult> + Send {
        self.0.lock().unwrap().extend(batch);
        std::future::ready(Ok(()))
    }
}

/// Spans of this thread, exported as each one ends, until the guard is dropped.
fn collect_spans() -> (Collected, tracing::subscriber::DefaultGuard) {
    let spans = Collected::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(spans.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    (spans, tracing::subscriber::set_default(subscriber))
}

fn completion() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-5.4-2026-03-05",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello! Secret plans."},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1200, "completion_tokens": 30, "total_tokens": 1230,
                  "prompt_tokens_details": {"cached_tokens": 1024}}
    }))
}

fn attributes(span: &SpanData) -> HashMap<String, Value> {
    span.attributes
        .iter()
        .map(|kv| (kv.key.as_str().to_owned(), kv.value.clone()))
        .collect()
}

#[tokio::test]
async fn every_inference_is_a_chat_span_with_gen_ai_attributes() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(completion())
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(400).set_body_json(
                json!({"error": {"message": "bad", "type": "invalid_request_error"}}),
            ),
        )
        .mount(&server)
        .await;
    let (spans, _default) = collect_spans();
    let model = OpenAiCompatible::new(format!("{}/v1", server.uri()), None, "gpt-5.4").unwrap();
    let request = InferenceRequest::new(vec![Message::user("Tell me the secret plans.")]);

    model.complete(request.clone()).await.unwrap();
    model.complete(request).await.unwrap_err();

    let spans = spans.0.lock().unwrap().clone();
    assert_eq!(spans.len(), 2);
    let ok = &spans[0];
    assert_eq!(ok.name, "chat gpt-5.4");
    assert_eq!(ok.span_kind, SpanKind::Client);
    let attrs = attributes(ok);
    let expect = [
        ("gen_ai.operation.name", Value::from("chat")),
        ("gen_ai.provider.name", Value::from("openai")),
        ("gen_ai.request.model", Value::from("gpt-5.4")),
        ("gen_ai.response.model", Value::from("gpt-5.4-2026-03-05")),
        ("gen_ai.response.finish_reasons", Value::from("stop")),
        ("gen_ai.usage.input_tokens", Value::I64(1200)),
        ("gen_ai.usage.output_tokens", Value::I64(30)),
        ("gen_ai.usage.cache_read.input_tokens", Value::I64(1024)),
        ("gen_ai.usage.cache_creation.input_tokens", Value::I64(0)),
    ];
    for (key, value) in expect {
        assert_eq!(attrs.get(key), Some(&value), "{key} in {attrs:?}");
    }
    assert!(!attrs.contains_key("error.type"));
    let text = format!("{spans:?}");
    assert!(
        !text.contains("secret plans") && !text.contains("Secret plans"),
        "no contents"
    );

    let failed = &spans[1];
    assert_eq!(
        attributes(failed).get("error.type"),
        Some(&Value::from("400"))
    );
    assert!(matches!(failed.status, Status::Error { .. }));
}

#[tokio::test]
async fn a_streamed_inference_is_one_chat_span_closed_with_its_usage() {
    let server = MockServer::start().await;
    let body = [
        r#"{"id":"c","model":"gpt-5.4-2026-03-05","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"}}]}"#,
        r#"{"id":"c","model":"gpt-5.4-2026-03-05","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        r#"{"id":"c","model":"gpt-5.4-2026-03-05","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}"#,
        "[DONE]",
    ]
    .iter()
    .map(|d| format!("data: {d}\n\n"))
    .collect::<String>();
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body, "text/event-stream"))
        .mount(&server)
        .await;
    let (spans, _default) = collect_spans();
    let model = OpenAiCompatible::new(format!("{}/v1", server.uri()), None, "gpt-5.4").unwrap();

    let stream = model
        .stream(InferenceRequest::new(vec![Message::user("hi")]))
        .await
        .unwrap();
    assert!(
        spans.0.lock().unwrap().is_empty(),
        "open while the stream is"
    );
    let response = collect_stream(stream).await.unwrap();
    assert_eq!(response.content(), "Hi");

    let spans = spans.0.lock().unwrap().clone();
    assert_eq!(spans.len(), 1);
    let attrs = attributes(&spans[0]);
    assert_eq!(
        attrs.get("gen_ai.usage.input_tokens"),
        Some(&Value::I64(10))
    );
    assert_eq!(
        attrs.get("gen_ai.usage.output_tokens"),
        Some(&Value::I64(2))
    );
    assert_eq!(
        attrs.get("gen_ai.response.model"),
        Some(&Value::from("gpt-5.4-2026-03-05"))
    );
    assert_eq!(
        attrs.get("gen_ai.response.finish_reasons"),
        Some(&Value::from("stop"))
    );
}

/// `agents run --otlp-endpoint URL` against a mock model: the collector receives the run's
/// `chat` span as OTLP/HTTP protobuf.
#[tokio::test(flavor = "multi_thread")]
async fn the_cli_exports_chat_spans_to_an_otlp_http_receiver() {
    let model = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(completion())
        .mount(&model)
        .await;
    let collector = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/traces"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&collector)
        .await;
    let root = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_agents"))
        .args([
            "run",
            "--provider",
            "openai",
            "--model",
            "gpt-5.4",
            "--no-bash",
        ])
        .args(["--base-url", &format!("{}/v1", model.uri())])
        .args(["--root", root.path().to_str().unwrap()])
        .args(["--otlp-endpoint", &collector.uri()])
        .args(["--prompt", "Say hello."])
        .env_remove("OPENAI_API_KEY")
        .env_remove("AGENTS_MODEL_CATALOG")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // 176 uncached input tokens at $2.50, 1024 cached at $0.25, 30 output at $15 per million.
    assert!(stdout.contains("cost $0.001146"), "{stdout}");

    let exports = collector.received_requests().await.unwrap();
    assert!(!exports.is_empty(), "the collector received nothing");
    let spans: Vec<_> = exports
        .iter()
        .map(|r| {
            assert_eq!(
                r.headers.get("content-type").unwrap(),
                "application/x-protobuf"
            );
            ExportTraceServiceRequest::decode(r.body.as_slice()).unwrap()
        })
        .flat_map(|export| export.resource_spans)
        .flat_map(|resource| resource.scope_spans)
        .flat_map(|scope| scope.spans)
        .collect();
    let chat = spans
        .iter()
        .find(|s| s.name == "chat gpt-5.4")
        .unwrap_or_else(|| {
            panic!(
                "no chat span among {:?}",
                spans.iter().map(|s| &s.name).collect::<Vec<_>>()
            )
        });
    let attribute = |key: &str| {
        chat.attributes
            .iter()
            .find(|kv| kv.key == key)
            .and_then(|kv| kv.value.clone())
            .and_then(|v| v.value)
    };
    use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
    assert_eq!(
        attribute("gen_ai.provider.name"),
        Some(Any::StringValue("openai".into()))
    );
    assert_eq!(
        attribute("gen_ai.usage.input_tokens"),
        Some(Any::IntValue(1200))
    );
    assert_eq!(
        attribute("gen_ai.usage.cache_read.input_tokens"),
        Some(Any::IntValue(1024))
    );
    // The inference ran inside the agent's step span.
    let step = spans
        .iter()
        .find(|s| s.name == "invoke_agent agent")
        .expect("an invoke_agent span");
    assert_eq!(chat.parent_span_id, step.span_id);
}
