//! HTTP providers: [`openai`] (any OpenAI-compatible chat completions server) and
//! [`anthropic`] (the Anthropic messages API).
//!
//! Each provider module holds its client type and the public functions that map our types to
//! its wire format and back, so the mappings can be tested and reused on their own.

pub mod anthropic;
pub(crate) mod http_provider;
pub mod openai;

use crate::http::client::{HttpClient, PostRequest, StreamStart};
use crate::http::event_stream::{event_stream, StreamDecoder};
use crate::telemetry::GEN_AI_RESPONSE_MODEL;
use crate::{response_to_events, InferenceError, InferenceResponse, InferenceStream};

/// Sends a streaming request: an event-stream answer is decoded by `decoder`; a server that
/// answered with one JSON body instead is parsed by `parse` and replayed as events. Called
/// inside the call's `chat` span, whose response model it records for a JSON answer.
pub(crate) async fn start_stream<D: StreamDecoder>(
    http: &HttpClient,
    post: &PostRequest,
    decoder: D,
    parse: fn(&str) -> Result<InferenceResponse, InferenceError>,
) -> Result<InferenceStream, InferenceError> {
    match http.post_stream(post).await? {
        StreamStart::Events {
            first,
            rest,
            limits,
        } => Ok(event_stream(first, rest, decoder, limits)),
        StreamStart::Json(body) => {
            let response = parse(&body)?;
            if let Some(model) = response.model() {
                tracing::Span::current().record(GEN_AI_RESPONSE_MODEL, model);
            }
            let events = response_to_events(&response).into_iter().map(Ok);
            Ok(Box::pin(futures::stream::iter(events)))
        }
    }
}

/// The error for a stream that ended before the provider said it was complete.
pub(crate) fn truncated_stream(expected: &str) -> InferenceError {
    InferenceError::Transport {
        message: format!(
            "the stream ended before the answer was complete (no {expected} and no finish reason)"
        ),
    }
}

/// An error reported inside a stream or a success body, typed by the provider's error kind.
pub(crate) fn provider_error(kind: Option<&str>, message: String) -> InferenceError {
    let kind = kind.unwrap_or_default();
    let status = match kind {
        k if k.contains("rate_limit") => {
            return InferenceError::RateLimited {
                retry_after: None,
                message,
            }
        }
        k if k.contains("overloaded") => 529,
        k if k.contains("invalid_request") => 400,
        k if k.contains("authentication") => 401,
        k if k.contains("permission") => 403,
        k if k.contains("not_found") => 404,
        k if k.contains("request_too_large") => 413,
        _ => 500,
    };
    InferenceError::Http { status, message }
}

/// A body that is not JSON.
pub(crate) fn parse_json(body: &str) -> Result<serde_json::Value, InferenceError> {
    serde_json::from_str(body)
        .map_err(|e| InferenceError::malformed(format!("the answer is not valid JSON: {e}"), body))
}

/// The text of a provider error object `{"message", "type"}` (or of a bare string).
pub(crate) fn error_from_value(error: &serde_json::Value) -> InferenceError {
    let message = error
        .get("message")
        .and_then(|m| m.as_str())
        .or_else(|| error.as_str())
        .unwrap_or("the provider reported an error without a message")
        .to_owned();
    let kind = error
        .get("type")
        .and_then(|t| t.as_str())
        .or_else(|| error.get("code").and_then(|c| c.as_str()));
    provider_error(kind, message)
}
