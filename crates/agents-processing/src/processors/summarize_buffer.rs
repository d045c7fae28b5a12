//! `SummarizeBuffer`: turn set-aside messages into a summary.

use std::sync::Arc;

use agents_core::{AgentError, AgentState, Next, StateProcessor, BUFFER_SECTION, SUMMARY_SECTION};
use async_trait::async_trait;
use inference::{InferenceRequest, LanguageModel};
use messages::Message;

use crate::{EstimateTokenCounter, TokenCounter};

const SUMMARY_PREFIX: &str = "Summary of the earlier conversation:\n";

const SUMMARIZER_INSTRUCTIONS: &str = "You condense conversations. Write a faithful, compact summary of the \
conversation below for an assistant that will continue it: the user's goals and preferences, facts \
established, decisions made, results of tools, and open questions. Keep names, numbers and identifiers \
exactly. Do not add anything that is not in the text.";

/// Post-step: when the `buffer` section exceeds `max_tokens`, asks a model to summarize the
/// previous summary plus the buffer, **replaces** the `summary` section with one system
/// message holding the new summary, and empties the buffer.
///
/// If the model fails, the buffer is kept as it is (nothing is lost) and summarization is tried
/// again after a later step; the failure is logged with `tracing`.
#[derive(Clone)]
pub struct SummarizeBuffer {
    model: Arc<dyn LanguageModel>,
    max_tokens: usize,
    max_summary_tokens: u32,
    model_name: Option<String>,
    counter: Arc<dyn TokenCounter>,
}

impl SummarizeBuffer {
    /// Summarizes with `model` when the buffer exceeds `max_tokens`; summaries are limited to
    /// 512 tokens.
    pub fn new(model: impl LanguageModel + 'static, max_tokens: usize) -> Self {
        Self::from_shared(Arc::new(model), max_tokens)
    }

    /// As [`SummarizeBuffer::new`] with a shared model.
    pub fn from_shared(model: Arc<dyn LanguageModel>, max_tokens: usize) -> Self {
        Self {
            model,
            max_tokens,
            max_summary_tokens: 512,
            model_name: None,
            counter: Arc::new(EstimateTokenCounter),
        }
    }

    /// A copy with another summary length limit.
    pub fn with_max_summary_tokens(mut self, tokens: u32) -> Self {
        self.max_summary_tokens = tokens;
        self
    }

    /// A copy asking for a specific model name.
    pub fn with_model_name(mut self, name: impl Into<String>) -> Self {
        self.model_name = Some(name.into());
        self
    }

    /// A copy counting tokens with `counter`.
    pub fn with_counter(mut self, counter: impl TokenCounter + 'static) -> Self {
        self.counter = Arc::new(counter);
        self
    }

    fn request(&self, state: &AgentState) -> InferenceRequest {
        let previous = state.store().section(SUMMARY_SECTION).messages();
        let mut transcript = String::new();
        for message in previous.iter() {
            transcript.push_str(message.text().trim_start_matches(SUMMARY_PREFIX));
            transcript.push('\n');
        }
        transcript.push_str(
            &state
                .store()
                .section(BUFFER_SECTION)
                .messages()
                .to_transcript(),
        );
        let mut request = InferenceRequest::new(vec![
            Message::system(SUMMARIZER_INSTRUCTIONS),
            Message::user(format!("Conversation to summarize:\n\n{transcript}")),
        ])
        .with_max_tokens(self.max_summary_tokens);
        request.model.clone_from(&self.model_name);
        request
    }
}

impl std::fmt::Debug for SummarizeBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SummarizeBuffer")
            .field("model", &self.model.name())
            .field("max_tokens", &self.max_tokens)
            .field("max_summary_tokens", &self.max_summary_tokens)
            .finish()
    }
}

#[async_trait]
impl StateProcessor for SummarizeBuffer {
    async fn process(&self, state: AgentState, next: Next<'_>) -> Result<AgentState, AgentError> {
        let state = next.run(state).await?;
        let buffer = state.store().section(BUFFER_SECTION).messages();
        if buffer.is_empty() || self.counter.count_messages(&buffer) <= self.max_tokens {
            return Ok(state);
        }
        let summary = match self.model.as_ref().complete(self.request(&state)).await {
            Ok(response) if !response.content().trim().is_empty() => {
                response.content().trim().to_owned()
            }
            Ok(_) => {
                tracing::warn!("summarizer returned an empty summary; keeping the buffer");
                return Ok(state);
            }
            Err(error) => {
                tracing::warn!(%error, "summarization failed; keeping the buffer for a later try");
                return Ok(state);
            }
        };
        let summary = Message::system(format!("{SUMMARY_PREFIX}{summary}"));
        let store = state
            .store()
            .section(SUMMARY_SECTION)
            .set(summary)
            .section(BUFFER_SECTION)
            .clear();
        Ok(state.with_store(store))
    }
}
