//! `MoveMessagesToBuffer`: keep the conversation within a token budget.

use std::sync::Arc;

use agents_core::{AgentError, AgentState, BUFFER_SECTION, DEFAULT_SECTION};
use messages::{Messages, Role};

use crate::{EstimateTokenCounter, InlineProcessor, TokenCounter};

/// Post-step: when `messages` exceeds `max_tokens`, moves the oldest messages to the `buffer`
/// section (appended, oldest first), keeping the newest ones that fit.
///
/// The cut never separates tool results from the assistant message that requested them, and
/// the newest message always stays. Pair it with [`SummarizeBuffer`](crate::SummarizeBuffer)
/// to turn the buffer into a summary.
#[derive(Clone)]
pub struct MoveMessagesToBuffer {
    max_tokens: usize,
    counter: Arc<dyn TokenCounter>,
}

impl MoveMessagesToBuffer {
    /// Keeps `messages` within `max_tokens` (estimated).
    pub fn new(max_tokens: usize) -> Self {
        Self {
            max_tokens,
            counter: Arc::new(EstimateTokenCounter),
        }
    }

    /// A copy counting tokens with `counter`.
    pub fn with_counter(mut self, counter: impl TokenCounter + 'static) -> Self {
        self.counter = Arc::new(counter);
        self
    }

    /// How many of the oldest messages must move so the rest fit.
    fn split_point(&self, messages: &Messages) -> usize {
        let mut kept_tokens = 0;
        let mut keep_from = messages.len();
        for (index, message) in messages.iter().enumerate().rev() {
            let tokens = self.counter.count_message(message);
            if kept_tokens + tokens > self.max_tokens && keep_from < messages.len() {
                break;
            }
            kept_tokens += tokens;
            keep_from = index;
        }
        // Do not start the kept part with tool results whose request moved away.
        while keep_from < messages.len()
            && messages
                .get(keep_from)
                .is_some_and(|m| m.role() == Role::Tool)
            && keep_from + 1 < messages.len()
        {
            keep_from += 1;
        }
        keep_from
    }
}

impl std::fmt::Debug for MoveMessagesToBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MoveMessagesToBuffer")
            .field("max_tokens", &self.max_tokens)
            .finish()
    }
}

impl InlineProcessor for MoveMessagesToBuffer {
    fn after(&self, state: AgentState) -> Result<AgentState, AgentError> {
        let messages = state.messages();
        if self.counter.count_messages(&messages) <= self.max_tokens {
            return Ok(state);
        }
        let split = self.split_point(&messages);
        if split == 0 {
            return Ok(state);
        }
        let moved = messages.head(split);
        let kept = messages.tail(messages.len() - split);
        tracing::debug!(
            moved = moved.len(),
            kept = kept.len(),
            "moving old messages to the buffer"
        );
        let store = state
            .store()
            .section(BUFFER_SECTION)
            .append(moved)
            .section(DEFAULT_SECTION)
            .set(kept);
        Ok(state.with_store(store))
    }
}
