//! `AgentBuilder`: an agent from a model, tools and a few settings, with sensible defaults.

use std::sync::Arc;
use std::time::Duration;

use agents_core::tools::{tool_output_limit_for, ToolLayer};
use agents_core::{
    AfterToolHook, Agent, AgentDriver, AgentEvent, AnswerOnStop, BeforeToolHook, CachedContext,
    ContinuationCriterion, ErrorPolicy, Tool, ToolCallPresenceCheck, ToolContext, ToolExecution,
    ToolHook, ToolHookDecision, ToolSource, Tools,
};
use agents_processing::{standard_processors, StateProcessor, TraceRetention};
use drivers_react::{ReActDriver, StopOnFinalDecision};
use drivers_toolcalling::{
    ForgedEvidenceCheck, RecoveredCallsShown, RefuseForgedEvidence, ToolCallingDriver,
};
use inference::{LanguageModel, ModelCatalog, ModelSettings};
use messages::{Message, ToolCall};

use crate::capabilities::files::names_tool;
use crate::{AgentCapability, BuildError};

use agents_core::Listener;

/// The end of the system prompt in the separated trace modes, with tools (see
/// [`AgentBuilder::with_trace_mode_note`]). Issue 32 found that once earlier answers show no
/// tool calls, a small model answers new questions without looking; this says how the answers
/// were found. It is part of the stable request prefix (prompt caches keep it).
pub const SEPARATED_TRACE_NOTE: &str = "This conversation shows earlier questions and answers \
without the tool calls behind them: every answer about files or data was found by calling \
tools. Do the same for each new request: call a tool to look up what no earlier answer states, \
never guess, and never write tool results yourself.";
type BuildStep = Arc<dyn Fn(AgentBuilder) -> AgentBuilder + Send + Sync>;
type DriverLayer = Arc<dyn Fn(Arc<dyn AgentDriver>) -> Arc<dyn AgentDriver> + Send + Sync>;

#[derive(Clone)]
enum DriverChoice {
    ToolCalling(Arc<dyn LanguageModel>),
    React(Arc<dyn LanguageModel>),
    Custom(Arc<dyn AgentDriver>),
}

/// Builds an [`Agent`] from a model: the facade's layer over the core's
/// [`agents_core::AgentBuilder`], which holds everything that is not about the model (tools,
/// limits, policies, processors, hooks, listeners, approvals) and its one set of defaults
/// (at most 20 steps, [`ErrorPolicy::retry_tool_errors(3)`](ErrorPolicy::retry_tool_errors),
/// the standard tool-call limits). This builder adds:
///
/// - the driver for the model given to [`with_model`](Self::with_model) (the
///   [`ToolCallingDriver`]; [`with_react`](Self::with_react) for the ReAct driver,
///   [`with_driver`](Self::with_driver) for your own), with its model settings and the
///   criteria that tell when that driver's model has finished;
/// - the trace mode's processors: legacy (every step message persists) unless
///   [`with_separated_tool_trace(true)`](Self::with_separated_tool_trace) or
///   [`with_trace_retention`](Self::with_trace_retention);
/// - the system prompt, and capabilities ([`with_capability`](Self::with_capability)).
///
/// `build` validates the configuration and says what to fix.
#[derive(Clone)]
pub struct AgentBuilder {
    /// Everything that is not about the model: tools, limits, policies, processors, hooks,
    /// listeners, approvals (the core's builder, where the defaults live).
    core: agents_core::AgentBuilder,
    driver: Option<DriverChoice>,
    model_settings: ModelSettings,
    parallel_tool_calls: bool,
    streaming: bool,
    content_tool_call_recovery: Option<bool>,
    recovered_calls_shown: RecoveredCallsShown,
    tool_call_hint: Option<String>,
    forged_evidence_check: bool,
    trace_mode_note: bool,
    system_prompt: Option<String>,
    retention: TraceRetention,
    answer_on_stop: Option<AnswerOnStop>,
    capability_errors: Vec<BuildError>,
    build_steps: Vec<BuildStep>,
    driver_layers: Vec<DriverLayer>,
    /// Whether the tool-output limit was chosen (else it follows the context window).
    tool_output_limit_chosen: bool,
}

impl Default for AgentBuilder {
    fn default() -> Self {
        Self {
            core: agents_core::AgentBuilder::new(),
            driver: None,
            model_settings: ModelSettings::default(),
            parallel_tool_calls: false,
            streaming: false,
            content_tool_call_recovery: None,
            recovered_calls_shown: RecoveredCallsShown::default(),
            tool_call_hint: None,
            forged_evidence_check: true,
            trace_mode_note: true,
            system_prompt: None,
            retention: TraceRetention::Full,
            answer_on_stop: None,
            capability_errors: Vec::new(),
            build_steps: Vec::new(),
            driver_layers: Vec::new(),
            tool_output_limit_chosen: false,
        }
    }
}

impl AgentBuilder {
    /// A builder with the defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Talks to `model` through native tool calls (the [`ToolCallingDriver`]).
    pub fn with_model(self, model: impl LanguageModel + 'static) -> Self {
        self.with_shared_model(Arc::new(model))
    }

    /// As [`with_model`](Self::with_model), with a shared model.
    pub fn with_shared_model(mut self, model: Arc<dyn LanguageModel>) -> Self {
        self.driver = Some(DriverChoice::ToolCalling(model));
        self
    }

    /// Talks to `model` through the ReAct protocol (the [`ReActDriver`]); the run stops on the
    /// model's final answer.
    pub fn with_react(mut self, model: impl LanguageModel + 'static) -> Self {
        self.driver = Some(DriverChoice::React(Arc::new(model)));
        self
    }

    /// Uses your own driver.
    pub fn with_driver(mut self, driver: impl AgentDriver + 'static) -> Self {
        self.driver = Some(DriverChoice::Custom(Arc::new(driver)));
        self
    }

    /// The model name and sampling settings sent with each request, all at once: the same
    /// [`ModelSettings`] value the providers and agent definitions take. What it leaves unset
    /// (an empty model name, no temperature or token limit) is left to the provider.
    pub fn with_model_settings(mut self, settings: ModelSettings) -> Self {
        self.model_settings = settings;
        self
    }

    /// The model name sent with each request (default: the provider's configured model).
    pub fn with_model_name(mut self, name: impl Into<String>) -> Self {
        self.model_settings.model = name.into();
        self
    }

    /// Sampling temperature.
    pub fn with_temperature(mut self, temperature: f32) -> Self {
        self.model_settings.temperature = Some(temperature);
        self
    }

    /// Completion token limit per request.
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.model_settings.max_tokens = Some(max_tokens);
        self
    }

    /// Lets the model ask for several tool calls at once, run concurrently (default off).
    pub fn with_parallel_tool_calls(mut self, parallel: bool) -> Self {
        self.parallel_tool_calls = parallel;
        self
    }

    /// Streams model answers (text deltas arrive as [`AgentEvent::TextDelta`]).
    pub fn with_streaming(mut self, streaming: bool) -> Self {
        self.streaming = streaming;
        self
    }

    /// Recognises a tool call the model wrote as JSON text instead of a native call (small
    /// local models do this), under the trust model of `docs/drivers.md`: a reply that is
    /// only calls runs them; a call after prose runs only for a read-only tool; a call the
    /// model read in a tool result or user message never runs; native calls always win.
    ///
    /// Default: on when the model's endpoint is a loopback or private address (a local
    /// server, see [`inference::is_local_endpoint`]) or the model has no endpoint (a custom or
    /// scripted model), off for a hosted API, which calls tools natively.
    pub fn with_content_tool_call_recovery(mut self, enabled: bool) -> Self {
        self.content_tool_call_recovery = Some(enabled);
        self
    }

    /// How a call recovered from the model's text is shown to the model in the requests
    /// after it (default [`RecoveredCallsShown::Native`]): as a native call and tool result,
    /// or as the model wrote it with its result as tool output (see
    /// [`RecoveredCallsShown`]). The saved conversation and the trace are the same either
    /// way. Only the tool-calling driver recovers calls.
    pub fn with_recovered_calls_shown(mut self, shown: RecoveredCallsShown) -> Self {
        self.recovered_calls_shown = shown;
        self
    }

    /// Text telling the model how to call a tool, sent with the system prompt of every
    /// request that offers tools and left out of those that offer none (the answer on stop):
    /// see [`ToolCallingDriver::with_tool_call_hint`]. The CLI sets one for small local models
    /// ("If you cannot, reply with only one JSON object ..."). Only the tool-calling driver
    /// sends it; a subagent inherits it.
    pub fn with_tool_call_hint(mut self, hint: impl Into<String>) -> Self {
        self.tool_call_hint = Some(hint.into());
        self
    }

    /// Never accepts a reply that writes tool results itself as an answer (on by default, for
    /// the tool-calling driver): such a reply (a copied digest note, `<tool_response>` text) is
    /// withheld, the model is told to call the tool, and the execution goes on; after two in a
    /// row it stops, and the answer-on-stop rules apply. See
    /// [`forged_evidence`](drivers_toolcalling::forged_evidence).
    pub fn with_forged_evidence_check(mut self, enabled: bool) -> Self {
        self.forged_evidence_check = enabled;
        self
    }

    /// In the separated trace modes (ephemeral, digest), with tools, the system prompt ends
    /// with [`SEPARATED_TRACE_NOTE`]: the conversation shows answers without the tool calls
    /// behind them, and a small model that sees only that stops calling tools. On by default.
    pub fn with_trace_mode_note(mut self, enabled: bool) -> Self {
        self.trace_mode_note = enabled;
        self
    }

    /// Adds a tool.
    pub fn with_tool(mut self, tool: impl Tool + 'static) -> Self {
        self.core = self.core.with_tool(tool);
        self
    }

    /// Adds shared tools.
    pub fn with_tools(mut self, tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> Self {
        self.core = self.core.with_tools(tools);
        self
    }

    /// Adds a source of tools that may change while the agent runs (an MCP server's, via
    /// `McpClient::tool_source`): asked before every step, its tools are offered after the
    /// agent's own (a name the agent already has stays the agent's).
    pub fn with_tool_source(mut self, source: Arc<dyn ToolSource>) -> Self {
        self.core = self.core.with_tool_source(source);
        self
    }

    /// Adds every tool of a registry.
    pub fn with_tool_set(mut self, tools: &Tools) -> Self {
        self.core = self.core.with_tools(tools.iter().cloned());
        self
    }

    /// The system prompt (sent first in every request, never stored in the conversation).
    pub fn with_system_prompt(mut self, prompt: impl Into<String>) -> Self {
        let prompt = prompt.into().trim().to_owned();
        self.system_prompt = (!prompt.is_empty()).then_some(prompt);
        self
    }

    /// `true`: tool calls and results live in the ephemeral execution buffer and only user
    /// messages and final answers persist; `false` (default): legacy, everything persists.
    pub fn with_separated_tool_trace(mut self, separated: bool) -> Self {
        self.retention = if separated {
            TraceRetention::Ephemeral
        } else {
            TraceRetention::Full
        };
        self
    }

    /// What of the tool trace persists after an execution (separated modes: `Ephemeral`,
    /// `Digest`; `Full` is legacy; `Masked` is legacy with old tool outputs replaced by
    /// placeholders, see [`with_observation_masking`](Self::with_observation_masking)).
    pub fn with_trace_retention(mut self, retention: TraceRetention) -> Self {
        self.retention = retention;
        self
    }

    /// Observation masking: every tool call and result persists, as in legacy mode, but the
    /// outputs of executions older than the last `keep` become one-line placeholders (the same
    /// as `with_trace_retention(TraceRetention::masked(keep))`).
    pub fn with_observation_masking(self, keep: usize) -> Self {
        self.with_trace_retention(TraceRetention::masked(keep))
    }

    /// Step limit per execution (default 20).
    pub fn with_max_steps(mut self, max_steps: usize) -> Self {
        self.core = self.core.with_max_steps(max_steps);
        self
    }

    /// Token limit per execution (off by default).
    pub fn with_token_limit(mut self, max_tokens: u64) -> Self {
        self.core = self.core.with_token_limit(max_tokens);
        self
    }

    /// Time limit per execution (off by default).
    pub fn with_time_limit(mut self, limit: Duration) -> Self {
        self.core = self.core.with_time_limit(limit);
        self
    }

    /// How errors are handled (default: retry tool errors up to 3 times in a row).
    pub fn with_error_policy(mut self, policy: ErrorPolicy) -> Self {
        self.core = self.core.with_error_policy(policy);
        self
    }

    /// Adds a processor. Your processors wrap the standard ones (outer layers, in the order
    /// added): their post-step logic sees the step's messages already persisted.
    pub fn with_processor(mut self, processor: impl StateProcessor + 'static) -> Self {
        self.core = self.core.with_processor(processor);
        self
    }

    /// Adds a shared processor (see [`with_processor`](Self::with_processor)).
    pub fn with_shared_processor(mut self, processor: Arc<dyn StateProcessor>) -> Self {
        self.core = self.core.with_shared_processor(processor);
        self
    }

    /// Adds a continuation criterion.
    pub fn with_criterion(mut self, criterion: impl ContinuationCriterion + 'static) -> Self {
        self.core = self.core.with_criterion(criterion);
        self
    }

    /// Installs a capability now.
    pub fn with_capability(self, capability: impl AgentCapability) -> Self {
        capability.install(self)
    }

    /// Records a capability's installation failure; `build` reports it.
    pub fn with_capability_error(mut self, capability: &str, reason: impl Into<String>) -> Self {
        self.capability_errors.push(BuildError::Capability {
            capability: capability.to_owned(),
            reason: reason.into(),
        });
        self
    }

    /// Adds an event listener.
    pub fn on_event(mut self, listener: impl Fn(&AgentEvent) + Send + Sync + 'static) -> Self {
        self.core = self.core.on_event(listener);
        self
    }

    /// Adds a shared event listener.
    pub fn on_shared_event(mut self, listener: Arc<dyn Fn(&AgentEvent) + Send + Sync>) -> Self {
        self.core = self.core.on_shared_event(listener);
        self
    }

    /// Adds a tool hook (may block or rewrite calls and results). The hooks run as one layer
    /// of the tool-call onion, in the order added (see [`with_tool_layer`](Self::with_tool_layer)).
    pub fn with_tool_hook(mut self, hook: impl ToolHook + 'static) -> Self {
        self.core = self.core.with_tool_hook(Arc::new(hook));
        self
    }

    /// Adds a shared tool hook.
    pub fn with_shared_tool_hook(mut self, hook: Arc<dyn ToolHook>) -> Self {
        self.core = self.core.with_tool_hook(hook);
        self
    }

    /// Adds `layer` to the tool-call onion, inside the standard layers, the tool hooks and the
    /// layers added before it: it sees every call that is going to run and its execution
    /// (see `agents_core::tools::standard_tool_layers`). For a rate limiter, an audit log, a
    /// guard of your own.
    pub fn with_tool_layer(self, layer: impl ToolLayer + 'static) -> Self {
        self.with_shared_tool_layer(Arc::new(layer))
    }

    /// Adds a shared tool layer.
    pub fn with_shared_tool_layer(mut self, layer: Arc<dyn ToolLayer>) -> Self {
        self.core = self.core.with_tool_layer(layer);
        self
    }

    /// Runs `hook` before every tool call; it may let the call proceed, rewrite it or block it
    /// (a blocked call's reason goes back to the model as a tool error).
    pub fn on_before_tool(
        self,
        hook: impl Fn(&ToolCall, &ToolContext) -> ToolHookDecision + Send + Sync + 'static,
    ) -> Self {
        self.with_tool_hook(BeforeToolHook::new(hook))
    }

    /// Runs `hook` after every tool call; it may rewrite the execution record.
    pub fn on_after_tool(
        self,
        hook: impl Fn(ToolExecution, &ToolContext) -> ToolExecution + Send + Sync + 'static,
    ) -> Self {
        self.with_tool_hook(AfterToolHook::new(hook))
    }

    /// Defers `step` to [`build`](Self::build): it runs on the builder after everything else
    /// was configured (capabilities that need the final tools, hooks or listeners use this).
    pub fn on_build(
        mut self,
        step: impl Fn(AgentBuilder) -> AgentBuilder + Send + Sync + 'static,
    ) -> Self {
        self.build_steps.push(Arc::new(step));
        self
    }

    /// Wraps the driver `build` creates (the first layer added is the innermost).
    pub fn with_driver_layer(
        mut self,
        layer: impl Fn(Arc<dyn AgentDriver>) -> Arc<dyn AgentDriver> + Send + Sync + 'static,
    ) -> Self {
        self.driver_layers.push(Arc::new(layer));
        self
    }

    /// What to append when an execution stops without a final answer (a limit, an error,
    /// repeated calls, a guard): [`AnswerOnStop::Synthesize`] (one inference without tools
    /// answers from what was found), [`AnswerOnStop::Notice`] or [`AnswerOnStop::Nothing`].
    /// Default: `Synthesize` in every trace mode but legacy (separated, digest, observation
    /// masking), `Nothing` in legacy (the original behaviour). Keeping the calls is not
    /// enough: an execution that stopped before any call (a plan refused twice) left the
    /// person's message unanswered in the conversation, and at the next turn the 1.5B model
    /// answered that older message instead of the new one (issue 32's 32-turn conversation in
    /// masked mode, where four such turns shifted later answers by one turn). A cancelled
    /// execution always gets a notice.
    pub fn with_answer_on_stop(mut self, answer: AnswerOnStop) -> Self {
        self.answer_on_stop = Some(answer);
        self
    }

    /// Every call of these tools waits for a person's approval: the step runs the other
    /// calls, then the run suspends (`AgentStatus::Suspended`, `state.pending_approvals()`)
    /// until each waiting call is decided (`state.approve`, `approve_with`, `reject`); the
    /// next `step`/`execute` runs the approved ones. See `docs/approvals.md`.
    ///
    /// Naming `write_file` names `append_file` too (see
    /// [`names_tool`](crate::capabilities::files::names_tool)).
    pub fn with_approval_required<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut names: Vec<String> = names.into_iter().map(Into::into).collect();
        if names_tool(names.iter().map(String::as_str), "append_file")
            && !names.iter().any(|name| name == "append_file")
        {
            names.push("append_file".to_owned());
        }
        self.core = self.core.with_approval_required(names);
        self
    }

    /// Every call `policy` accepts waits for a person's approval (e.g. only `rm` commands);
    /// see [`with_approval_required`](Self::with_approval_required).
    pub fn with_approval_policy(
        mut self,
        policy: impl Fn(&ToolCall) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.core = self.core.with_approval_policy(policy);
        self
    }

    /// Refuses the `limit`-th identical call (same tool, same arguments) in one execution with
    /// a tool error quoting the earlier result; a model that keeps repeating is stopped with
    /// `StopReason::RepeatedToolCalls`. Default 3.
    pub fn with_repeated_call_limit(mut self, limit: u32) -> Self {
        self.core = self.core.with_repeated_call_limit(limit);
        self
    }

    /// Cuts every tool result the model sees to `chars` characters, with a note saying how
    /// much was left out and how to read the rest. Default: 30,000, or a quarter of the
    /// model's context window in characters when that is less
    /// ([`tool_output_limit_for`](agents_core::tools::tool_output_limit_for)).
    pub fn with_tool_output_limit(mut self, chars: usize) -> Self {
        self.core = self.core.with_tool_output_limit(chars);
        self.tool_output_limit_chosen = true;
        self
    }

    /// Timeout of every tool call (default 120 s): a call past it gets a tool-error result
    /// naming the timeout, and the run goes on.
    pub fn with_tool_timeout(mut self, timeout: Duration) -> Self {
        self.core = self.core.with_tool_timeout(timeout);
        self
    }

    /// Timeout of the tool `name`'s calls.
    pub fn with_timeout_for_tool(mut self, name: impl Into<String>, timeout: Duration) -> Self {
        self.core = self.core.with_timeout_for_tool(name, timeout);
        self
    }

    /// The tools added so far.
    pub fn tools(&self) -> &[Arc<dyn Tool>] {
        self.core.tools()
    }

    /// The event listeners added so far (subagents inherit them).
    pub fn listeners(&self) -> &[Listener] {
        self.core.listeners()
    }

    /// The tool hooks added so far (subagents inherit them).
    pub fn tool_hooks(&self) -> &[Arc<dyn ToolHook>] {
        self.core.tool_hooks()
    }

    /// The tool layers added so far, outermost first (subagents inherit them).
    pub fn tool_layers(&self) -> &[Arc<dyn ToolLayer>] {
        self.core.tool_layers()
    }

    /// The configured trace retention.
    pub fn retention(&self) -> &TraceRetention {
        &self.retention
    }

    /// The agent's name: `gen_ai.agent.name` and the `invoke_agent {name}` span name
    /// (default `agent`; a subagent is named after its definition).
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.core = self.core.with_name(name);
        self
    }

    /// Records contents on the agent's spans when `capture` is true: each step's output
    /// messages, tool arguments and tool results (see [`Agent::with_content_capture`]).
    /// Off by default. Subagents inherit it.
    pub fn with_content_capture(mut self, capture: bool) -> Self {
        self.core = self.core.with_content_capture(capture);
        self
    }

    /// Prices steps with `catalog` instead of [`ModelCatalog::builtin`] (and reads context
    /// windows from it). Subagents inherit it.
    pub fn with_model_catalog(mut self, catalog: ModelCatalog) -> Self {
        self.core = self.core.with_model_catalog(catalog);
        self
    }

    /// Stops an execution with [`StopReason::CostLimit`](crate::StopReason) once its priced
    /// cost reaches `usd` dollars; the answer-on-stop rules then apply (see
    /// [`Agent::with_cost_limit`]).
    pub fn with_cost_limit(mut self, usd: f64) -> Self {
        self.core = self.core.with_cost_limit(usd);
        self
    }

    /// Takes `tokens` as the model's context window, over the catalog's: for a model the
    /// catalog does not know, or a local server started with a context of its own
    /// (llama-server's `-c`). It bounds each tool result the model sees (unless
    /// [`with_tool_output_limit`](Self::with_tool_output_limit) chose a limit), sizes
    /// [`UseSummarization`](crate::capabilities::UseSummarization)'s window fraction, and
    /// a request past 80% of it is reported (`AgentEvent::ContextWindowNearlyFull`).
    pub fn with_context_window(mut self, tokens: u64) -> Self {
        self.core = self.core.with_context_window(tokens);
        self
    }

    /// The context window of the model the agent will talk to: the one given with
    /// [`with_context_window`](Self::with_context_window), else the catalog's for its model
    /// name (else the model's own); `None` when unknown.
    pub(crate) fn context_window(&self) -> Option<u64> {
        if let Some(tokens) = self.core.context_window() {
            return Some(tokens);
        }
        let name = self
            .model_settings
            .chosen_model()
            .map(str::to_owned)
            .or_else(|| match &self.driver {
                Some(DriverChoice::ToolCalling(model) | DriverChoice::React(model)) => {
                    Some(model.name())
                }
                _ => None,
            })?;
        let lookup = |catalog: &ModelCatalog| catalog.lookup(&name);
        match self.core.model_catalog() {
            Some(catalog) => lookup(catalog),
            None => lookup(&ModelCatalog::builtin()),
        }?
        .context_window
    }

    /// Builds the agent: the driver for the model (with its layers), the criteria that tell
    /// when that driver's model has finished, the processors of the trace mode, the system
    /// prompt; everything else is the core builder's ([`agents_core::AgentBuilder`]).
    ///
    /// # Errors
    /// [`BuildError`] when no model or driver was given, two tools share a name, the step
    /// limit is zero, or a capability failed to install.
    pub fn build(mut self) -> Result<Agent, BuildError> {
        for step in std::mem::take(&mut self.build_steps) {
            self = step(self);
        }
        if let Some(error) = self.capability_errors.first() {
            return Err(error.clone());
        }
        if !self.tool_output_limit_chosen {
            if let Some(window) = self.context_window() {
                self.core = self
                    .core
                    .with_tool_output_limit(tool_output_limit_for(window));
            }
        }
        let choice = self.driver.clone().ok_or(BuildError::MissingModel)?;
        let react = matches!(choice, DriverChoice::React(_));
        let checks_forgery =
            self.forged_evidence_check && matches!(choice, DriverChoice::ToolCalling(_));
        let mut driver = self.driver(choice);
        if checks_forgery {
            driver = Arc::new(RefuseForgedEvidence::new(driver));
        }
        let driver = self
            .driver_layers
            .iter()
            .fold(driver, |driver, layer| layer(driver));
        let mut finish: Vec<Arc<dyn ContinuationCriterion>> = if react {
            vec![Arc::new(StopOnFinalDecision::new())]
        } else {
            vec![Arc::new(ToolCallPresenceCheck::new())]
        };
        if checks_forgery {
            finish.push(Arc::new(ForgedEvidenceCheck::new()));
        }
        let core = self
            .core
            .clone()
            .with_shared_driver(driver)
            .with_finish_checks(finish)
            .with_standard_processors(standard_processors(self.retention.clone()))
            .with_cached_context(self.cached_context())
            .with_answer_on_stop(self.answer_on_stop());
        Ok(core.build()?)
    }

    /// A builder for a subagent of this agent: the same driver kind, model settings, tool hooks,
    /// event listeners, tool timeouts, error policy and step limit; the tools named in
    /// `allowed_tools` (all when `None`); its own system prompt; separated tool trace. With
    /// `model`, the child talks to that model instead of the parent's.
    pub(crate) fn subagent_builder(
        &self,
        system_prompt: &str,
        allowed_tools: Option<&[String]>,
        model: Option<Arc<dyn LanguageModel>>,
    ) -> AgentBuilder {
        let driver = match (&self.driver, model) {
            (Some(DriverChoice::React(_)), Some(model)) => Some(DriverChoice::React(model)),
            (_, Some(model)) => Some(DriverChoice::ToolCalling(model)),
            (inherited, None) => inherited.clone(),
        };
        let mut core = agents_core::AgentBuilder::new()
            .with_tools(
                self.core
                    .tools()
                    .iter()
                    .filter(|tool| {
                        allowed_tools.is_none_or(|names| names.iter().any(|n| n == tool.name()))
                    })
                    .cloned(),
            )
            .with_max_steps(self.core.max_steps())
            .with_error_policy(self.core.error_policy())
            .with_content_capture(self.core.captures_content())
            // A subagent never runs a call its parent would have to approve.
            .with_approvals(self.core.approval_policy().clone());
        for source in self.core.tool_sources() {
            core = core.with_tool_source(match allowed_tools {
                None => Arc::clone(source),
                Some(names) => Arc::new(OnlyNamed {
                    source: Arc::clone(source),
                    names: names.to_vec(),
                }) as Arc<dyn ToolSource>,
            });
        }
        for listener in self.core.listeners() {
            core = core.on_shared_event(Arc::clone(listener));
        }
        for hook in self.core.tool_hooks() {
            core = core.with_tool_hook(Arc::clone(hook));
        }
        for layer in self.core.tool_layers() {
            core = core.with_tool_layer(Arc::clone(layer));
        }
        let (timeout, timeouts) = self.core.tool_timeouts();
        if let Some(timeout) = timeout {
            core = core.with_tool_timeout(timeout);
        }
        for (name, timeout) in timeouts {
            core = core.with_timeout_for_tool(name.clone(), *timeout);
        }
        if let Some(catalog) = self.core.model_catalog() {
            core = core.with_model_catalog(catalog.clone());
        }
        let inherit_model_settings = matches!(
            (&self.driver, &driver),
            (Some(DriverChoice::ToolCalling(a)), Some(DriverChoice::ToolCalling(b)))
            | (Some(DriverChoice::React(a)), Some(DriverChoice::React(b))) if Arc::ptr_eq(a, b)
        );
        // The same model has the same context window (and so the same bound on a result).
        if let Some(tokens) = self
            .core
            .context_window()
            .filter(|_| inherit_model_settings)
        {
            core = core.with_context_window(tokens);
        }
        AgentBuilder {
            core,
            driver,
            // The sampling settings carry over; the model name only with the same model.
            model_settings: ModelSettings {
                model: if inherit_model_settings {
                    self.model_settings.model.clone()
                } else {
                    String::new()
                },
                ..self.model_settings.clone()
            },
            parallel_tool_calls: self.parallel_tool_calls,
            streaming: self.streaming,
            content_tool_call_recovery: self.content_tool_call_recovery,
            recovered_calls_shown: self.recovered_calls_shown,
            tool_call_hint: self.tool_call_hint.clone(),
            retention: TraceRetention::Ephemeral,
            // A subagent's conversation starts afresh with each call: no earlier answers.
            trace_mode_note: false,
            ..AgentBuilder::new()
        }
        .with_system_prompt(system_prompt)
    }

    fn driver(&self, choice: DriverChoice) -> Arc<dyn AgentDriver> {
        match choice {
            DriverChoice::Custom(driver) => driver,
            DriverChoice::ToolCalling(model) => {
                // Default: on for a local server (or a model without one), off for a hosted API.
                let recover = self.content_tool_call_recovery.unwrap_or_else(|| {
                    model
                        .endpoint()
                        .is_none_or(|url| inference::is_local_endpoint(&url))
                });
                let driver = ToolCallingDriver::from_shared(model)
                    .with_model_settings(self.model_settings.clone())
                    .with_parallel_tool_calls(self.parallel_tool_calls)
                    .with_streaming(self.streaming)
                    .with_content_tool_call_recovery(recover)
                    .with_recovered_calls_shown(self.recovered_calls_shown);
                Arc::new(match &self.tool_call_hint {
                    Some(hint) => driver.with_tool_call_hint(hint.clone()),
                    None => driver,
                })
            }
            DriverChoice::React(model) => Arc::new(
                ReActDriver::from_shared(model).with_model_settings(self.model_settings.clone()),
            ),
        }
    }

    /// The answer-on-stop mode: as configured, else by trace mode.
    fn answer_on_stop(&self) -> AnswerOnStop {
        self.answer_on_stop
            .unwrap_or(if matches!(self.retention, TraceRetention::Full) {
                AnswerOnStop::Nothing
            } else {
                AnswerOnStop::Synthesize
            })
    }

    /// The request prefix: the system prompt, with the separated-trace note when it applies.
    fn cached_context(&self) -> CachedContext {
        let has_tools = !self.core.tools().is_empty() || !self.core.tool_sources().is_empty();
        let note = (self.trace_mode_note && has_tools && self.retention.is_separated())
            .then_some(SEPARATED_TRACE_NOTE);
        let prompt = match (&self.system_prompt, note) {
            (Some(prompt), Some(note)) => format!("{prompt}\n\n{note}"),
            (Some(prompt), None) => prompt.clone(),
            (None, Some(note)) => note.to_owned(),
            (None, None) => return CachedContext::new(),
        };
        CachedContext::new().with_messages(vec![Message::system(prompt)])
    }
}

impl std::fmt::Debug for AgentBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentBuilder")
            .field("core", &self.core)
            .field("retention", &self.retention)
            .finish_non_exhaustive()
    }
}

/// A parent's tool source as a subagent sees it: only the tools its `allowed_tools` names.
struct OnlyNamed {
    source: Arc<dyn ToolSource>,
    names: Vec<String>,
}

#[async_trait::async_trait]
impl ToolSource for OnlyNamed {
    async fn tools(&self) -> Vec<Arc<dyn Tool>> {
        let mut tools = self.source.tools().await;
        tools.retain(|tool| self.names.iter().any(|name| name == tool.name()));
        tools
    }
}
