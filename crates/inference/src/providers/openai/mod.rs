//! [`OpenAiCompatible`]: chat completions over HTTP, for OpenAI and every server that speaks
//! its protocol (vLLM, llama.cpp `llama-server`, Ollama, LM Studio, ...).

mod request;
mod response;
mod stream;

use async_trait::async_trait;
use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION};

pub use request::{
    message_from_openai, message_to_openai, request_body, request_body_with, BodyOptions,
};
pub use response::{parse_response, usage_from_openai};

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
use request::{encode_body, OpenAiState};
pub(crate) use stream::OpenAiStreamDecoder;

/// OpenAI's API root, used when no base URL is given.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// `gen_ai.provider.name` of this provider's `chat` spans (the protocol's owner, as for any
/// OpenAI-compatible server).
pub const PROVIDER_NAME: &str = "openai";

/// A model behind an OpenAI-compatible `/chat/completions` endpoint.
///
/// Without an API key no `Authorization` header is sent (local servers need none). Keys are
/// kept in a [`SecretString`] and never appear in `Debug` output, errors or logs. OpenAI
/// caches prompt prefixes by itself; [`OpenAiCompatibleBuilder::prompt_cache_key`] helps it
/// route requests of one conversation to the same cache. Every call is a `chat {model}` span
/// ([`crate::telemetry`]). Requests are encoded incrementally: the bytes of messages an
/// earlier request of the same history already wrote are reused
/// ([`OpenAiCompatibleBuilder::encoding_cache`]).
///
/// ```
/// use inference::{LanguageModel, OpenAiCompatible};
///
/// // A local llama.cpp / Ollama / vLLM server, no key:
/// let local = OpenAiCompatible::new("http://127.0.0.1:8080/v1", None, "qwen2.5").unwrap();
/// assert_eq!(local.name(), "openai-compatible/qwen2.5");
///
/// // OpenAI, with a key and custom timeouts and retries:
/// let remote = OpenAiCompatible::builder()
///     .api_key("sk-...")
///     .model("gpt-4o-mini")
///     .timeout(std::time::Duration::from_secs(60))
///     .max_attempts(5)
///     .build()
///     .unwrap();
/// assert!(!format!("{remote:?}").contains("sk-..."));
/// ```
#[derive(Clone, Debug)]
pub struct OpenAiCompatible {
    inner: HttpProvider<OpenAiWire>,
}

impl OpenAiCompatible {
    /// A client for the server at `base_url` (the part before `/chat/completions`, e.g.
    /// `http://localhost:11434/v1`), with an optional key (`None`, `""`, `"sk-..."`,
    /// a `String` or a [`SecretString`]) and a default model.
    ///
    /// # Errors
    /// [`InferenceError::Configuration`] for an empty base URL or model.
    pub fn new(
        base_url: impl Into<String>,
        api_key: impl IntoApiKey,
        model: impl Into<String>,
    ) -> Result<Self, InferenceError> {
        Self::builder()
            .base_url(base_url)
            .api_key(api_key)
            .model(model)
            .build()
    }

    /// A client configured from the environment: `OPENAI_BASE_URL` (default
    /// `https://api.openai.com/v1`), `OPENAI_API_KEY` (optional for local servers) and
    /// `OPENAI_MODEL`.
    ///
    /// # Errors
    /// [`InferenceError::Configuration`] when `OPENAI_MODEL` is unset, or when the key is
    /// missing for api.openai.com.
    pub fn from_env() -> Result<Self, InferenceError> {
        Self::builder_from(|name| std::env::var(name).ok())?.build()
    }

    /// A builder for every setting (base URL, key, model settings, timeouts, retries,
    /// headers).
    pub fn builder() -> OpenAiCompatibleBuilder {
        OpenAiCompatibleBuilder::default()
    }

    /// The default model.
    pub fn model(&self) -> &str {
        &self.inner.settings.model
    }

    /// The model and sampling defaults for requests that set none.
    pub fn settings(&self) -> &ModelSettings {
        &self.inner.settings
    }

    /// The base URL.
    pub fn base_url(&self) -> &str {
        &self.inner.base_url
    }

    /// The body this model sends for `request` (with `stream` as for
    /// [`LanguageModel::stream`]), as the chunks it is sent in: byte for byte
    /// `serde_json::to_vec` of [`request_body_with`] with this model's options and settings.
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
    ) -> Result<OpenAiCompatibleBuilder, InferenceError> {
        let set = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let base_url = set("OPENAI_BASE_URL").unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
        let model = set("OPENAI_MODEL").ok_or_else(|| InferenceError::Configuration {
            message: "OPENAI_MODEL is not set: set it to the model to use (any name works for \
                      single-model local servers such as llama-server)"
                .into(),
        })?;
        let api_key = set("OPENAI_API_KEY");
        if api_key.is_none() && base_url.contains("api.openai.com") {
            return Err(InferenceError::Configuration {
                message: "OPENAI_API_KEY is not set; it is required for api.openai.com \
                          (set OPENAI_BASE_URL for a local server that needs no key)"
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
impl LanguageModel for OpenAiCompatible {
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

/// The chat completions protocol: `Authorization: Bearer`, `/chat/completions`, the body of
/// [`request_body_with`].
#[derive(Clone, Debug)]
struct OpenAiWire {
    options: BodyOptions,
    prompt_cache_key: Option<String>,
}

impl WireFormat for OpenAiWire {
    type State = OpenAiState;
    type Decoder = OpenAiStreamDecoder;
    const PROVIDER_NAME: &'static str = PROVIDER_NAME;
    const NAME_PREFIX: &'static str = "openai-compatible";

    fn url(&self, base_url: &str) -> String {
        format!("{base_url}/chat/completions")
    }

    fn add_headers(
        &self,
        api_key: Option<&SecretString>,
        headers: &mut HeaderMap,
    ) -> Result<(), InferenceError> {
        if let Some(key) = api_key {
            let mut value = HeaderValue::from_str(&format!("Bearer {}", key.expose_secret()))
                .map_err(|_| InferenceError::Configuration {
                    message: "the API key contains characters not allowed in a header".into(),
                })?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        Ok(())
    }

    fn body(
        &self,
        request: &InferenceRequest,
        settings: &ModelSettings,
        stream: bool,
        cache: &EncodeCache<OpenAiState>,
    ) -> Result<RequestBody, InferenceError> {
        encode_body(
            request,
            settings,
            stream,
            self.options,
            self.prompt_cache_key.as_deref(),
            cache,
        )
    }

    fn parse_response(body: &str) -> Result<InferenceResponse, InferenceError> {
        parse_response(body)
    }
}

/// Builds an [`OpenAiCompatible`]; [`build`](OpenAiCompatibleBuilder::build) validates.
#[derive(Clone, Debug, Default)]
pub struct OpenAiCompatibleBuilder {
    options: ProviderOptions,
    body: BodyOptions,
    prompt_cache_key: Option<String>,
}

impl OpenAiCompatibleBuilder {
    /// The API root (default `https://api.openai.com/v1`); a trailing `/` is ignored.
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.options.base_url = Some(base_url.into());
        self
    }

    /// Send `developer` messages with role `developer` (newer OpenAI models) instead of
    /// `system` (the default, understood by every server).
    pub fn developer_role(mut self, enabled: bool) -> Self {
        self.body.developer_role = enabled;
        self
    }

    /// Images that tools return reach the model (for models that take images): a `tool`
    /// message may only hold text, so they follow the step's tool messages in a `user`
    /// message. Off (the default), each tool message describes its images in a line instead;
    /// the model does not see them.
    pub fn tool_result_images(mut self, enabled: bool) -> Self {
        self.body.tool_result_images = enabled;
        self
    }

    /// Sends `prompt_cache_key` with every request (unless the request's options set one):
    /// OpenAI routes requests with the same key to the same prompt cache, so a session or
    /// agent id here raises the share of cached (cheaper) prompt tokens.
    pub fn prompt_cache_key(mut self, key: impl Into<String>) -> Self {
        self.prompt_cache_key = Some(key.into()).filter(|k| !k.trim().is_empty());
        self
    }

    provider_builder_options!("OpenAI-Organization");

    /// The client.
    ///
    /// # Errors
    /// [`InferenceError::Configuration`] for a missing model, an empty base URL or an invalid
    /// header.
    pub fn build(self) -> Result<OpenAiCompatible, InferenceError> {
        let base_url = self
            .options
            .base_url
            .clone()
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned())
            .trim()
            .trim_end_matches('/')
            .to_owned();
        let wire = OpenAiWire {
            options: self.body,
            prompt_cache_key: self.prompt_cache_key,
        };
        let inner = self.options.build(
            wire,
            base_url,
            "no model given: call `.model(..)` (any name works for single-model local servers)",
        )?;
        Ok(OpenAiCompatible { inner })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn environment_defaults_and_requirements() {
        let local = OpenAiCompatible::builder_from(env(&[
            ("OPENAI_BASE_URL", "http://localhost:8080/v1/"),
            ("OPENAI_MODEL", "qwen"),
        ]))
        .unwrap()
        .build()
        .unwrap();
        assert_eq!(local.base_url(), "http://localhost:8080/v1");
        assert!(local.inner.api_key.is_none());

        let missing_key = OpenAiCompatible::builder_from(env(&[("OPENAI_MODEL", "gpt-4o")]));
        assert!(missing_key
            .unwrap_err()
            .to_string()
            .contains("OPENAI_API_KEY"));
        let missing_model = OpenAiCompatible::builder_from(env(&[]));
        assert!(missing_model
            .unwrap_err()
            .to_string()
            .contains("OPENAI_MODEL"));
    }

    #[test]
    fn the_key_never_shows_in_debug_output() {
        let model = OpenAiCompatible::new(DEFAULT_BASE_URL, "sk-secret-123", "gpt").unwrap();
        let post = model
            .inner
            .post(&InferenceRequest::default(), false)
            .unwrap();
        assert!(!format!("{model:?}").contains("sk-secret-123"));
        assert!(!format!("{:?}", post.headers).contains("sk-secret-123"));
        assert_eq!(
            post.headers[AUTHORIZATION].to_str().unwrap(),
            "Bearer sk-secret-123"
        );
    }
}
