//! [`AgentBuilder`]: the one place an agent's defaults live, and the validation of what is
//! given. [`Agent::new`] is this builder with nothing changed; the facade's builder wraps it and
//! adds only the model (which driver, with which settings) and capabilities.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use inference::ModelCatalog;

use crate::agent::agent::{Agent, Telemetry, DEFAULT_AGENT_NAME, DEFAULT_MAX_STOP_VETOES};
use crate::agent::build_error::BuildError;
use crate::agent::hooks::{Hooks, StateHook, StopDecision, StopHook};
use crate::cached_context::CachedContext;
use crate::clock::{Clock, SystemClock};
use crate::continuation::criteria::empty_response_check::EmptyResponseCheck;
use crate::continuation::criteria::execution_time_limit::ExecutionTimeLimit;
use crate::continuation::criteria::guards::standard_guards;
use crate::continuation::criteria::steps_limit::StepsLimit;
use crate::continuation::criteria::token_usage_limit::TokenUsageLimit;
use crate::continuation::criteria::tool_call_presence_check::ToolCallPresenceCheck;
use crate::continuation::criterion::{ContinuationCriteria, ContinuationCriterion};
use crate::driver::AgentDriver;
use crate::errors::error_policy::ErrorPolicy;
use crate::events::agent_event::AgentEvent;
use crate::events::agent_events::AgentEvents;
use crate::ids::{IdSource, UuidV7Ids};
use crate::processing::{StateProcessor, StateProcessors};
use crate::processors::default_processors;
use crate::records::answer_on_stop::AnswerOnStop;
use crate::state::agent_state::AgentState;
use crate::tools::approval_policy::ApprovalPolicy;
use crate::tools::default_executor::DefaultToolExecutor;
use crate::tools::executor::ToolExecutor;
use crate::tools::hook::ToolHook;
use crate::tools::layer::{ToolLayer, ToolLayers};
use crate::tools::limits::ToolCallLimits;
use crate::tools::registry::Tools;
use crate::tools::source::ToolSource;
use crate::tools::tool::Tool;

/// The step limit of an agent not given one.
pub const DEFAULT_MAX_STEPS: usize = 20;

/// How many failed tool calls in a row an agent not given an error policy retries
/// ([`ErrorPolicy::retry_tool_errors`]).
pub const DEFAULT_TOOL_ERROR_RETRIES: u32 = 3;

/// An event listener.
pub type Listener = Arc<dyn Fn(&AgentEvent) + Send + Sync>;

/// Builds an [`Agent`] from a driver, with one set of defaults:
///
/// - at most [`DEFAULT_MAX_STEPS`] steps; no token or time limit unless set;
/// - [`EmptyResponseCheck`] (an empty reply stops the run) and the finish check
///   [`ToolCallPresenceCheck`] (the run stops on a reply without tool calls; a driver with
///   another protocol gives its own, [`with_finish_checks`](Self::with_finish_checks));
/// - [`ErrorPolicy::retry_tool_errors(3)`](ErrorPolicy::retry_tool_errors);
/// - the processors of [`default_processors`] (every step message persists: legacy mode);
///   yours wrap them ([`with_processor`](Self::with_processor));
/// - the standard tool-call limits ([`ToolCallLimits::standard`]), no tool timeout;
/// - no answer on stop, no approvals, the system clock, uuid v7 ids.
///
/// [`Agent::new`] is `AgentBuilder::new().with_driver(driver).build()` with nothing else set.
/// [`build`](Self::build) validates and says what to fix:
///
/// ```
/// use agents_core::testing::ScriptedDriver;
/// use agents_core::{AgentBuilder, BuildError};
/// use inference::InferenceResponse;
///
/// let agent = AgentBuilder::new()
///     .with_driver(ScriptedDriver::new([InferenceResponse::text("hi")]))
///     .with_max_steps(5)
///     .build()
///     .unwrap();
/// assert_eq!(agent.processors().names(), ["AppendStepMessages", "AppendContextMetadata"]);
/// assert_eq!(AgentBuilder::new().build().unwrap_err(), BuildError::MissingDriver);
/// ```
#[derive(Clone)]
pub struct AgentBuilder {
    driver: Option<Arc<dyn AgentDriver>>,
    tools: Vec<Arc<dyn Tool>>,
    tool_sources: Vec<Arc<dyn ToolSource>>,
    executor: Option<Arc<dyn ToolExecutor>>,
    tool_timeout: Option<Duration>,
    tool_timeouts: Vec<(String, Duration)>,
    max_steps: usize,
    token_limit: Option<u64>,
    time_limit: Option<Duration>,
    finish_checks: Vec<Arc<dyn ContinuationCriterion>>,
    criteria: Vec<Arc<dyn ContinuationCriterion>>,
    error_policy: ErrorPolicy,
    processors: Vec<Arc<dyn StateProcessor>>,
    standard_processors: StateProcessors,
    cached_context: CachedContext,
    answer_on_stop: AnswerOnStop,
    tool_limits: ToolCallLimits,
    tool_hooks: Vec<Arc<dyn ToolHook>>,
    tool_layers: Vec<Arc<dyn ToolLayer>>,
    listeners: Vec<Listener>,
    hooks: Hooks,
    max_stop_vetoes: u32,
    name: Option<String>,
    content_capture: bool,
    model_catalog: Option<ModelCatalog>,
    context_window: Option<u64>,
    cost_limit: Option<f64>,
    approval: ApprovalPolicy,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdSource>,
}

impl Default for AgentBuilder {
    fn default() -> Self {
        Self {
            driver: None,
            tools: Vec::new(),
            tool_sources: Vec::new(),
            executor: None,
            tool_timeout: None,
            tool_timeouts: Vec::new(),
            max_steps: DEFAULT_MAX_STEPS,
            token_limit: None,
            time_limit: None,
            finish_checks: vec![Arc::new(ToolCallPresenceCheck::new())],
            criteria: Vec::new(),
            error_policy: ErrorPolicy::retry_tool_errors(DEFAULT_TOOL_ERROR_RETRIES),
            processors: Vec::new(),
            standard_processors: default_processors(),
            cached_context: CachedContext::new(),
            answer_on_stop: AnswerOnStop::Nothing,
            tool_limits: ToolCallLimits::standard(),
            tool_hooks: Vec::new(),
            tool_layers: Vec::new(),
            listeners: Vec::new(),
            hooks: Hooks::default(),
            max_stop_vetoes: DEFAULT_MAX_STOP_VETOES,
            name: None,
            content_capture: false,
            model_catalog: None,
            context_window: None,
            cost_limit: None,
            approval: ApprovalPolicy::default(),
            clock: Arc::new(SystemClock),
            ids: Arc::new(UuidV7Ids),
        }
    }
}

impl AgentBuilder {
    /// A builder with the defaults (no driver yet).
    pub fn new() -> Self {
        Self::default()
    }

    /// The driver that makes each step (required).
    pub fn with_driver(self, driver: impl AgentDriver + 'static) -> Self {
        self.with_shared_driver(Arc::new(driver))
    }

    /// [`with_driver`](Self::with_driver) with a shared driver.
    pub fn with_shared_driver(mut self, driver: Arc<dyn AgentDriver>) -> Self {
        self.driver = Some(driver);
        self
    }

    /// Adds a tool.
    pub fn with_tool(mut self, tool: impl Tool + 'static) -> Self {
        self.tools.push(Arc::new(tool));
        self
    }

    /// Adds shared tools.
    pub fn with_tools(mut self, tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// Adds a source of tools asked before every step (see [`ToolSource`]); its tools are
    /// offered after the agent's own.
    pub fn with_tool_source(mut self, source: Arc<dyn ToolSource>) -> Self {
        self.tool_sources.push(source);
        self
    }

    /// Runs tools with `executor` instead of a [`DefaultToolExecutor`] (the tool timeouts
    /// are then the executor's business).
    pub fn with_executor(mut self, executor: Arc<dyn ToolExecutor>) -> Self {
        self.executor = Some(executor);
        self
    }

    /// Timeout of every tool call (none by default): a call past it gets a tool-error result
    /// naming the timeout, and the run goes on.
    pub fn with_tool_timeout(mut self, timeout: Duration) -> Self {
        self.tool_timeout = Some(timeout);
        self
    }

    /// Timeout of the tool `name`'s calls.
    pub fn with_timeout_for_tool(mut self, name: impl Into<String>, timeout: Duration) -> Self {
        self.tool_timeouts.push((name.into(), timeout));
        self
    }

    /// Step limit per execution (default [`DEFAULT_MAX_STEPS`]; 0 is refused by `build`).
    pub fn with_max_steps(mut self, max_steps: usize) -> Self {
        self.max_steps = max_steps;
        self
    }

    /// Token limit per execution (off by default).
    pub fn with_token_limit(mut self, max_tokens: u64) -> Self {
        self.token_limit = Some(max_tokens);
        self
    }

    /// Time limit per execution (off by default).
    pub fn with_time_limit(mut self, limit: Duration) -> Self {
        self.time_limit = Some(limit);
        self
    }

    /// The criteria that tell when the model has finished, judged after the limits and
    /// before yours (default: [`ToolCallPresenceCheck`]). A driver with its own protocol
    /// replaces it (the ReAct driver's final answer) or adds its own checks.
    pub fn with_finish_checks(
        mut self,
        checks: impl IntoIterator<Item = Arc<dyn ContinuationCriterion>>,
    ) -> Self {
        self.finish_checks = checks.into_iter().collect();
        self
    }

    /// Adds a continuation criterion, judged after the standard ones.
    pub fn with_criterion(self, criterion: impl ContinuationCriterion + 'static) -> Self {
        self.with_shared_criterion(Arc::new(criterion))
    }

    /// [`with_criterion`](Self::with_criterion) with a shared criterion.
    pub fn with_shared_criterion(mut self, criterion: Arc<dyn ContinuationCriterion>) -> Self {
        self.criteria.push(criterion);
        self
    }

    /// How errors are handled (default: retry failed tool calls up to 3 times in a row).
    pub fn with_error_policy(mut self, policy: ErrorPolicy) -> Self {
        self.error_policy = policy;
        self
    }

    /// Adds a processor. Your processors wrap the standard ones (outer layers, in the order
    /// added): their post-step logic sees the step's messages already persisted.
    pub fn with_processor(self, processor: impl StateProcessor + 'static) -> Self {
        self.with_shared_processor(Arc::new(processor))
    }

    /// [`with_processor`](Self::with_processor) with a shared processor.
    pub fn with_shared_processor(mut self, processor: Arc<dyn StateProcessor>) -> Self {
        self.processors.push(processor);
        self
    }

    /// Replaces the standard processors, the innermost layers (default
    /// [`default_processors`]; `agents-processing`'s `standard_processors(retention)` for the
    /// separated modes; an empty list for a bare loop whose steps persist nothing).
    pub fn with_standard_processors(mut self, processors: StateProcessors) -> Self {
        self.standard_processors = processors;
        self
    }

    /// The request prefix (system prompt, tool choice, response format) sent with every step.
    pub fn with_cached_context(mut self, context: CachedContext) -> Self {
        self.cached_context = context;
        self
    }

    /// What to append when an execution stops without a final answer (default
    /// [`AnswerOnStop::Nothing`]; a cancelled execution always gets a notice).
    pub fn with_answer_on_stop(mut self, answer: AnswerOnStop) -> Self {
        self.answer_on_stop = answer;
        self
    }

    /// The limits on every tool call (default [`ToolCallLimits::standard`]).
    pub fn with_tool_limits(mut self, limits: ToolCallLimits) -> Self {
        self.tool_limits = limits;
        self
    }

    /// Refuses the `limit`-th identical call (same tool, same arguments) in one execution
    /// (default 3); a model that keeps repeating is stopped.
    pub fn with_repeated_call_limit(mut self, limit: u32) -> Self {
        self.tool_limits.repeated_call_limit = Some(limit.max(1));
        self
    }

    /// Cuts every tool result the model sees to `chars` characters (default 30,000).
    pub fn with_tool_output_limit(mut self, chars: usize) -> Self {
        self.tool_limits.output_limit = Some(chars);
        self
    }

    /// Adds a tool hook; the hooks run as one layer of the tool-call onion, in the order added.
    pub fn with_tool_hook(mut self, hook: Arc<dyn ToolHook>) -> Self {
        self.tool_hooks.push(hook);
        self
    }

    /// Adds a layer to the tool-call onion, inside the standard layers and the tool hooks.
    pub fn with_tool_layer(mut self, layer: Arc<dyn ToolLayer>) -> Self {
        self.tool_layers.push(layer);
        self
    }

    /// Adds an event listener.
    pub fn on_event(self, listener: impl Fn(&AgentEvent) + Send + Sync + 'static) -> Self {
        self.on_shared_event(Arc::new(listener))
    }

    /// Adds a shared event listener.
    pub fn on_shared_event(mut self, listener: Listener) -> Self {
        self.listeners.push(listener);
        self
    }

    /// Adds a hook run before each step (see [`StepHooks`](crate::agent::hooks::StepHooks)).
    pub fn before_step(
        mut self,
        hook: impl Fn(AgentState) -> AgentState + Send + Sync + 'static,
    ) -> Self {
        self.hooks.step = self.hooks.step.before(hook);
        self
    }

    /// Adds a hook run after each recorded step (see [`StepHooks`](crate::agent::hooks::StepHooks)).
    pub fn after_step(
        mut self,
        hook: impl Fn(AgentState) -> AgentState + Send + Sync + 'static,
    ) -> Self {
        self.hooks.step = self.hooks.step.after(hook);
        self
    }

    /// Adds a hook run when an execution starts.
    pub fn before_execution(
        mut self,
        hook: impl Fn(AgentState) -> AgentState + Send + Sync + 'static,
    ) -> Self {
        self.hooks
            .before_execution
            .push(Arc::new(hook) as StateHook);
        self
    }

    /// Adds a hook run on an execution's final state.
    pub fn after_execution(
        mut self,
        hook: impl Fn(AgentState) -> AgentState + Send + Sync + 'static,
    ) -> Self {
        self.hooks.after_execution.push(Arc::new(hook) as StateHook);
        self
    }

    /// Adds a stop hook, asked whenever the agent is about to stop (see
    /// [`Agent::with_stop_hook`]).
    pub fn with_stop_hook(
        mut self,
        hook: impl Fn(&AgentState) -> StopDecision + Send + Sync + 'static,
    ) -> Self {
        self.hooks.stop.push(Arc::new(hook) as StopHook);
        self
    }

    /// The bound on stop-hook vetoes per execution (default [`DEFAULT_MAX_STOP_VETOES`]).
    pub fn with_max_stop_vetoes(mut self, max: u32) -> Self {
        self.max_stop_vetoes = max;
        self
    }

    /// The agent's name (default [`DEFAULT_AGENT_NAME`]): `gen_ai.agent.name` and the
    /// `invoke_agent {name}` span name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Records contents on the agent's spans when `capture` is true (off by default).
    pub fn with_content_capture(mut self, capture: bool) -> Self {
        self.content_capture = capture;
        self
    }

    /// Prices steps with `catalog` instead of [`ModelCatalog::builtin`].
    pub fn with_model_catalog(mut self, catalog: ModelCatalog) -> Self {
        self.model_catalog = Some(catalog);
        self
    }

    /// Takes `tokens` as the model's context window, over the catalog's (see
    /// [`Agent::with_context_window`]).
    pub fn with_context_window(mut self, tokens: u64) -> Self {
        self.context_window = Some(tokens);
        self
    }

    /// The context window given with [`with_context_window`](Self::with_context_window).
    pub fn context_window(&self) -> Option<u64> {
        self.context_window
    }

    /// Stops an execution once its priced cost reaches `usd` dollars (see
    /// [`Agent::with_cost_limit`]).
    pub fn with_cost_limit(mut self, usd: f64) -> Self {
        self.cost_limit = Some(usd);
        self
    }

    /// Which calls wait for a person's approval (replacing the policy it had).
    pub fn with_approvals(mut self, policy: ApprovalPolicy) -> Self {
        self.approval = policy;
        self
    }

    /// Every call of these tools waits for a person's approval (see
    /// [`Agent::with_approval_required`]).
    pub fn with_approval_required<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.approval = self.approval.with_tools(names);
        self
    }

    /// Every call `policy` accepts waits for a person's approval.
    pub fn with_approval_policy(
        mut self,
        policy: impl Fn(&messages::ToolCall) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.approval = self.approval.with_predicate(policy);
        self
    }

    /// Reads the time from `clock` (default the system clock).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Takes execution and step ids from `ids` (default uuid v7).
    pub fn with_id_source(mut self, ids: Arc<dyn IdSource>) -> Self {
        self.ids = ids;
        self
    }

    /// The tools added so far.
    pub fn tools(&self) -> &[Arc<dyn Tool>] {
        &self.tools
    }

    /// The tool sources added so far.
    pub fn tool_sources(&self) -> &[Arc<dyn ToolSource>] {
        &self.tool_sources
    }

    /// The event listeners added so far.
    pub fn listeners(&self) -> &[Listener] {
        &self.listeners
    }

    /// The tool hooks added so far.
    pub fn tool_hooks(&self) -> &[Arc<dyn ToolHook>] {
        &self.tool_hooks
    }

    /// The tool layers added so far, outermost first.
    pub fn tool_layers(&self) -> &[Arc<dyn ToolLayer>] {
        &self.tool_layers
    }

    /// The step limit.
    pub fn max_steps(&self) -> usize {
        self.max_steps
    }

    /// The token limit, if any.
    pub fn token_limit(&self) -> Option<u64> {
        self.token_limit
    }

    /// The time limit, if any.
    pub fn time_limit(&self) -> Option<Duration> {
        self.time_limit
    }

    /// The error policy.
    pub fn error_policy(&self) -> ErrorPolicy {
        self.error_policy
    }

    /// The timeout of every tool call, and the per-tool ones.
    pub fn tool_timeouts(&self) -> (Option<Duration>, &[(String, Duration)]) {
        (self.tool_timeout, &self.tool_timeouts)
    }

    /// Whether spans carry contents.
    pub fn captures_content(&self) -> bool {
        self.content_capture
    }

    /// The model catalog given, if any.
    pub fn model_catalog(&self) -> Option<&ModelCatalog> {
        self.model_catalog.as_ref()
    }

    /// The approval policy.
    pub fn approval_policy(&self) -> &ApprovalPolicy {
        &self.approval
    }

    /// Builds the agent.
    ///
    /// # Errors
    /// [`BuildError`] when no driver was given, the step limit is zero or two tools share a
    /// name.
    pub fn build(self) -> Result<Agent, BuildError> {
        let Some(driver) = self.driver.clone() else {
            return Err(BuildError::MissingDriver);
        };
        if self.max_steps == 0 {
            return Err(BuildError::ZeroStepLimit);
        }
        let mut seen = BTreeSet::new();
        for tool in &self.tools {
            if !seen.insert(tool.name()) {
                return Err(BuildError::DuplicateTool {
                    name: tool.name().to_owned(),
                });
            }
        }
        Ok(self.assemble(driver))
    }

    /// The agent, without validation (the defaults are valid: [`Agent::new`]).
    pub(crate) fn assemble(self, driver: Arc<dyn AgentDriver>) -> Agent {
        let executor = self.executor.clone().unwrap_or_else(|| {
            let mut executor = DefaultToolExecutor::new();
            if let Some(timeout) = self.tool_timeout {
                executor = executor.with_timeout(timeout);
            }
            for (name, timeout) in &self.tool_timeouts {
                executor = executor.with_tool_timeout(name.clone(), *timeout);
            }
            Arc::new(executor)
        });
        let processors = StateProcessors::new(
            self.processors
                .iter()
                .cloned()
                .chain(self.standard_processors.iter().cloned()),
        );
        let telemetry = Telemetry {
            name: Arc::from(self.name.as_deref().unwrap_or(DEFAULT_AGENT_NAME)),
            capture_content: self.content_capture,
            catalog: Arc::new(
                self.model_catalog
                    .clone()
                    .unwrap_or_else(ModelCatalog::builtin),
            ),
            cost_limit: self.cost_limit,
            context_window: self.context_window,
        };
        let events = self
            .listeners
            .iter()
            .fold(AgentEvents::new(), |events, listener| {
                let listener = Arc::clone(listener);
                events.with_listener(move |event| listener(event))
            });
        let agent = Agent {
            driver,
            tools: self.tools.iter().cloned().collect::<Tools>(),
            tool_sources: self.tool_sources.clone(),
            executor,
            criteria: self.criteria(),
            guards: standard_guards(self.error_policy, self.cost_limit),
            error_policy: self.error_policy,
            processors,
            onion: StateProcessors::default(),
            cached_context: Arc::new(self.cached_context.clone()),
            clock: self.clock,
            ids: self.ids,
            events,
            hooks: self.hooks,
            max_stop_vetoes: self.max_stop_vetoes,
            answer_on_stop: self.answer_on_stop,
            tool_limits: self.tool_limits,
            telemetry,
            approval: self.approval,
            // Both onions are assembled from their lists by `assembled` below.
            tool_layers: ToolLayers::default(),
            tool_hooks: self.tool_hooks,
            user_tool_layers: self.tool_layers,
        };
        agent.assembled()
    }

    /// The criteria, in the order they are judged: the step limit, the empty-reply check, the
    /// token and time limits, the finish checks, then the user's.
    fn criteria(&self) -> ContinuationCriteria {
        let mut criteria = ContinuationCriteria::new()
            .with(StepsLimit::new(self.max_steps))
            .with(EmptyResponseCheck::new());
        if let Some(tokens) = self.token_limit {
            criteria = criteria.with(TokenUsageLimit::new(tokens));
        }
        if let Some(limit) = self.time_limit {
            criteria = criteria.with(ExecutionTimeLimit::new(limit));
        }
        for check in self.finish_checks.iter().chain(&self.criteria) {
            criteria.push(Arc::clone(check));
        }
        criteria
    }
}

impl Agent {
    /// An agent running `driver`, with the defaults of [`AgentBuilder`] (nothing else set).
    pub fn new(driver: impl AgentDriver + 'static) -> Self {
        Self::from_shared_driver(Arc::new(driver))
    }

    /// [`Agent::new`] with a shared driver.
    pub fn from_shared_driver(driver: Arc<dyn AgentDriver>) -> Self {
        AgentBuilder::new().assemble(driver)
    }
}

impl std::fmt::Debug for AgentBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tools: Vec<&str> = self.tools.iter().map(|t| t.name()).collect();
        f.debug_struct("AgentBuilder")
            .field("tools", &tools)
            .field("max_steps", &self.max_steps)
            .field("token_limit", &self.token_limit)
            .field("time_limit", &self.time_limit)
            .field("error_policy", &self.error_policy)
            .field("standard_processors", &self.standard_processors)
            .finish_non_exhaustive()
    }
}
