//! `DefaultToolExecutor`: runs a step's tool calls with hooks, validation, timeouts and events.

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use messages::ToolCall;
use tracing::Instrument;

use crate::records::tool_execution::{ToolExecution, ToolExecutions, ToolFailureKind, ToolOutcome};
use crate::schema::validate_arguments;
use crate::tools::approval_policy::ApprovalPolicy;
use crate::tools::executor::{ToolEvent, ToolExecutor};
use crate::tools::hook::ToolHook;
use crate::tools::layer::{CallBatch, ToolLayer, ToolLayers, ToolScope};
use crate::tools::layers::tool_hooks::HookLayer;
use crate::tools::limits::ToolCallLimits;
use crate::tools::registry::{doing_the_job_clause, Tools};
use crate::tools::tool::{ToolContext, ToolError};

/// Receives the [`ToolEvent`]s of an executor as they happen.
pub type ToolEventListener = Arc<dyn Fn(&ToolEvent) + Send + Sync>;

/// The timeout of a tool call unless configured otherwise.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(120);

/// The standard [`ToolExecutor`].
///
/// The innermost ring of the tool-call onion (see [`ToolLayer`]); the agent's tool hooks run
/// as a [`HookLayer`] outside it. For each call, in this order: the hooks given with the
/// deprecated `with_hook` (which may rewrite or block it), a [`ToolEvent::Started`] event,
/// the tool lookup (an unknown name fails with the list of
/// available tools), the check of the arguments against the tool's schema, the tool itself
/// (under a timeout, with panics caught and the run's cancellation token watched), the
/// after-hooks, and a [`ToolEvent::Completed`] event. A blocked call emits only
/// [`ToolEvent::Blocked`] and skips the after-hooks. Nothing here fails the step: every problem
/// becomes a failed [`ToolExecution`] whose message the model reads.
///
/// Cloning is cheap and clones share hooks and listeners, so sub-agents can inherit them.
///
/// ```
/// use std::time::Duration;
/// use agents_core::tools::DefaultToolExecutor;
///
/// let executor = DefaultToolExecutor::new()
///     .with_timeout(Duration::from_secs(30))
///     .on_event(|event| tracing::debug!(?event, "tool event"));
/// assert_eq!(executor.timeout(), Some(Duration::from_secs(30)));
/// ```
#[derive(Clone, Default)]
pub struct DefaultToolExecutor {
    settings: Arc<Settings>,
}

#[derive(Clone)]
struct Settings {
    timeout: Option<Duration>,
    tool_timeouts: BTreeMap<String, Duration>,
    max_concurrency: Option<usize>,
    validate_arguments: bool,
    hooks: Vec<Arc<dyn ToolHook>>,
    listeners: Vec<ToolEventListener>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            timeout: Some(DEFAULT_TOOL_TIMEOUT),
            tool_timeouts: BTreeMap::new(),
            max_concurrency: None,
            validate_arguments: true,
            hooks: Vec::new(),
            listeners: Vec::new(),
        }
    }
}

impl DefaultToolExecutor {
    /// An executor with a 120 s timeout per call, argument validation on, no hooks.
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy whose calls time out after `timeout`.
    pub fn with_timeout(self, timeout: Duration) -> Self {
        self.configure(|s| s.timeout = Some(timeout))
    }

    /// A copy whose calls never time out (unless a per-tool timeout says otherwise).
    pub fn without_timeout(self) -> Self {
        self.configure(|s| s.timeout = None)
    }

    /// A copy where calls of the tool `name` time out after `timeout` (overrides the default).
    pub fn with_tool_timeout(self, name: impl Into<String>, timeout: Duration) -> Self {
        let name = name.into();
        self.configure(|s| {
            s.tool_timeouts.insert(name, timeout);
        })
    }

    /// A copy running at most `limit` calls at once in parallel mode (at least one).
    pub fn with_max_concurrency(self, limit: usize) -> Self {
        self.configure(|s| s.max_concurrency = Some(limit.max(1)))
    }

    /// A copy that does (or, with `false`, does not) check arguments against the tool's schema
    /// before calling it.
    pub fn with_argument_validation(self, enabled: bool) -> Self {
        self.configure(|s| s.validate_arguments = enabled)
    }

    /// A copy with `hook` added at the end of the hook chain.
    #[deprecated(
        since = "0.2.0",
        note = "tool hooks are layers of the tool-call onion now: use `Agent::with_tool_hook` \
                (or `AgentBuilder::with_tool_hook`), or `Agent::with_tool_layer(HookLayer::chain(..))`"
    )]
    pub fn with_hook(self, hook: impl ToolHook + 'static) -> Self {
        self.configure(|s| s.hooks.push(Arc::new(hook)))
    }

    /// A copy with a shared `hook` added at the end of the hook chain.
    #[deprecated(
        since = "0.2.0",
        note = "tool hooks are layers of the tool-call onion now: use `Agent::with_tool_hook` \
                (or `AgentBuilder::with_tool_hook`), or `Agent::with_tool_layer(HookLayer::chain(..))`"
    )]
    pub fn with_shared_hook(self, hook: Arc<dyn ToolHook>) -> Self {
        self.configure(|s| s.hooks.push(hook))
    }

    /// A copy that also reports its events to `listener`.
    pub fn with_event_listener(self, listener: ToolEventListener) -> Self {
        self.configure(|s| s.listeners.push(listener))
    }

    /// A copy that also reports its events to the closure `listener`.
    pub fn on_event(self, listener: impl Fn(&ToolEvent) + Send + Sync + 'static) -> Self {
        self.with_event_listener(Arc::new(listener))
    }

    /// The default timeout of a call.
    pub fn timeout(&self) -> Option<Duration> {
        self.settings.timeout
    }

    /// The timeout that applies to the tool `name`.
    pub fn timeout_for(&self, name: &str) -> Option<Duration> {
        self.settings
            .tool_timeouts
            .get(name)
            .copied()
            .or(self.settings.timeout)
    }

    /// The hooks, in chain order.
    pub fn hooks(&self) -> &[Arc<dyn ToolHook>] {
        &self.settings.hooks
    }

    /// Runs one call: the tool looked up, its arguments checked, the tool itself under its
    /// timeout (panics caught, the run's cancellation watched), inside an `execute_tool {tool}`
    /// span (`gen_ai.tool.name`, `gen_ai.tool.call.id`, `error.type` on failure; arguments and
    /// result only when `context.capture_content`). The tool runs inside the span, so a
    /// subagent it starts nests under it. Hooks added with the deprecated
    /// [`with_hook`](Self::with_hook) run around it, as a [`HookLayer`].
    pub async fn execute_call(
        &self,
        call: &ToolCall,
        tools: &Tools,
        context: &ToolContext,
    ) -> ToolExecution {
        if self.settings.hooks.is_empty() {
            return self.execute_unhooked(call, tools, context).await;
        }
        Box::pin(self.execute_hooked(call, tools, context)).await
    }

    /// The deprecated hook chain: the hooks as layers around this executor without them.
    async fn execute_hooked(
        &self,
        call: &ToolCall,
        tools: &Tools,
        context: &ToolContext,
    ) -> ToolExecution {
        let hooks: Arc<dyn ToolLayer> =
            Arc::new(HookLayer::chain(self.settings.hooks.iter().cloned()));
        let layers = ToolLayers::new([hooks]);
        let unhooked = Self {
            settings: Arc::new(Settings {
                hooks: Vec::new(),
                ..(*self.settings).clone()
            }),
        };
        let batch = CallBatch::default();
        let approval = ApprovalPolicy::default();
        let report = |_: ToolEvent| {};
        let scope = ToolScope {
            tools,
            context,
            limits: ToolCallLimits::default(),
            approval: &approval,
            batch: &batch,
            report: &report,
            observed: false,
            position: 0,
        };
        let execution = match layers.run(call.clone(), &scope, &unhooked).await {
            Ok(execution) => execution,
            // Hook layers never fail; an executor does not lose a call.
            Err(error) => scope.refusal(call.clone(), ToolFailureKind::Failed, error.to_string()),
        };
        if let (Some(ToolFailureKind::Blocked), Some(message)) =
            (execution.failure_kind(), execution.error_message())
        {
            // This executor's listeners hear the hook's own reason, as they always did.
            let prefix = format!("the call to `{}` was blocked: ", call.name());
            let reason = message.strip_prefix(&prefix).unwrap_or(message);
            self.emit_with(|| ToolEvent::Blocked {
                call: call.clone(),
                reason: reason.to_owned(),
            });
        }
        execution
    }

    async fn execute_unhooked(
        &self,
        call: &ToolCall,
        tools: &Tools,
        context: &ToolContext,
    ) -> ToolExecution {
        let span = crate::telemetry::execute_tool_span(call.name(), call.id());
        let execution = self
            .execute_call_in_span(call, tools, context)
            .instrument(span.clone())
            .await;
        crate::telemetry::record_tool(&span, &execution, context.capture_content);
        execution
    }

    async fn execute_call_in_span(
        &self,
        call: &ToolCall,
        tools: &Tools,
        context: &ToolContext,
    ) -> ToolExecution {
        let started_at = context.clock.now();
        let call = call.clone();
        self.emit_with(|| ToolEvent::Started { call: call.clone() });
        tracing::debug!(tool = call.name(), id = call.id(), "tool call started");
        let outcome = self.invoke(&call, tools, context).await;
        let execution = ToolExecution::new(call, outcome, started_at, context.clock.now());
        tracing::debug!(
            tool = execution.name(),
            id = execution.id(),
            failed = execution.has_error(),
            "tool call completed"
        );
        self.emit_with(|| ToolEvent::Completed {
            execution: execution.clone(),
        });
        execution
    }

    fn configure(mut self, change: impl FnOnce(&mut Settings)) -> Self {
        change(Arc::make_mut(&mut self.settings));
        self
    }

    fn emit_with(&self, make: impl FnOnce() -> ToolEvent) {
        if self.settings.listeners.is_empty() {
            return;
        }
        let event = make();
        for listener in &self.settings.listeners {
            listener(&event);
        }
    }

    async fn invoke(&self, call: &ToolCall, tools: &Tools, context: &ToolContext) -> ToolOutcome {
        let name = call.name();
        let Some(tool) = tools.get(name) else {
            return failure(
                ToolFailureKind::UnknownTool,
                unknown_tool_message(name, tools),
            );
        };
        if context.cancellation.is_cancelled() {
            return failure(
                ToolFailureKind::Cancelled,
                format!("cancelled: `{name}` was not run because the agent run was cancelled"),
            );
        }
        if self.settings.validate_arguments {
            let parameters = match tools.schema(name) {
                Some(schema) => std::borrow::Cow::Borrowed(&schema.parameters),
                None => std::borrow::Cow::Owned(tool.parameters()),
            };
            if let Err(problem) = validate_arguments(&parameters, call.arguments()) {
                return failure(
                    ToolFailureKind::InvalidArguments,
                    invalid_arguments_message(name, &problem),
                );
            }
        }

        let context = &context.for_call_id(Arc::clone(call.shared_id()));
        let mut run = AssertUnwindSafe(tool.call(call.arguments().clone(), context)).catch_unwind();
        // The tool first, polled once here: a call that finishes at once needs no timer and
        // never registers with the cancellation token (the token was checked just above), and
        // the waiting machinery below is built (boxed, so it does not grow every executor
        // future) only for a tool that really waits.
        let result = match futures::poll!(&mut run) {
            std::task::Poll::Ready(result) => Ok(result),
            std::task::Poll::Pending => {
                let waited = Box::pin(wait_for_tool(
                    run,
                    self.timeout_for(name),
                    &context.cancellation,
                ))
                .await;
                match waited {
                    Some(result) => result,
                    None => {
                        return failure(
                            ToolFailureKind::Cancelled,
                            format!(
                                "cancelled: `{name}` was stopped because the agent run was \
                                 cancelled"
                            ),
                        )
                    }
                }
            }
        };
        match result {
            Err(limit) => {
                tracing::warn!(tool = name, ?limit, "tool call timed out");
                failure(
                    ToolFailureKind::TimedOut,
                    format!("`{name}` did not finish within {limit:?} and was stopped"),
                )
            }
            Ok(Err(panic)) => {
                let message = crate::tools::panics::panic_message(panic.as_ref());
                tracing::error!(tool = name, %message, "tool panicked");
                failure(
                    ToolFailureKind::Panicked,
                    format!("`{name}` crashed (panic: {message})"),
                )
            }
            Ok(Ok(Err(ToolError::InvalidArguments(problem)))) => failure(
                ToolFailureKind::InvalidArguments,
                invalid_arguments_message(name, &problem),
            ),
            Ok(Ok(Err(ToolError::Failed(message)))) => failure(ToolFailureKind::Failed, message),
            Ok(Ok(Err(ToolError::AwaitingApproval(run)))) => {
                // The subagent's state goes to the loop, which keeps it in the approvals.
                context.hold(call.id(), *run);
                failure(
                    ToolFailureKind::AwaitingApproval,
                    crate::state::pending_approval::AWAITING_APPROVAL_MESSAGE.to_owned(),
                )
            }
            Ok(Ok(Ok(output))) => {
                let (content, value, parts) = output.into_all();
                let (content, parts) = crate::tools::limits::bounded_parts(content, parts);
                ToolOutcome::Success {
                    content,
                    value,
                    parts,
                }
            }
        }
    }
}

#[async_trait]
impl ToolExecutor for DefaultToolExecutor {
    fn max_concurrency(&self) -> Option<usize> {
        self.settings.max_concurrency
    }

    async fn execute(
        &self,
        calls: &[ToolCall],
        tools: &Tools,
        context: &ToolContext,
        parallel: bool,
    ) -> ToolExecutions {
        if !parallel || calls.len() < 2 {
            let mut executions = Vec::with_capacity(calls.len());
            for call in calls {
                executions.push(self.execute_call(call, tools, context).await);
            }
            return ToolExecutions::from(executions);
        }
        // Boxed so the future of `execute` stays `Send` (the compiler cannot prove it through
        // the borrowing closure otherwise).
        let runs: Vec<BoxFuture<'_, ToolExecution>> = calls
            .iter()
            .map(|call| self.execute_call(call, tools, context).boxed())
            .collect();
        let executions: Vec<ToolExecution> = match self.settings.max_concurrency {
            Some(limit) => futures::stream::iter(runs).buffered(limit).collect().await,
            None => futures::future::join_all(runs).await,
        };
        ToolExecutions::from(executions)
    }
}

impl std::fmt::Debug for DefaultToolExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let settings = &self.settings;
        f.debug_struct("DefaultToolExecutor")
            .field("timeout", &settings.timeout)
            .field("tool_timeouts", &settings.tool_timeouts)
            .field("max_concurrency", &settings.max_concurrency)
            .field("validate_arguments", &settings.validate_arguments)
            .field("hooks", &settings.hooks.len())
            .field("listeners", &settings.listeners.len())
            .finish()
    }
}

/// Waits for a tool that did not finish when first polled: its result, `Err(limit)` when it
/// ran past `limit`, `None` when the run was cancelled first.
async fn wait_for_tool<F>(
    run: F,
    limit: Option<Duration>,
    cancellation: &tokio_util::sync::CancellationToken,
) -> Option<Result<F::Output, Duration>>
where
    F: std::future::Future,
{
    let guarded = async move {
        match limit {
            Some(limit) => tokio::time::timeout(limit, run).await.map_err(|_| limit),
            None => Ok(run.await),
        }
    };
    tokio::select! {
        biased;
        result = guarded => Some(result),
        () = cancellation.cancelled() => None,
    }
}

fn failure(kind: ToolFailureKind, message: String) -> ToolOutcome {
    ToolOutcome::Failure { kind, message }
}

fn unknown_tool_message(name: &str, tools: &Tools) -> String {
    if tools.is_empty() {
        return format!("unknown tool `{name}`: no tools are available");
    }
    let available: Vec<String> = tools.names().iter().map(|n| format!("`{n}`")).collect();
    let pointer = doing_the_job_clause(name, &tools.known_as(name));
    format!(
        "unknown tool `{name}`{pointer}; available tools: {}",
        available.join(", ")
    )
}

fn invalid_arguments_message(name: &str, problem: &str) -> String {
    format!("invalid arguments for `{name}`: {problem}")
}
