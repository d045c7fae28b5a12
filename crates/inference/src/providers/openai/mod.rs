//! [`OpenAiCompatible`]: chat completions over HTTP, for OpenAI and every server that speaks
//! its protocol (vLLM, llama.cpp `llama-server`, Ollama, LM Studio, ...).

mod request;
mod response;
mod stream;

use async_trait::async_trait;
use futures::stream as futures_stream;
use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION};

pub use request::{message_from_openai, message_to_openai, request_body};
pub use response::{parse_response, usage_from_openai};

use crate::http::builder_options::{header_map, http_builder_options, ExtraHeaders};
use crate::http::client::{HttpClient, HttpSettings, PostRequest, StreamStart};
use crate::http::event_stream::event_stream;
use crate::http::secret::{IntoApiKey, SecretString};
use crate::{
    response_to_events, InferenceError, InferenceRequest, InferenceResponse, InferenceStream,
    LanguageModel,
};
pub(crate) use stream::OpenAiStreamDecoder;

/// OpenAI's API root, used when no base URL is given.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// A model behind an OpenAI-compatible `/chat/completions` endpoint.
///
/// Without an API key no `Authorization` header is sent (local servers need none). Keys are
/// kept in a [`SecretString`] and never appear in `Debug` output, errors or logs.
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
        let body = request_body(request, &self.model, stream, self.developer_role);
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
        let post = self.post(&request, false)?;
        let body = self.http.post_json(&post).await?;
        parse_response(&body)
    }

    async fn stream(&self, request: InferenceRequest) -> Result<InferenceStream, InferenceError> {
        let post = self.post(&request, true)?;
        match self.http.post_stream(&post).await? {
            StreamStart::Events {
                first,
                rest,
                limits,
            } => Ok(event_stream(
                first,
                rest,
                OpenAiStreamDecoder::default(),
                limits,
            )),
            StreamStart::Json(body) => {
                let response = parse_response(&body)?;
                let events = response_to_events(&response).into_iter().map(Ok);
                Ok(Box::pin(futures_stream::iter(events)))
            }
        }
    }

    fn name(&self) -> String {
        format!("openai-compatible/{}", self.model)
    }
}

/// Builds an [`OpenAiCompatible`]; [`build`](OpenAiCompatibleBuilder::build) validates.
#[derive(Clone, Debug, Default)]
pub struct OpenAiCompatibleBuilder {
    base_url: Option<String>,
    api_key: Option<SecretString>,
    model: Option<String>,
    developer_role: bool,
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
