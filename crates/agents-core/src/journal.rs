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
//! - the tool-call onion's [`JournalCalls`](crate::tools::JournalCalls) layer asks it for each
//!   call's result: a recorded result is reused (only for the same place in the step's calls,
//!   id, tool name and arguments), otherwise the call's intent is recorded (durably, before the
//!   call runs), then the call runs and its result is recorded as soon as it finishes;
//! - a call whose intent is recorded but whose result is not was started by an interrupted run
//!   and may or may not have taken effect: it runs again only when its tool is read-only or
//!   idempotent ([`ToolEffects`](crate::ToolEffects)); any other gets the result
//!   [`INTERRUPTED_MESSAGE`] (the model decides), or, when it ran on a person's approval, is
//!   asked for again. Either way a `ToolCallInterrupted` event says so.
//!
//! A journal belongs to one step of one run; the store that provides it forgets its entries
//! when the step commits.
//!
//! The loop goes through two methods, [`StepJournal::journaled_reply`] and
//! [`StepJournal::journaled_tool_call`]: "do this action durably, or give back what it gave
//! the first time". A store keeps records under keys, and their default implementations are
//! built from the record methods (look up, else record the intent, act and record). A
//! durable-execution engine whose journal is a log of actions replayed in order (Restate's
//! `ctx.run`) cannot answer "is `key` recorded?" without taking a place in that log, so it
//! implements the two action methods itself, with the same rules.

use async_trait::async_trait;
use futures::future::BoxFuture;
use inference::InferenceResponse;
use messages::ToolCall;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::records::agent_error::AgentError;
use crate::records::tool_execution::ToolExecution;
use crate::signature::signature;

/// The model call a journal runs when it holds no reply for it (see
/// [`StepJournal::journaled_reply`]).
pub type InferenceAction<'a> = BoxFuture<'a, Result<InferenceResponse, AgentError>>;

/// The tool call a journal runs when it holds no result for it (see
/// [`StepJournal::journaled_tool_call`]).
pub type ToolCallAction<'a> = BoxFuture<'a, Result<ToolExecution, AgentError>>;

/// The result a call gets when a crash interrupted it after it started and its tool is not
/// read-only or idempotent (so it is not run again).
pub const INTERRUPTED_MESSAGE: &str = "This call was interrupted and may or may not have taken \
     effect: the process running it stopped after the call started and before its result was \
     recorded, and it was not run again. Check whether it took effect before doing it again.";

/// The intent to run one tool call, recorded before it runs: where it is among the calls
/// its step runs (`index`), which call it is, and how many times it was started.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallIntent {
    /// Its position among the calls of the step.
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
        let digest = Sha256::digest(signature(call).as_bytes());
        Self {
            index,
            call_id: call.id().to_owned(),
            name: call.name().to_owned(),
            signature: digest.iter().map(|byte| format!("{byte:02x}")).collect(),
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

/// What becomes of a call an interrupted run started and did not finish (decided by the
/// [`JournalCalls`](crate::tools::JournalCalls) layer from the tool's effects and the approval
/// policy, applied by the journal).
#[derive(Clone, Debug)]
pub enum OnInterrupted {
    /// Run it again (its tool is read-only or idempotent): attempt + 1.
    RunAgain,
    /// Do not run it; `execution` is its result. `record`: keep that result in the journal
    /// (an "interrupted" result surfaces once), or not (a call asked for again: the person's
    /// new decision starts afresh).
    Answer {
        /// The call's result.
        execution: ToolExecution,
        /// Whether the journal records it.
        record: bool,
    },
}

/// A call as the journal gave it back.
#[derive(Clone, Debug)]
pub struct JournaledCall {
    /// The call's execution: recorded earlier, run now, or the interrupted call's answer.
    pub execution: ToolExecution,
    /// `true` when an interrupted run had started the call and not finished it.
    pub interrupted: bool,
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

    /// The model reply for the inference the driver names `key`: the one recorded by an
    /// interrupted run of the step, else `infer`'s, recorded durably before it is returned.
    ///
    /// The default looks it up with [`recorded_reply`](Self::recorded_reply) and records a
    /// fresh one with [`record_reply`](Self::record_reply).
    ///
    /// # Errors
    /// `infer`'s error, or the journal's (the step must not go on without its record).
    async fn journaled_reply(
        &self,
        key: &str,
        infer: InferenceAction<'_>,
    ) -> Result<InferenceResponse, AgentError> {
        if let Some(reply) = self.recorded_reply(key).await? {
            tracing::debug!(
                key,
                "reusing the model reply recorded before an interruption"
            );
            return Ok(reply);
        }
        let reply = infer.await?;
        self.record_reply(key, &reply).await?;
        Ok(reply)
    }

    /// The execution of the call `intent` describes: the one recorded by an interrupted run
    /// of the step; else, when that run started the call and did not finish it, what
    /// `on_interrupted` says; else `run`'s, its intent recorded before it starts and its result
    /// as soon as it finishes.
    ///
    /// The default is built from the record methods.
    ///
    /// # Errors
    /// `run`'s error, the journal's, or a [`JournalError`] when the entry at the call's place
    /// is of another call (another tool or other arguments): it is not used.
    async fn journaled_tool_call(
        &self,
        intent: &CallIntent,
        on_interrupted: OnInterrupted,
        run: ToolCallAction<'_>,
    ) -> Result<JournaledCall, AgentError> {
        let key = intent.key();
        if let Some(execution) = self.recorded_tool_result(&key).await? {
            if !intent.same_call(&CallIntent::new(intent.index, execution.call())) {
                return Err(JournalError::mismatch(format!(
                    "the result recorded for call `{}` at position {} is of another call (`{}`)",
                    intent.call_id,
                    intent.index,
                    execution.name()
                ))
                .into());
            }
            tracing::debug!(
                call_id = intent.call_id,
                "reusing the tool result recorded before an interruption"
            );
            return Ok(JournaledCall {
                execution,
                interrupted: false,
            });
        }
        let mut next = intent.clone();
        let mut interrupted = false;
        if let Some(started) = self.recorded_intent(&key).await? {
            if !intent.same_call(&started) {
                return Err(JournalError::mismatch(format!(
                    "the intent recorded for call `{}` at position {} is of another call (`{}`)",
                    intent.call_id, intent.index, started.name
                ))
                .into());
            }
            interrupted = true;
            match on_interrupted {
                OnInterrupted::RunAgain => next.attempt = started.attempt.saturating_add(1),
                OnInterrupted::Answer { execution, record } => {
                    if record {
                        self.record_tool_result(&key, &execution).await?;
                    }
                    return Ok(JournaledCall {
                        execution,
                        interrupted,
                    });
                }
            }
        }
        self.record_intent(&next).await?;
        let execution = run.await?;
        self.record_tool_result(&key, &execution).await?;
        Ok(JournaledCall {
            execution,
            interrupted,
        })
    }
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

impl From<JournalError> for AgentError {
    fn from(error: JournalError) -> Self {
        AgentError::Driver(crate::records::agent_error::error_chain(&error))
    }
}
