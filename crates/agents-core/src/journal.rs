//! `StepJournal`: what a step has already done, recorded as it happens, so a step re-run after
//! a crash does not do it twice.
//!
//! A durable store commits a state after each step. A crash in the middle of a step loses the
//! step, and re-running it would call the model again and run its tools again. With a journal
//! on the [`StepContext`](crate::StepContext) (given per run with
//! [`StepOptions`](crate::StepOptions)):
//!
//! - the built-in drivers ask it for the model reply before calling the model
//!   ([`StepContext::journaled_inference`](crate::StepContext::journaled_inference)): a recorded
//!   reply is reused with its tool call ids, otherwise the reply is recorded before the step
//!   goes on;
//! - [`StepContext::run_tool_calls`](crate::StepContext::run_tool_calls) asks it for each call's
//!   result: a recorded result is reused (only for the same place in the step's calls, id,
//!   tool name and arguments), otherwise the call's intent is recorded (durably, before the
//!   call runs), then the call runs and its result is recorded as soon as it finishes;
//! - a call whose intent is recorded but whose result is not started in an interrupted run
//!   and may or may not have taken effect: it runs again only when its tool is read-only or
//!   idempotent ([`ToolEffects`](crate::ToolEffects)); any other gets the result
//!   [`INTERRUPTED_MESSAGE`] (the model decides), or, when it ran on a person's approval, is
//!   asked for again. Either way a [`ToolCallInterrupted`](crate::AgentEvent) event says so.
//!
//! A journal belongs to one step of one run; the store that provides it forgets its entries
//! when the step commits.

use async_trait::async_trait;
use inference::InferenceResponse;
use messages::ToolCall;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::ToolExecution;

/// The result a call gets when a crash interrupted it after it started and its tool is not
/// read-only or idempotent (so it is not run again).
pub const INTERRUPTED_MESSAGE: &str = "This call was interrupted and may or may not have taken \
     effect: the process running it stopped after the call started and before its result was \
     recorded, and it was not run again. Check whether it took effect before doing it again.";

/// The intent to run one tool call, recorded before it runs: where it is among the calls
/// its step runs (`index`), which call it is, and how many times it was started.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallIntent {
    /// Its position among the calls the step ran through the journal.
    pub index: usize,
    /// The call's id.
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// The SHA-256 of the call's signature (name and canonical arguments).
    pub signature: String,
    /// 1 for the first start; one more for each start again after a crash.
    pub attempt: u32,
}

impl CallIntent {
    /// The first start of `call` at `index`.
    pub fn new(index: usize, call: &ToolCall) -> Self {
        Self {
            index,
            call_id: call.id().to_owned(),
            name: call.name().to_owned(),
            signature: signature_hash(call),
            attempt: 1,
        }
    }

    /// The journal key of the call: its position and id (so a provider that repeats an id in
    /// one reply gets two entries).
    pub fn key(&self) -> String {
        format!("{}:{}", self.index, self.call_id)
    }

    /// Whether `other` records the same call (position, id, name and arguments).
    pub fn same_call(&self, other: &CallIntent) -> bool {
        self.index == other.index
            && self.call_id == other.call_id
            && self.name == other.name
            && self.signature == other.signature
    }
}

/// The SHA-256 of a call's signature (its name, a NUL, its canonical arguments), in hex.
fn signature_hash(call: &ToolCall) -> String {
    let digest = Sha256::digest(crate::tools::signature(call).as_bytes());
    digest.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The record of a step in progress: the model replies and finished tool calls of a step, kept
/// so that a re-run of the step after a crash reuses them instead of doing them again.
#[async_trait]
pub trait StepJournal: Send + Sync + std::fmt::Debug {
    /// The model reply recorded under `key` (a name the driver gives each inference of a
    /// step, e.g. `"reply"`), if any.
    ///
    /// # Errors
    /// A [`JournalError`] when the journal cannot be read; the step fails rather than risk
    /// doing something twice.
    async fn recorded_reply(&self, key: &str) -> Result<Option<InferenceResponse>, JournalError>;

    /// Records the model reply `reply` under `key`, durably, before the step uses it.
    ///
    /// # Errors
    /// A [`JournalError`] when it could not be recorded; the step fails.
    async fn record_reply(&self, key: &str, reply: &InferenceResponse) -> Result<(), JournalError>;

    /// The intent recorded under `key` ([`CallIntent::key`]), if any.
    ///
    /// # Errors
    /// A [`JournalError`] when the journal cannot be read.
    async fn recorded_intent(&self, key: &str) -> Result<Option<CallIntent>, JournalError>;

    /// Records that the call `intent` describes is about to run, durably (in a small commit of
    /// its own) before it runs.
    ///
    /// # Errors
    /// A [`JournalError`] when it could not be recorded; the call does not run.
    async fn record_intent(&self, intent: &CallIntent) -> Result<(), JournalError>;

    /// The recorded result of the call under `key` ([`CallIntent::key`]), if any.
    ///
    /// # Errors
    /// A [`JournalError`] when the journal cannot be read.
    async fn recorded_tool_result(&self, key: &str) -> Result<Option<ToolExecution>, JournalError>;

    /// Records a finished tool call under `key`, durably.
    ///
    /// # Errors
    /// A [`JournalError`] when it could not be recorded.
    async fn record_tool_result(
        &self,
        key: &str,
        execution: &ToolExecution,
    ) -> Result<(), JournalError>;
}

/// A journal that could not be read or written. The step that needed it fails (the loop
/// records a failure step), because going on could do something twice after a crash.
#[derive(Debug, thiserror::Error)]
#[error("the step journal could not be {action}; check the store that keeps it")]
pub struct JournalError {
    action: &'static str,
    #[source]
    source: Box<dyn std::error::Error + Send + Sync>,
}

impl JournalError {
    /// A failure to read the journal, caused by `source`.
    pub fn read(source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self {
            action: "read",
            source: source.into(),
        }
    }

    /// A journal entry that records another call than the one at its place (another tool or
    /// other arguments): it is not used, and the step fails rather than guess.
    pub fn mismatch(detail: String) -> Self {
        Self {
            action: "trusted",
            source: detail.into(),
        }
    }

    /// A failure to write the journal, caused by `source`.
    pub fn write(source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self {
            action: "written",
            source: source.into(),
        }
    }
}

impl From<JournalError> for crate::AgentError {
    fn from(error: JournalError) -> Self {
        crate::AgentError::Driver(crate::error_chain(&error))
    }
}
