//! Turning a body of server-sent events into an [`InferenceStream`], with a
//! provider-specific [`StreamDecoder`].

use std::collections::VecDeque;

use futures::stream::{self, StreamExt};

use super::client::{instant_after, BodyStream, StreamLimits};
use super::sse::{SseEvent, SseParser};
use crate::{InferenceError, InferenceEvent, InferenceStream};

/// A provider's translation of its stream events into ours.
pub(crate) trait StreamDecoder: Send + 'static {
    /// The events for one server-sent event.
    fn decode(&mut self, event: &SseEvent) -> Result<Vec<InferenceEvent>, InferenceError>;

    /// True once the provider said the stream is over (`[DONE]`, `message_stop`).
    fn is_done(&self) -> bool;

    /// Called when the body ends: the last events, or an error for a truncated stream.
    fn end_of_body(&mut self) -> Result<Vec<InferenceEvent>, InferenceError>;
}

struct State<D> {
    parser: SseParser,
    decoder: D,
    first: Option<Vec<u8>>,
    body: BodyStream,
    pending: VecDeque<Result<InferenceEvent, InferenceError>>,
    ended: bool,
    limits: StreamLimits,
}

/// The stream of events decoded from `first` and then `body`, read under `limits`: a silence
/// longer than the idle timeout ends it with [`InferenceError::Timeout`], the deadline with
/// [`InferenceError::StreamDeadline`], an oversized event with
/// [`InferenceError::EventTooLarge`]. It ends after the first error.
pub(crate) fn event_stream<D: StreamDecoder>(
    first: Vec<u8>,
    body: BodyStream,
    decoder: D,
    limits: StreamLimits,
) -> InferenceStream {
    let state = State {
        parser: SseParser::new().with_max_event_bytes(limits.max_event_bytes),
        decoder,
        first: Some(first),
        body,
        pending: VecDeque::new(),
        ended: false,
        limits,
    };
    Box::pin(stream::unfold(state, |mut state| async move {
        loop {
            if let Some(item) = state.pending.pop_front() {
                if item.is_err() {
                    state.pending.clear();
                    state.ended = true;
                }
                return Some((item, state));
            }
            if state.ended {
                return None;
            }
            if state.decoder.is_done() {
                state.ended = true;
                continue;
            }
            state.pull().await;
        }
    }))
}

impl<D: StreamDecoder> State<D> {
    /// Reads the next chunk and queues what it decodes to.
    async fn pull(&mut self) {
        let StreamLimits {
            idle_timeout,
            deadline,
            total,
            ..
        } = self.limits;
        let chunk = match self.first.take() {
            Some(first) => Some(Ok(first)),
            None => {
                let idle_end = instant_after(idle_timeout);
                match tokio::time::timeout_at(idle_end.min(deadline), self.body.next()).await {
                    Ok(chunk) => chunk,
                    Err(_) if idle_end < deadline => Some(Err(InferenceError::Timeout {
                        after: idle_timeout,
                    })),
                    Err(_) => Some(Err(InferenceError::StreamDeadline { after: total })),
                }
            }
        };
        match chunk {
            Some(Ok(bytes)) => match self.parser.push(&bytes) {
                Ok(events) => self.decode_all(events),
                Err(error) => self.pending.push_back(Err(error)),
            },
            Some(Err(error)) => self.pending.push_back(Err(error)),
            None => {
                match self.parser.finish() {
                    Ok(last) => self.decode_all(last),
                    Err(error) => {
                        self.pending.push_back(Err(error));
                        self.ended = true;
                        return;
                    }
                }
                if !self.decoder.is_done() {
                    let last = self.decoder.end_of_body();
                    self.queue(last);
                }
                self.ended = true;
            }
        }
    }

    fn decode_all(&mut self, events: impl IntoIterator<Item = SseEvent>) {
        for event in events {
            if self.decoder.is_done() {
                return;
            }
            let decoded = self.decoder.decode(&event);
            let failed = decoded.is_err();
            self.queue(decoded);
            if failed {
                return;
            }
        }
    }

    fn queue(&mut self, events: Result<Vec<InferenceEvent>, InferenceError>) {
        match events {
            Ok(events) => self.pending.extend(events.into_iter().map(Ok)),
            Err(error) => self.pending.push_back(Err(error)),
        }
    }
}
