//! `HttpProvider`: what the HTTP providers share (settings, key, headers, the HTTP client
//! with retries, the encoding cache, spans, `complete` and `stream`) around a [`WireFormat`],
//! the part each provider writes its own way (URL, auth header, body, decoder, parser).

use std::fmt;
use std::sync::Arc;

use reqwest::header::HeaderMap;

use crate::encoding::body::RequestBody;
use crate::encoding::history::{EncodeCache, MAX_SLOTS};
use crate::error::InferenceError;
use crate::http::builder_options::{header_map, ExtraHeaders};
use crate::http::client::{HttpClient, HttpSettings, PostRequest};
use crate::http::event_stream::StreamDecoder;
use crate::http::secret::SecretString;
use crate::model::InferenceStream;
use crate::model_settings::ModelSettings;
use crate::providers::start_stream;
use crate::request::InferenceRequest;
use crate::response::InferenceResponse;
use crate::telemetry::{chat_span, complete_in_span, request_model, stream_in_span};

/// What one provider does its own way.
pub(crate) trait WireFormat: Clone + fmt::Debug + Send + Sync + 'static {
    /// What its message writer carries between messages (kept per message in the cache).
    type State: Copy + Default + Send + Sync + fmt::Debug + 'static;
    /// Its stream decoder.
    type Decoder: StreamDecoder + Default;

    /// `gen_ai.provider.name` of its spans.
    const PROVIDER_NAME: &'static str;
    /// The start of [`LanguageModel::name`](crate::LanguageModel::name), before `/{model}`.
    const NAME_PREFIX: &'static str;

    /// The endpoint, from the base URL.
    fn url(&self, base_url: &str) -> String;

    /// Adds its protocol headers and the key, marked sensitive.
    ///
    /// # Errors
    /// [`InferenceError::Configuration`] for a key that cannot be a header value.
    fn add_headers(
        &self,
        api_key: Option<&SecretString>,
        headers: &mut HeaderMap,
    ) -> Result<(), InferenceError>;

    /// The body of `request`, `settings` filling what it leaves unset.
    ///
    /// # Errors
    /// Only when the body cannot be serialized.
    fn body(
        &self,
        request: &InferenceRequest,
        settings: &ModelSettings,
        stream: bool,
        cache: &EncodeCache<Self::State>,
    ) -> Result<RequestBody, InferenceError>;

    /// Reads a complete (non-streamed) answer.
    ///
    /// # Errors
    /// [`InferenceError::MalformedResponse`] or the provider's error.
    fn parse_response(body: &str) -> Result<InferenceResponse, InferenceError>;
}

/// A model behind an HTTP API speaking `W`.
#[derive(Clone)]
pub(crate) struct HttpProvider<W: WireFormat> {
    pub(crate) base_url: String,
    pub(crate) api_key: Option<SecretString>,
    pub(crate) settings: ModelSettings,
    extra_headers: HeaderMap,
    http: HttpClient,
    pub(crate) wire: W,
    cache: Arc<EncodeCache<W::State>>,
}

impl<W: WireFormat> fmt::Debug for HttpProvider<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpProvider")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key)
            .field("settings", &self.settings)
            .field("extra_headers", &self.extra_headers)
            .field("http", &self.http)
            .field("wire", &self.wire)
            .field("cache", &self.cache)
            .finish()
    }
}

impl<W: WireFormat> HttpProvider<W> {
    /// The body `request` is sent with (this uses and updates the encoding cache).
    pub(crate) fn encode(
        &self,
        request: &InferenceRequest,
        stream: bool,
    ) -> Result<RequestBody, InferenceError> {
        self.wire.body(request, &self.settings, stream, &self.cache)
    }

    /// The POST for `request`.
    pub(crate) fn post(
        &self,
        request: &InferenceRequest,
        stream: bool,
    ) -> Result<PostRequest, InferenceError> {
        let mut headers = self.extra_headers.clone();
        self.wire.add_headers(self.api_key.as_ref(), &mut headers)?;
        Ok(PostRequest {
            url: self.wire.url(&self.base_url),
            headers,
            body: self.encode(request, stream)?,
        })
    }

    /// One complete answer, in a `chat` span.
    pub(crate) async fn complete(
        &self,
        request: InferenceRequest,
    ) -> Result<InferenceResponse, InferenceError> {
        let span = chat_span(
            W::PROVIDER_NAME,
            request_model(&request, &self.settings.model),
        );
        complete_in_span(span, async {
            let post = self.post(&request, false)?;
            let body = self.http.post_json(&post).await?;
            W::parse_response(&body)
        })
        .await
    }

    /// A streamed answer, in a `chat` span.
    pub(crate) async fn stream(
        &self,
        request: InferenceRequest,
    ) -> Result<InferenceStream, InferenceError> {
        let span = chat_span(
            W::PROVIDER_NAME,
            request_model(&request, &self.settings.model),
        );
        stream_in_span(span, async {
            let post = self.post(&request, true)?;
            start_stream(&self.http, &post, W::Decoder::default(), W::parse_response).await
        })
        .await
    }

    /// `{prefix}/{model}`.
    pub(crate) fn name(&self) -> String {
        format!("{}/{}", W::NAME_PREFIX, self.settings.model)
    }
}

/// What every provider builder collects the same way.
#[derive(Clone, Debug, Default)]
pub(crate) struct ProviderOptions {
    pub(crate) base_url: Option<String>,
    pub(crate) api_key: Option<SecretString>,
    pub(crate) settings: ModelSettings,
    pub(crate) headers: ExtraHeaders,
    /// Every HTTP setting but the two below, which default by endpoint.
    pub(crate) http: HttpSettings,
    /// [`HttpSettings::timeout`] when set on the builder.
    pub(crate) timeout: Option<std::time::Duration>,
    /// [`HttpSettings::stream_deadline`] when set on the builder.
    pub(crate) stream_deadline: Option<std::time::Duration>,
    pub(crate) encoding_cache: Option<usize>,
}

impl ProviderOptions {
    /// The HTTP settings for `base_url`: the timeout and stream deadline set on the builder,
    /// else those of [`HttpSettings::for_endpoint`] (longer for a local server); the rest as
    /// set.
    pub(crate) fn http_settings(&self, base_url: &str) -> HttpSettings {
        let defaults = HttpSettings::for_endpoint(base_url);
        HttpSettings {
            timeout: self.timeout.unwrap_or(defaults.timeout),
            stream_deadline: self.stream_deadline.unwrap_or(defaults.stream_deadline),
            ..self.http.clone()
        }
    }

    /// The provider, once `base_url` (already normalised by the caller) and the model are
    /// checked. `missing_model` is the error text for a missing model.
    pub(crate) fn build<W: WireFormat>(
        self,
        wire: W,
        base_url: String,
        missing_model: &str,
    ) -> Result<HttpProvider<W>, InferenceError> {
        if base_url.is_empty() {
            return Err(InferenceError::Configuration {
                message: "the base URL is empty".into(),
            });
        }
        if self.settings.model.trim().is_empty() {
            return Err(InferenceError::Configuration {
                message: missing_model.to_owned(),
            });
        }
        let http = self.http_settings(&base_url);
        Ok(HttpProvider {
            base_url,
            api_key: self.api_key,
            settings: self.settings,
            extra_headers: header_map(&self.headers)?,
            http: HttpClient::new(http)?,
            wire,
            cache: Arc::new(EncodeCache::new(
                self.encoding_cache.unwrap_or(MAX_SLOTS).min(MAX_SLOTS),
            )),
        })
    }
}

/// The builder methods every provider builder offers about its model and HTTP (key, model
/// settings, encoding cache, extra headers, timeouts, limits, retries), written once for
/// builders that hold `options: ProviderOptions`. The argument is an example header for the
/// `header` documentation.
macro_rules! provider_builder_options {
    ($example_header:literal) => {
        /// The API key (`None` or an empty string means none).
        pub fn api_key(mut self, api_key: impl $crate::IntoApiKey) -> Self {
            self.options.api_key = api_key.into_api_key();
            self
        }

        /// The default model (used when a request names none).
        pub fn model(mut self, model: impl Into<String>) -> Self {
            self.options.settings.model = model.into();
            self
        }

        /// The model and sampling defaults at once (replacing any set before); see
        /// [`ModelSettings`]($crate::ModelSettings).
        pub fn settings(mut self, settings: $crate::ModelSettings) -> Self {
            self.options.settings = settings;
            self
        }

        /// The sampling temperature for requests that set none.
        pub fn temperature(mut self, temperature: f32) -> Self {
            self.options.settings.temperature = Some(temperature);
            self
        }

        /// `max_tokens` for requests that set none.
        pub fn max_tokens(mut self, max_tokens: u32) -> Self {
            self.options.settings.max_tokens = Some(max_tokens);
            self
        }

        /// How many conversations the request encoding cache keeps (default and most: 8;
        /// 0 turns it off). A request reuses the bytes of the messages an earlier request of
        /// the same history already wrote, so its encoding costs what changed; the bytes sent
        /// are the same either way.
        pub fn encoding_cache(mut self, histories: usize) -> Self {
            self.options.encoding_cache = Some(histories);
            self
        }

        #[doc = concat!(
                                            "An extra header sent with every request (e.g. `",
                                            $example_header,
                                            "`)."
                                        )]
        pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
            self.options.headers.push((name.into(), value.into()));
            self
        }

        /// Time allowed for one attempt (the whole answer, or the first byte of a stream).
        /// Default 120 s, and 10 minutes
        /// ([`LOCAL_SERVER_TIMEOUT`]($crate::LOCAL_SERVER_TIMEOUT)) when the base URL is a
        /// loopback or private address: a model on a CPU can take minutes to read a long
        /// prompt.
        pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
            self.options.timeout = Some(timeout);
            self
        }

        /// Time allowed to connect.
        pub fn connect_timeout(mut self, timeout: std::time::Duration) -> Self {
            self.options.http.connect_timeout = timeout;
            self
        }

        /// Longest silence allowed between two chunks of a stream (default 60 s); past it the
        /// stream ends with a retryable [`InferenceError::Timeout`]($crate::InferenceError::Timeout).
        pub fn stream_idle_timeout(mut self, timeout: std::time::Duration) -> Self {
            self.options.http.stream_idle_timeout = timeout;
            self
        }

        /// Total time allowed for a streamed answer, from the request (retries included) to
        /// its last event (default 10 minutes, 30 for a local server); past it the stream
        /// ends with [`InferenceError::StreamDeadline`]($crate::InferenceError::StreamDeadline).
        pub fn stream_deadline(mut self, deadline: std::time::Duration) -> Self {
            self.options.stream_deadline = Some(deadline);
            self
        }

        /// Most bytes one server-sent event may hold (default 8 MiB); past it the stream ends
        /// with [`InferenceError::EventTooLarge`]($crate::InferenceError::EventTooLarge).
        pub fn max_event_bytes(mut self, max: usize) -> Self {
            self.options.http.max_event_bytes = max;
            self
        }

        /// Most bytes of a response body read whole (default 32 MiB); past it the request
        /// fails with `InferenceError::BodyTooLarge`.
        pub fn max_body_bytes(mut self, max: usize) -> Self {
            self.options.http.max_body_bytes = max;
            self
        }

        /// The retry policy.
        pub fn retry(mut self, policy: $crate::RetryPolicy) -> Self {
            self.options.http.retry = policy;
            self
        }

        /// Total attempts per request (1 = no retries).
        pub fn max_attempts(mut self, attempts: u32) -> Self {
            self.options.http.retry = self.options.http.retry.with_max_attempts(attempts);
            self
        }
    };
}

pub(crate) use provider_builder_options;

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::http::client::{LOCAL_SERVER_STREAM_DEADLINE, LOCAL_SERVER_TIMEOUT};

    #[test]
    fn a_local_server_gets_minutes_for_an_attempt_a_hosted_api_two() {
        let options = ProviderOptions::default();
        for local in [
            "http://127.0.0.1:8080/v1",
            "http://localhost:11434/v1",
            "http://192.168.1.20:8000/v1",
        ] {
            let http = options.http_settings(local);
            assert_eq!(http.timeout, LOCAL_SERVER_TIMEOUT, "{local}");
            assert_eq!(
                http.stream_deadline, LOCAL_SERVER_STREAM_DEADLINE,
                "{local}"
            );
        }
        let hosted = options.http_settings("https://api.openai.com/v1");
        assert_eq!(hosted, HttpSettings::default());
        assert_eq!(hosted.timeout, Duration::from_secs(120));
    }

    #[test]
    fn a_timeout_set_on_the_builder_wins_for_every_endpoint() {
        let mut options = ProviderOptions {
            timeout: Some(Duration::from_secs(5)),
            stream_deadline: Some(Duration::from_secs(50)),
            ..ProviderOptions::default()
        };
        options.http.connect_timeout = Duration::from_secs(2);
        for url in ["http://127.0.0.1:8080/v1", "https://api.anthropic.com"] {
            let http = options.http_settings(url);
            assert_eq!(http.timeout, Duration::from_secs(5), "{url}");
            assert_eq!(http.stream_deadline, Duration::from_secs(50), "{url}");
            assert_eq!(http.connect_timeout, Duration::from_secs(2), "{url}");
        }
    }
}
