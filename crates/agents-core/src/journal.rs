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
//!   result: a recorded result is reused, otherwise the call runs and its result is recorded
//!   as soon as it finishes.
//!
//! A journal belongs to one step of one run; the store that provides it forgets its entries
//! when the step commits.
//!
//! The loop goes through two methods, [`StepJournal::journaled_reply`] and
//! [`StepJournal::journaled_tool_call`]: "do this action durably, or give back what it gave
//! the first time". A store keeps records under keys, and their default implementations are
//! built from the four record methods (look up, else act and record). A durable-execution
//! engine whose journal is a log of actions replayed in order (Restate's `ctx.run`) cannot
//! answer "is `key` recorded?" without taking a place in that log, so it implements the two
//! action methods itself.

use async_trait::async_trait;
use futures::future::BoxFuture;
use inference::InferenceResponse;

use crate::records::agent_error::AgentError;
use crate::records::tool_execution::ToolExecution;

/// The model call a journal runs when it holds no reply for it (see
/// [`StepJournal::journaled_reply`]).
pub type InferenceAction<'a> = BoxFuture<'a, Result<InferenceResponse, AgentError>>;

/// The tool call a journal runs when it holds no result for it (see
/// [`StepJournal::journaled_tool_call`]).
pub type ToolCallAction<'a> = BoxFuture<'a, Result<ToolExecution, AgentError>>;

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

    /// The recorded result of the tool call `call_id`, if any.
    ///
    /// # Errors
    /// A [`JournalError`] when the journal cannot be read.
    async fn recorded_tool_result(
        &self,
        call_id: &str,
    ) -> Result<Option<ToolExecution>, JournalError>;

    /// Records a finished tool call, durably.
    ///
    /// # Errors
    /// A [`JournalError`] when it could not be recorded.
    async fn record_tool_result(&self, execution: &ToolExecution) -> Result<(), JournalError>;

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

    /// The execution of the tool call `call`: the one recorded by an interrupted run of the
    /// step, else `run`'s, recorded durably as soon as it finishes.
    ///
    /// The default looks it up with [`recorded_tool_result`](Self::recorded_tool_result) and
    /// records a fresh one with [`record_tool_result`](Self::record_tool_result).
    ///
    /// # Errors
    /// `run`'s error (an executor that returned nothing), or the journal's.
    async fn journaled_tool_call(
        &self,
        call: &messages::ToolCall,
        run: ToolCallAction<'_>,
    ) -> Result<ToolExecution, AgentError> {
        if let Some(execution) = self.recorded_tool_result(call.id()).await? {
            tracing::debug!(
                call_id = call.id(),
                "reusing the tool result recorded before an interruption"
            );
            return Ok(execution);
        }
        let execution = run.await?;
        self.record_tool_result(&execution).await?;
        Ok(execution)
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

    /// A failure to write the journal, caused by `source`.
    pub fn write(source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self {
            action: "written",
            source: source.into(),
        }
    }
}

impl From<JournalError> for crate::records::agent_error::AgentError {
    fn from(error: JournalError) -> Self {
        crate::records::agent_error::AgentError::Driver(crate::records::agent_error::error_chain(
            &error,
        ))
    }
}
