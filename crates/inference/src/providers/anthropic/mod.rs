//! [`Anthropic`]: the Anthropic messages API (`/v1/messages`) over HTTP.

mod content;
mod request;
mod response;
mod stream;

use async_trait::async_trait;
use reqwest::header::{HeaderMap, HeaderValue};

pub use request::{messages_from_anthropic, messages_to_anthropic, request_body};
pub use response::{parse_response, usage_from_anthropic};

use crate::http::builder_options::{header_map, http_builder_options, ExtraHeaders};
use crate::http::client::{HttpClient, HttpSettings, PostRequest};
use crate::http::secret::{IntoApiKey, SecretString};
use crate::providers::start_stream;
use crate::telemetry::{chat_span, complete_in_span, request_model, stream_in_span};
use crate::{InferenceError, InferenceRequest, InferenceResponse, InferenceStream, LanguageModel};
pub(crate) use stream::AnthropicStreamDecoder;

/// Anthropic's API root, used when no base URL is given.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The `anthropic-version` header sent with every request.
pub const API_VERSION: &str = "2023-06-01";
/// `max_tokens` when a request sets none (Anthropic requires one).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;
/// `gen_ai.provider.name` of this provider's `chat` spans.
pub const PROVIDER_NAME: &str = "anthropic";

/// A Claude model behind the Anthropic messages API.
///
/// The key is sent as `x-api-key`, kept in a [`SecretString`] and never shown in `Debug`
/// output, errors or logs. Prompt caching is on: requests carry `cache_control` breakpoints
/// (see [`request_body`]); turn it off with [`AnthropicBuilder::prompt_caching`]. Every call
/// is a `chat {model}` span ([`crate::telemetry`]).
///
/// ```
/// use inference::{Anthropic, LanguageModel};
///
/// let model = Anthropic::new("sk-ant-...", "claude-sonnet-4-5").unwrap();
/// assert_eq!(model.name(), "anthropic/claude-sonnet-4-5");
/// assert!(!format!("{model:?}").contains("sk-ant"));
/// ```
#[derive(Clone, Debug)]
pub struct Anthropic {
    base_url: String,
    api_key: Option<SecretString>,
    model: String,
    max_tokens: u32,
    prompt_caching: bool,
    extra_headers: HeaderMap,
    http: HttpClient,
}

impl Anthropic {
    /// A client for `model` with the given key.
    ///
    /// # Errors
    /// [`InferenceError::Configuration`] for an empty model.
    pub fn new(api_key: impl IntoApiKey, model: impl Into<String>) -> Result<Self, InferenceError> {
        Self::builder().api_key(api_key).model(model).build()
    }

    /// A client configured from `ANTHROPIC_API_KEY`, `ANTHROPIC_MODEL` and
    /// `ANTHROPIC_BASE_URL` (default `https://api.anthropic.com`).
    ///
    /// # Errors
    /// [`InferenceError::Configuration`] when `ANTHROPIC_MODEL` is unset, or the key is
    /// missing for api.anthropic.com.
    pub fn from_env() -> Result<Self, InferenceError> {
        Self::builder_from(|name| std::env::var(name).ok())?.build()
    }

    /// A builder for every setting (base URL, key, model, max tokens, timeouts, retries).
    pub fn builder() -> AnthropicBuilder {
        AnthropicBuilder::default()
    }

    /// The default model.
    pub fn model(&self) -> &str {
        &self.model
    }

    fn builder_from(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<AnthropicBuilder, InferenceError> {
        let set = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let base_url = set("ANTHROPIC_BASE_URL").unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
        let model = set("ANTHROPIC_MODEL").ok_or_else(|| InferenceError::Configuration {
            message: "ANTHROPIC_MODEL is not set: set it to the Claude model to use".into(),
        })?;
        let api_key = set("ANTHROPIC_API_KEY");
        if api_key.is_none() && base_url.contains("api.anthropic.com") {
            return Err(InferenceError::Configuration {
                message: "ANTHROPIC_API_KEY is not set; it is required for api.anthropic.com"
                    .into(),
            });
        }
        let mut builder = Self::builder().base_url(base_url).model(model);
        builder.api_key = api_key.map(SecretString::from);
        Ok(builder)
    }

    fn post(
        &self,
        request: &InferenceRequest,
        stream: bool,
    ) -> Result<PostRequest, InferenceError> {
        let body = request_body(
            request,
            &self.model,
            self.max_tokens,
            stream,
            self.prompt_caching,
        );
        let body = serde_json::to_vec(&body).map_err(|e| InferenceError::Configuration {
            message: format!("the request cannot be serialized: {e}"),
        })?;
        let mut headers = self.extra_headers.clone();
        headers.insert("anthropic-version", HeaderValue::from_static(API_VERSION));
        if let Some(key) = &self.api_key {
            let mut value = HeaderValue::from_str(key.expose_secret()).map_err(|_| {
                InferenceError::Configuration {
                    message: "the API key contains characters not allowed in a header".into(),
                }
            })?;
            value.set_sensitive(true);
            headers.insert("x-api-key", value);
        }
        Ok(PostRequest {
            url: format!("{}/v1/messages", self.base_url),
            headers,
            body,
        })
    }
}

#[async_trait]
impl LanguageModel for Anthropic {
    async fn complete(
        &self,
        request: InferenceRequest,
    ) -> Result<InferenceResponse, InferenceError> {
        let span = chat_span(PROVIDER_NAME, request_model(&request, &self.model));
        complete_in_span(span, async {
            let post = self.post(&request, false)?;
            let body = self.http.post_json(&post).await?;
            parse_response(&body)
        })
        .await
    }

    async fn stream(&self, request: InferenceRequest) -> Result<InferenceStream, InferenceError> {
        let span = chat_span(PROVIDER_NAME, request_model(&request, &self.model));
        stream_in_span(span, async {
            let post = self.post(&request, true)?;
            start_stream(
                &self.http,
                &post,
                AnthropicStreamDecoder::default(),
                parse_response,
            )
            .await
        })
        .await
    }

    fn name(&self) -> String {
        format!("anthropic/{}", self.model)
    }

    fn endpoint(&self) -> Option<String> {
        Some(self.base_url.clone())
    }
}

/// Builds an [`Anthropic`] client; [`build`](AnthropicBuilder::build) validates.
#[derive(Clone, Debug, Default)]
pub struct AnthropicBuilder {
    base_url: Option<String>,
    api_key: Option<SecretString>,
    model: Option<String>,
    max_tokens: Option<u32>,
    no_prompt_caching: bool,
    headers: ExtraHeaders,
    http: HttpSettings,
}

impl AnthropicBuilder {
    /// The API root (default `https://api.anthropic.com`); a trailing `/` or `/v1` is ignored.
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = Some(base_url.into());
        self
    }

    /// The API key.
    pub fn api_key(mut self, api_key: impl IntoApiKey) -> Self {
        self.api_key = api_key.into_api_key();
        self
    }

    /// The default model.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// `max_tokens` for requests that set none (default 4096).
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Whether requests carry `cache_control` breakpoints (default: on). Cached prompt
    /// prefixes are billed at the cache-read price (a tenth of the input price or less);
    /// writing one costs 1.25 times the input price once.
    pub fn prompt_caching(mut self, enabled: bool) -> Self {
        self.no_prompt_caching = !enabled;
        self
    }

    http_builder_options!("anthropic-beta");

    /// The client.
    ///
    /// # Errors
    /// [`InferenceError::Configuration`] for a missing model, an empty base URL or an invalid
    /// header.
    pub fn build(self) -> Result<Anthropic, InferenceError> {
        let base_url = self.base_url.unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
        let base_url = base_url.trim().trim_end_matches('/');
        let base_url = base_url.strip_suffix("/v1").unwrap_or(base_url).to_owned();
        if base_url.is_empty() {
            return Err(InferenceError::Configuration {
                message: "the base URL is empty".into(),
            });
        }
        let model = self.model.filter(|m| !m.trim().is_empty()).ok_or_else(|| {
            InferenceError::Configuration {
                message: "no model given: call `.model(..)`".into(),
            }
        })?;
        Ok(Anthropic {
            base_url,
            api_key: self.api_key,
            model,
            max_tokens: self.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            prompt_caching: !self.no_prompt_caching,
            extra_headers: header_map(&self.headers)?,
            http: HttpClient::new(self.http)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_and_base_url_normalisation() {
        let env = |name: &str| match name {
            "ANTHROPIC_MODEL" => Some("claude".to_owned()),
            "ANTHROPIC_BASE_URL" => Some("http://localhost:18081/anthropic/v1/".to_owned()),
            _ => None,
        };
        let model = Anthropic::builder_from(env).unwrap().build().unwrap();
        let post = model.post(&InferenceRequest::default(), false).unwrap();
        assert_eq!(post.url, "http://localhost:18081/anthropic/v1/messages");
        assert_eq!(post.headers["anthropic-version"], API_VERSION);
        assert!(post.headers.get("x-api-key").is_none());
        let missing = Anthropic::builder_from(|n| (n == "ANTHROPIC_MODEL").then(|| "c".to_owned()));
        assert!(missing
            .unwrap_err()
            .to_string()
            .contains("ANTHROPIC_API_KEY"));
    }
}
