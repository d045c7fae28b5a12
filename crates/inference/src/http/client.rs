//! `HttpClient`: POSTs a JSON body with timeouts and retries, for both providers.

use std::time::Duration;

use futures::stream::{BoxStream, StreamExt};
use reqwest::header::{HeaderMap, CONTENT_TYPE};

use super::error_body::status_error;
use super::retry::RetryPolicy;
use crate::InferenceError;

/// Timeouts and retries of an HTTP provider.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpSettings {
    /// Time allowed for one attempt: the whole answer for `complete`, the first byte for
    /// `stream`.
    pub timeout: Duration,
    /// Time allowed to open the connection.
    pub connect_timeout: Duration,
    /// Longest silence allowed between two chunks of a stream.
    pub stream_idle_timeout: Duration,
    /// How failed attempts are retried.
    pub retry: RetryPolicy,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(10),
            stream_idle_timeout: Duration::from_secs(120),
            retry: RetryPolicy::default(),
        }
    }
}

/// One POST to send: URL, headers (the key marked sensitive) and the JSON body.
pub(crate) struct PostRequest {
    pub(crate) url: String,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Vec<u8>,
}

/// The rest of a response body, chunk by chunk.
pub(crate) type BodyStream = BoxStream<'static, Result<Vec<u8>, InferenceError>>;

/// How a stream request was answered.
pub(crate) enum StreamStart {
    /// Server-sent events: the first chunk and the rest.
    Events {
        /// The first chunk (empty when the body was empty).
        first: Vec<u8>,
        /// The remaining chunks.
        rest: BodyStream,
    },
    /// The server ignored `stream: true` and sent one JSON answer.
    Json(String),
}

/// A reqwest client with the provider's timeouts and retry policy.
#[derive(Clone, Debug)]
pub(crate) struct HttpClient {
    client: reqwest::Client,
    settings: HttpSettings,
}

impl HttpClient {
    /// A client with the given settings.
    pub(crate) fn new(settings: HttpSettings) -> Result<Self, InferenceError> {
        let client = reqwest::Client::builder()
            .connect_timeout(settings.connect_timeout)
            .build()
            .map_err(|e| InferenceError::Configuration {
                message: format!("cannot build the HTTP client: {}", describe(&e)),
            })?;
        Ok(Self { client, settings })
    }

    /// The settings in use.
    pub(crate) fn settings(&self) -> &HttpSettings {
        &self.settings
    }

    /// Sends `request` (with retries) and returns the JSON body of the successful answer.
    pub(crate) async fn post_json(&self, request: &PostRequest) -> Result<String, InferenceError> {
        self.settings
            .retry
            .run(|attempt| self.attempt_json(request, attempt))
            .await
    }

    /// Sends a streaming `request` (with retries until the first byte arrives).
    pub(crate) async fn post_stream(
        &self,
        request: &PostRequest,
    ) -> Result<StreamStart, InferenceError> {
        self.settings
            .retry
            .run(|attempt| self.attempt_stream(request, attempt))
            .await
    }

    async fn attempt_json(
        &self,
        request: &PostRequest,
        attempt: u32,
    ) -> Result<String, InferenceError> {
        let timeout = self.settings.timeout;
        let work = async {
            let response = self.send(request, attempt).await?;
            let content_type = content_type(response.headers());
            let body = response.text().await.map_err(|e| transport(&e, timeout))?;
            if !content_type.is_empty() && !content_type.contains("json") {
                return Err(InferenceError::malformed(
                    format!("expected a JSON answer but got content type `{content_type}`"),
                    &body,
                ));
            }
            Ok(body)
        };
        tokio::time::timeout(timeout, work)
            .await
            .unwrap_or(Err(InferenceError::Timeout { after: timeout }))
    }

    async fn attempt_stream(
        &self,
        request: &PostRequest,
        attempt: u32,
    ) -> Result<StreamStart, InferenceError> {
        let timeout = self.settings.timeout;
        let work = async {
            let response = self.send(request, attempt).await?;
            let content_type = content_type(response.headers());
            if content_type.contains("json") {
                let body = response.text().await.map_err(|e| transport(&e, timeout))?;
                return Ok(StreamStart::Json(body));
            }
            if !content_type.is_empty() && !content_type.contains("event-stream") {
                let body = response.text().await.unwrap_or_default();
                return Err(InferenceError::malformed(
                    format!("expected an event stream but got content type `{content_type}`"),
                    &body,
                ));
            }
            let idle = self.settings.stream_idle_timeout;
            let mut rest: BodyStream = response
                .bytes_stream()
                .map(move |chunk| chunk.map(|b| b.to_vec()).map_err(|e| transport(&e, idle)))
                .boxed();
            let first = rest.next().await.transpose()?.unwrap_or_default();
            Ok(StreamStart::Events { first, rest })
        };
        tokio::time::timeout(timeout, work)
            .await
            .unwrap_or(Err(InferenceError::Timeout { after: timeout }))
    }

    /// Sends once; non-success statuses become typed errors.
    async fn send(
        &self,
        request: &PostRequest,
        attempt: u32,
    ) -> Result<reqwest::Response, InferenceError> {
        tracing::debug!(url = %request.url, attempt, bytes = request.body.len(), "sending inference request");
        let response = self
            .client
            .post(&request.url)
            .headers(request.headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(request.body.clone())
            .send()
            .await
            .map_err(|e| transport(&e, self.settings.timeout))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let headers = response.headers().clone();
        let body = response.text().await.unwrap_or_default();
        let error = status_error(status.as_u16(), &headers, &body);
        tracing::debug!(status = status.as_u16(), %error, "provider returned an error status");
        Err(error)
    }
}

fn content_type(headers: &HeaderMap) -> String {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase()
}

/// A reqwest failure as a typed error.
fn transport(error: &reqwest::Error, timeout: Duration) -> InferenceError {
    if error.is_timeout() {
        return InferenceError::Timeout { after: timeout };
    }
    InferenceError::Transport {
        message: describe(error),
    }
}

/// The error with its causes: reqwest's own message alone rarely says what failed.
fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
