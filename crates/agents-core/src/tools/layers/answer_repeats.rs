//! [`AnswerRepeats`]: a read-only call identical to the one just answered gets that answer
//! again, with the advice to use it, instead of running again.

use async_trait::async_trait;
use messages::ToolCall;

use crate::records::tool_effects::ToolEffects;
use crate::records::tool_execution::ToolExecution;
use crate::tools::layer::{NextTool, ToolLayer, ToolScope};
use crate::tools::limits::already_have_it;

/// Answers a call to a [`ToolEffects::ReadOnly`] tool that is identical (same tool, same
/// arguments as canonical JSON) to the execution's last call, with nothing run since, from
/// that call's result: a successful result that quotes the earlier one and says "answer the
/// user's question from it now". Small models read a file, then ask for it again and again
/// instead of answering; the second read would return the same text, so it is not made.
///
/// A tool that can change things (or that declares nothing) always runs again: the world may
/// have changed. The answer counts as a call of its own, and a repeat that
/// [`RefuseRepeats`] would refuse (the n-th identical call under
/// [`ToolCallLimits::repeated_call_limit`](crate::ToolCallLimits)) is left to it: a model
/// that persists is refused, and the loop stops it after two refusals. Before, every repeat
/// was answered and none reached the refusal: the 0.5B model read `config.ini` eight times, to
/// the step limit, on the eval's development task d1. Needs the execution's earlier calls,
/// which the loop gathers when the limit is set (the default).
///
/// [`RefuseRepeats`]: crate::tools::layers::refuse_repeats::RefuseRepeats
#[derive(Clone, Copy, Debug, Default)]
pub struct AnswerRepeats;

#[async_trait]
impl ToolLayer for AnswerRepeats {
    async fn call(
        &self,
        call: ToolCall,
        scope: &ToolScope<'_>,
        next: NextTool<'_>,
    ) -> Result<ToolExecution, crate::records::agent_error::AgentError> {
        if scope.effects(call.name()) != ToolEffects::ReadOnly {
            return next.run(call, scope).await;
        }
        if scope
            .limits()
            .repeated_call_limit
            .is_some_and(|limit| scope.batch.previous.count(&call) + 1 >= limit)
        {
            // `RefuseRepeats` refuses it.
            return next.run(call, scope).await;
        }
        let Some(earlier) = scope.just_answered(&call) else {
            return next.run(call, scope).await;
        };
        let now = scope.context().clock.now();
        Ok(ToolExecution::success(
            call,
            already_have_it(&earlier),
            now,
            now,
        ))
    }

    fn passes(&self, call: &ToolCall, scope: &ToolScope<'_>) -> bool {
        // Only a read-only call can be answered from an earlier result, and only when an
        // earlier call of the execution gave one.
        scope.effects(call.name()) != ToolEffects::ReadOnly || scope.batch.previous.is_empty()
    }

    fn name(&self) -> &str {
        "AnswerRepeats"
    }
}
