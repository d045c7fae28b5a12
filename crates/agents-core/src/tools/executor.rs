//! The `ToolExecutor` contract: how a step's tool calls are run.

use async_trait::async_trait;
use messages::ToolCall;

use crate::records::tool_execution::{ToolExecution, ToolExecutions};
use crate::tools::registry::Tools;
use crate::tools::tool::ToolContext;

/// What happened to a tool call, reported while the calls run (the agent loop turns these into
/// `AgentEvent`s).
#[derive(Clone, Debug, PartialEq)]
pub enum ToolEvent {
    /// A call is about to run.
    Started {
        /// The call (after before-hooks rewrote it).
        call: ToolCall,
    },
    /// A call finished (successfully or not).
    Completed {
        /// The execution record.
        execution: ToolExecution,
    },
    /// A call that a crash interrupted after it started (its intent is in the journal, its
    /// result is not) was found on resume: it runs again (`rerun`: its tool is read-only or
    /// idempotent), or its result says it may or may not have taken effect.
    Interrupted {
        /// The call.
        call: ToolCall,
        /// Whether it runs again.
        rerun: bool,
    },
    /// A before-hook refused a call.
    Blocked {
        /// The refused call.
        call: ToolCall,
        /// Why.
        reason: String,
    },
}

/// Runs the tool calls of one step.
///
/// Implementations never fail the step: unknown tools, invalid arguments, tool errors, panics
/// and timeouts all become failed [`ToolExecution`]s whose message goes back to the model.
#[async_trait]
pub trait ToolExecutor: Send + Sync {
    /// Runs `calls` against `tools`; concurrently when `parallel` is true. The result holds one
    /// execution per call, in call order.
    async fn execute(
        &self,
        calls: &[ToolCall],
        tools: &Tools,
        context: &ToolContext,
        parallel: bool,
    ) -> ToolExecutions;

    /// The most calls the loop runs at once through this executor in a parallel step
    /// (`None`: no limit).
    fn max_concurrency(&self) -> Option<usize> {
        None
    }
}

#[async_trait]
impl<T: ToolExecutor + ?Sized> ToolExecutor for std::sync::Arc<T> {
    async fn execute(
        &self,
        calls: &[ToolCall],
        tools: &Tools,
        context: &ToolContext,
        parallel: bool,
    ) -> ToolExecutions {
        (**self).execute(calls, tools, context, parallel).await
    }

    fn max_concurrency(&self) -> Option<usize> {
        (**self).max_concurrency()
    }
}
