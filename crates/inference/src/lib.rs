//! Provider-neutral inference: how agents talk to models.
//!
//! - [`LanguageModel`]: the async trait every model implements (`complete` and `stream`).
//! - [`InferenceRequest`] / [`InferenceResponse`] / [`InferenceEvent`]: what goes in and out,
//!   with [`ToolSchema`], [`ToolChoice`], [`ResponseFormat`], [`Usage`] and [`FinishReason`].
//! - [`ScriptedModel`]: answers from a script and records requests; every agent test in the
//!   workspace talks to it.
//! - Providers over HTTP (reqwest with rustls): [`OpenAiCompatible`] for OpenAI and every
//!   compatible server (vLLM, llama.cpp, Ollama, LM Studio) and [`Anthropic`] for the
//!   messages API. Both stream over SSE, retry rate limits, timeouts and 5xx with backoff
//!   ([`RetryPolicy`], honouring `Retry-After`), and keep keys in a redacting [`SecretString`].
//!   The wire mappings live in [`providers::openai`] and [`providers::anthropic`].
//! - [`InferenceError`]: typed failures with [`InferenceError::is_retryable`].
//! - [`ModelCatalog`] / [`ModelInfo`]: context windows and prices of current models (built
//!   in, dated, user-extendable); [`Usage::cost`] prices a usage as a [`Cost`].
//! - Prompt caching: Anthropic requests carry `cache_control` breakpoints (tools, system
//!   prompt, end of the stable conversation: [`InferenceRequest::cache_breakpoint`]); cached
//!   tokens of both providers are read into [`Usage`].
//! - [`telemetry`]: every provider call is a `chat {model}` span with the OpenTelemetry gen_ai
//!   attributes (no message contents).
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use inference::{collect_stream, InferenceRequest, InferenceResponse, LanguageModel, ScriptedModel, Usage};
//! use messages::{Message, ToolCall};
//! use serde_json::json;
//!
//! let model = ScriptedModel::new([
//!     InferenceResponse::with_tool_calls([ToolCall::new("call_1", "get_weather", json!({"city": "Paris"}))]),
//!     InferenceResponse::text("22°C and sunny.").with_usage(Usage::new(40, 6)),
//! ]);
//! let request = InferenceRequest::new(vec![Message::user("Weather in Paris?")]);
//! let first = model.complete(request.clone()).await.unwrap();
//! assert_eq!(first.tool_calls()[0].name(), "get_weather");
//!
//! // Streaming works for every model; the scripted one replays its answer as events.
//! let second = collect_stream(model.stream(request).await.unwrap()).await.unwrap();
//! assert_eq!(second.content(), "22°C and sunny.");
//! assert_eq!(second.usage().total(), 46);
//! # });
//! ```

mod catalog;
mod cost;
mod encoding;
mod endpoint;
mod error;
mod event;
mod finish_reason;
mod http;
pub mod lenient_json;
mod local_server;
mod model;
mod model_settings;
pub mod providers;
mod request;
mod response;
mod scripted;
pub mod telemetry;
mod usage;

pub use catalog::{CatalogError, ModelCatalog, ModelInfo, MODEL_CATALOG_ENV};
pub use cost::Cost;
pub use encoding::body::RequestBody;
pub use endpoint::is_local_endpoint;
pub use error::InferenceError;
pub use event::{response_to_events, InferenceEvent, StreamAccumulator};
pub use finish_reason::FinishReason;
pub use http::client::{
    HttpSettings, DEFAULT_MAX_BODY_BYTES, LOCAL_SERVER_STREAM_DEADLINE, LOCAL_SERVER_TIMEOUT,
};
pub use http::replay::{replay_stream, StreamFormat};
pub use http::retry::{parse_retry_after, RetryPolicy};
pub use http::secret::{IntoApiKey, SecretString};
pub use http::sse::{SseEvent, SseParser};
pub use local_server::llama_server_context;
pub use model::{collect_stream, InferenceStream, LanguageModel};
pub use model_settings::ModelSettings;
pub use providers::anthropic::{Anthropic, AnthropicBuilder};
pub use providers::openai::{OpenAiCompatible, OpenAiCompatibleBuilder};
pub use request::{InferenceRequest, ResponseFormat, ToolChoice, ToolSchema};
pub use response::InferenceResponse;
pub use scripted::ScriptedModel;
pub use usage::Usage;

/// Re-exported so users of this crate name message types without a second dependency.
pub use messages::{Message, Messages, Role, ToolCall};
