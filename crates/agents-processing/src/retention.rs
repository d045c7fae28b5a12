//! `TraceRetention`: what of an execution's tool trace persists after it ends.

use std::fmt::Write as _;
use std::sync::Arc;

use agents_core::AgentState;
use messages::{Message, ToolCall};
use serde_json::Value;

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
    /// Observation masking: every call and result persists as in legacy mode, but the outputs
    /// of executions older than the last `keep` are replaced by a one-line placeholder (see
    /// [`MaskOldObservations`](crate::MaskOldObservations)).
    Masked {
        /// How many of the latest executions keep their tool outputs (at least 1).
        keep: usize,
    },
    /// Everything persists (the legacy behaviour).
    Full,
}

/// The default `keep` of [`TraceRetention::masked`] when none is chosen: the last two
/// executions keep their tool outputs.
pub const DEFAULT_MASKED_EXECUTIONS: usize = 2;

impl TraceRetention {
    /// A digest within `max_tokens` (estimated with the default counter).
    pub fn digest(max_tokens: usize) -> Self {
        TraceRetention::Digest(DigestConfig::new(max_tokens))
    }

    /// Observation masking that keeps the outputs of the last `keep` executions (`0` counts
    /// as 1).
    pub fn masked(keep: usize) -> Self {
        TraceRetention::Masked { keep: keep.max(1) }
    }

    /// Whether the tool trace lives in the execution buffer (`Ephemeral`, `Digest`) rather
    /// than in the persistent conversation (`Full`, `Masked`).
    pub fn is_separated(&self) -> bool {
        matches!(self, TraceRetention::Ephemeral | TraceRetention::Digest(_))
    }
}

impl std::fmt::Debug for TraceRetention {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TraceRetention::Ephemeral => f.write_str("Ephemeral"),
            TraceRetention::Digest(config) => write!(f, "Digest({} tokens)", config.max_tokens),
            TraceRetention::Masked { keep } => write!(f, "Masked(last {keep} executions)"),
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

/// Metadata key marking the messages of a digest.
pub const EXECUTION_DIGEST_KEY: &str = "execution_digest";

/// The digest of the execution recorded in `state` (its step executions), empty when no tool
/// ran.
///
/// The digest has the shape of a tool trace, never of prose: one assistant message carrying
/// the execution's calls (arguments whose strings are cut to the excerpt length) and one
/// `tool` result per call holding an excerpt of what it returned. A model writes assistant
/// text, so a note written as assistant text is a format it copies (the issue-32 finding:
/// small models wrote their own "notes" with made-up results); tool results are the one part
/// of a conversation a model never writes, and the calls show later turns that answers came
/// from tools. Every message carries metadata `execution_digest: true`; call ids are
/// `digest_<position>_<n>` (the digest's position in the conversation, the call's number),
/// unique in the conversation. Calls are kept in order while the
/// digest stays within the token budget; the last result says how many calls were left out.
pub fn execution_digest(state: &AgentState, config: &DigestConfig) -> Vec<Message> {
    let executions: Vec<_> = state
        .step_executions()
        .steps()
        .flat_map(|step| step.tool_executions().iter())
        .collect();
    if executions.is_empty() {
        return Vec::new();
    }
    // Where the digest goes in the conversation: unique there, and the same on every run.
    let position = state.store().section(agents_core::DEFAULT_SECTION).len();
    let omitted_note_budget = 12;
    let mut spent = 0;
    let mut pairs: Vec<(ToolCall, String)> = Vec::new();
    for (n, execution) in executions.iter().enumerate() {
        let result = if execution.has_error() {
            format!("error: {}", execution.error_message().unwrap_or_default())
        } else {
            execution.result_text()
        };
        let arguments = shortened(execution.arguments(), config.max_excerpt_chars);
        let result = excerpt(&result, config.max_excerpt_chars);
        let cost = config.counter.count_text(execution.name())
            + config.counter.count_text(&arguments.to_string())
            + config.counter.count_text(&result);
        if spent + cost + omitted_note_budget > config.max_tokens {
            break;
        }
        spent += cost;
        let id = format!("digest_{position}_{n}");
        pairs.push((ToolCall::new(id, execution.name(), arguments), result));
    }
    if pairs.is_empty() {
        return Vec::new();
    }
    let omitted = executions.len() - pairs.len();
    if omitted > 0 {
        if let Some((_, last)) = pairs.last_mut() {
            let _ = write!(last, " (and {omitted} later call(s) not kept)");
        }
    }
    let calls = Message::assistant_tool_calls(pairs.iter().map(|(call, _)| call.clone()))
        .with_metadata(EXECUTION_DIGEST_KEY, true);
    std::iter::once(calls)
        .chain(pairs.iter().map(|(call, result)| {
            Message::tool_result_for(call, result.as_str())
                .with_metadata(EXECUTION_DIGEST_KEY, true)
        }))
        .collect()
}

/// `arguments` with every string longer than `max_chars` cut (an object stays an object, so
/// the call is still a valid call for every provider).
fn shortened(arguments: &Value, max_chars: usize) -> Value {
    match arguments {
        Value::String(text) if text.chars().count() > max_chars => {
            Value::String(excerpt(text, max_chars))
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| shortened(v, max_chars)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), shortened(v, max_chars)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn excerpt(text: &str, max_chars: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max_chars {
        return flat;
    }
    let cut: String = flat.chars().take(max_chars).collect();
    format!("{cut}...")
}
