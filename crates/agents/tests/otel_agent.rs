//! The agent's spans through an OpenTelemetry exporter (feature `otel`): `invoke_agent` per
//! step with the chat and `execute_tool` spans under it, a failing tool's `error.type`, a
//! subagent nested under its parent's tool span, and no contents unless content capture is
//! on.

#![cfg(feature = "otel")]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use agents::prelude::*;
use opentelemetry::trace::{SpanId, Status, TracerProvider as _};
use opentelemetry::Value;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use schemars::JsonSchema;
use serde::Deserialize;
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

impl Collected {
    fn spans(&self) -> Vec<SpanData> {
        self.0.lock().unwrap().clone()
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

fn attributes(span: &SpanData) -> HashMap<String, Value> {
    span.attributes
        .iter()
        .map(|kv| (kv.key.as_str().to_owned(), kv.value.clone()))
        .collect()
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
            if a.city == "Atlantis" {
                return Err(ToolError::failed("no weather station under the sea"));
            }
            Ok::<_, ToolError>(format!("sunny in {}", a.city))
        },
    )
}

fn completion(message: serde_json::Value, finish: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-5.4-2026-03-05",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100}
    }))
}

fn call_weather(id: &str, city: &str) -> ResponseTemplate {
    completion(
        json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": id, "type": "function",
            "function": {"name": "get_weather", "arguments": format!("{{\"city\":\"{city}\"}}")}
        }]}),
        "tool_calls",
    )
}

fn answer(text: &str) -> ResponseTemplate {
    completion(json!({"role": "assistant", "content": text}), "stop")
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

    let spans = collected.spans();
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

    let spans = collected.spans();
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

    let spans = collected.spans();
    let tool = named(&spans, "execute_tool get_weather")[0];
    assert_eq!(attr(tool, "error.type"), Some(Value::from("failed")));
    assert!(matches!(tool.status, Status::Error { .. }));
    // The tool's message is content: not recorded.
    assert!(!format!("{:?}", tool.attributes).contains("under the sea"));
}

#[tokio::test]
async fn a_subagent_runs_under_its_parents_execute_tool_span() {
    let server = server(vec![
        completion(
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

    let spans = collected.spans();
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
