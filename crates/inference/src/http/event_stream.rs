//! Turning a body of server-sent events into an [`InferenceStream`], with a
//! provider-specific [`StreamDecoder`].

use std::collections::VecDeque;
use std::time::Duration;

use futures::stream::{self, StreamExt};

use super::client::BodyStream;
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
    idle_timeout: Duration,
}

/// The stream of events decoded from `first` and then `body`. It ends after the first error.
pub(crate) fn event_stream<D: StreamDecoder>(
    first: Vec<u8>,
    body: BodyStream,
    decoder: D,
    idle_timeout: Duration,
) -> InferenceStream {
    let state = State {
        parser: SseParser::new(),
        decoder,
        first: Some(first),
        body,
        pending: VecDeque::new(),
        ended: false,
        idle_timeout,
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
        let chunk = match self.first.take() {
            Some(first) => Some(Ok(first)),
            None => match tokio::time::timeout(self.idle_timeout, self.body.next()).await {
                Ok(chunk) => chunk,
                Err(_) => Some(Err(InferenceError::Timeout {
                    after: self.idle_timeout,
                })),
            },
        };
        match chunk {
            Some(Ok(bytes)) => {
                let events = self.parser.push(&bytes);
                self.decode_all(events);
            }
            Some(Err(error)) => self.pending.push_back(Err(error)),
            None => {
                let last = self.parser.finish();
                self.decode_all(last);
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
