//! `TraceRetention`: what of an execution's tool trace persists after it ends.

use std::fmt::Write as _;
use std::sync::Arc;

use agents_core::AgentState;
use messages::Message;

use crate::{EstimateTokenCounter, TokenCounter};

/// What of the tool trace survives an execution in separated mode.
#[derive(Clone, Default)]
pub enum TraceRetention {
    /// Nothing: only user messages and final answers persist (the seeds' design).
    #[default]
    Ephemeral,
    /// A compact note of what the execution did (tools, arguments, result excerpts), bounded by
    /// a token budget, is persisted right before the final answer, so later turns do not
    /// repeat calls whose results vanished with the trace.
    Digest(DigestConfig),
    /// Everything persists (the legacy behaviour).
    Full,
}

impl TraceRetention {
    /// A digest within `max_tokens` (estimated with the default counter).
    pub fn digest(max_tokens: usize) -> Self {
        TraceRetention::Digest(DigestConfig::new(max_tokens))
    }
}

impl std::fmt::Debug for TraceRetention {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TraceRetention::Ephemeral => f.write_str("Ephemeral"),
            TraceRetention::Digest(config) => write!(f, "Digest({} tokens)", config.max_tokens),
            TraceRetention::Full => f.write_str("Full"),
        }
    }
}

/// Bounds of an execution digest.
#[derive(Clone)]
pub struct DigestConfig {
    max_tokens: usize,
    max_excerpt_chars: usize,
    counter: Arc<dyn TokenCounter>,
}

impl DigestConfig {
    /// A digest of at most `max_tokens` tokens, with result excerpts of up to 160 characters.
    pub fn new(max_tokens: usize) -> Self {
        Self {
            max_tokens,
            max_excerpt_chars: 160,
            counter: Arc::new(EstimateTokenCounter),
        }
    }

    /// A copy with another excerpt length for arguments and results.
    pub fn with_max_excerpt_chars(mut self, chars: usize) -> Self {
        self.max_excerpt_chars = chars;
        self
    }

    /// A copy counting tokens with `counter`.
    pub fn with_counter(mut self, counter: impl TokenCounter + 'static) -> Self {
        self.counter = Arc::new(counter);
        self
    }

    /// The token budget.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }
}

/// Metadata key marking a digest message.
pub const EXECUTION_DIGEST_KEY: &str = "execution_digest";

/// The digest of the execution recorded in `state` (its step executions), or `None` when no
/// tool ran. The note is an assistant message marked with metadata `execution_digest: true`.
pub fn execution_digest(state: &AgentState, config: &DigestConfig) -> Option<Message> {
    let executions: Vec<_> = state
        .step_executions()
        .steps()
        .flat_map(|step| step.tool_executions().iter())
        .collect();
    if executions.is_empty() {
        return None;
    }
    let header = "(Notes on the tool calls behind the next answer, kept for later turns.)";
    let mut text = String::from(header);
    let mut included = 0;
    for execution in &executions {
        let result = if execution.has_error() {
            format!("error: {}", execution.error_message().unwrap_or_default())
        } else {
            execution.result_text()
        };
        let line = format!(
            "\n- {}({}) -> {}",
            execution.name(),
            excerpt(&execution.arguments().to_string(), config.max_excerpt_chars),
            excerpt(&result, config.max_excerpt_chars)
        );
        let omitted_note_budget = 12;
        let projected = config.counter.count_text(&text) + config.counter.count_text(&line);
        if projected + omitted_note_budget > config.max_tokens {
            break;
        }
        text.push_str(&line);
        included += 1;
    }
    if included == 0 && config.counter.count_text(&text) > config.max_tokens {
        return None;
    }
    let omitted = executions.len() - included;
    if omitted > 0 {
        let _ = write!(text, "\n- ... and {omitted} more call(s) not shown");
    }
    Some(Message::assistant(text).with_metadata(EXECUTION_DIGEST_KEY, true))
}

fn excerpt(text: &str, max_chars: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max_chars {
        return flat;
    }
    let cut: String = flat.chars().take(max_chars).collect();
    format!("{cut}...")
}
