//! `ModelSettings`: the model name and sampling settings, written once for every provider.

use serde::{Deserialize, Serialize};

use crate::request::InferenceRequest;

/// Which model to ask and how to sample it: the settings every provider takes the same way.
///
/// A provider holds one as its defaults ([`OpenAiCompatibleBuilder::settings`],
/// [`AnthropicBuilder::settings`]): a request that names no model, temperature or token limit
/// gets the provider's (see [`apply_to`](Self::apply_to)); what a request sets itself wins.
/// An agent builder or an agent definition that carries one hands it to the provider as is.
///
/// [`OpenAiCompatibleBuilder::settings`]: crate::OpenAiCompatibleBuilder::settings
/// [`AnthropicBuilder::settings`]: crate::AnthropicBuilder::settings
///
/// ```
/// use inference::{InferenceRequest, LanguageModel, Message, ModelSettings, OpenAiCompatible};
///
/// let settings = ModelSettings::new("qwen2.5").with_temperature(0.2).with_max_tokens(512);
/// let model = OpenAiCompatible::builder()
///     .base_url("http://127.0.0.1:8080/v1")
///     .settings(settings.clone())
///     .build()
///     .unwrap();
/// assert_eq!(model.settings(), &settings);
/// assert_eq!(model.name(), "openai-compatible/qwen2.5");
///
/// // What a request leaves unset comes from the settings; what it sets stays.
/// let request = settings.apply_to(InferenceRequest::new(vec![Message::user("hi")]).with_max_tokens(64));
/// assert_eq!(request.model.as_deref(), Some("qwen2.5"));
/// assert_eq!(request.temperature, Some(0.2));
/// assert_eq!(request.max_tokens, Some(64));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct ModelSettings {
    /// The model name, as the provider spells it (`gpt-4o-mini`, `claude-sonnet-4-5`, any
    /// name for a single-model local server). Empty means "not chosen here": a provider needs
    /// one, so its builder fails without it.
    #[serde(default)]
    pub model: String,
    /// Sampling temperature; `None` leaves it to the provider's server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Most completion tokens per call; `None` leaves it to the server (Anthropic, which
    /// requires one, then sends [`DEFAULT_MAX_TOKENS`](crate::providers::anthropic::DEFAULT_MAX_TOKENS)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

impl ModelSettings {
    /// Settings for `model`, sampling left to the server.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            ..Self::default()
        }
    }

    /// Sets the model name.
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    /// Sets the sampling temperature.
    pub fn with_temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Sets the completion token limit.
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// The model name chosen here, `None` when [`model`](Self::model) is empty (the provider's
    /// configured model is used).
    pub fn chosen_model(&self) -> Option<&str> {
        (!self.model.is_empty()).then_some(self.model.as_str())
    }

    /// The model a request asks for: its own when it names one, else these settings'.
    pub fn model_for<'a>(&'a self, request: &'a InferenceRequest) -> &'a str {
        request
            .model
            .as_deref()
            .filter(|m| !m.is_empty())
            .unwrap_or(&self.model)
    }

    /// `request` with what it leaves unset (model, temperature, max tokens) taken from these
    /// settings.
    pub fn apply_to(&self, mut request: InferenceRequest) -> InferenceRequest {
        if request.model.as_deref().is_none_or(str::is_empty) && !self.model.is_empty() {
            request.model = Some(self.model.clone());
        }
        if request.temperature.is_none() {
            request.temperature = self.temperature;
        }
        if request.max_tokens.is_none() {
            request.max_tokens = self.max_tokens;
        }
        request
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_shape_is_flat_and_skips_unset_fields() {
        let settings = ModelSettings::new("gpt").with_temperature(0.5);
        let value = serde_json::to_value(&settings).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"model": "gpt", "temperature": 0.5})
        );
        let back: ModelSettings = serde_json::from_value(value).unwrap();
        assert_eq!(back, settings);
        assert!(
            serde_json::from_value::<ModelSettings>(serde_json::json!({"modle": "x"})).is_err()
        );
    }

    #[test]
    fn a_request_keeps_what_it_sets() {
        let settings = ModelSettings::new("a")
            .with_temperature(1.0)
            .with_max_tokens(9);
        let request = InferenceRequest::default()
            .with_model("b")
            .with_temperature(0.0);
        let applied = settings.apply_to(request.clone());
        assert_eq!(applied.model.as_deref(), Some("b"));
        assert_eq!(applied.temperature, Some(0.0));
        assert_eq!(applied.max_tokens, Some(9));
        assert_eq!(settings.model_for(&request), "b");
        assert_eq!(settings.model_for(&InferenceRequest::default()), "a");
        // Empty settings change nothing.
        assert_eq!(ModelSettings::default().apply_to(request.clone()), request);
    }
}
