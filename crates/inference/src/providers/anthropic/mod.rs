//! [`Anthropic`]: the Anthropic messages API (`/v1/messages`) over HTTP.

mod content;
mod request;
mod response;
mod stream;

use async_trait::async_trait;
use reqwest::header::{HeaderMap, HeaderValue};

pub use request::{messages_from_anthropic, messages_to_anthropic, request_body};
pub use response::{parse_response, usage_from_anthropic};

use crate::encoding::body::RequestBody;
use crate::encoding::history::EncodeCache;
use crate::error::InferenceError;
use crate::http::secret::{IntoApiKey, SecretString};
use crate::model::{InferenceStream, LanguageModel};
use crate::model_settings::ModelSettings;
use crate::providers::http_provider::{
    provider_builder_options, HttpProvider, ProviderOptions, WireFormat,
};
use crate::request::InferenceRequest;
use crate::response::InferenceResponse;
use request::{encode_body, AnthropicState};
pub(crate) use stream::AnthropicStreamDecoder;

/// Anthropic's API root, used when no base URL is given.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The `anthropic-version` header sent with every request.
pub const API_VERSION: &str = "2023-06-01";
/// `max_tokens` when neither the request nor the model's settings set one (Anthropic
/// requires one).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;
/// `gen_ai.provider.name` of this provider's `chat` spans.
pub const PROVIDER_NAME: &str = "anthropic";

/// A Claude model behind the Anthropic messages API.
///
/// The key is sent as `x-api-key`, kept in a [`SecretString`] and never shown in `Debug`
/// output, errors or logs. Prompt caching is on: requests carry `cache_control` breakpoints
/// (see [`request_body`]); turn it off with [`AnthropicBuilder::prompt_caching`]. Every call
/// is a `chat {model}` span ([`crate::telemetry`]). Requests are encoded incrementally: the
/// bytes of messages an earlier request of the same history already wrote are reused
/// ([`AnthropicBuilder::encoding_cache`]).
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
    inner: HttpProvider<AnthropicWire>,
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

    /// A builder for every setting (base URL, key, model settings, timeouts, retries).
    pub fn builder() -> AnthropicBuilder {
        AnthropicBuilder::default()
    }

    /// The default model.
    pub fn model(&self) -> &str {
        &self.inner.settings.model
    }

    /// The model and sampling defaults for requests that set none.
    pub fn settings(&self) -> &ModelSettings {
        &self.inner.settings
    }

    /// The body this model sends for `request` (with `stream` as for
    /// [`LanguageModel::stream`]), as the chunks it is sent in: byte for byte
    /// `serde_json::to_vec` of [`request_body`] with this model's settings and caching.
    /// Like a call, it reuses the bytes of messages already written for this history and
    /// keeps the new ones for the next request.
    ///
    /// # Errors
    /// [`InferenceError::Configuration`] when the body cannot be serialized.
    pub fn encode_request(
        &self,
        request: &InferenceRequest,
        stream: bool,
    ) -> Result<RequestBody, InferenceError> {
        self.inner.encode(request, stream)
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
        Ok(Self::builder()
            .base_url(base_url)
            .model(model)
            .api_key(api_key.as_deref()))
    }
}

#[async_trait]
impl LanguageModel for Anthropic {
    async fn complete(
        &self,
        request: InferenceRequest,
    ) -> Result<InferenceResponse, InferenceError> {
        self.inner.complete(request).await
    }

    async fn stream(&self, request: InferenceRequest) -> Result<InferenceStream, InferenceError> {
        self.inner.stream(request).await
    }

    fn name(&self) -> String {
        self.inner.name()
    }

    fn endpoint(&self) -> Option<String> {
        Some(self.inner.base_url.clone())
    }
}

/// The messages protocol: `x-api-key` and `anthropic-version`, `/v1/messages`, the body of
/// [`request_body`].
#[derive(Clone, Debug)]
struct AnthropicWire {
    prompt_caching: bool,
}

impl WireFormat for AnthropicWire {
    type State = AnthropicState;
    type Decoder = AnthropicStreamDecoder;
    const PROVIDER_NAME: &'static str = PROVIDER_NAME;
    const NAME_PREFIX: &'static str = "anthropic";

    fn url(&self, base_url: &str) -> String {
        format!("{base_url}/v1/messages")
    }

    fn add_headers(
        &self,
        api_key: Option<&SecretString>,
        headers: &mut HeaderMap,
    ) -> Result<(), InferenceError> {
        headers.insert("anthropic-version", HeaderValue::from_static(API_VERSION));
        if let Some(key) = api_key {
            let mut value = HeaderValue::from_str(key.expose_secret()).map_err(|_| {
                InferenceError::Configuration {
                    message: "the API key contains characters not allowed in a header".into(),
                }
            })?;
            value.set_sensitive(true);
            headers.insert("x-api-key", value);
        }
        Ok(())
    }

    fn body(
        &self,
        request: &InferenceRequest,
        settings: &ModelSettings,
        stream: bool,
        cache: &EncodeCache<AnthropicState>,
    ) -> Result<RequestBody, InferenceError> {
        encode_body(request, settings, stream, self.prompt_caching, cache)
    }

    fn parse_response(body: &str) -> Result<InferenceResponse, InferenceError> {
        parse_response(body)
    }
}

/// Builds an [`Anthropic`] client; [`build`](AnthropicBuilder::build) validates.
#[derive(Clone, Debug, Default)]
pub struct AnthropicBuilder {
    options: ProviderOptions,
    no_prompt_caching: bool,
}

impl AnthropicBuilder {
    /// The API root (default `https://api.anthropic.com`); a trailing `/` or `/v1` is ignored.
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.options.base_url = Some(base_url.into());
        self
    }

    /// Whether requests carry `cache_control` breakpoints (default: on). Cached prompt
    /// prefixes are billed at the cache-read price (a tenth of the input price or less);
    /// writing one costs 1.25 times the input price once.
    pub fn prompt_caching(mut self, enabled: bool) -> Self {
        self.no_prompt_caching = !enabled;
        self
    }

    provider_builder_options!("anthropic-beta");

    /// The client.
    ///
    /// # Errors
    /// [`InferenceError::Configuration`] for a missing model, an empty base URL or an invalid
    /// header.
    pub fn build(self) -> Result<Anthropic, InferenceError> {
        let base_url = self
            .options
            .base_url
            .clone()
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
        let base_url = base_url.trim().trim_end_matches('/');
        let base_url = base_url.strip_suffix("/v1").unwrap_or(base_url).to_owned();
        let wire = AnthropicWire {
            prompt_caching: !self.no_prompt_caching,
        };
        let inner = self
            .options
            .build(wire, base_url, "no model given: call `.model(..)`")?;
        Ok(Anthropic { inner })
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
        let post = model
            .inner
            .post(&InferenceRequest::default(), false)
            .unwrap();
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
