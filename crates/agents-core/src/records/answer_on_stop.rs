//! [`AnswerOnStop`]: what an execution that stops without an answer leaves in the
//! conversation, and the metadata keys that mark such an answer. (The loop that makes the
//! answer is `agent/answer_on_stop.rs`.)

use serde::{Deserialize, Serialize};

/// The metadata key marking an answer the loop appended because the execution stopped without
/// one (`true`).
pub const INCOMPLETE_KEY: &str = "incomplete";
/// The metadata key holding the stop reason (snake_case) of such an answer.
pub const STOP_REASON_KEY: &str = "stop_reason";
/// The metadata key saying how such an answer was made: `"synthesize"` (the model answered
/// without tools) or `"notice"` (the loop's own message); a UI can show a notice differently.
pub const ANSWERED_BY_KEY: &str = "answered_by";

/// What the loop appends to the conversation when an execution stops without a final answer
/// (a step, token, time or cost limit, an error, repeated calls, a guard, a cancellation).
///
/// The appended assistant message carries the metadata `"incomplete": true`,
/// `"stop_reason": "<snake_case>"` and `"answered_by": "synthesize" | "notice"`, and
/// `AgentState::final_response` returns it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerOnStop {
    /// One more inference, without tools, asks the model to answer from what the execution
    /// found (its trace is in the context); if that fails, a [`Notice`](Self::Notice).
    Synthesize,
    /// A plain message: the task was not finished, why, and which tools were called.
    Notice,
    /// Nothing is appended (the original behaviour).
    #[default]
    Nothing,
}
