//! `Agent`: a driver, tools, criteria, policy, processors and hooks, run as a loop.

use std::sync::Arc;

use futures::Stream;
use tokio_util::sync::CancellationToken;

use super::hooks::{Hooks, StateHook, StopDecision, StopHook};
use super::run::Run;
use crate::{
    AgentDriver, AgentError, AgentEvent, AgentEvents, AgentState, ContinuationCriteria,
    ContinuationCriterion, DefaultToolExecutor, ErrorPolicy, PassThrough, StepProcessing, Tool,
    ToolExecutor, Tools,
};

/// The default bound on stop-hook vetoes per execution.
pub const DEFAULT_MAX_STOP_VETOES: usize = 3;

/// An agent: runs steps with its driver until its continuation criteria say stop.
///
/// [`Agent::iterate`] yields the state after every step and then the final state (status set);
/// [`Agent::execute`] returns that final state. Driver errors never escape as panics: they are
/// recorded as failure steps and the [`ErrorPolicy`] decides whether to go on.
///
/// `Agent::new` starts with no tools, the [`DefaultToolExecutor`], no criteria (one step), the
/// `stop_on_any_error` policy and no processors ([`PassThrough`]): which messages persist is
/// the processors' job, so wire them (the facade's `AgentBuilder` does). Cheap to clone.
#[derive(Clone)]
pub struct Agent {
    pub(crate) driver: Arc<dyn AgentDriver>,
    pub(crate) tools: Tools,
    pub(crate) executor: Arc<dyn ToolExecutor>,
    pub(crate) criteria: ContinuationCriteria,
    pub(crate) error_policy: ErrorPolicy,
    pub(crate) processors: Arc<dyn StepProcessing>,
    pub(crate) events: AgentEvents,
    pub(crate) hooks: Hooks,
    pub(crate) max_stop_vetoes: usize,
    pub(crate) cancellation: Option<CancellationToken>,
}

impl Agent {
    /// An agent running `driver`.
    pub fn new(driver: impl AgentDriver + 'static) -> Self {
        Self::from_shared_driver(Arc::new(driver))
    }

    /// An agent running a shared driver.
    pub fn from_shared_driver(driver: Arc<dyn AgentDriver>) -> Self {
        Self {
            driver,
            tools: Tools::new(),
            executor: Arc::new(DefaultToolExecutor::new()),
            criteria: ContinuationCriteria::new(),
            error_policy: ErrorPolicy::default(),
            processors: Arc::new(PassThrough),
            events: AgentEvents::new(),
            hooks: Hooks::default(),
            max_stop_vetoes: DEFAULT_MAX_STOP_VETOES,
            cancellation: None,
        }
    }

    /// A copy with these tools.
    pub fn with_tools(mut self, tools: Tools) -> Self {
        self.tools = tools;
        self
    }

    /// A copy with one more tool (a tool of the same name is replaced).
    pub fn with_tool(mut self, tool: impl Tool + 'static) -> Self {
        self.tools = self.tools.with(tool);
        self
    }

    /// A copy with another tool executor.
    pub fn with_executor(mut self, executor: impl ToolExecutor + 'static) -> Self {
        self.executor = Arc::new(executor);
        self
    }

    /// A copy with a shared tool executor.
    pub fn with_shared_executor(mut self, executor: Arc<dyn ToolExecutor>) -> Self {
        self.executor = executor;
        self
    }

    /// A copy with these continuation criteria.
    pub fn with_criteria(mut self, criteria: ContinuationCriteria) -> Self {
        self.criteria = criteria;
        self
    }

    /// A copy with one more continuation criterion.
    pub fn with_criterion(mut self, criterion: impl ContinuationCriterion + 'static) -> Self {
        self.criteria = self.criteria.with(criterion);
        self
    }

    /// A copy with another error policy (judges driver errors and failed steps).
    pub fn with_error_policy(mut self, policy: ErrorPolicy) -> Self {
        self.error_policy = policy;
        self
    }

    /// A copy with step processing (e.g. `agents-processing`'s `StateProcessors`).
    pub fn with_processors(mut self, processors: impl StepProcessing + 'static) -> Self {
        self.processors = Arc::new(processors);
        self
    }

    /// A copy with shared step processing.
    pub fn with_shared_processors(mut self, processors: Arc<dyn StepProcessing>) -> Self {
        self.processors = processors;
        self
    }

    /// A copy with another event handle (its listeners replace the current ones).
    pub fn with_events(mut self, events: AgentEvents) -> Self {
        self.events = events;
        self
    }

    /// A copy with one more event listener.
    pub fn on_event(mut self, listener: impl Fn(&AgentEvent) + Send + Sync + 'static) -> Self {
        self.events = self.events.with_listener(listener);
        self
    }

    /// A copy with a hook run when an execution starts.
    pub fn before_execution(
        mut self,
        hook: impl Fn(AgentState) -> AgentState + Send + Sync + 'static,
    ) -> Self {
        self.hooks
            .before_execution
            .push(Arc::new(hook) as StateHook);
        self
    }

    /// A copy with a hook run on the final state (its changes are kept in what `execute` returns).
    pub fn after_execution(
        mut self,
        hook: impl Fn(AgentState) -> AgentState + Send + Sync + 'static,
    ) -> Self {
        self.hooks.after_execution.push(Arc::new(hook) as StateHook);
        self
    }

    /// A copy with a hook run before each step (after the step started).
    pub fn before_step(
        mut self,
        hook: impl Fn(AgentState) -> AgentState + Send + Sync + 'static,
    ) -> Self {
        self.hooks.before_step.push(Arc::new(hook) as StateHook);
        self
    }

    /// A copy with a hook run after each recorded step.
    pub fn after_step(
        mut self,
        hook: impl Fn(AgentState) -> AgentState + Send + Sync + 'static,
    ) -> Self {
        self.hooks.after_step.push(Arc::new(hook) as StateHook);
        self
    }

    /// A copy with a stop hook: asked whenever the agent is about to stop (not after a
    /// failure); [`StopDecision::Prevent`] runs another step, at most `max_stop_vetoes` times
    /// per execution.
    pub fn with_stop_hook(
        mut self,
        hook: impl Fn(&AgentState) -> StopDecision + Send + Sync + 'static,
    ) -> Self {
        self.hooks.stop.push(Arc::new(hook) as StopHook);
        self
    }

    /// A copy with another bound on stop-hook vetoes per execution (default 3).
    pub fn with_max_stop_vetoes(mut self, max: usize) -> Self {
        self.max_stop_vetoes = max;
        self
    }

    /// A copy whose executions stop at the next step boundary once `token` is cancelled
    /// (stop reason `user_requested`); the token also reaches tools.
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = Some(token);
        self
    }

    /// The tools.
    pub fn tools(&self) -> &Tools {
        &self.tools
    }

    /// The continuation criteria.
    pub fn criteria(&self) -> &ContinuationCriteria {
        &self.criteria
    }

    /// The error policy.
    pub fn error_policy(&self) -> &ErrorPolicy {
        &self.error_policy
    }

    /// The event handle.
    pub fn events(&self) -> &AgentEvents {
        &self.events
    }

    /// Runs the agent on `state` until it stops and returns the final state (status set).
    ///
    /// This is exactly the last item of [`Agent::iterate`].
    ///
    /// # Errors
    /// Only for states the loop cannot run at all; step failures are recorded in the state
    /// (status `Failed`, stop reason `error`) rather than returned.
    pub async fn execute(&self, state: AgentState) -> Result<AgentState, AgentError> {
        let token = self.cancellation.clone().unwrap_or_default();
        self.execute_with_cancellation(state, token).await
    }

    /// [`Agent::execute`] that stops at the next step boundary once `token` is cancelled.
    ///
    /// # Errors
    /// As [`Agent::execute`].
    pub async fn execute_with_cancellation(
        &self,
        state: AgentState,
        token: CancellationToken,
    ) -> Result<AgentState, AgentError> {
        // The last item of `iterate`, without a stream and without the intermediate states.
        Run::new(self, state, token).run_to_end().await
    }

    /// Runs the agent step by step: one item per step, then a last item with the final status.
    ///
    /// Dropping the stream stops the execution; no task keeps running.
    pub fn iterate(
        &self,
        state: AgentState,
    ) -> impl Stream<Item = Result<AgentState, AgentError>> + Send + 'static {
        let token = self.cancellation.clone().unwrap_or_default();
        self.iterate_with_cancellation(state, token)
    }

    /// [`Agent::iterate`] that stops at the next step boundary once `token` is cancelled.
    pub fn iterate_with_cancellation(
        &self,
        state: AgentState,
        token: CancellationToken,
    ) -> impl Stream<Item = Result<AgentState, AgentError>> + Send + 'static {
        let run = Run::new(self.clone(), state, token);
        futures::stream::unfold(run, |mut run| async move {
            run.next_item().await.map(|item| (item, run))
        })
    }
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("tools", &self.tools)
            .field("criteria", &self.criteria)
            .field("error_policy", &self.error_policy)
            .field("events", &self.events)
            .field("max_stop_vetoes", &self.max_stop_vetoes)
            .finish_non_exhaustive()
    }
}
