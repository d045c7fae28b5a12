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

use crate::http::builder_options::{header_map, http_builder_options, ExtraHeaders};
use crate::http::client::{HttpClient, HttpSettings, PostRequest};
use crate::http::secret::{IntoApiKey, SecretString};
use crate::providers::start_stream;
use crate::telemetry::{chat_span, complete_in_span, request_model, stream_in_span};
use crate::{InferenceError, InferenceRequest, InferenceResponse, InferenceStream, LanguageModel};
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
/// ([`crate::telemetry`]).
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
    base_url: String,
    api_key: Option<SecretString>,
    model: String,
    developer_role: bool,
    tool_result_images: bool,
    prompt_cache_key: Option<String>,
    extra_headers: HeaderMap,
    http: HttpClient,
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
        let mut builder = Self::builder().base_url(base_url).model(model);
        builder.api_key = api_key.into_api_key();
        builder.build()
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

    /// A builder for every setting (base URL, key, model, timeouts, retries, headers).
    pub fn builder() -> OpenAiCompatibleBuilder {
        OpenAiCompatibleBuilder::default()
    }

    /// The default model.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The base URL.
    pub fn base_url(&self) -> &str {
        &self.base_url
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
        let mut builder = Self::builder().base_url(base_url).model(model);
        builder.api_key = api_key.map(SecretString::from);
        Ok(builder)
    }

    fn post(
        &self,
        request: &InferenceRequest,
        stream: bool,
    ) -> Result<PostRequest, InferenceError> {
        let options = BodyOptions {
            developer_role: self.developer_role,
            tool_result_images: self.tool_result_images,
        };
        let mut body = request_body_with(request, &self.model, stream, options);
        if let (Some(key), Some(map)) = (&self.prompt_cache_key, body.as_object_mut()) {
            // A per-request option of the same name wins.
            map.entry("prompt_cache_key")
                .or_insert_with(|| serde_json::Value::from(key.as_str()));
        }
        let body = serde_json::to_vec(&body).map_err(|e| InferenceError::Configuration {
            message: format!("the request cannot be serialized: {e}"),
        })?;
        let mut headers = self.extra_headers.clone();
        if let Some(key) = &self.api_key {
            let mut value = HeaderValue::from_str(&format!("Bearer {}", key.expose_secret()))
                .map_err(|_| InferenceError::Configuration {
                    message: "the API key contains characters not allowed in a header".into(),
                })?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        Ok(PostRequest {
            url: format!("{}/chat/completions", self.base_url),
            headers,
            body,
        })
    }
}

#[async_trait]
impl LanguageModel for OpenAiCompatible {
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
                OpenAiStreamDecoder::default(),
                parse_response,
            )
            .await
        })
        .await
    }

    fn name(&self) -> String {
        format!("openai-compatible/{}", self.model)
    }

    fn endpoint(&self) -> Option<String> {
        Some(self.base_url.clone())
    }
}

/// Builds an [`OpenAiCompatible`]; [`build`](OpenAiCompatibleBuilder::build) validates.
#[derive(Clone, Debug, Default)]
pub struct OpenAiCompatibleBuilder {
    base_url: Option<String>,
    api_key: Option<SecretString>,
    model: Option<String>,
    developer_role: bool,
    tool_result_images: bool,
    prompt_cache_key: Option<String>,
    headers: ExtraHeaders,
    http: HttpSettings,
}

impl OpenAiCompatibleBuilder {
    /// The API root (default `https://api.openai.com/v1`); a trailing `/` is ignored.
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = Some(base_url.into());
        self
    }

    /// The API key (an empty string means none).
    pub fn api_key(mut self, api_key: impl IntoApiKey) -> Self {
        self.api_key = api_key.into_api_key();
        self
    }

    /// The default model (used when a request names none).
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Send `developer` messages with role `developer` (newer OpenAI models) instead of
    /// `system` (the default, understood by every server).
    pub fn developer_role(mut self, enabled: bool) -> Self {
        self.developer_role = enabled;
        self
    }

    /// Images that tools return reach the model (for models that take images): a `tool`
    /// message may only hold text, so they follow the step's tool messages in a `user`
    /// message. Off (the default), each tool message describes its images in a line instead;
    /// the model does not see them.
    pub fn tool_result_images(mut self, enabled: bool) -> Self {
        self.tool_result_images = enabled;
        self
    }

    /// Sends `prompt_cache_key` with every request (unless the request's options set one):
    /// OpenAI routes requests with the same key to the same prompt cache, so a session or
    /// agent id here raises the share of cached (cheaper) prompt tokens.
    pub fn prompt_cache_key(mut self, key: impl Into<String>) -> Self {
        self.prompt_cache_key = Some(key.into()).filter(|k| !k.trim().is_empty());
        self
    }

    http_builder_options!("OpenAI-Organization");

    /// The client.
    ///
    /// # Errors
    /// [`InferenceError::Configuration`] for a missing model, an empty base URL or an invalid
    /// header.
    pub fn build(self) -> Result<OpenAiCompatible, InferenceError> {
        let base_url = self
            .base_url
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned())
            .trim()
            .trim_end_matches('/')
            .to_owned();
        if base_url.is_empty() {
            return Err(InferenceError::Configuration {
                message: "the base URL is empty".into(),
            });
        }
        let model = self.model.filter(|m| !m.trim().is_empty()).ok_or_else(|| {
            InferenceError::Configuration {
                message: "no model given: call `.model(..)` (any name works for single-model \
                          local servers)"
                    .into(),
            }
        })?;
        Ok(OpenAiCompatible {
            base_url,
            api_key: self.api_key,
            model,
            developer_role: self.developer_role,
            tool_result_images: self.tool_result_images,
            prompt_cache_key: self.prompt_cache_key,
            extra_headers: header_map(&self.headers)?,
            http: HttpClient::new(self.http)?,
        })
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
        assert!(local.api_key.is_none());

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
        let post = model.post(&InferenceRequest::default(), false).unwrap();
        assert!(!format!("{model:?}").contains("sk-secret-123"));
        assert!(!format!("{:?}", post.headers).contains("sk-secret-123"));
        assert_eq!(
            post.headers[AUTHORIZATION].to_str().unwrap(),
            "Bearer sk-secret-123"
        );
    }
}
