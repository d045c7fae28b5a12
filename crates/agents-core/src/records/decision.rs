//! `ContinuationDecision` and `StopReason`.

use serde::{Deserialize, Serialize};

/// What one criterion says about running another step.
///
/// Resolution over all criteria (order-independent): any `Forbid` stops; else any `Request`
/// continues; else any `Stop` stops; else any `Allow` continues; no decisions stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContinuationDecision {
    /// A guard denies continuing (limits, errors). Always wins.
    Forbid,
    /// A guard has no objection.
    Allow,
    /// There is work left (e.g. the model asked for tools): run another step.
    Request,
    /// The work is done as far as this criterion can tell.
    Stop,
}

/// Why an execution stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The work is done.
    Completed,
    /// The step limit was reached.
    StepsLimit,
    /// The token budget was used up.
    TokenLimit,
    /// The time budget was used up.
    TimeLimit,
    /// Too many failed attempts in a row.
    RetryLimit,
    /// An error stopped the execution (its status is `Failed`).
    Error,
    /// The model finished with a finish reason that stops the run.
    FinishReason,
    /// A guard forbade continuing without saying why.
    Guard,
    /// The user cancelled the execution.
    UserRequested,
    /// The model kept making a call it had already made (see
    /// `Agent::with_repeated_call_limit`).
    RepeatedToolCalls,
    /// The cost budget was used up.
    CostLimit,
    /// The model's reply was empty (no text, no tool calls), also after a nudge.
    EmptyResponse,
}

impl StopReason {
    /// The snake_case name (as serialized).
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Completed => "completed",
            StopReason::StepsLimit => "steps_limit",
            StopReason::TokenLimit => "token_limit",
            StopReason::TimeLimit => "time_limit",
            StopReason::RetryLimit => "retry_limit",
            StopReason::Error => "error",
            StopReason::FinishReason => "finish_reason",
            StopReason::Guard => "guard",
            StopReason::UserRequested => "user_requested",
            StopReason::RepeatedToolCalls => "repeated_tool_calls",
            StopReason::CostLimit => "cost_limit",
            StopReason::EmptyResponse => "empty_response",
        }
    }

    /// Why the execution stopped, in words a user reads ("I reached the limit of ...").
    pub fn describe(self) -> &'static str {
        match self {
            StopReason::Completed => "the task was completed",
            StopReason::StepsLimit => "I reached the maximum number of steps",
            StopReason::TokenLimit => "I used up the token budget",
            StopReason::TimeLimit => "I ran out of time",
            StopReason::RetryLimit => "too many attempts in a row failed",
            StopReason::Error => "an error stopped me",
            StopReason::FinishReason => "the model stopped early",
            StopReason::Guard => "a safeguard stopped the run",
            StopReason::UserRequested => "the run was cancelled",
            StopReason::RepeatedToolCalls => "I kept repeating the same tool call",
            StopReason::CostLimit => "I reached the cost limit",
            StopReason::EmptyResponse => "the model sent empty replies",
        }
    }

    /// Why the execution stopped, told to the model in the request that asks it to answer on
    /// the stop ("you reached the maximum number of steps"). [`StopReason::describe`] is the
    /// agent's own voice, for the person; sent as a user message it read "You have to stop
    /// now: an error stopped me", and the 1.5B model answered "I'm sorry, but I cannot answer
    /// your question" with the answer in the tool result above.
    pub fn for_the_model(self) -> &'static str {
        match self {
            StopReason::Completed => "the task is completed",
            StopReason::StepsLimit => "you reached the maximum number of steps",
            StopReason::TokenLimit => "you used up the token budget",
            StopReason::TimeLimit => "you ran out of time",
            StopReason::RetryLimit => "too many attempts in a row failed",
            StopReason::Error => "an error stopped the run",
            StopReason::FinishReason => "your reply stopped early",
            StopReason::Guard => "a safeguard stopped the run",
            StopReason::UserRequested => "the run was cancelled",
            StopReason::RepeatedToolCalls => "you kept repeating the same tool call",
            StopReason::CostLimit => "you reached the cost limit",
            StopReason::EmptyResponse => "your replies were empty",
        }
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
