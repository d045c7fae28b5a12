//! `Agent`: what an agent is (driver, tools, criteria, policy, processors, hooks, request
//! prefix, clock). How it runs is in `step.rs`.

use std::sync::Arc;

use super::hooks::{Hooks, StateHook, StopDecision, StopHook};
use super::{AnswerOnStop, ApprovalPolicy};
use crate::{
    AgentDriver, AgentEvent, AgentEvents, AgentState, CachedContext, Clock, ContinuationCriteria,
    ContinuationCriterion, DefaultToolExecutor, ErrorPolicy, StateProcessor, StateProcessors,
    SystemClock, Tool, ToolCallLimits, ToolExecutor, Tools,
};

/// The default bound on stop-hook vetoes per execution.
pub const DEFAULT_MAX_STOP_VETOES: u32 = 3;

/// An agent: runs steps with its driver until its continuation criteria say stop.
///
/// Everything an agent does goes through [`Agent::step`], which advances a state by exactly
/// one step; [`Agent::iterate`] repeats it while the status is `InProgress` and
/// [`Agent::execute`] returns the last state. Driver errors never escape as panics: they are
/// recorded as failure steps and the [`ErrorPolicy`] decides whether to go on.
///
/// An agent is configuration; a state is what happened. `Agent::new` starts with no tools, the
/// [`DefaultToolExecutor`], no criteria (one step), the `stop_on_any_error` policy, no
/// processors (which messages persist is the processors' job, so wire them: the facade's
/// `AgentBuilder` does), an empty request prefix and the system clock. Cheap to clone.
#[derive(Clone)]
pub struct Agent {
    pub(crate) driver: Arc<dyn AgentDriver>,
    pub(crate) tools: Tools,
    pub(crate) executor: Arc<dyn ToolExecutor>,
    pub(crate) criteria: ContinuationCriteria,
    pub(crate) error_policy: ErrorPolicy,
    pub(crate) processors: StateProcessors,
    pub(crate) cached_context: Arc<CachedContext>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) events: AgentEvents,
    pub(crate) hooks: Hooks,
    pub(crate) max_stop_vetoes: u32,
    pub(crate) answer_on_stop: AnswerOnStop,
    pub(crate) tool_limits: ToolCallLimits,
    pub(crate) approval: ApprovalPolicy,
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
            processors: StateProcessors::default(),
            cached_context: Arc::default(),
            clock: Arc::new(SystemClock),
            events: AgentEvents::new(),
            hooks: Hooks::default(),
            max_stop_vetoes: DEFAULT_MAX_STOP_VETOES,
            answer_on_stop: AnswerOnStop::Nothing,
            tool_limits: ToolCallLimits::default(),
            approval: ApprovalPolicy::default(),
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

    /// A copy with these processors around every step (replacing any it had).
    pub fn with_processors(mut self, processors: StateProcessors) -> Self {
        self.processors = processors;
        self
    }

    /// A copy with one more processor, as the innermost layer.
    pub fn with_processor(mut self, processor: impl StateProcessor + 'static) -> Self {
        self.processors = self.processors.with(processor);
        self
    }

    /// A copy with this request prefix (system prompt, tool choice, response format), sent
    /// with every step.
    pub fn with_cached_context(mut self, context: CachedContext) -> Self {
        self.cached_context = Arc::new(context);
        self
    }

    /// A copy reading the time from `clock` (tests and replays give a
    /// [`ManualClock`](crate::ManualClock)).
    pub fn with_clock(mut self, clock: impl Clock + 'static) -> Self {
        self.clock = Arc::new(clock);
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

    /// A copy answering this way when an execution stops without a final answer (default
    /// [`AnswerOnStop::Nothing`]; the facade's builder defaults to `Synthesize` in separated
    /// and digest modes). A cancelled execution always gets a `Notice`.
    pub fn with_answer_on_stop(mut self, answer: AnswerOnStop) -> Self {
        self.answer_on_stop = answer;
        self
    }

    /// A copy with these limits on every tool call (default: none).
    pub fn with_tool_limits(mut self, limits: ToolCallLimits) -> Self {
        self.tool_limits = limits;
        self
    }

    /// A copy that refuses the `limit`-th identical call (same tool, same arguments) in one
    /// execution, with a tool error quoting the earlier result; a model that keeps repeating
    /// is stopped with [`StopReason::RepeatedToolCalls`](crate::StopReason::RepeatedToolCalls).
    pub fn with_repeated_call_limit(mut self, limit: u32) -> Self {
        self.tool_limits.repeated_call_limit = Some(limit.max(1));
        self
    }

    /// A copy cutting every tool result the model sees to `chars` characters, with a note
    /// saying how much was left out (events and hooks still see the whole output).
    pub fn with_tool_output_limit(mut self, chars: usize) -> Self {
        self.tool_limits.output_limit = Some(chars);
        self
    }

    /// A copy in which every call of these tools waits for a person's approval: the step
    /// runs the other calls, then the run suspends
    /// ([`AgentStatus::Suspended`](crate::AgentStatus::Suspended)) until each waiting call is
    /// decided ([`AgentState::approve`], `approve_with`, `reject`).
    pub fn with_approval_required<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.approval = self.approval.with_tools(names);
        self
    }

    /// A copy in which every call `policy` accepts waits for a person's approval (see
    /// [`with_approval_required`](Self::with_approval_required)).
    pub fn with_approval_policy(
        mut self,
        policy: impl Fn(&messages::ToolCall) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.approval = self.approval.with_predicate(policy);
        self
    }

    /// A copy with this whole approval policy (replacing the one it had).
    pub fn with_approvals(mut self, policy: ApprovalPolicy) -> Self {
        self.approval = policy;
        self
    }

    /// Which calls wait for a person's approval.
    pub fn approval_policy(&self) -> &ApprovalPolicy {
        &self.approval
    }

    /// A copy with another bound on stop-hook vetoes per execution (default 3).
    pub fn with_max_stop_vetoes(mut self, max: u32) -> Self {
        self.max_stop_vetoes = max;
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

    /// The request prefix sent with every step.
    pub fn cached_context(&self) -> &CachedContext {
        &self.cached_context
    }

    /// The processors around every step.
    pub fn processors(&self) -> &StateProcessors {
        &self.processors
    }

    /// The clock.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("tools", &self.tools)
            .field("criteria", &self.criteria)
            .field("error_policy", &self.error_policy)
            .field("processors", &self.processors)
            .field("cached_context", &self.cached_context)
            .field("clock", &self.clock)
            .field("events", &self.events)
            .field("max_stop_vetoes", &self.max_stop_vetoes)
            .field("answer_on_stop", &self.answer_on_stop)
            .field("tool_limits", &self.tool_limits)
            .field("approval", &self.approval)
            .finish_non_exhaustive()
    }
}
