//! OpenTelemetry export (feature `otel`): the `chat {model}` span and its gen_ai attributes
//! through an in-memory exporter, and end to end from the `agents` binary to an OTLP/HTTP
//! receiver on 127.0.0.1 whose requests are decoded with `opentelemetry-proto`. The agent's
//! spans: `invoke_agent` per step with the chat and `execute_tool` spans under it, a failing
//! tool's `error.type`, a subagent nested under its parent's tool span, and no contents
//! unless content capture is on.

#![cfg(feature = "otel")]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use agents::inference::{
    collect_stream, InferenceRequest, LanguageModel, Message, OpenAiCompatible,
};
use agents::prelude::{
    AgentBuilder, AgentState, AgentStatus, FunctionTool, SubagentDefinition, ToolError,
    UseSubagents,
};
use opentelemetry::trace::{SpanId, SpanKind, Status, TracerProvider as _};
use opentelemetry::Value;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use prost::Message as _;
use schemars::JsonSchema;
use serde::Deserialize;
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

/// Spans of this thread, exported as each one ends, until the guard is dropped (through the
/// layer `init_otlp` installs, contents off).
fn collect_spans() -> (Collected, tracing::subscriber::DefaultGuard) {
    collect_spans_capturing(false)
}

fn collect_spans_capturing(
    capture_content: bool,
) -> (Collected, tracing::subscriber::DefaultGuard) {
    let spans = Collected::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(spans.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(agents::telemetry::otlp_layer(&provider, capture_content));
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

fn attr(span: &SpanData, key: &str) -> Option<Value> {
    attributes(span).get(key).cloned()
}

fn named<'a>(spans: &'a [SpanData], name: &str) -> Vec<&'a SpanData> {
    spans.iter().filter(|s| s.name == name).collect()
}

fn parent_of<'a>(spans: &'a [SpanData], span: &SpanData) -> Option<&'a SpanData> {
    spans
        .iter()
        .find(|s| s.span_context.span_id() == span.parent_span_id)
}

#[derive(Deserialize, JsonSchema)]
struct CityArgs {
    city: String,
}

fn weather() -> FunctionTool {
    FunctionTool::new(
        "get_weather",
        "Weather for a city",
        |a: CityArgs| async move {
            // what a tool logs (bash logs its command line, rmcp its JSON-RPC messages)
            tracing::info!(city = %a.city, "looking up the weather in {}", a.city);
            if a.city == "Atlantis" {
                return Err(ToolError::failed("no weather station under the sea"));
            }
            Ok::<_, ToolError>(format!("sunny in {}", a.city))
        },
    )
}

fn reply(message: serde_json::Value, finish: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-5.4-2026-03-05",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100}
    }))
}

fn call_weather(id: &str, city: &str) -> ResponseTemplate {
    reply(
        json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": id, "type": "function",
            "function": {"name": "get_weather", "arguments": format!("{{\"city\":\"{city}\"}}")}
        }]}),
        "tool_calls",
    )
}

fn answer(text: &str) -> ResponseTemplate {
    reply(json!({"role": "assistant", "content": text}), "stop")
}

/// A server answering the given replies in order, once each.
async fn server(replies: Vec<ResponseTemplate>) -> MockServer {
    let server = MockServer::start().await;
    for reply in replies {
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(reply)
            .up_to_n_times(1)
            .mount(&server)
            .await;
    }
    server
}

fn agent(server: &MockServer) -> AgentBuilder {
    let model = OpenAiCompatible::new(format!("{}/v1", server.uri()), None, "gpt-5.4").unwrap();
    AgentBuilder::new()
        .with_model(model)
        .with_name("forecaster")
        .with_tool(weather())
}

#[tokio::test]
async fn a_two_step_tool_run_is_two_invoke_agent_spans_with_chat_and_tool_spans_under_them() {
    let server = server(vec![
        call_weather("call_1", "Oslo"),
        answer("Oslo is sunny: secret forecast."),
    ])
    .await;
    let (collected, _default) = collect_spans();
    let state = agent(&server)
        .build()
        .unwrap()
        .execute(AgentState::new().with_user_message("Weather in Oslo, my secret city?"))
        .await
        .unwrap();
    assert_eq!(state.status(), AgentStatus::Completed);

    let spans = collected.0.lock().unwrap().clone();
    let steps = named(&spans, "invoke_agent forecaster");
    assert_eq!(steps.len(), 2, "{spans:#?}");
    let execution = state.execution().unwrap().id().to_owned();
    for (number, step) in steps.iter().enumerate() {
        assert_eq!(step.parent_span_id, SpanId::INVALID, "steps are roots");
        let attrs = attributes(step);
        assert_eq!(attrs["gen_ai.operation.name"], Value::from("invoke_agent"));
        assert_eq!(attrs["gen_ai.agent.name"], Value::from("forecaster"));
        assert_eq!(
            attrs["gen_ai.agent.id"],
            Value::from(state.agent_id().to_owned())
        );
        assert_eq!(attrs["agents.execution.id"], Value::from(execution.clone()));
        assert_eq!(attrs["agents.step.number"], Value::I64(number as i64 + 1));
        assert_eq!(attrs["gen_ai.usage.input_tokens"], Value::I64(1000));
        assert_eq!(attrs["gen_ai.usage.output_tokens"], Value::I64(100));
        // gpt-5.4 is in the built-in catalog: the step has a price.
        assert!(matches!(attrs["agents.cost.usd"], Value::F64(usd) if usd > 0.0));
        assert!(!attrs.contains_key("error.type"));
    }
    assert_eq!(
        attr(steps[1], "agents.stop_reason"),
        Some(Value::from("completed"))
    );
    assert_eq!(attr(steps[0], "agents.stop_reason"), None);

    let chats = named(&spans, "chat gpt-5.4");
    assert_eq!(chats.len(), 2);
    for (chat, step) in chats.iter().zip(&steps) {
        assert_eq!(
            parent_of(&spans, chat).map(|p| p.span_context.span_id()),
            Some(step.span_context.span_id())
        );
    }
    let tools = named(&spans, "execute_tool get_weather");
    assert_eq!(tools.len(), 1);
    let tool = tools[0];
    assert_eq!(
        parent_of(&spans, tool).map(|p| p.span_context.span_id()),
        Some(steps[0].span_context.span_id())
    );
    assert_eq!(
        attr(tool, "gen_ai.operation.name"),
        Some(Value::from("execute_tool"))
    );
    assert_eq!(
        attr(tool, "gen_ai.tool.name"),
        Some(Value::from("get_weather"))
    );
    assert_eq!(
        attr(tool, "gen_ai.tool.call.id"),
        Some(Value::from("call_1"))
    );
    assert_eq!(attr(tool, "error.type"), None);

    // Content capture is off: no message, argument or result text in any attribute.
    for span in &spans {
        for (key, value) in attributes(span) {
            let text = value.as_str();
            for secret in ["secret", "Oslo", "sunny"] {
                assert!(
                    !text.contains(secret),
                    "`{secret}` in {key} of {}: {text}",
                    span.name
                );
            }
        }
    }
}

#[tokio::test]
async fn content_capture_records_outputs_arguments_and_results() {
    let server = server(vec![
        call_weather("call_1", "Oslo"),
        answer("Oslo is sunny."),
    ])
    .await;
    let (collected, _default) = collect_spans();
    agent(&server)
        .with_content_capture(true)
        .build()
        .unwrap()
        .execute(AgentState::new().with_user_message("Weather in Oslo?"))
        .await
        .unwrap();

    let spans = collected.0.lock().unwrap().clone();
    let tool = named(&spans, "execute_tool get_weather")[0];
    assert_eq!(
        attr(tool, "gen_ai.tool.call.arguments"),
        Some(Value::from(r#"{"city":"Oslo"}"#))
    );
    assert_eq!(
        attr(tool, "gen_ai.tool.call.result"),
        Some(Value::from("sunny in Oslo"))
    );
    let steps = named(&spans, "invoke_agent forecaster");
    let output = attr(steps[1], "gen_ai.output.messages").unwrap();
    assert!(output.as_str().contains("Oslo is sunny."), "{output}");
}

#[tokio::test]
async fn a_failing_tool_span_has_its_error_type() {
    let server = server(vec![
        call_weather("call_1", "Atlantis"),
        answer("No weather there."),
    ])
    .await;
    let (collected, _default) = collect_spans();
    agent(&server)
        .build()
        .unwrap()
        .execute(AgentState::new().with_user_message("Weather in Atlantis?"))
        .await
        .unwrap();

    let spans = collected.0.lock().unwrap().clone();
    let tool = named(&spans, "execute_tool get_weather")[0];
    assert_eq!(attr(tool, "error.type"), Some(Value::from("failed")));
    assert!(matches!(tool.status, Status::Error { .. }));
    // The tool's message is content: not recorded.
    assert!(!format!("{:?}", tool.attributes).contains("under the sea"));
}

#[tokio::test]
async fn a_subagent_runs_under_its_parents_execute_tool_span() {
    let server = server(vec![
        reply(
            json!({"role": "assistant", "content": null, "tool_calls": [{
                "id": "spawn_1", "type": "function",
                "function": {"name": "spawn_subagent",
                             "arguments": "{\"subagent\":\"researcher\",\"prompt\":\"Oslo?\"}"}
            }]}),
            "tool_calls",
        ),
        answer("Oslo: sunny."),
        answer("The researcher says Oslo is sunny."),
    ])
    .await;
    let (collected, _default) = collect_spans();
    let state = agent(&server)
        .with_capability(UseSubagents::new([SubagentDefinition::new(
            "researcher",
            "Looks things up",
            "You research one question.",
        )]))
        .build()
        .unwrap()
        .execute(AgentState::new().with_user_message("Weather in Oslo?"))
        .await
        .unwrap();
    assert_eq!(state.status(), AgentStatus::Completed);

    let spans = collected.0.lock().unwrap().clone();
    let spawn = named(&spans, "execute_tool spawn_subagent");
    assert_eq!(spawn.len(), 1, "{spans:#?}");
    let child = named(&spans, "invoke_agent researcher");
    assert_eq!(child.len(), 1);
    assert_eq!(
        child[0].parent_span_id,
        spawn[0].span_context.span_id(),
        "the subagent's step is a child of the parent's tool span"
    );
    let parent_step = parent_of(&spans, spawn[0]).unwrap();
    assert_eq!(parent_step.name, "invoke_agent forecaster");
    // The child's inference nests under the child's step, all in one trace.
    let child_chat = spans
        .iter()
        .find(|s| s.name == "chat gpt-5.4" && s.parent_span_id == child[0].span_context.span_id());
    assert!(child_chat.is_some());
}

/// Spans of this thread, each step's put in its execution's trace by `ExecutionTraces`.
fn collect_execution_traces() -> (Collected, tracing::subscriber::DefaultGuard) {
    let spans = Collected::default();
    let processor = agents::telemetry::ExecutionTraces::new(
        opentelemetry_sdk::trace::SimpleSpanProcessor::new(spans.clone()),
    );
    let provider = SdkTracerProvider::builder()
        .with_span_processor(processor)
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    (spans, tracing::subscriber::set_default(subscriber))
}

#[tokio::test]
async fn every_step_of_an_execution_is_in_one_trace_even_across_processes() {
    let server = server(vec![
        call_weather("call_1", "Oslo"),
        call_weather("call_2", "Bergen"),
        answer("Both sunny."),
        answer("You are welcome."),
    ])
    .await;
    let (collected, _default) = collect_execution_traces();
    // Step 1 in one "process", steps 2 and 3 in another, from the serialized state.
    let first = agent(&server).build().unwrap();
    let state = first
        .step(AgentState::new().with_user_message("Weather in Oslo and Bergen?"))
        .await
        .unwrap();
    let saved = state.to_json().unwrap();
    drop(first);
    let second = agent(&server).build().unwrap();
    let state = second
        .execute(AgentState::from_json(&saved).unwrap())
        .await
        .unwrap();
    assert_eq!(state.status(), AgentStatus::Completed);
    let execution = state.execution().unwrap().id().to_owned();
    // A second execution is a second trace.
    let next = second
        .execute(state.with_user_message("Thanks"))
        .await
        .unwrap();
    let next_execution = next.execution().unwrap().id().to_owned();
    assert_ne!(execution, next_execution);

    let spans = collected.0.lock().unwrap().clone();
    let trace = agents::telemetry::trace_id_of(&execution).unwrap();
    assert_eq!(format!("{trace}"), execution.replace('-', ""));
    let in_trace: Vec<&SpanData> = spans
        .iter()
        .filter(|s| s.span_context.trace_id() == trace)
        .collect();
    let names = |wanted: &str| {
        in_trace
            .iter()
            .filter(|s| s.name.starts_with(wanted))
            .count()
    };
    assert_eq!(
        names("invoke_agent"),
        3,
        "one span per step, all in one trace"
    );
    assert_eq!(names("chat"), 3);
    assert_eq!(names("execute_tool"), 2);
    // Each step's spans still hang under that step's span.
    for span in in_trace.iter().filter(|s| s.name.starts_with("chat")) {
        let parent = parent_of(&spans, span).unwrap();
        assert!(parent.name.starts_with("invoke_agent"), "{}", parent.name);
        assert_eq!(parent.span_context.trace_id(), trace);
    }
    let next_trace = agents::telemetry::trace_id_of(&next_execution).unwrap();
    let next_spans = spans
        .iter()
        .filter(|s| s.span_context.trace_id() == next_trace)
        .count();
    assert_eq!(next_spans, 2, "the second execution: one step, one chat");
    assert_eq!(
        spans.len(),
        in_trace.len() + next_spans,
        "no span is left in a trace of its own"
    );
}

#[test]
fn spans_under_an_application_span_keep_its_trace() {
    let (collected, _default) = collect_execution_traces();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let app = tracing::info_span!("handle_request");
    let state = {
        let _entered = app.enter();
        runtime.block_on(async {
            let server = server(vec![answer("Hi.")]).await;
            agent(&server)
                .build()
                .unwrap()
                .execute(AgentState::new().with_user_message("Hello"))
                .await
                .unwrap()
        })
    };
    drop(app);
    assert_eq!(state.status(), AgentStatus::Completed);
    let spans = collected.0.lock().unwrap().clone();
    let root = spans.iter().find(|s| s.name == "handle_request").unwrap();
    assert!(spans.len() >= 3);
    for span in &spans {
        assert_eq!(span.span_context.trace_id(), root.span_context.trace_id());
    }
}

#[test]
fn trace_ids_come_from_uuid_execution_ids_only() {
    use agents::telemetry::trace_id_of;
    assert_eq!(
        trace_id_of("019a7c4e-1f2b-7c3d-8e4f-5a6b7c8d9e0f")
            .unwrap()
            .to_string(),
        "019a7c4e1f2b7c3d8e4f5a6b7c8d9e0f"
    );
    for bad in [
        "",
        "not-a-uuid",
        "00000000-0000-0000-0000-000000000000",
        "zz9a7c4e-1f2b-7c3d-8e4f-5a6b7c8d9e0f",
    ] {
        assert!(trace_id_of(bad).is_none(), "{bad}");
    }
}

#[tokio::test]
async fn events_inside_spans_are_exported_only_with_content_capture() {
    for capture in [false, true] {
        let server = server(vec![
            call_weather("call_1", "Secretville"),
            answer("It is sunny."),
        ])
        .await;
        let (collected, _default) = collect_spans_capturing(capture);
        agent(&server)
            .with_content_capture(capture)
            .build()
            .unwrap()
            .execute(AgentState::new().with_user_message("Weather?"))
            .await
            .unwrap();
        let spans = collected.0.lock().unwrap().clone();
        assert!(!named(&spans, "execute_tool get_weather").is_empty());
        let exported = format!(
            "{:?}",
            spans
                .iter()
                .map(|s| (&s.events, &s.attributes))
                .collect::<Vec<_>>()
        );
        assert_eq!(
            exported.contains("looking up the weather in Secretville"),
            capture,
            "capture {capture}: {exported}"
        );
        if !capture {
            assert!(!exported.contains("Secretville"), "{exported}");
            assert!(spans.iter().all(|s| s.events.is_empty()), "{exported}");
        }
    }
}
