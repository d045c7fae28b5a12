//! The tool-call onion: [`ToolLayer`]s around every tool call, the way processors are layers
//! around every step.
//!
//! Each call of a step goes through the layers in order, outermost first, and then to the
//! [`ToolExecutor`] (lookup, argument check, timeout, the tool itself). A layer sees the call
//! before the layers inside it and the execution after them: it may pass the call on (changed
//! or not) with [`NextTool::run`], or answer it without running it (a refusal, a recorded
//! result). The standard list is in [`standard_tool_layers`](crate::tools::stack::standard_tool_layers);
//! an agent adds its user's layers (hooks, rate limiters, audit logs) inside it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use messages::{SharedSlice, ToolCall};

use crate::journal::StepJournal;
use crate::records::agent_error::AgentError;
use crate::records::tool_effects::ToolEffects;
use crate::records::tool_execution::{ToolExecution, ToolFailureKind};
use crate::signature::signature;
use crate::tools::approval_policy::ApprovalPolicy;
use crate::tools::executor::{ToolEvent, ToolExecutor};
use crate::tools::limits::{PreviousCalls, ToolCallLimits};
use crate::tools::registry::Tools;
use crate::tools::tool::{Tool, ToolContext};

/// One layer around every tool call.
///
/// ```
/// use agents_core::tools::{NextTool, ToolLayer, ToolScope};
/// use agents_core::{AgentError, ToolExecution};
/// use messages::ToolCall;
///
/// /// Writes one line per call to `tracing`: an audit log.
/// struct Audit;
///
/// #[async_trait::async_trait]
/// impl ToolLayer for Audit {
///     async fn call(
///         &self,
///         call: ToolCall,
///         scope: &ToolScope<'_>,
///         next: NextTool<'_>,
///     ) -> Result<ToolExecution, AgentError> {
///         tracing::info!(tool = call.name(), effects = %scope.effects(call.name()), "tool call");
///         let execution = next.run(call, scope).await?;
///         tracing::info!(tool = execution.name(), failed = execution.has_error(), "tool call done");
///         Ok(execution)
///     }
/// }
/// # let _ = Audit;
/// ```
#[async_trait]
pub trait ToolLayer: Send + Sync {
    /// Handles `call`: passes it on with `next.run(call, scope)` and returns (or changes) the
    /// execution, or answers it without running it.
    ///
    /// # Errors
    /// Only for failures that must stop the step (a journal that cannot be written, a lease
    /// that was lost): a tool's own failure is a failed [`ToolExecution`], never an error.
    async fn call(
        &self,
        call: ToolCall,
        scope: &ToolScope<'_>,
        next: NextTool<'_>,
    ) -> Result<ToolExecution, AgentError>;

    /// Whether this layer would only pass `call` on and return the inner execution as it is
    /// (default: false, [`call`](Self::call) always runs). When true, the onion goes straight
    /// to the inner layers without making this layer's future, so a layer with nothing to do
    /// for a call costs a check instead of an allocation (about 650 instructions a layer on
    /// the overhead benchmark). Say true only when `call` would do exactly
    /// `next.run(call, scope).await` for this call.
    fn passes(&self, _call: &ToolCall, _scope: &ToolScope<'_>) -> bool {
        false
    }

    /// A short name for logs and `Debug` (default: the type name).
    fn name(&self) -> &str {
        std::any::type_name::<Self>()
    }
}

/// The rest of the onion below a layer: the inner layers, then the executor.
#[derive(Clone, Copy)]
pub struct NextTool<'a> {
    layers: &'a [Arc<dyn ToolLayer>],
    executor: &'a dyn ToolExecutor,
}

impl<'a> NextTool<'a> {
    /// `layers` around `executor`.
    pub fn new(layers: &'a [Arc<dyn ToolLayer>], executor: &'a dyn ToolExecutor) -> Self {
        Self { layers, executor }
    }

    /// Runs `call` through the inner layers and the executor.
    ///
    /// # Errors
    /// What an inner layer returns.
    pub async fn run(
        self,
        call: ToolCall,
        scope: &ToolScope<'_>,
    ) -> Result<ToolExecution, AgentError> {
        // The layers with nothing to do for this call are passed over (`ToolLayer::passes`).
        let mut layers = self.layers;
        while let Some((layer, rest)) = layers.split_first() {
            if !layer.passes(&call, scope) {
                break;
            }
            layers = rest;
        }
        match layers.split_first() {
            Some((layer, rest)) => {
                let next = NextTool {
                    layers: rest,
                    executor: self.executor,
                };
                layer.call(call, scope, next).await
            }
            None => {
                let executions = self
                    .executor
                    .execute(
                        std::slice::from_ref(&call),
                        scope.tools,
                        scope.context,
                        false,
                    )
                    .await;
                executions.into_iter().next().ok_or_else(|| {
                    AgentError::driver(format!(
                        "the tool executor returned no execution for call `{}`",
                        call.id()
                    ))
                })
            }
        }
    }
}

/// What a layer knows about the call it handles, besides the call: the step's tools, the
/// context the tool will get, the agent's limits and approval policy, and the step's
/// bookkeeping (the journal of an interrupted run, the calls made earlier).
pub struct ToolScope<'a> {
    pub(crate) tools: &'a Tools,
    pub(crate) context: &'a ToolContext,
    pub(crate) limits: ToolCallLimits,
    pub(crate) approval: &'a ApprovalPolicy,
    pub(crate) batch: &'a CallBatch,
    pub(crate) report: &'a (dyn Fn(ToolEvent) + Send + Sync),
    /// Whether anyone receives reported events (a listener, or a `tracing` subscriber for
    /// the agent's events): when not, [`ToolScope::report_with`] builds nothing.
    pub(crate) observed: bool,
    /// The call's position among the calls of its batch (journal entries are keyed by it).
    pub(crate) position: usize,
}

impl<'a> ToolScope<'a> {
    /// The tools of the step.
    pub fn tools(&self) -> &'a Tools {
        self.tools
    }

    /// The tool called `name`, if registered.
    pub fn tool(&self, name: &str) -> Option<&'a Arc<dyn Tool>> {
        self.tools.get(name)
    }

    /// The declared effects of the tool `name` (side-effecting when it is not registered).
    pub fn effects(&self, name: &str) -> ToolEffects {
        self.tools.effects(name)
    }

    /// The context the tool receives (agent, step, clock, cancellation).
    pub fn context(&self) -> &'a ToolContext {
        self.context
    }

    /// The agent's limits on tool calls.
    pub fn limits(&self) -> ToolCallLimits {
        self.limits
    }

    /// Which calls wait for a person's approval.
    pub fn approval(&self) -> &'a ApprovalPolicy {
        self.approval
    }

    /// The journal of an interrupted run of this step, when a durable store gave one.
    pub fn journal(&self) -> Option<&'a dyn StepJournal> {
        self.batch.journal.as_deref()
    }

    /// Whether the calls of this batch were decided by a person (a suspended run resuming):
    /// they run even though the approval policy holds them.
    pub fn is_decided(&self) -> bool {
        self.batch.decided
    }

    /// The call's position among the calls of its batch (the step's calls, in the order the
    /// model made them).
    pub fn position(&self) -> usize {
        self.position
    }

    /// Reports a tool event to the agent's listeners.
    pub fn report(&self, event: ToolEvent) {
        (self.report)(event);
    }

    /// Builds a tool event with `make` and reports it, only when someone receives the agent's
    /// events: an unobserved run does not pay for copying calls and results into events.
    pub fn report_with(&self, make: impl FnOnce() -> ToolEvent) {
        if self.observed {
            (self.report)(make());
        }
    }

    /// True for the only call of its batch in an execution that made no call before it:
    /// nothing to repeat.
    pub(crate) fn is_first_call(&self) -> bool {
        self.batch.calls == 1 && self.batch.previous.is_empty()
    }

    /// Whether anyone receives reported events ([`report_with`](Self::report_with) builds
    /// nothing when not).
    pub(crate) fn is_observed(&self) -> bool {
        self.observed
    }

    /// How often the same call (tool and canonical arguments) was made before this one in
    /// the execution, counting calls earlier in the same batch; counts this call.
    pub(crate) fn count_repeat(&self, call: &ToolCall) -> (u32, Option<&'a str>) {
        if self.is_first_call() {
            // The only call of the execution so far: nothing to count it against.
            return (0, None);
        }
        let key = signature(call);
        let before = self.batch.previous.count_key(&key);
        let earlier = self.batch.previous.last_result_key(&key);
        let mut in_batch = self
            .batch
            .in_batch
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let seen = in_batch.entry(key).or_insert(0);
        let count = before + *seen;
        *seen += 1;
        (count, earlier)
    }

    /// The result of the execution's last call when `call` is that same call with nothing
    /// called since (see [`AnswerRepeats`](crate::tools::layers::answer_repeats::AnswerRepeats)).
    pub(crate) fn just_answered(&self, call: &ToolCall) -> Option<String> {
        self.batch.previous.just_answered(call).map(str::to_owned)
    }

    /// A failed execution of `call` that did not run, stamped now.
    pub fn refusal(
        &self,
        call: ToolCall,
        kind: ToolFailureKind,
        message: impl Into<String>,
    ) -> ToolExecution {
        let now = self.context.clock.now();
        ToolExecution::failure(call, kind, message, now, now)
    }
}

/// The bookkeeping of one batch of calls (the calls of a step, or the decided calls of a
/// suspended step).
#[derive(Default)]
pub(crate) struct CallBatch {
    pub(crate) journal: Option<Arc<dyn StepJournal>>,
    pub(crate) previous: Arc<PreviousCalls>,
    pub(crate) decided: bool,
    /// How many calls the batch holds.
    calls: usize,
    in_batch: Mutex<HashMap<String, u32>>,
}

impl CallBatch {
    pub(crate) fn new(
        journal: Option<Arc<dyn StepJournal>>,
        previous: Arc<PreviousCalls>,
        decided: bool,
        calls: usize,
    ) -> Self {
        Self {
            journal,
            previous,
            decided,
            calls,
            in_batch: Mutex::default(),
        }
    }
}

/// A list of tool layers, the first outermost. Cheap to clone.
#[derive(Clone, Default)]
pub struct ToolLayers {
    layers: SharedSlice<Arc<dyn ToolLayer>>,
}

impl ToolLayers {
    /// These layers, the first outermost.
    pub fn new(layers: impl IntoIterator<Item = Arc<dyn ToolLayer>>) -> Self {
        Self {
            layers: layers.into_iter().collect(),
        }
    }

    /// These layers with `inner` added inside them (after the last).
    pub fn with_inner(&self, inner: impl IntoIterator<Item = Arc<dyn ToolLayer>>) -> Self {
        Self::new(self.layers.iter().cloned().chain(inner))
    }

    /// The layers, outermost first.
    pub fn layers(&self) -> &[Arc<dyn ToolLayer>] {
        &self.layers
    }

    /// The number of layers.
    pub fn len(&self) -> usize {
        self.layers.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }

    /// Runs `call` through the layers and then `executor`.
    ///
    /// # Errors
    /// What a layer returns (see [`ToolLayer::call`]).
    pub async fn run(
        &self,
        call: ToolCall,
        scope: &ToolScope<'_>,
        executor: &dyn ToolExecutor,
    ) -> Result<ToolExecution, AgentError> {
        NextTool::new(&self.layers, executor).run(call, scope).await
    }
}

impl std::fmt::Debug for ToolLayers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.layers.iter().map(|layer| layer.name()))
            .finish()
    }
}
