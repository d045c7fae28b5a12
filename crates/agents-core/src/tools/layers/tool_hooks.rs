//! [`HookLayer`]: [`ToolHook`]s (before/after code, often closures) as a layer of the onion.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use async_trait::async_trait;
use futures::FutureExt;
use messages::ToolCall;

use crate::records::agent_error::AgentError;
use crate::records::tool_execution::{ToolExecution, ToolFailureKind};
use crate::tools::hook::{ToolHook, ToolHookDecision};
use crate::tools::layer::{NextTool, ToolLayer, ToolScope};

/// Runs a chain of [`ToolHook`]s around the call, in the order they were added: each
/// `before` sees the call as the ones before it rewrote it and may block it (the model is told
/// why, [`ToolFailureKind::Blocked`]; the first block wins); then, for a call that was not
/// blocked, each `after` in the same order sees (and may replace) the execution the previous
/// one returned. A hook that panics fails the call ([`ToolFailureKind::Panicked`]), not the
/// step.
#[derive(Clone)]
pub struct HookLayer {
    hooks: Vec<Arc<dyn ToolHook>>,
}

impl HookLayer {
    /// A layer running `hook`.
    pub fn new(hook: Arc<dyn ToolHook>) -> Self {
        Self { hooks: vec![hook] }
    }

    /// A layer running `hooks` as one chain, in this order.
    pub fn chain(hooks: impl IntoIterator<Item = Arc<dyn ToolHook>>) -> Self {
        Self {
            hooks: hooks.into_iter().collect(),
        }
    }
}

#[async_trait]
impl ToolLayer for HookLayer {
    async fn call(
        &self,
        call: ToolCall,
        scope: &ToolScope<'_>,
        next: NextTool<'_>,
    ) -> Result<ToolExecution, AgentError> {
        let mut call = call;
        for hook in &self.hooks {
            let decided = AssertUnwindSafe(hook.before(&call, scope.context()))
                .catch_unwind()
                .await;
            call = match decided {
                Ok(ToolHookDecision::Proceed(rewritten)) => rewritten,
                Ok(ToolHookDecision::Block(reason)) => {
                    tracing::info!(tool = call.name(), %reason, "tool call blocked");
                    let message = format!("the call to `{}` was blocked: {reason}", call.name());
                    return Ok(scope.refusal(call, ToolFailureKind::Blocked, message));
                }
                Err(panic) => return Ok(panicked(scope, call, "before", panic.as_ref())),
            };
        }
        let mut execution = next.run(call, scope).await?;
        for hook in &self.hooks {
            let fallback = execution.call().clone();
            execution = match AssertUnwindSafe(hook.after(execution, scope.context()))
                .catch_unwind()
                .await
            {
                Ok(execution) => execution,
                Err(panic) => return Ok(panicked(scope, fallback, "after", panic.as_ref())),
            };
        }
        Ok(execution)
    }

    fn name(&self) -> &str {
        "HookLayer"
    }
}

impl std::fmt::Debug for HookLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HookLayer")
    }
}

/// The execution of `call` whose `when` (before/after) hook panicked.
fn panicked(
    scope: &ToolScope<'_>,
    call: ToolCall,
    when: &str,
    panic: &(dyn Any + Send),
) -> ToolExecution {
    let message = format!(
        "a{} {when}-tool hook panicked on the call to `{}`: {}",
        if when == "after" { "n" } else { "" },
        call.name(),
        crate::tools::panics::panic_message(panic)
    );
    tracing::error!(tool = call.name(), %message, "tool hook panicked");
    scope.refusal(call, ToolFailureKind::Panicked, message)
}
