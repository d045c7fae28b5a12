//! The `LanguageModel` trait.

use std::pin::Pin;
use std::sync::Arc;

use async_trait::async_trait;
use futures::stream::{self, Stream, StreamExt};

use crate::event::{response_to_events, StreamAccumulator};
use crate::{InferenceError, InferenceEvent, InferenceRequest, InferenceResponse};

/// A stream of inference events.
pub type InferenceStream =
    Pin<Box<dyn Stream<Item = Result<InferenceEvent, InferenceError>> + Send>>;

/// A model that answers inference requests: an HTTP provider, or a scripted model in tests.
#[async_trait]
pub trait LanguageModel: Send + Sync {
    /// Answers `request` in one piece.
    ///
    /// # Errors
    /// An [`InferenceError`] saying what failed (rate limit, timeout, HTTP status, ...).
    async fn complete(
        &self,
        request: InferenceRequest,
    ) -> Result<InferenceResponse, InferenceError>;

    /// Answers `request` as a stream of events. The default implementation calls
    /// [`complete`](LanguageModel::complete) and replays the answer as events.
    ///
    /// # Errors
    /// An [`InferenceError`] when the request could not be started; errors after that arrive
    /// in the stream.
    async fn stream(&self, request: InferenceRequest) -> Result<InferenceStream, InferenceError> {
        let response = self.complete(request).await?;
        Ok(Box::pin(stream::iter(
            response_to_events(&response).into_iter().map(Ok),
        )))
    }

    /// A short name for logs and events (provider and model).
    fn name(&self) -> String {
        "model".to_owned()
    }

    /// The URL of the server it talks to, when it talks to one (HTTP providers: their base
    /// URL). Used to tell a local server from a hosted API (see
    /// [`is_local_endpoint`](crate::is_local_endpoint)).
    fn endpoint(&self) -> Option<String> {
        None
    }
}

#[async_trait]
impl<M: LanguageModel + ?Sized> LanguageModel for Arc<M> {
    async fn complete(
        &self,
        request: InferenceRequest,
    ) -> Result<InferenceResponse, InferenceError> {
        (**self).complete(request).await
    }

    async fn stream(&self, request: InferenceRequest) -> Result<InferenceStream, InferenceError> {
        (**self).stream(request).await
    }

    fn name(&self) -> String {
        (**self).name()
    }

    fn endpoint(&self) -> Option<String> {
        (**self).endpoint()
    }
}

#[async_trait]
impl<M: LanguageModel + ?Sized> LanguageModel for Box<M> {
    async fn complete(
        &self,
        request: InferenceRequest,
    ) -> Result<InferenceResponse, InferenceError> {
        (**self).complete(request).await
    }

    async fn stream(&self, request: InferenceRequest) -> Result<InferenceStream, InferenceError> {
        (**self).stream(request).await
    }

    fn name(&self) -> String {
        (**self).name()
    }

    fn endpoint(&self) -> Option<String> {
        (**self).endpoint()
    }
}

/// Drains a stream into a complete response.
///
/// # Errors
/// The first error in the stream, or [`InferenceError::MalformedResponse`] when tool call
/// arguments do not assemble into JSON.
pub async fn collect_stream(
    mut stream: InferenceStream,
) -> Result<InferenceResponse, InferenceError> {
    let mut accumulator = StreamAccumulator::new();
    while let Some(event) = stream.next().await {
        accumulator.push(&event?);
    }
    accumulator.finish()
}
