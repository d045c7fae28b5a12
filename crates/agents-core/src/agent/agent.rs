//! `Agent`: what an agent is (driver, tools, criteria, policy, processors, hooks, request
//! prefix, clock). How it runs is in `step.rs`.

use std::sync::Arc;

use inference::ModelCatalog;

use crate::agent::hooks::{Hooks, StateHook, StopDecision, StopHook};
use crate::cached_context::CachedContext;
use crate::clock::Clock;
use crate::continuation::criteria::guards::standard_guards;
use crate::continuation::criterion::{ContinuationCriteria, ContinuationCriterion};
use crate::driver::AgentDriver;
use crate::errors::error_policy::ErrorPolicy;
use crate::events::agent_event::AgentEvent;
use crate::events::agent_events::AgentEvents;
use crate::ids::IdSource;
use crate::processing::{StateProcessor, StateProcessors};
use crate::records::answer_on_stop::AnswerOnStop;
use crate::state::agent_state::AgentState;
use crate::tools::approval_policy::ApprovalPolicy;
use crate::tools::executor::ToolExecutor;
use crate::tools::hook::ToolHook;
use crate::tools::layer::{ToolLayer, ToolLayers};
use crate::tools::layers::tool_hooks::HookLayer;
use crate::tools::limits::ToolCallLimits;
use crate::tools::registry::Tools;
use crate::tools::source::ToolSource;
use crate::tools::stack::standard_tool_layers;
use crate::tools::tool::Tool;

/// The default bound on stop-hook vetoes per execution.
pub const DEFAULT_MAX_STOP_VETOES: u32 = 3;

/// An agent: runs steps with its driver until its continuation criteria say stop.
///
/// Everything an agent does goes through [`Agent::step`], which advances a state by exactly
/// one step; [`Agent::iterate`] repeats it while the status is `InProgress` and
/// [`Agent::execute`] returns the last state. Driver errors never escape as panics: they are
/// recorded as failure steps and the [`ErrorPolicy`] decides whether to go on.
///
/// An agent is configuration; a state is what happened. It is built by
/// [`AgentBuilder`](crate::agent::builder::AgentBuilder), where its defaults live:
/// `Agent::new(driver)` is the builder with nothing else set (20 steps, retrying failed tool
/// calls 3 times, every step message persisting, the standard tool-call limits). The
/// `with_*` methods return an adjusted copy of a built agent. Cheap to clone.
#[derive(Clone)]
pub struct Agent {
    pub(crate) driver: Arc<dyn AgentDriver>,
    pub(crate) tools: Tools,
    pub(crate) tool_sources: Vec<Arc<dyn ToolSource>>,
    pub(crate) executor: Arc<dyn ToolExecutor>,
    pub(crate) criteria: ContinuationCriteria,
    /// The built-in guards judged before `criteria` (see `standard_guards`), rebuilt when the
    /// error policy or the cost limit changes.
    pub(crate) guards: ContinuationCriteria,
    pub(crate) error_policy: ErrorPolicy,
    /// The processors: the builder's (the standard ones, wrapped by the user's), or the
    /// list `with_processors` gave; `with_processor` adds one inside them.
    pub(crate) processors: StateProcessors,
    /// The step onion: the step hooks (one layer, outermost, when there are any), then
    /// `processors` (see `assembled_onion`).
    pub(crate) onion: StateProcessors,
    pub(crate) cached_context: Arc<CachedContext>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) ids: Arc<dyn IdSource>,
    pub(crate) events: AgentEvents,
    pub(crate) hooks: Hooks,
    pub(crate) max_stop_vetoes: u32,
    pub(crate) answer_on_stop: AnswerOnStop,
    pub(crate) tool_limits: ToolCallLimits,
    pub(crate) telemetry: Telemetry,
    pub(crate) approval: ApprovalPolicy,
    /// The tool-call onion, assembled from the two lists below (see `assembled_tool_layers`).
    pub(crate) tool_layers: ToolLayers,
    pub(crate) tool_hooks: Vec<Arc<dyn ToolHook>>,
    pub(crate) user_tool_layers: Vec<Arc<dyn ToolLayer>>,
}

/// What the agent reports about itself: its name on spans, whether spans carry contents,
/// the catalog that prices its steps, its cost limit.
#[derive(Clone, Debug)]
pub(crate) struct Telemetry {
    pub(crate) name: Arc<str>,
    pub(crate) capture_content: bool,
    pub(crate) catalog: Arc<ModelCatalog>,
    pub(crate) cost_limit: Option<f64>,
    /// The model's context window when given (it wins over the catalog's).
    pub(crate) context_window: Option<u64>,
}

/// The name of an agent not given one (`invoke_agent agent` spans).
pub const DEFAULT_AGENT_NAME: &str = "agent";

impl Agent {
    /// This agent with its two onions assembled from their lists (the builder's last step).
    pub(crate) fn assembled(mut self) -> Self {
        self.tool_layers = self.assembled_tool_layers();
        self.onion = self.assembled_onion();
        self
    }

    /// A copy with this name: `gen_ai.agent.name` and the `invoke_agent {name}` span name
    /// (default [`DEFAULT_AGENT_NAME`]).
    pub fn with_name(mut self, name: impl Into<Arc<str>>) -> Self {
        self.telemetry.name = name.into();
        self
    }

    /// The agent's name.
    pub fn name(&self) -> &str {
        &self.telemetry.name
    }

    /// A copy that records contents on its spans (`gen_ai.output.messages` on
    /// `invoke_agent`, `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result` on
    /// `execute_tool`) when `capture` is true. Off by default: prompts, answers and tool
    /// data often hold what must not leave the process.
    pub fn with_content_capture(mut self, capture: bool) -> Self {
        self.telemetry.capture_content = capture;
        self
    }

    /// True when spans carry contents (see [`with_content_capture`](Self::with_content_capture)).
    pub fn captures_content(&self) -> bool {
        self.telemetry.capture_content
    }

    /// A copy that prices its steps with `catalog` (default [`ModelCatalog::builtin`]).
    pub fn with_model_catalog(mut self, catalog: ModelCatalog) -> Self {
        self.telemetry.catalog = Arc::new(catalog);
        self
    }

    /// A copy that takes `tokens` as its model's context window, over the catalog's: for a
    /// model the catalog does not know, or a local server started with a context of its own
    /// (llama-server's `-c`). A request past 80% of it is reported
    /// ([`AgentEvent::ContextWindowNearlyFull`](crate::AgentEvent::ContextWindowNearlyFull)).
    pub fn with_context_window(mut self, tokens: u64) -> Self {
        self.telemetry.context_window = Some(tokens);
        self
    }

    /// The catalog that prices the agent's steps and gives its models' context windows.
    pub fn model_catalog(&self) -> &ModelCatalog {
        &self.telemetry.catalog
    }

    /// A copy that stops an execution with [`StopReason::CostLimit`](crate::StopReason)
    /// once the priced part of its cost ([`RunCost::priced_usd`](crate::RunCost)) reaches
    /// `usd` dollars. Tokens of a model the catalog has no price for do not count towards
    /// the limit (their cost is unknown; a warning says so).
    pub fn with_cost_limit(mut self, usd: f64) -> Self {
        self.telemetry.cost_limit = Some(usd);
        self.guards = standard_guards(self.error_policy, self.telemetry.cost_limit);
        self
    }

    /// The cost limit in dollars, if any.
    pub fn cost_limit(&self) -> Option<f64> {
        self.telemetry.cost_limit
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

    /// A copy that also offers the tools of `source`, asked for before every step (tools that
    /// change while the agent runs, such as an MCP server's; see [`ToolSource`]).
    pub fn with_tool_source(mut self, source: Arc<dyn ToolSource>) -> Self {
        self.tool_sources.push(source);
        self
    }

    /// A copy with another tool executor.
    pub fn with_executor(mut self, executor: impl ToolExecutor + 'static) -> Self {
        self.executor = Arc::new(executor);
        self
    }

    /// A copy whose new ids (execution and step ids) come from `ids` (default uuid v7,
    /// [`UuidV7Ids`](crate::ids::UuidV7Ids)); a [`SequentialIds`](crate::SequentialIds) makes a run's ids
    /// deterministic, for tests and replays.
    pub fn with_id_source(mut self, ids: Arc<dyn IdSource>) -> Self {
        self.ids = ids;
        self
    }

    /// A copy with a shared tool executor.
    pub fn with_shared_executor(mut self, executor: Arc<dyn ToolExecutor>) -> Self {
        self.executor = executor;
        self
    }

    /// A copy with `layer` added to the tool-call onion, inside the standard layers, the
    /// tool hooks and the layers added before it, just around the executor: it sees every
    /// call that is going to run (not the held, refused or journaled ones) and its execution.
    /// For a rate limiter, an audit log, a guard of your own. See
    /// [`standard_tool_layers`](crate::tools::standard_tool_layers).
    pub fn with_tool_layer(self, layer: impl ToolLayer + 'static) -> Self {
        self.with_shared_tool_layer(Arc::new(layer))
    }

    /// [`with_tool_layer`](Self::with_tool_layer) with a shared layer.
    pub fn with_shared_tool_layer(mut self, layer: Arc<dyn ToolLayer>) -> Self {
        self.user_tool_layers.push(layer);
        self.tool_layers = self.assembled_tool_layers();
        self
    }

    /// A copy with `hook` around every call that is going to run. The agent's hooks form one
    /// [`HookLayer`] inside the standard layers: befores in the order added (the first block
    /// wins), then afters in the same order.
    pub fn with_tool_hook(mut self, hook: Arc<dyn ToolHook>) -> Self {
        self.tool_hooks.push(hook);
        self.tool_layers = self.assembled_tool_layers();
        self
    }

    /// The onion: the standard layers, the hooks (one layer), the user's layers.
    fn assembled_tool_layers(&self) -> ToolLayers {
        let hooks = (!self.tool_hooks.is_empty()).then(|| {
            Arc::new(HookLayer::chain(self.tool_hooks.iter().cloned())) as Arc<dyn ToolLayer>
        });
        standard_tool_layers().with_inner(
            hooks
                .into_iter()
                .chain(self.user_tool_layers.iter().cloned()),
        )
    }

    /// The tool-call onion, outermost first.
    pub fn tool_layers(&self) -> &ToolLayers {
        &self.tool_layers
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
        self.guards = standard_guards(self.error_policy, self.telemetry.cost_limit);
        self
    }

    /// A copy with these processors around every step (replacing any it had; the step
    /// hooks stay, outside them).
    pub fn with_processors(mut self, processors: StateProcessors) -> Self {
        self.processors = processors;
        self.onion = self.assembled_onion();
        self
    }

    /// A copy with one more processor, as the innermost layer.
    pub fn with_processor(mut self, processor: impl StateProcessor + 'static) -> Self {
        self.processors = self.processors.with(processor);
        self.onion = self.assembled_onion();
        self
    }

    /// The step onion: the agent's [`StepHooks`](crate::agent::hooks::StepHooks) (one layer, outermost, when it has any),
    /// then the processors.
    fn assembled_onion(&self) -> StateProcessors {
        if self.hooks.step.is_empty() {
            return self.processors.clone();
        }
        let hooks = Arc::new(self.hooks.step.clone()) as Arc<dyn StateProcessor>;
        StateProcessors::new(std::iter::once(hooks).chain(self.processors.iter().cloned()))
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

    /// A copy with a hook run before each step (after the step started): added to the
    /// agent's [`StepHooks`](crate::agent::hooks::StepHooks), the outermost layer of the step onion (see [`Agent::onion`]).
    pub fn before_step(
        mut self,
        hook: impl Fn(AgentState) -> AgentState + Send + Sync + 'static,
    ) -> Self {
        self.hooks.step = self.hooks.step.before(hook);
        self.onion = self.assembled_onion();
        self
    }

    /// A copy with a hook run after each recorded step (a failed or guarded one included):
    /// added to the agent's [`StepHooks`](crate::agent::hooks::StepHooks), the outermost layer of the step onion.
    pub fn after_step(
        mut self,
        hook: impl Fn(AgentState) -> AgentState + Send + Sync + 'static,
    ) -> Self {
        self.hooks.step = self.hooks.step.after(hook);
        self.onion = self.assembled_onion();
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
    /// [`AnswerOnStop::Nothing`]; the facade's builder defaults to `Synthesize` in every trace mode
    /// but legacy). A cancelled execution always gets a `Notice`.
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

    /// The built-in guards every step is judged with before the criteria, in order:
    /// cancellation, the error policy, repeated calls, the cost limit (when one is set); see
    /// [`standard_guards`].
    pub fn guards(&self) -> &ContinuationCriteria {
        &self.guards
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

    /// The processors around every step, as given (without the step hooks).
    pub fn processors(&self) -> &StateProcessors {
        &self.processors
    }

    /// The step onion every step runs through, outermost first: the agent's [`StepHooks`](crate::agent::hooks::StepHooks)
    /// when it has any, then [`processors`](Self::processors).
    pub fn onion(&self) -> &StateProcessors {
        &self.onion
    }

    /// The clock.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// A fresh conversation, created at this agent's clock's time (a [`ManualClock`]'s in
    /// tests); what sessions, subagents and the Restate service start from.
    ///
    /// [`ManualClock`]: crate::clock::ManualClock
    pub fn new_state(&self) -> AgentState {
        AgentState::new_at(self.clock.now())
    }
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("tools", &self.tools)
            .field("tool_sources", &self.tool_sources.len())
            .field("criteria", &self.criteria)
            .field("guards", &self.guards)
            .field("error_policy", &self.error_policy)
            .field("processors", &self.onion)
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
