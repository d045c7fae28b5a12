//! [`replay_stream`]: decoding a recorded stream body the way a provider's `stream` does.

use futures::stream::{self, StreamExt};

use super::client::{instant_after, HttpSettings, StreamLimits};
use super::event_stream::event_stream;
use crate::providers::anthropic::AnthropicStreamDecoder;
use crate::providers::openai::OpenAiStreamDecoder;
use crate::{InferenceError, InferenceEvent};

/// The stream format of a provider.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamFormat {
    /// OpenAI-compatible chat completion chunks (`data: {...}`, `data: [DONE]`).
    OpenAi,
    /// Anthropic message events (`event: message_start`, ...).
    Anthropic,
}

/// The events a provider's stream yields for a body that arrives in `chunks`: everything up
/// to and including the first error, with the default limits of [`HttpSettings`]. For tests
/// that replay a recorded stream, and for fuzzing the stream parsers.
///
/// It needs a Tokio runtime with time enabled (the limits are timers).
///
/// ```
/// use inference::{replay_stream, InferenceEvent, StreamFormat};
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let body = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: [DONE]\n\n";
/// let events = replay_stream(StreamFormat::OpenAi, vec![body.to_vec()]).await;
/// assert!(events.iter().any(|e| matches!(e, Ok(InferenceEvent::TextDelta { text }) if text == "Hi")));
/// # });
/// ```
pub async fn replay_stream(
    format: StreamFormat,
    chunks: Vec<Vec<u8>>,
) -> Vec<Result<InferenceEvent, InferenceError>> {
    let settings = HttpSettings::default();
    let limits = StreamLimits {
        idle_timeout: settings.stream_idle_timeout,
        deadline: instant_after(settings.stream_deadline),
        total: settings.stream_deadline,
        max_event_bytes: settings.max_event_bytes,
    };
    let mut chunks = chunks.into_iter();
    let first = chunks.next().unwrap_or_default();
    let rest = stream::iter(chunks.map(Ok)).boxed();
    let events = match format {
        StreamFormat::OpenAi => event_stream(first, rest, OpenAiStreamDecoder::default(), limits),
        StreamFormat::Anthropic => {
            event_stream(first, rest, AnthropicStreamDecoder::default(), limits)
        }
    };
    events.collect().await
}
