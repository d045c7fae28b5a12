//! `HttpClient`: POSTs a JSON body with timeouts and retries, for both providers.

use std::time::Duration;

use futures::stream::{BoxStream, StreamExt};
use reqwest::header::{HeaderMap, CONTENT_TYPE, LOCATION};
use reqwest::redirect;
use reqwest::StatusCode;
use tokio::time::Instant;

use super::error_body::status_error;
use super::retry::RetryPolicy;
use super::sse::DEFAULT_MAX_EVENT_BYTES;
use crate::encoding::body::RequestBody;
use crate::InferenceError;

/// The most redirects followed for one request (all to the same origin).
const MAX_REDIRECTS: usize = 10;

/// The default [`HttpSettings::max_body_bytes`]: 32 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 32 << 20;

/// [`HttpSettings::timeout`] for a server on this machine or network
/// ([`is_local_endpoint`](crate::is_local_endpoint)): 10 minutes, as the OpenAI and Anthropic
/// SDKs allow every request. A model on a CPU reads a prompt at tens of tokens per second, so
/// a request that carries a large file takes minutes before its first byte; cancelling it
/// costs the server the batch it is in, and the retry starts behind it.
pub const LOCAL_SERVER_TIMEOUT: Duration = Duration::from_secs(600);

/// [`HttpSettings::stream_deadline`] for a server on this machine or network: 30 minutes,
/// so that an attempt may use all of [`LOCAL_SERVER_TIMEOUT`] and the stream still finish.
pub const LOCAL_SERVER_STREAM_DEADLINE: Duration = Duration::from_secs(1800);

/// Timeouts, limits and retries of an HTTP provider.
///
/// The provider builders start from [`HttpSettings::default`] for a hosted API and from
/// [`HttpSettings::local_server`] when the base URL is a loopback or private address; a
/// timeout set on the builder wins over both.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpSettings {
    /// Time allowed for one attempt: the whole answer for `complete`, the first byte for
    /// `stream` (default 120 s; [`LOCAL_SERVER_TIMEOUT`] for a local server).
    pub timeout: Duration,
    /// Time allowed to open the connection.
    pub connect_timeout: Duration,
    /// Longest silence allowed between two chunks of a stream (default 60 s).
    pub stream_idle_timeout: Duration,
    /// Total time allowed for a streamed answer, from the request (retries included) to the
    /// last event (default 10 minutes; [`LOCAL_SERVER_STREAM_DEADLINE`] for a local server).
    pub stream_deadline: Duration,
    /// Most bytes one server-sent event may hold (default 8 MiB).
    pub max_event_bytes: usize,
    /// Most bytes of a response body read whole (an answer to `complete`, an error body):
    /// past it the request fails with [`InferenceError::BodyTooLarge`] (default 32 MiB).
    pub max_body_bytes: usize,
    /// How failed attempts are retried.
    pub retry: RetryPolicy,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(10),
            stream_idle_timeout: Duration::from_secs(60),
            stream_deadline: Duration::from_secs(600),
            max_event_bytes: DEFAULT_MAX_EVENT_BYTES,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            retry: RetryPolicy::default(),
        }
    }
}

impl HttpSettings {
    /// The defaults for a server on this machine or network: as [`Default`], but one attempt
    /// may take [`LOCAL_SERVER_TIMEOUT`] and a stream [`LOCAL_SERVER_STREAM_DEADLINE`].
    pub fn local_server() -> Self {
        Self {
            timeout: LOCAL_SERVER_TIMEOUT,
            stream_deadline: LOCAL_SERVER_STREAM_DEADLINE,
            ..Self::default()
        }
    }

    /// The defaults for `base_url`: [`local_server`](Self::local_server) when it is a
    /// loopback or private address, else [`Default`].
    pub fn for_endpoint(base_url: &str) -> Self {
        if crate::endpoint::is_local_endpoint(base_url) {
            Self::local_server()
        } else {
            Self::default()
        }
    }
}

/// The bounds a stream of events is read under.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StreamLimits {
    /// Longest silence between two chunks.
    pub(crate) idle_timeout: Duration,
    /// When the whole stream must be over.
    pub(crate) deadline: Instant,
    /// The total time the deadline stands for (for the error).
    pub(crate) total: Duration,
    /// Most bytes in one event.
    pub(crate) max_event_bytes: usize,
}

/// One POST to send: URL, headers (the key marked sensitive) and the JSON body (every
/// attempt sends the same chunks, with a `Content-Length`).
pub(crate) struct PostRequest {
    pub(crate) url: String,
    pub(crate) headers: HeaderMap,
    pub(crate) body: RequestBody,
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
        /// The bounds to read them under.
        limits: StreamLimits,
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
    /// A client with the given settings. It follows redirects only within the origin (scheme,
    /// host and port) of the request, so that the API key and extra headers are never sent to
    /// another server; a redirect elsewhere is returned as an HTTP error.
    pub(crate) fn new(settings: HttpSettings) -> Result<Self, InferenceError> {
        let client = reqwest::Client::builder()
            .connect_timeout(settings.connect_timeout)
            .redirect(same_origin_redirects())
            .build()
            .map_err(|e| InferenceError::Configuration {
                message: format!("cannot build the HTTP client: {}", describe(&e)),
            })?;
        Ok(Self { client, settings })
    }

    /// Sends `request` (with retries) and returns the JSON body of the successful answer.
    pub(crate) async fn post_json(&self, request: &PostRequest) -> Result<String, InferenceError> {
        self.settings
            .retry
            .run(|attempt| self.attempt_json(request, attempt))
            .await
    }

    /// Sends a streaming `request` (with retries until the first byte arrives). The stream
    /// deadline starts now.
    pub(crate) async fn post_stream(
        &self,
        request: &PostRequest,
    ) -> Result<StreamStart, InferenceError> {
        let total = self.settings.stream_deadline;
        let limits = StreamLimits {
            idle_timeout: self.settings.stream_idle_timeout,
            deadline: instant_after(total),
            total,
            max_event_bytes: self.settings.max_event_bytes,
        };
        let attempts = self
            .settings
            .retry
            .run(|attempt| self.attempt_stream(request, attempt, limits));
        tokio::time::timeout_at(limits.deadline, attempts)
            .await
            .unwrap_or(Err(InferenceError::StreamDeadline { after: total }))
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
            let body = self.read_body(response).await?;
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
        limits: StreamLimits,
    ) -> Result<StreamStart, InferenceError> {
        let timeout = self.settings.timeout;
        let work = async {
            let response = self.send(request, attempt).await?;
            let content_type = content_type(response.headers());
            if content_type.contains("json") {
                let body = self.read_body(response).await?;
                return Ok(StreamStart::Json(body));
            }
            if !content_type.is_empty() && !content_type.contains("event-stream") {
                let body = self.read_body(response).await.unwrap_or_default();
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
            Ok(StreamStart::Events {
                first,
                rest,
                limits,
            })
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
        let mut url = request.url.clone();
        let mut response = self.send_to(&url, request).await?;
        // reqwest replays a body on a 307 or 308 only when it holds it in one buffer; ours is
        // a chain of chunks, so the same-origin redirects that keep the method are followed
        // here, with the same bytes.
        for _ in 0..MAX_REDIRECTS {
            let next = match response.status() {
                StatusCode::TEMPORARY_REDIRECT | StatusCode::PERMANENT_REDIRECT => {
                    same_origin_location(&response)
                }
                _ => None,
            };
            let Some(next) = next else { break };
            url = next;
            response = self.send_to(&url, request).await?;
        }
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        if status.is_redirection() {
            let location = response
                .headers()
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("nowhere");
            return Err(InferenceError::Http {
                status: status.as_u16(),
                message: format!(
                    "the server redirected to `{location}`; only redirects to the same scheme, \
                     host and port are followed (at most {MAX_REDIRECTS}), so that the API key \
                     is never sent elsewhere: set the base URL to the final address"
                ),
            });
        }
        let headers = response.headers().clone();
        let body = self.read_body(response).await.unwrap_or_default();
        let error = status_error(status.as_u16(), &headers, &body);
        tracing::debug!(status = status.as_u16(), %error, "provider returned an error status");
        Err(error)
    }
}

impl HttpClient {
    /// One POST of `request`'s headers and body to `url`.
    async fn send_to(
        &self,
        url: &str,
        request: &PostRequest,
    ) -> Result<reqwest::Response, InferenceError> {
        self.client
            .post(url)
            .headers(request.headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(request.body.for_attempt())
            .send()
            .await
            .map_err(|e| transport(&e, self.settings.timeout))
    }
}

/// The redirect target of `response` when it has the same scheme, host and port as the URL
/// that was asked.
fn same_origin_location(response: &reqwest::Response) -> Option<String> {
    let asked = response.url();
    let location = response.headers().get(LOCATION)?.to_str().ok()?;
    let next = asked.join(location).ok()?;
    let same = asked.scheme() == next.scheme()
        && asked.host_str() == next.host_str()
        && asked.port_or_known_default() == next.port_or_known_default();
    same.then(|| next.to_string())
}

impl HttpClient {
    /// The whole body as text (invalid UTF-8 replaced), read chunk by chunk and refused with
    /// [`InferenceError::BodyTooLarge`] as soon as it passes `max_body_bytes`: a huge or
    /// endless body is never held in memory.
    async fn read_body(&self, mut response: reqwest::Response) -> Result<String, InferenceError> {
        let limit = self.settings.max_body_bytes;
        if response
            .content_length()
            .is_some_and(|length| length > limit as u64)
        {
            return Err(InferenceError::BodyTooLarge { limit });
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| transport(&e, self.settings.timeout))?
        {
            if body.len() + chunk.len() > limit {
                return Err(InferenceError::BodyTooLarge { limit });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(match String::from_utf8(body) {
            Ok(text) => text,
            Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
        })
    }
}

/// The instant `duration` from now; a duration too long to represent (`Duration::MAX` to turn
/// a limit off) gives a point about thirty years ahead.
pub(crate) fn instant_after(duration: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(duration)
        .unwrap_or_else(|| now + Duration::from_secs(30 * 365 * 24 * 3600))
}

/// Follows a redirect only to the origin (scheme, host, port) of the original request, at most
/// [`MAX_REDIRECTS`] times; any other redirect is handed back as the response.
fn same_origin_redirects() -> redirect::Policy {
    redirect::Policy::custom(|attempt| {
        let same_origin = attempt.previous().first().is_some_and(|first| {
            let next = attempt.url();
            first.scheme() == next.scheme()
                && first.host_str() == next.host_str()
                && first.port_or_known_default() == next.port_or_known_default()
        });
        if same_origin && attempt.previous().len() <= MAX_REDIRECTS {
            attempt.follow()
        } else {
            attempt.stop()
        }
    })
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
