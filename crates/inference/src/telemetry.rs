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
        { OTEL_NAME } = format!("{OPERATION_CHAT} {request_model}"),
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
    let input = usage
        .input_tokens
        .saturating_add(usage.cache_read_tokens)
        .saturating_add(usage.cache_write_tokens);
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
/// `configuration` or `script_exhausted`.
pub fn error_type(error: &InferenceError) -> String {
    match error {
        InferenceError::Http { status, .. } => status.to_string(),
        InferenceError::RateLimited { .. } => "rate_limited".into(),
        InferenceError::Timeout { .. } => "timeout".into(),
        InferenceError::MalformedResponse { .. } => "malformed_response".into(),
        InferenceError::Transport { .. } => "transport".into(),
        InferenceError::Configuration { .. } => "configuration".into(),
        InferenceError::ScriptExhausted { .. } => "script_exhausted".into(),
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
