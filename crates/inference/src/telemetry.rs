//! OpenTelemetry gen_ai names, and the `chat {model}` span the HTTP providers open for every
//! inference.
//!
//! Spans are plain [`tracing`] spans: with no subscriber they cost a branch; with
//! `tracing-opentelemetry` (the facade's `otel` feature) they become OpenTelemetry spans
//! named by their `otel.name` field, of the kind in `otel.kind`. The attribute names follow
//! the OpenTelemetry semantic conventions for generative AI; they are our own constants
//! because the semconv crates move faster than we do. Message contents are never recorded
//! here.
//!
//! ```
//! use inference::telemetry::{chat_span, GEN_AI_REQUEST_MODEL, OTEL_NAME};
//!
//! let span = chat_span("openai", "gpt-5.4");
//! // With a subscriber installed, the span is exported as `chat gpt-5.4` with
//! // `gen_ai.operation.name = "chat"`, `gen_ai.provider.name = "openai"` and
//! // `gen_ai.request.model = "gpt-5.4"`.
//! # let _ = (span, GEN_AI_REQUEST_MODEL, OTEL_NAME);
//! ```

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use tracing::field::Empty;
use tracing::{Instrument, Span};

use crate::{
    FinishReason, InferenceError, InferenceEvent, InferenceResponse, InferenceStream, Usage,
};

/// `gen_ai.operation.name`: `chat`, `invoke_agent` or `execute_tool`.
pub const GEN_AI_OPERATION_NAME: &str = "gen_ai.operation.name";
/// `gen_ai.provider.name`: `openai`, `anthropic`, ...
pub const GEN_AI_PROVIDER_NAME: &str = "gen_ai.provider.name";
/// `gen_ai.agent.name`: the agent's name (on `invoke_agent` spans).
pub const GEN_AI_AGENT_NAME: &str = "gen_ai.agent.name";
/// `gen_ai.request.model`: the model asked for.
pub const GEN_AI_REQUEST_MODEL: &str = "gen_ai.request.model";
/// `gen_ai.response.model`: the model that answered (often a dated version).
pub const GEN_AI_RESPONSE_MODEL: &str = "gen_ai.response.model";
/// `gen_ai.response.finish_reasons`: why the model stopped (ours, normalised: `stop`,
/// `length`, `tool_calls`, `content_filter`, `error`, `other`).
pub const GEN_AI_RESPONSE_FINISH_REASONS: &str = "gen_ai.response.finish_reasons";
/// `gen_ai.usage.input_tokens`: every prompt token, cache reads and writes included.
pub const GEN_AI_USAGE_INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
/// `gen_ai.usage.output_tokens`: every completion token, reasoning included.
pub const GEN_AI_USAGE_OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
/// `gen_ai.usage.cache_read.input_tokens`: prompt tokens served from the provider's cache.
pub const GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: &str = "gen_ai.usage.cache_read.input_tokens";
/// `gen_ai.usage.cache_creation.input_tokens`: prompt tokens written to the provider's cache.
pub const GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS: &str =
    "gen_ai.usage.cache_creation.input_tokens";
/// `gen_ai.tool.name`: the tool run (on `execute_tool` spans).
pub const GEN_AI_TOOL_NAME: &str = "gen_ai.tool.name";
/// `gen_ai.tool.call.id`: the id of the call run (on `execute_tool` spans).
pub const GEN_AI_TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
/// `error.type`: a short, low-cardinality name of the failure (an HTTP status, `timeout`,
/// ...).
pub const ERROR_TYPE: &str = "error.type";
/// `otel.name`: the OpenTelemetry span name (`tracing` span names are static).
pub const OTEL_NAME: &str = "otel.name";
/// `otel.kind`: the OpenTelemetry span kind (`client`, `internal`).
pub const OTEL_KIND: &str = "otel.kind";
/// `otel.status_code`: `error` marks the span failed.
pub const OTEL_STATUS_CODE: &str = "otel.status_code";

/// The `gen_ai.operation.name` of an inference.
pub const OPERATION_CHAT: &str = "chat";
/// The `gen_ai.operation.name` of an agent run.
pub const OPERATION_INVOKE_AGENT: &str = "invoke_agent";
/// The `gen_ai.operation.name` of a tool call.
pub const OPERATION_EXECUTE_TOOL: &str = "execute_tool";

/// A `chat {model}` span (kind client) for one inference to `provider`, with the response
/// fields empty until [`record_response`] or [`record_error`] fills them.
pub fn chat_span(provider: &str, request_model: &str) -> Span {
    tracing::info_span!(
        target: "gen_ai",
        "chat",
        { OTEL_NAME } = tracing::field::display(format_args!("{OPERATION_CHAT} {request_model}")),
        { OTEL_KIND } = "client",
        { GEN_AI_OPERATION_NAME } = OPERATION_CHAT,
        { GEN_AI_PROVIDER_NAME } = provider,
        { GEN_AI_REQUEST_MODEL } = request_model,
        { GEN_AI_RESPONSE_MODEL } = Empty,
        { GEN_AI_RESPONSE_FINISH_REASONS } = Empty,
        { GEN_AI_USAGE_INPUT_TOKENS } = Empty,
        { GEN_AI_USAGE_OUTPUT_TOKENS } = Empty,
        { GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS } = Empty,
        { GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS } = Empty,
        { ERROR_TYPE } = Empty,
        { OTEL_STATUS_CODE } = Empty,
    )
}

/// Records a complete answer on a chat span: response model, usage and finish reason.
pub fn record_response(span: &Span, response: &InferenceResponse) {
    if let Some(model) = response.model() {
        span.record(GEN_AI_RESPONSE_MODEL, model);
    }
    record_usage(span, response.usage());
    record_finish_reason(span, response.finish_reason());
}

/// Records token usage on a chat span (input counts cache reads and writes, output counts
/// reasoning, as the conventions ask).
pub fn record_usage(span: &Span, usage: Usage) {
    let input = usage.prompt_tokens();
    let output = usage.output_tokens.saturating_add(usage.reasoning_tokens);
    span.record(GEN_AI_USAGE_INPUT_TOKENS, count(input));
    span.record(GEN_AI_USAGE_OUTPUT_TOKENS, count(output));
    span.record(
        GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
        count(usage.cache_read_tokens),
    );
    span.record(
        GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
        count(usage.cache_write_tokens),
    );
}

/// A token count as an OpenTelemetry integer (`i64`; `tracing-opentelemetry` would turn a
/// `u64` into text).
fn count(tokens: u64) -> i64 {
    i64::try_from(tokens).unwrap_or(i64::MAX)
}

/// Records the finish reason on a chat span.
pub fn record_finish_reason(span: &Span, reason: FinishReason) {
    span.record(GEN_AI_RESPONSE_FINISH_REASONS, finish_reason_name(reason));
}

/// Marks a span failed with `error.type` set to [`error_type`] of `error`.
pub fn record_error(span: &Span, error: &InferenceError) {
    span.record(ERROR_TYPE, error_type(error).as_str());
    span.record(OTEL_STATUS_CODE, "error");
}

/// A short, low-cardinality name for an inference failure: the HTTP status for provider
/// errors (`"500"`), else `rate_limited`, `timeout`, `malformed_response`, `transport`,
/// `configuration`, `script_exhausted`, `stream_deadline`, `event_too_large` or `body_too_large`.
pub fn error_type(error: &InferenceError) -> String {
    match error {
        InferenceError::Http { status, .. } => status.to_string(),
        InferenceError::RateLimited { .. } => "rate_limited".into(),
        InferenceError::Timeout { .. } => "timeout".into(),
        InferenceError::MalformedResponse { .. } => "malformed_response".into(),
        InferenceError::Transport { .. } => "transport".into(),
        InferenceError::Configuration { .. } => "configuration".into(),
        InferenceError::ScriptExhausted { .. } => "script_exhausted".into(),
        InferenceError::StreamDeadline { .. } => "stream_deadline".into(),
        InferenceError::EventTooLarge { .. } => "event_too_large".into(),
        InferenceError::BodyTooLarge { .. } => "body_too_large".into(),
    }
}

fn finish_reason_name(reason: FinishReason) -> &'static str {
    match reason {
        FinishReason::Stop => "stop",
        FinishReason::Length => "length",
        FinishReason::ToolCalls => "tool_calls",
        FinishReason::ContentFilter => "content_filter",
        FinishReason::Error => "error",
        FinishReason::Other => "other",
    }
}

/// A provider's event stream inside its chat span: the span stays open until the stream is
/// dropped, is entered while the stream is polled (so decoders may record on
/// `Span::current()`), and records usage, the finish reason and any error as they pass.
pub(crate) fn instrument_stream(stream: InferenceStream, span: Span) -> InferenceStream {
    Box::pin(InstrumentedStream {
        inner: stream,
        span,
    })
}

struct InstrumentedStream {
    inner: InferenceStream,
    span: Span,
}

impl Stream for InstrumentedStream {
    type Item = Result<InferenceEvent, InferenceError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        let _entered = this.span.enter();
        let item = this.inner.as_mut().poll_next(cx);
        match &item {
            Poll::Ready(Some(Ok(InferenceEvent::Usage { usage }))) => {
                record_usage(&this.span, *usage)
            }
            Poll::Ready(Some(Ok(InferenceEvent::Finish { reason }))) => {
                record_finish_reason(&this.span, *reason)
            }
            Poll::Ready(Some(Err(error))) => record_error(&this.span, error),
            _ => {}
        }
        item
    }
}

/// Runs a provider's `complete` inside `span` and records its answer or its failure.
pub(crate) async fn complete_in_span(
    span: Span,
    call: impl Future<Output = Result<InferenceResponse, InferenceError>>,
) -> Result<InferenceResponse, InferenceError> {
    let result = call.instrument(span.clone()).await;
    match &result {
        Ok(response) => record_response(&span, response),
        Err(error) => record_error(&span, error),
    }
    result
}

/// Runs a provider's `stream` set-up inside `span`; the stream then keeps the span open
/// until it is dropped (see [`instrument_stream`]).
pub(crate) async fn stream_in_span(
    span: Span,
    call: impl Future<Output = Result<InferenceStream, InferenceError>>,
) -> Result<InferenceStream, InferenceError> {
    match call.instrument(span.clone()).await {
        Ok(stream) => Ok(instrument_stream(stream, span)),
        Err(error) => {
            record_error(&span, &error);
            Err(error)
        }
    }
}

/// The model a request asks for: its own, else the provider's default.
pub(crate) fn request_model<'a>(request: &'a crate::InferenceRequest, default: &'a str) -> &'a str {
    request
        .model
        .as_deref()
        .filter(|m| !m.is_empty())
        .unwrap_or(default)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::fmt::Debug;
    use std::sync::{Arc, Mutex};

    use futures::StreamExt;
    use tracing::field::{Field, Visit};
    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Metadata, Subscriber};

    use super::*;
    use crate::{collect_stream, response_to_events};

    /// The fields recorded on spans, by name (one span at a time in these tests).
    #[derive(Clone, Default)]
    struct Fields(Arc<Mutex<HashMap<String, String>>>);

    impl Fields {
        fn get(&self, name: &str) -> Option<String> {
            self.0.lock().unwrap().get(name).cloned()
        }
    }

    impl Visit for Fields {
        fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
            self.0
                .lock()
                .unwrap()
                .insert(field.name().to_owned(), format!("{value:?}"));
        }

        fn record_str(&mut self, field: &Field, value: &str) {
            self.0
                .lock()
                .unwrap()
                .insert(field.name().to_owned(), value.to_owned());
        }
    }

    struct Capture(Fields);

    impl Subscriber for Capture {
        fn enabled(&self, _: &Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, span: &Attributes<'_>) -> Id {
            span.record(&mut self.0.clone());
            Id::from_u64(1)
        }
        fn record(&self, _: &Id, values: &Record<'_>) {
            values.record(&mut self.0.clone());
        }
        fn record_follows_from(&self, _: &Id, _: &Id) {}
        fn event(&self, _: &Event<'_>) {}
        fn enter(&self, _: &Id) {}
        fn exit(&self, _: &Id) {}
    }

    fn response() -> InferenceResponse {
        InferenceResponse::text("secret answer")
            .with_usage(Usage {
                input_tokens: 100,
                output_tokens: 20,
                cache_read_tokens: 1000,
                cache_write_tokens: 50,
                reasoning_tokens: 5,
            })
            .with_model("claude-sonnet-5-5-20261001")
    }

    #[test]
    fn a_chat_span_carries_the_gen_ai_attributes_and_no_contents() {
        let fields = Fields::default();
        tracing::subscriber::with_default(Capture(fields.clone()), || {
            let span = chat_span("anthropic", "claude-sonnet-5-5");
            record_response(&span, &response());
        });
        let expect = [
            (OTEL_NAME, "chat claude-sonnet-5-5"),
            (OTEL_KIND, "client"),
            (GEN_AI_OPERATION_NAME, "chat"),
            (GEN_AI_PROVIDER_NAME, "anthropic"),
            (GEN_AI_REQUEST_MODEL, "claude-sonnet-5-5"),
            (GEN_AI_RESPONSE_MODEL, "claude-sonnet-5-5-20261001"),
            (GEN_AI_RESPONSE_FINISH_REASONS, "stop"),
            (GEN_AI_USAGE_INPUT_TOKENS, "1150"),
            (GEN_AI_USAGE_OUTPUT_TOKENS, "25"),
            (GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, "1000"),
            (GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS, "50"),
        ];
        for (name, value) in expect {
            assert_eq!(fields.get(name).as_deref(), Some(value), "{name}");
        }
        assert_eq!(fields.get(ERROR_TYPE), None);
        let all = format!("{:?}", fields.0.lock().unwrap());
        assert!(!all.contains("secret"), "{all}");
    }

    #[test]
    fn failures_are_typed_by_a_short_name() {
        let fields = Fields::default();
        tracing::subscriber::with_default(Capture(fields.clone()), || {
            let span = chat_span("openai", "gpt-5.4");
            record_error(
                &span,
                &InferenceError::Http {
                    status: 529,
                    message: "overloaded".into(),
                },
            );
        });
        assert_eq!(fields.get(ERROR_TYPE).as_deref(), Some("529"));
        assert_eq!(fields.get(OTEL_STATUS_CODE).as_deref(), Some("error"));
        let timeout = InferenceError::Timeout {
            after: std::time::Duration::from_secs(3),
        };
        assert_eq!(error_type(&timeout), "timeout");
    }

    #[tokio::test]
    async fn a_stream_records_usage_and_finish_reason_as_they_pass() {
        let fields = Fields::default();
        let _default = tracing::subscriber::set_default(Capture(fields.clone()));
        let events = response_to_events(&response()).into_iter().map(Ok);
        let stream = instrument_stream(
            Box::pin(futures::stream::iter(events)),
            chat_span("anthropic", "claude-sonnet-5-5"),
        );
        let mut stream = stream.peekable();
        assert!(std::pin::Pin::new(&mut stream).peek().await.is_some());
        assert_eq!(fields.get(GEN_AI_USAGE_INPUT_TOKENS), None, "not yet");
        let response = collect_stream(Box::pin(stream)).await.unwrap();
        assert_eq!(response.content(), "secret answer");
        assert_eq!(
            fields.get(GEN_AI_USAGE_INPUT_TOKENS).as_deref(),
            Some("1150")
        );
        assert_eq!(
            fields.get(GEN_AI_RESPONSE_FINISH_REASONS).as_deref(),
            Some("stop")
        );
    }
}
