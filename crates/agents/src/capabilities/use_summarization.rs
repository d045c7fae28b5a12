//! `UseSummarization`: keep long conversations within budget.

use std::sync::Arc;

use agents_processing::{MoveMessagesToBuffer, SummarizeBuffer};
use inference::LanguageModel;

use crate::{AgentBuilder, AgentCapability};

/// When `messages` grows past `max_message_tokens`, the oldest messages move to the `buffer`
/// section; when the buffer grows past `max_buffer_tokens`, `model` summarizes it into the
/// `summary` section (which the model sees first).
///
/// [`with_window_fraction`](Self::with_window_fraction) sets both budgets from the agent's
/// model instead: half of the given share of its context window each (from the agent's
/// model catalog), so messages and buffer together stay under that share.
#[derive(Clone)]
pub struct UseSummarization {
    model: Arc<dyn LanguageModel>,
    max_message_tokens: usize,
    max_buffer_tokens: usize,
    max_summary_tokens: u32,
    window_fraction: Option<f64>,
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
            window_fraction: None,
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

    /// A copy whose budgets are a share of the agent's model's context window: with
    /// `fraction` 0.5 and a 200,000-token window, messages move to the buffer past 50,000
    /// tokens and the buffer is summarized past 50,000 tokens. The window comes from the
    /// builder's model catalog ([`AgentBuilder::with_model_catalog`], default builtin) for
    /// the model name the agent sends; `build` fails, saying so, when the catalog has no
    /// window for that model or `fraction` is not in (0, 1].
    pub fn with_window_fraction(mut self, fraction: f64) -> Self {
        self.window_fraction = Some(fraction);
        self
    }

    /// A copy with another summary length.
    pub fn with_max_summary_tokens(mut self, tokens: u32) -> Self {
        self.max_summary_tokens = tokens;
        self
    }
}

impl UseSummarization {
    fn install_with(
        &self,
        builder: AgentBuilder,
        message_tokens: usize,
        buffer_tokens: usize,
    ) -> AgentBuilder {
        // Outer layers first: the summarizer's post-step logic runs after messages were moved,
        // and both run after the standard stack persisted the step's messages.
        builder
            .with_processor(
                SummarizeBuffer::from_shared(Arc::clone(&self.model), buffer_tokens)
                    .with_max_summary_tokens(self.max_summary_tokens),
            )
            .with_processor(MoveMessagesToBuffer::new(message_tokens))
    }
}

impl std::fmt::Debug for UseSummarization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UseSummarization")
            .field("max_message_tokens", &self.max_message_tokens)
            .field("max_buffer_tokens", &self.max_buffer_tokens)
            .field("window_fraction", &self.window_fraction)
            .finish_non_exhaustive()
    }
}

impl AgentCapability for UseSummarization {
    fn name(&self) -> &str {
        "summarization"
    }

    fn install(&self, builder: AgentBuilder) -> AgentBuilder {
        let Some(fraction) = self.window_fraction else {
            return self.install_with(builder, self.max_message_tokens, self.max_buffer_tokens);
        };
        if !(fraction > 0.0 && fraction <= 1.0) {
            return builder.with_capability_error(
                self.name(),
                format!("the window fraction must be in (0, 1]; got {fraction}"),
            );
        }
        // At build time: the model and catalog may be set after the capability.
        let this = self.clone();
        builder.on_build(move |builder| match builder.context_window() {
            Some(window) => {
                let budget = (window as f64 * fraction / 2.0) as usize;
                this.install_with(builder, budget, budget)
            }
            None => builder.with_capability_error(
                this.name(),
                "the model catalog has no context window for the agent's model; give one with \
                 with_model_catalog or set token budgets with with_max_message_tokens and \
                 with_max_buffer_tokens",
            ),
        })
    }
}
