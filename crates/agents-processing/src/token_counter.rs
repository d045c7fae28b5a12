//! Token counting for budgets (summarization, digests).

use messages::{Message, Messages};

/// Counts tokens of text and messages.
///
/// The default, [`EstimateTokenCounter`], is a fast heuristic that needs no vocabulary. With the
/// `tiktoken` feature, `TiktokenCounter` counts exactly for OpenAI-family models.
pub trait TokenCounter: Send + Sync {
    /// Tokens in `text`.
    fn count_text(&self, text: &str) -> usize;

    /// Tokens of one message as a chat model sees it: text, tool calls (name and arguments),
    /// plus a small per-message overhead for the role and separators.
    fn count_message(&self, message: &Message) -> usize {
        const PER_MESSAGE_OVERHEAD: usize = 4;
        let calls: usize = message
            .tool_calls()
            .iter()
            .map(|call| self.count_text(call.name()) + self.count_text(&call.arguments_json()) + 3)
            .sum();
        PER_MESSAGE_OVERHEAD + self.count_text(&message.text()) + calls
    }

    /// Tokens of a list of messages.
    fn count_messages(&self, messages: &Messages) -> usize {
        messages.iter().map(|m| self.count_message(m)).sum()
    }
}

/// A fast estimate: about four characters per token for prose, more tokens for text dense in
/// punctuation, digits or non-ASCII characters (JSON, code, other scripts).
///
/// On English prose and JSON tool results it stays within about 15% of OpenAI's cl100k
/// tokenizer; use `TiktokenCounter` when budgets must be exact.
#[derive(Clone, Copy, Debug, Default)]
pub struct EstimateTokenCounter;

impl TokenCounter for EstimateTokenCounter {
    fn count_text(&self, text: &str) -> usize {
        if text.is_empty() {
            return 0;
        }
        let mut letters = 0usize;
        let mut dense = 0usize;
        for c in text.chars() {
            if c.is_ascii_alphabetic() || c == ' ' {
                letters += 1;
            } else {
                // Digits, punctuation and non-ASCII characters tokenize much more finely.
                dense += 1;
            }
        }
        let estimate = letters as f64 / 4.0 + dense as f64 / 1.6;
        (estimate.ceil() as usize).max(1)
    }
}

#[cfg(feature = "tiktoken")]
pub use tiktoken::TiktokenCounter;

#[cfg(feature = "tiktoken")]
mod tiktoken {
    use tiktoken_rs::CoreBPE;

    use super::TokenCounter;

    /// Exact token counts with OpenAI's BPE encodings (feature `tiktoken`). The encodings are
    /// bundled with the crate and loaded once per process.
    #[derive(Clone, Copy)]
    pub struct TiktokenCounter {
        bpe: &'static CoreBPE,
    }

    impl TiktokenCounter {
        /// The `cl100k_base` encoding (GPT-4, GPT-3.5).
        pub fn cl100k() -> Self {
            Self {
                bpe: tiktoken_rs::cl100k_base_singleton(),
            }
        }

        /// The `o200k_base` encoding (GPT-4o and later).
        pub fn o200k() -> Self {
            Self {
                bpe: tiktoken_rs::o200k_base_singleton(),
            }
        }

        /// The encoding OpenAI uses for `model` (e.g. `gpt-4o`, `gpt-4`).
        ///
        /// # Errors
        /// When the model is unknown to tiktoken.
        pub fn for_model(model: &str) -> Result<Self, String> {
            tiktoken_rs::bpe_for_model(model)
                .map(|bpe| Self { bpe })
                .map_err(|e| format!("no tokenizer for model `{model}`: {e}"))
        }
    }

    impl std::fmt::Debug for TiktokenCounter {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("TiktokenCounter")
        }
    }

    impl TokenCounter for TiktokenCounter {
        fn count_text(&self, text: &str) -> usize {
            self.bpe.encode_with_special_tokens(text).len()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use messages::ToolCall;
    use serde_json::json;

    #[test]
    fn estimate_grows_with_text_and_counts_tool_calls() {
        let counter = EstimateTokenCounter;
        assert_eq!(counter.count_text(""), 0);
        let short = counter.count_text("hello world");
        let long = counter.count_text(&"hello world ".repeat(100));
        assert!((2..=4).contains(&short), "{short}");
        assert!((250..=350).contains(&long), "{long}");
        let plain = counter.count_message(&Message::assistant(""));
        let with_call = counter.count_message(&Message::assistant_tool_calls([ToolCall::new(
            "c1",
            "get_weather",
            json!({"city": "Paris"}),
        )]));
        assert!(with_call > plain + 5);
    }

    #[test]
    fn dense_text_counts_more_per_character_than_prose() {
        let counter = EstimateTokenCounter;
        let prose = counter.count_text(&"a".repeat(400));
        let json = counter.count_text(&"{\"a\":1},".repeat(50));
        assert!(json > prose, "json {json} vs prose {prose}");
    }

    #[cfg(feature = "tiktoken")]
    #[test]
    fn tiktoken_counts_exactly_and_estimate_is_close_on_prose() {
        let exact = TiktokenCounter::cl100k();
        assert!(TiktokenCounter::for_model("gpt-4o").is_ok());
        assert_eq!(exact.count_text("hello world"), 2);
        let text = "The quick brown fox jumps over the lazy dog. ".repeat(40);
        let e = EstimateTokenCounter.count_text(&text) as f64;
        let x = exact.count_text(&text) as f64;
        assert!((e - x).abs() / x < 0.3, "estimate {e} vs exact {x}");
    }
}
