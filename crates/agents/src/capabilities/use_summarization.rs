//! `UseSummarization`: keep long conversations within budget.

use std::sync::Arc;

use agents_processing::{MoveMessagesToBuffer, SummarizeBuffer};
use inference::LanguageModel;

use crate::{AgentBuilder, AgentCapability};

/// When `messages` grows past `max_message_tokens`, the oldest messages move to the `buffer`
/// section; when the buffer grows past `max_buffer_tokens`, `model` summarizes it into the
/// `summary` section (which the model sees first).
#[derive(Clone)]
pub struct UseSummarization {
    model: Arc<dyn LanguageModel>,
    max_message_tokens: usize,
    max_buffer_tokens: usize,
    max_summary_tokens: u32,
}

impl UseSummarization {
    /// Summarization with `model` and the defaults: 4096 message tokens, 8192 buffer tokens,
    /// 512 summary tokens.
    pub fn new(model: impl LanguageModel + 'static) -> Self {
        Self {
            model: Arc::new(model),
            max_message_tokens: 4096,
            max_buffer_tokens: 8192,
            max_summary_tokens: 512,
        }
    }

    /// A copy with another budget for `messages`.
    pub fn with_max_message_tokens(mut self, tokens: usize) -> Self {
        self.max_message_tokens = tokens;
        self
    }

    /// A copy with another budget for `buffer`.
    pub fn with_max_buffer_tokens(mut self, tokens: usize) -> Self {
        self.max_buffer_tokens = tokens;
        self
    }

    /// A copy with another summary length.
    pub fn with_max_summary_tokens(mut self, tokens: u32) -> Self {
        self.max_summary_tokens = tokens;
        self
    }
}

impl std::fmt::Debug for UseSummarization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UseSummarization")
            .field("max_message_tokens", &self.max_message_tokens)
            .field("max_buffer_tokens", &self.max_buffer_tokens)
            .finish_non_exhaustive()
    }
}

impl AgentCapability for UseSummarization {
    fn name(&self) -> &str {
        "summarization"
    }

    fn install(&self, builder: AgentBuilder) -> AgentBuilder {
        // Outer layers first: the summarizer's post-step logic runs after messages were moved,
        // and both run after the standard stack persisted the step's messages.
        builder
            .with_processor(
                SummarizeBuffer::from_shared(Arc::clone(&self.model), self.max_buffer_tokens)
                    .with_max_summary_tokens(self.max_summary_tokens),
            )
            .with_processor(MoveMessagesToBuffer::new(self.max_message_tokens))
    }
}
