//! `ToolHook`: code that runs around every tool call and may block or rewrite it.

use std::sync::Arc;

use async_trait::async_trait;
use messages::ToolCall;

use crate::records::tool_execution::ToolExecution;
use crate::tools::tool::ToolContext;

/// What a before-hook decided about a call.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolHookDecision {
    /// Run this call (the original one, or a rewritten copy).
    Proceed(ToolCall),
    /// Do not run the call; the model is told it was blocked and why.
    Block(String),
}

impl ToolHookDecision {
    /// Proceed with an unchanged copy of `call`.
    pub fn proceed(call: &ToolCall) -> Self {
        ToolHookDecision::Proceed(call.clone())
    }

    /// Block the call with a reason the model will read.
    pub fn block(reason: impl Into<String>) -> Self {
        ToolHookDecision::Block(reason.into())
    }
}

/// Runs before and after each tool call. Hooks registered on an executor form a chain in
/// registration order: each before-hook sees the call as rewritten by the ones before it, the
/// first block wins, and each after-hook receives the execution returned by the previous one.
///
/// After-hooks see every call that was not blocked, including failures (unknown tool, invalid
/// arguments, errors, panics, timeouts).
#[async_trait]
pub trait ToolHook: Send + Sync {
    /// Decides whether `call` runs, possibly rewriting it. The default lets it run unchanged.
    async fn before(&self, call: &ToolCall, context: &ToolContext) -> ToolHookDecision {
        let _ = context;
        ToolHookDecision::proceed(call)
    }

    /// Sees (and may replace) the execution record of a call. The default returns it unchanged.
    async fn after(&self, execution: ToolExecution, context: &ToolContext) -> ToolExecution {
        let _ = context;
        execution
    }
}

type BeforeFn = dyn Fn(&ToolCall, &ToolContext) -> ToolHookDecision + Send + Sync;
type AfterFn = dyn Fn(ToolExecution, &ToolContext) -> ToolExecution + Send + Sync;

/// A before-hook made from a closure.
///
/// ```
/// use agents_core::tools::{BeforeToolHook, ToolHookDecision};
///
/// let no_bash = BeforeToolHook::new(|call, _context| {
///     if call.name() == "bash" {
///         ToolHookDecision::block("shell access is disabled")
///     } else {
///         ToolHookDecision::proceed(call)
///     }
/// });
/// # let _ = no_bash;
/// ```
#[derive(Clone)]
pub struct BeforeToolHook {
    function: Arc<BeforeFn>,
}

impl BeforeToolHook {
    /// A hook running `function` before each call.
    pub fn new(
        function: impl Fn(&ToolCall, &ToolContext) -> ToolHookDecision + Send + Sync + 'static,
    ) -> Self {
        Self {
            function: Arc::new(function),
        }
    }
}

#[async_trait]
impl ToolHook for BeforeToolHook {
    async fn before(&self, call: &ToolCall, context: &ToolContext) -> ToolHookDecision {
        (self.function)(call, context)
    }
}

impl std::fmt::Debug for BeforeToolHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BeforeToolHook")
    }
}

/// An after-hook made from a closure.
#[derive(Clone)]
pub struct AfterToolHook {
    function: Arc<AfterFn>,
}

impl AfterToolHook {
    /// A hook running `function` on each execution record.
    pub fn new(
        function: impl Fn(ToolExecution, &ToolContext) -> ToolExecution + Send + Sync + 'static,
    ) -> Self {
        Self {
            function: Arc::new(function),
        }
    }
}

#[async_trait]
impl ToolHook for AfterToolHook {
    async fn after(&self, execution: ToolExecution, context: &ToolContext) -> ToolExecution {
        (self.function)(execution, context)
    }
}

impl std::fmt::Debug for AfterToolHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AfterToolHook")
    }
}
