//! `ToolCallingDriver`: one agent step through the model's native tool calling.

use std::sync::Arc;

use agents_core::{
    AgentDriver, AgentError, AgentEvent, AgentState, AgentStep, CachedContext, ErrorType,
    EventSource, PreviousCalls, StepContext, StepError, StepParts, ToolExecution, ToolExecutions,
    ToolExecutor, ToolFailureKind, Tools, BUFFER_SECTION, DEFAULT_SECTION, SUMMARY_SECTION,
};
use async_trait::async_trait;
use futures::future::Either;
use futures::{StreamExt, TryFutureExt};
use inference::{
    FinishReason, InferenceEvent, InferenceRequest, InferenceResponse, LanguageModel,
    ModelSettings, ResponseFormat, StreamAccumulator, ToolChoice,
};
use messages::{Message, Messages, Role, ToolCall};

use crate::backticks::in_backticks;
use crate::contradicted_listing::contradicts_a_listing_on_stop;
use crate::copied_error::copies_an_error_of_the_execution;
use crate::copied_instructions::{copies_instructions, work_left_nudge};
use crate::disowned_tools::{disowns_the_tools, every_call_succeeded};
use crate::failed_calls::{gives_up_on_a_shown_file_on_stop, ignores_failures_on_stop};
use crate::latest_results::{execution_messages, request, text_of, without_last};
use crate::misquoted_result::misquotes_a_result_of;
use crate::plan_reply::plan_on_stop;
use crate::plan_steps::step_done_note;
use crate::predicted_answer::predicted_on_stop;
use crate::recover::{
    cut_inside_a_call, is_tool_call_text, repeats_itself, tool_response_as_call_tags,
};
use crate::reply_nudge::Nudges;
use crate::shown_calls::RecoveredCallsShown;
use crate::step_messages::format_step_messages;
use crate::trust::{done_already, judge_text_calls};
use crate::unread_file::named_files;

/// Runs one agent step with native tool calls: sends the conversation and the tool schemas,
/// runs the calls the model asks for, and returns the step with its tool trace and its answer
/// kept apart.
///
/// The request is built from the state's cached context (its messages first, then its tools,
/// tool choice and response format as fallbacks) and `state.messages_for_inference()`. The
/// tools sent are those of the `Tools` registry (the cached ones when the registry is empty).
///
/// Finish reasons `length`, `content_filter` and `error` are recorded as step errors so that
/// the error policy sees them, except a reply cut at the token limit whose calls ran: that one
/// keeps finish reason `length`, and the model is told (after the last tool result) that its
/// reply was cut. An empty reply (no text, no calls) is asked for once more with a short
/// nudge; a second empty reply is recorded as it is (see `EmptyResponseCheck`). Inference
/// failures are returned as [`AgentError::Inference`].
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use agents_core::{AgentDriver, AgentState, DefaultToolExecutor, StepContext, Tools};
/// use drivers_toolcalling::ToolCallingDriver;
/// use inference::{InferenceResponse, ScriptedModel};
///
/// let model = ScriptedModel::new([InferenceResponse::text("Hello!")]);
/// let driver = ToolCallingDriver::new(model.clone()).with_temperature(0.0);
/// let state = AgentState::new().with_user_message("Hi");
/// let step = driver
///     .next_step(&state, &Tools::new(), &DefaultToolExecutor::new(), &StepContext::default())
///     .await
///     .unwrap();
/// assert_eq!(step.response_messages().to_transcript(), "assistant: Hello!\n");
/// assert_eq!(model.requests()[0].temperature, Some(0.0));
/// # });
/// ```
#[derive(Clone)]
pub struct ToolCallingDriver {
    model: Arc<dyn LanguageModel>,
    settings: ModelSettings,
    parallel_tool_calls: bool,
    tool_choice: Option<ToolChoice>,
    response_format: Option<ResponseFormat>,
    streaming: bool,
    content_tool_call_recovery: bool,
    recovered_calls_shown: RecoveredCallsShown,
    max_calls_per_step: usize,
    tool_call_hint: Option<String>,
}

impl ToolCallingDriver {
    /// A driver for `model` with provider defaults: one tool call at a time, no streaming,
    /// recovery of calls written as text on (see
    /// [`with_content_tool_call_recovery`](Self::with_content_tool_call_recovery)).
    pub fn new(model: impl LanguageModel + 'static) -> Self {
        Self::from_shared(Arc::new(model))
    }

    /// A driver for a shared model.
    pub fn from_shared(model: Arc<dyn LanguageModel>) -> Self {
        Self {
            model,
            settings: ModelSettings::default(),
            parallel_tool_calls: false,
            tool_choice: None,
            response_format: None,
            streaming: false,
            content_tool_call_recovery: true,
            recovered_calls_shown: RecoveredCallsShown::default(),
            max_calls_per_step: DEFAULT_MAX_CALLS_PER_STEP,
            tool_call_hint: None,
        }
    }

    /// Sets the model name and sampling settings sent with each request, all at once (what
    /// the `agents` crate's builder or an agent definition holds). A setting
    /// left unset (an empty model name, no temperature or token limit) is left to the
    /// provider.
    pub fn with_model_settings(mut self, settings: ModelSettings) -> Self {
        self.settings = settings;
        self
    }

    /// The model name and sampling settings sent with each request.
    pub fn model_settings(&self) -> &ModelSettings {
        &self.settings
    }

    /// Sets the model name sent with each request (default: the provider's configured model).
    pub fn with_model_name(mut self, name: impl Into<String>) -> Self {
        self.settings.model = name.into();
        self
    }

    /// Sets the sampling temperature.
    pub fn with_temperature(mut self, temperature: f32) -> Self {
        self.settings.temperature = Some(temperature);
        self
    }

    /// Sets the completion token limit.
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.settings.max_tokens = Some(max_tokens);
        self
    }

    /// Lets the model ask for several tool calls at once and runs them concurrently
    /// (default: off, calls run one after another).
    pub fn with_parallel_tool_calls(mut self, parallel: bool) -> Self {
        self.parallel_tool_calls = parallel;
        self
    }

    /// Sets the tool choice (default: the cached one, else the provider's).
    pub fn with_tool_choice(mut self, choice: ToolChoice) -> Self {
        self.tool_choice = Some(choice);
        self
    }

    /// Sets the response format (default: the cached one, else free text).
    pub fn with_response_format(mut self, format: ResponseFormat) -> Self {
        self.response_format = Some(format);
        self
    }

    /// Streams the answer and reports text as it arrives ([`AgentEvent::TextDelta`]).
    pub fn with_streaming(mut self, streaming: bool) -> Self {
        self.streaming = streaming;
        self
    }

    /// When tools were offered but the model wrote its call(s) as JSON text instead of native
    /// tool calls (small local models do), turn that text into calls (see
    /// [`recover_tool_calls`](crate::recover_tool_calls)). On by default; it fires when the
    /// whole reply is calls, or when the reply announces a call in prose and writes it in a
    /// code fence or `<tool_call>` tags (the first such call to a known tool runs, see
    /// [`recover_announced_call`](crate::recover_announced_call)); native tool calls always
    /// win. A recovered call to an
    /// unknown tool, or with unreadable arguments, does not run: the model gets a tool error
    /// saying how to fix it. From a reply cut at the token limit only the calls written out
    /// in full run.
    pub fn with_content_tool_call_recovery(mut self, enabled: bool) -> Self {
        self.content_tool_call_recovery = enabled;
        self
    }

    /// Text that tells the model how to call a tool (the CLI's "To use a tool, make a tool
    /// call. If you cannot, reply with only one JSON object ..."), sent only with requests
    /// that offer tools: appended, after a newline, to the system prompt (the request's first
    /// message when it is a system message; otherwise the hint is that first message). A
    /// request without tools, such as the answer on stop, goes without it: with it, the 0.5B
    /// model asked to answer from results it was given wrote a call instead (issue 36).
    pub fn with_tool_call_hint(mut self, hint: impl Into<String>) -> Self {
        let hint = hint.into();
        self.tool_call_hint = (!hint.trim().is_empty()).then_some(hint);
        self
    }

    /// How a call recovered from the model's text is shown to the model in the requests
    /// after it: as a native call and tool result (the default), or as the model wrote it,
    /// with its result as tool output in a user message (see [`RecoveredCallsShown`]). The
    /// state keeps native calls either way; only the requests differ.
    pub fn with_recovered_calls_shown(mut self, shown: RecoveredCallsShown) -> Self {
        self.recovered_calls_shown = shown;
        self
    }

    /// How recovered calls are shown back to the model (see
    /// [`with_recovered_calls_shown`](Self::with_recovered_calls_shown)).
    pub fn recovered_calls_shown(&self) -> RecoveredCallsShown {
        self.recovered_calls_shown
    }

    /// The most calls one reply may make (default [`DEFAULT_MAX_CALLS_PER_STEP`]): the calls
    /// past it do not run; each gets a tool error saying so.
    pub fn with_max_calls_per_step(mut self, max: usize) -> Self {
        self.max_calls_per_step = max.max(1);
        self
    }

    /// The request this driver sends for `state` with `tools` and the agent's request prefix
    /// `cached`.
    pub fn build_request(
        &self,
        state: &AgentState,
        tools: &Tools,
        cached: &CachedContext,
    ) -> InferenceRequest {
        self.request_for(state, cached, tools, &state.messages_for_inference())
    }

    /// After `response`, a reply to `input` that copied the model's instructions: when work
    /// is plainly left (`copied_instructions::work_left_nudge`), the reply to asking once
    /// more, without the copy in view, its usage added to the copy's; `None` otherwise. Its
    /// own future (boxed by the caller), so that the step's future does not hold its state.
    async fn ask_after_copy(
        &self,
        state: &AgentState,
        tools: &Tools,
        input: &Messages,
        source: &EventSource,
        context: &StepContext<'_>,
        response: &InferenceResponse,
    ) -> Result<Option<InferenceResponse>, AgentError> {
        let Some(nudge) = work_left_nudge(input, tools) else {
            return Ok(None);
        };
        tracing::info!("the model copied its instructions with work left; asking once more");
        context.emit_with(|| AgentEvent::ReplySetAside {
            source: source.clone(),
            reason: "the model copied its instructions".to_owned(),
            earlier_reply_stands: false,
        });
        let asked = input.appended(Message::user(nudge));
        let request = self.request_for(state, &context.cached_context, tools, &asked);
        let retry = self
            .infer("reply_after_copied_instructions", request, source, context)
            .await?;
        let usage = response.usage() + retry.usage();
        Ok(Some(retry.with_usage(usage)))
    }

    /// The request for `state` whose compiled conversation is `input`.
    fn request_for(
        &self,
        state: &AgentState,
        cached: &CachedContext,
        tools: &Tools,
        input: &Messages,
    ) -> InferenceRequest {
        let tools = cached.tool_schemas(tools);
        let has_tools = !tools.is_empty();
        let shown = self.recovered_calls_shown.show(input);
        // The hint joins the cached context (a message or two), never the whole history.
        let (messages, hint_added) = match &self.tool_call_hint {
            Some(hint) if has_tools => {
                let (prefix, added) = with_hint(&cached.messages, hint);
                (prefix.concat(&shown), added)
            }
            _ => (cached.messages.concat(&shown), false),
        };
        // Built in one piece: the request is a few hundred bytes, moved as little as possible.
        InferenceRequest {
            model: self.settings.chosen_model().map(str::to_owned),
            messages,
            tools,
            tool_choice: if has_tools {
                self.tool_choice
                    .clone()
                    .or_else(|| cached.tool_choice.clone())
            } else {
                None
            },
            response_format: self
                .response_format
                .clone()
                .or_else(|| cached.response_format.clone()),
            max_tokens: self.settings.max_tokens,
            temperature: self.settings.temperature,
            parallel_tool_calls: has_tools.then_some(self.parallel_tool_calls),
            options: Default::default(),
            cache_breakpoint: stable_prefix_len(
                state,
                cached.messages.len() + usize::from(hint_added),
            )
            .checked_sub(1),
        }
    }

    /// One inference (streaming or not), announced and reported as events.
    ///
    /// Not an `async fn`: the request moves into the model's future here, before the returned
    /// future is made, so that future does not hold it (an `async fn` held the 288-byte
    /// request twice, as its argument and as its local, and the step's future, which holds
    /// this one, grew past the allocator's small sizes: with the two boxes below, about 900
    /// instructions more per step to allocate and free it).
    fn infer<'a, 'c>(
        &'a self,
        key: &'a str,
        request: InferenceRequest,
        source: &'a EventSource,
        context: &'a StepContext<'c>,
    ) -> impl std::future::Future<Output = Result<InferenceResponse, AgentError>> + Send + use<'a, 'c>
    {
        context.emit_with(|| AgentEvent::InferenceRequested {
            source: source.clone(),
            message_count: request.messages.len(),
            model: self.settings.chosen_model().map(str::to_owned),
        });
        // The stream's state is boxed so that it does not grow the future of every
        // (non-streaming) step.
        let inference = if self.streaming {
            Either::Left(Box::pin(self.infer_streaming(request, source, context)))
        } else {
            Either::Right(
                self.model
                    .as_ref()
                    .complete(request)
                    .map_err(AgentError::from),
            )
        };
        async move {
            let started = context.events.is_observed().then(std::time::Instant::now);
            // A reply recorded in an interrupted run of this step is reused (what follows, id
            // assignment and recovery from text, is deterministic, so the calls keep their
            // ids).
            let response = context
                .journaled_inference(key, context.until_cancelled(inference))
                .await?;
            let latency = started.map(|started| started.elapsed()).unwrap_or_default();
            context.emit_with(|| AgentEvent::InferenceResponded {
                source: source.clone(),
                usage: response.usage(),
                finish_reason: response.finish_reason(),
                tool_calls: response.tool_calls().len(),
                latency,
            });
            // With recovery on, a call in `<tool_response>` tags, alone, is read as one in
            // `<tool_call>` tags.
            let normalized = (self.content_tool_call_recovery && response.tool_calls().is_empty())
                .then(|| tool_response_as_call_tags(response.content()))
                .flatten();
            Ok(match normalized {
                Some(content) => response.with_content(content),
                None => response,
            })
        }
    }

    /// Runs `calls` of a step of `state` through the tool-call onion, with the step's tool
    /// context. Its callers box this future: held inline (with the tool context it borrows),
    /// it made every step's future larger than the allocator's small sizes.
    async fn run_calls(
        &self,
        calls: &[ToolCall],
        state: &AgentState,
        tools: &Tools,
        executor: &dyn ToolExecutor,
        context: &StepContext<'_>,
    ) -> Result<ToolExecutions, AgentError> {
        context
            .run_tool_calls(
                executor,
                calls,
                tools,
                &context.tool_context(state),
                self.parallel_tool_calls,
            )
            .await
    }

    /// One inference through the model's stream, forwarding text deltas as events.
    async fn infer_streaming(
        &self,
        request: InferenceRequest,
        source: &EventSource,
        context: &StepContext<'_>,
    ) -> Result<InferenceResponse, AgentError> {
        // A stream's events do not name the model; the reply does, so that the step is
        // priced (the model asked for, else the provider's configured one).
        let model = request
            .model
            .clone()
            .or_else(|| configured_model(&*self.model));
        let mut stream = self.model.as_ref().stream(request).await?;
        let mut accumulator = StreamAccumulator::new();
        while let Some(event) = stream.next().await {
            let event = event?;
            if let InferenceEvent::TextDelta { text } = &event {
                context.emit_with(|| AgentEvent::TextDelta {
                    source: source.clone(),
                    delta: text.clone(),
                });
            }
            accumulator.push(&event);
        }
        let response = accumulator.finish()?;
        Ok(match model {
            Some(model) if response.model().is_none() => response.with_model(model),
            _ => response,
        })
    }
}

/// The cached context's `messages` with `hint` at the end of its system prompt: appended, after
/// a newline, to the first message when it is a system message, or as a system message before
/// the others (then `true`: one message more).
fn with_hint(messages: &Messages, hint: &str) -> (Messages, bool) {
    let mut all: Vec<Message> = messages.iter().cloned().collect();
    let added = match all.first_mut() {
        Some(first) if first.role() == Role::System => {
            *first = Message::system(format!("{}\n{hint}", first.text()));
            false
        }
        _ => {
            all.insert(0, Message::system(hint));
            true
        }
    };
    (Messages::from(all), added)
}

/// The model a provider is configured with, from its name (`openai-compatible/gpt-4o` →
/// `gpt-4o`); `None` for a name without a provider part (a test model).
fn configured_model(model: &dyn LanguageModel) -> Option<String> {
    let name = model.name();
    let (_, model) = name.split_once('/')?;
    (!model.is_empty()).then(|| model.to_owned())
}

/// Messages at the head of the request that the next request repeats unchanged: the cached
/// context and the persistent sections (`summary`, `buffer`, `messages`), before the
/// execution buffer. Providers with prompt caching put a breakpoint at its end.
fn stable_prefix_len(state: &AgentState, cached_messages: usize) -> usize {
    [SUMMARY_SECTION, BUFFER_SECTION, DEFAULT_SECTION]
        .iter()
        .map(|name| state.store().section(name).len())
        .sum::<usize>()
        + cached_messages
}

#[async_trait]
impl AgentDriver for ToolCallingDriver {
    async fn next_step(
        &self,
        state: &AgentState,
        tools: &Tools,
        executor: &dyn ToolExecutor,
        context: &StepContext<'_>,
    ) -> Result<AgentStep, AgentError> {
        let input = state.messages_for_inference();
        let source = EventSource::step(state);
        // The request moves into the model's (or the stream's) future, so the step's own future
        // never holds a copy of it (nor a slot for it: it is gone at the end of this block).
        let (offered_tools, inference) = {
            let request = self.request_for(state, &context.cached_context, tools, &input);
            (
                !request.tools.is_empty(),
                self.infer("reply", request, &source, context),
            )
        };
        let mut response = inference.await?;
        if is_empty_reply(&response) {
            // An empty reply is not an answer: ask once more, with a short nudge.
            tracing::info!("the model sent an empty reply; asking once more");
            let nudged = input.appended(Message::user(EMPTY_REPLY_NUDGE));
            let request = self.request_for(state, &context.cached_context, tools, &nudged);
            let first_usage = response.usage();
            let retry = Box::pin(self.infer("reply_retry", request, &source, context)).await?;
            let usage = first_usage + retry.usage();
            response = retry.with_usage(usage);
        }
        let recovering = self.content_tool_call_recovery && offered_tools;
        // Only a reply without native calls is judged, and only with recovery on.
        // The execution's calls so far, indexed only if a reply's text is judged.
        let previous = PreviousCalls::of(state);
        // Boxed: the nudges (440 bytes of what they learn of the execution) are kept across
        // the awaits that follow, and would make every step's future larger than the
        // allocator's small sizes.
        // A reply that copies the model's instructions is neither an answer nor a call, and
        // asked again the model copies again: it is not judged, and the run answers on stop;
        // unless the request names a file no call has used yet, then it is asked once more.
        let copies = |response: &InferenceResponse| {
            recovering
                && !response.has_tool_calls()
                && copies_instructions(
                    response.content(),
                    &context.cached_context.messages,
                    &input,
                    self.tool_call_hint.as_deref(),
                )
        };
        let mut copied_instructions = copies(&response);
        if copied_instructions {
            if let Some(retry) =
                Box::pin(self.ask_after_copy(state, tools, &input, &source, context, &response))
                    .await?
            {
                response = retry;
                copied_instructions = copies(&response);
            }
        }
        let mut nudges =
            (recovering && !response.has_tool_calls() && !copied_instructions).then(|| {
                let tools_ran = state.steps().any(|step| !step.tool_executions().is_empty());
                Box::new(Nudges::for_step(tools_ran, &input).with_previous(previous.clone()))
            });
        if let Some(nudges) = nudges.as_mut() {
            // A plan or a claim is not an answer: ask again in the same step, with the reply
            // and a nudge saying what is wrong; each kind of nudge once (see `reply_nudge`).
            let mut asked = input.clone();
            while let Some(nudge) = nudges.next_for_reply(&response, tools) {
                tracing::info!("{}; asking once more", nudge.reason());
                context.emit_with(|| AgentEvent::ReplySetAside {
                    source: source.clone(),
                    reason: nudge.reason().to_owned(),
                    earlier_reply_stands: false,
                });
                asked = nudge.asked_from(&asked);
                if nudge.shows_reply() {
                    asked = asked.appended(Message::assistant(response.content()));
                }
                asked = asked.appended(Message::user(nudges.message(
                    nudge,
                    response.content(),
                    tools,
                )));
                let request = self.request_for(state, &context.cached_context, tools, &asked);
                let earlier_usage = response.usage();
                let retry = Box::pin(self.infer(nudge.key(), request, &source, context)).await?;
                let usage = earlier_usage + retry.usage();
                let dropped = if is_empty_reply(&retry) {
                    Some("the reply to the nudge was empty")
                } else {
                    nudges.dropped_reply(nudge, &retry)
                };
                if let Some(reason) = dropped {
                    // An empty reply to a nudge takes nothing away, and some nudges' replies
                    // count only with a call or something new: the earlier reply stands.
                    context.emit_with(|| AgentEvent::ReplySetAside {
                        source: source.clone(),
                        reason: reason.to_owned(),
                        earlier_reply_stands: true,
                    });
                    response = response.with_usage(usage);
                    break;
                }
                response = retry.with_usage(usage);
                if response.has_tool_calls() {
                    break;
                }
            }
        }

        let truncated = response.finish_reason() == FinishReason::Length;
        let execution = state.execution().map(|e| e.id()).unwrap_or_default();
        // The number this step will have (its tool context's `step_number`).
        let step = state.next_step_number();
        // Calls answered with a tool error (how to fix them, or why they did not run) instead
        // of running.
        let mut refused: Vec<(String, ToolFailureKind, String)> = Vec::new();
        // Whether the step's calls were written as text (their lead-in is the step's text).
        let mut from_text = false;
        // The reply as the model wrote it, when its calls were read from its text: the step
        // keeps only the text before them, and a plan's next step may follow the call.
        let mut written = String::new();
        if self.content_tool_call_recovery
            && offered_tools
            && !response.has_tool_calls()
            && !copied_instructions
        {
            if let Some(text_calls) = judge_text_calls(
                response.content(),
                tools,
                &input,
                (execution, step),
                truncated,
            ) {
                let text_calls = done_already(text_calls, tools, &previous);
                from_text = true;
                refused = text_calls.refused;
                written = response.content().to_owned();
                response = response
                    .with_content(text_calls.content)
                    .with_calls(text_calls.calls);
                if !truncated {
                    response = response.with_finish_reason(FinishReason::ToolCalls);
                }
            }
        }
        // A plan, a copied tool error, a copied stop answer or a claim the calls do not show
        // that follows its nudge is not an answer either: it is not saved, and the step's error
        // stops the run, which answers on stop.
        let not_an_answer = nudges
            .filter(|_| !response.has_tool_calls())
            .and_then(|nudges| nudges.not_an_answer(response.content(), tools));
        if let Some(calls) = with_new_ids(response.tool_calls(), &input, execution, step) {
            response = response.with_calls(calls);
        }
        for (position, call) in response.tool_calls().iter().enumerate() {
            if !is_valid_tool_name(call.name()) {
                refused.push((
                    call.id().to_owned(),
                    ToolFailureKind::UnknownTool,
                    invalid_name_message(call.name(), tools),
                ));
            } else if position >= self.max_calls_per_step {
                refused.push((
                    call.id().to_owned(),
                    ToolFailureKind::Blocked,
                    too_many_calls_message(self.max_calls_per_step),
                ));
            }
        }
        let calls = response.tool_calls();

        // The tool context is built only for a step with calls: an answer step needs none.
        let executions = if calls.is_empty() {
            Default::default()
        } else if refused.is_empty() {
            Box::pin(self.run_calls(calls, state, tools, executor, context)).await?
        } else {
            let runnable: Vec<ToolCall> = calls
                .iter()
                .filter(|c| !refused.iter().any(|(id, _, _)| id == c.id()))
                .cloned()
                .collect();
            let ran = if runnable.is_empty() {
                ToolExecutions::new()
            } else {
                Box::pin(self.run_calls(&runnable, state, tools, executor, context)).await?
            };
            with_refusals(calls, ran, &refused, &source, context)
        };
        let mut messages = format_step_messages(&response, &executions);
        if from_text && !truncated {
            // A call that did a step of the numbered plan its reply's text holds: the model is
            // told which step is next.
            if let Some(note) = step_done_note(response.content(), &written, &executions) {
                messages.trace = with_note(&messages.trace, &note);
            }
        }
        let errors = if copied_instructions {
            tracing::info!("the model copied its instructions: not the answer");
            // Nor is it kept in the trace: the answer on stop, asked with the copy in view,
            // read it as the error that stopped the run ("The error message indicates that
            // the directory "fruits" does not exist.", development task d6 after its listing).
            messages.trace = Messages::new();
            messages.response = Messages::new();
            vec![StepError::not_an_answer(COPIED_INSTRUCTIONS_ERROR)]
        } else if let Some(kind) = not_an_answer {
            tracing::info!("{} after its nudge: not the answer", kind.reason());
            messages.response = Messages::new();
            vec![StepError::not_an_answer(format_args!(
                "({}), even after it was asked once more",
                kind.reason()
            ))]
        } else if truncated && !calls.is_empty() {
            // The calls ran (those written out in full); the model is told its reply was cut
            // and the run goes on.
            messages.trace = with_note(&messages.trace, CUT_REPLY_NOTE);
            Vec::new()
        } else if let Some(error) = recovering.then(|| cut_reply_error(&response)).flatten() {
            // A call cut off before it was complete (the 1.5B model wrote one whose content
            // ran on until the token cap), or a reply that looped until the cap: neither is an
            // answer. It is not saved; the step's error stops the run, which answers on stop.
            tracing::info!("{error}: not the answer");
            messages.response = Messages::new();
            vec![StepError::new(ErrorType::Model, error)]
        } else {
            finish_reason_error(response.finish_reason())
                .into_iter()
                .collect()
        };
        Ok(AgentStep::from_parts(StepParts {
            id: context.step_id.clone(),
            input_messages: input,
            trace_messages: messages.trace,
            response_messages: messages.response,
            tool_executions: executions,
            inference_response: Some(response),
            errors,
        }))
    }

    async fn answer_without_tools(
        &self,
        input: Messages,
        context: &StepContext<'_>,
    ) -> Result<Option<InferenceResponse>, AgentError> {
        // The conversation before the instruction to answer.
        let before = without_last(&input);
        if self.content_tool_call_recovery
            && execution_messages(&before).all(|message| message.tool_calls().is_empty())
            && request_names_a_file(&before)
        {
            // No call has looked at the file the request names, so nothing the model could
            // say of it comes from it: the notice says what happened instead. Asked for the
            // API key in `app.env` (it has none), the 1.5B model described a search twice,
            // never made it, and on stop answered "The API key is set in the app.env file."
            // (a probe of issue 36's task kinds, 2026-12-07).
            tracing::info!("no call looked at the file the request names: a notice, not an answer");
            return Ok(None);
        }
        let request = self.settings.apply_to(InferenceRequest::new(input.clone()));
        let response = context
            .until_cancelled(self.model.as_ref().complete(request))
            .await?;
        if is_tool_call_text(response.content()) || cut_reply_error(&response).is_some() {
            // Asked to answer without tools, a small model may write a call instead (complete,
            // or cut at its token limit: the 0.5B model on held-out task h4), or loop until the
            // cap: that is not an answer, so the loop appends its notice (the tokens still
            // count).
            tracing::info!(
                reason = cut_reply_error(&response).unwrap_or("the reply is a tool call"),
                "asked for an answer without tools, the model did not answer"
            );
            return Ok(Some(response.with_content("")));
        }
        if copies_an_error_of_the_execution(
            response.content(),
            &input,
            &context.previous_calls.errors(),
        ) {
            // Nor is a tool's error pasted or passed on as the reply (issue 36; the 0.5B
            // model's answers on stop at 2a09a54 copied errors from the page of results,
            // where no failed result is a tool message): the notice says why the run stopped
            // instead.
            tracing::info!("asked for an answer without tools, the model copied a tool error");
            return Ok(Some(response.with_content("")));
        }
        if self.content_tool_call_recovery
            && copies_instructions(
                response.content(),
                &Messages::new(),
                &input,
                self.tool_call_hint.as_deref(),
            )
        {
            // Nor a copy of its instructions (the step refuses it too): the loop asks once
            // more from a page of the results alone.
            tracing::info!("asked for an answer without tools, the model copied its instructions");
            return Ok(Some(response.with_content("")));
        }
        if self.content_tool_call_recovery
            && disowns_the_tools(response.content())
            && every_call_succeeded(execution_messages(&before))
        {
            // Nor a reply that says it cannot do what its calls did ("I don't have the ability
            // to list files", after the listing came back: d6): the loop asks once more from a
            // page of the results alone.
            tracing::info!("asked for an answer without tools, the model disowned its tools");
            return Ok(Some(response.with_content("")));
        }
        if self.content_tool_call_recovery
            && misquotes_a_result_of(response.content(), execution_messages(&before))
        {
            // Nor one that quotes as a tool's output lines no result holds (d18): the page of
            // results is asked next.
            tracing::info!("asked for an answer without tools, the model misquoted a result");
            return Ok(Some(response.with_content("")));
        }
        if self.content_tool_call_recovery
            && gives_up_on_a_shown_file_on_stop(&input, response.content())
        {
            // Nor one that gives up on a file an error showed is there (d10: "The files do
            // not exist" after "the workspace's top folder holds `a.txt`, `b.txt`"): the page
            // of results, then the notice, which quotes the error.
            tracing::info!("asked for an answer without tools, the model gave up on a shown file");
            return Ok(Some(response.with_content("")));
        }
        if self.content_tool_call_recovery && ignores_failures_on_stop(&input, response.content()) {
            // Nor one that answers as if a call had worked when every call failed (a probe's
            // "The last line of queue.txt was removed." after refused calls): the page of
            // results, then the notice, which says what failed.
            tracing::info!("asked for an answer without tools, the model ignored failed calls");
            return Ok(Some(response.with_content("")));
        }
        if self.content_tool_call_recovery && plan_on_stop(&input, response.content()) {
            // Nor a plan to use a tool the calls used (the step refuses it as an answer too):
            // the loop asks once more from a page of the results alone.
            tracing::info!("asked for an answer without tools, the model wrote a plan");
            return Ok(Some(response.with_content("")));
        }
        if self.content_tool_call_recovery && predicted_on_stop(&input, response.content()) {
            // Nor the guess written before any tool had returned, which the step refused: the
            // loop asks once more from a page of the results alone.
            tracing::info!(
                "asked for an answer without tools, the model gave the answer it wrote before \
                 any tool had returned"
            );
            return Ok(Some(response.with_content("")));
        }
        if self.content_tool_call_recovery
            && contradicts_a_listing_on_stop(&input, response.content())
        {
            // Nor one that a listing in view says otherwise (d20: 5 Markdown files beside
            // `3 .md files`): the page of results is asked next, then the notice.
            tracing::info!("asked for an answer without tools, the model contradicted a listing");
            return Ok(Some(response.with_content("")));
        }
        Ok(Some(response))
    }
}

/// Whether the running execution's request in `conversation` names a file.
fn request_names_a_file(conversation: &Messages) -> bool {
    request(conversation).is_some_and(|request| named_files(&text_of(request)).next().is_some())
}

/// The step error of a reply that copies the model's instructions (`copied_instructions`).
const COPIED_INSTRUCTIONS_ERROR: &str = "(it copies its instructions: its system prompt, the \
tool-call hint or its chat template's tool list); a call in it is not run";

/// Why a reply cut at its token limit (finish reason `length`) is not an answer: it stops
/// inside a call it was writing as text, or it was repeating itself. `None` for any other
/// reply, cut or not (a cut answer is kept, with the finish-reason error).
fn cut_reply_error(response: &InferenceResponse) -> Option<&'static str> {
    if response.finish_reason() != FinishReason::Length {
        return None;
    }
    if cut_inside_a_call(response.content()) {
        Some(CUT_CALL_ERROR)
    } else if repeats_itself(response.content()) {
        Some(LOOPED_REPLY_ERROR)
    } else {
        None
    }
}

/// The step error for a reply cut at the token limit inside a call written as text.
const CUT_CALL_ERROR: &str = "the model stopped at the token limit (finish reason `length`) \
inside a tool call it was writing as text; the call did not run, and it is not an answer";

/// The step error for a reply that repeated itself until the token limit.
const LOOPED_REPLY_ERROR: &str = "the model repeated the same lines until the token limit \
(finish reason `length`); the reply is not an answer";

/// What the model is told after an empty reply.
const EMPTY_REPLY_NUDGE: &str = "Your last reply was empty. Answer the request above in plain \
text, or call one of the tools.";

/// Appended to the last tool result when the reply that asked for the calls was cut.
const CUT_REPLY_NOTE: &str = "Note: your reply was cut off at the token limit (finish reason \
`length`). The calls written out in full ran; a call that was cut off did not. Keep replies \
short: one tool call at a time, or a brief answer.";

/// The default [`ToolCallingDriver::with_max_calls_per_step`]: 32 calls in one reply.
pub const DEFAULT_MAX_CALLS_PER_STEP: usize = 32;

/// Whether `name` can be a tool's name: 1 to 64 characters of `A-Z a-z 0-9 _ -` (what the
/// providers accept). A call with any other name is refused under its id (the history stays
/// valid) and never printed raw.
fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn invalid_name_message(name: &str, tools: &Tools) -> String {
    let shown: String = name.chars().take(80).collect();
    format!(
        "There is no tool named {shown:?}: a tool name is 1 to 64 characters of letters, \
         digits, `_` and `-`. The tools are: {}.",
        in_backticks(tools.names().iter(), ", ")
    )
}

fn too_many_calls_message(max: usize) -> String {
    format!(
        "This call was not run: one reply may make at most {max} calls, and this one came \
         after them. Send it again after reading the results of the others."
    )
}

/// No text and no tool calls.
fn is_empty_reply(response: &InferenceResponse) -> bool {
    !response.has_tool_calls() && response.content().trim().is_empty()
}

/// The executions of `calls` in call order: those that ran, and a failure with the fix-it
/// message for each refused call (reported as a completed tool call, like any other).
fn with_refusals(
    calls: &[ToolCall],
    ran: ToolExecutions,
    refused: &[(String, ToolFailureKind, String)],
    source: &EventSource,
    context: &StepContext<'_>,
) -> ToolExecutions {
    let now = context.clock.now();
    calls
        .iter()
        .filter_map(|call| {
            if let Some((_, kind, message)) = refused.iter().find(|(id, _, _)| id == call.id()) {
                let execution =
                    ToolExecution::failure(call.clone(), *kind, message.clone(), now, now);
                context.emit_with(|| AgentEvent::ToolCallCompleted {
                    source: source.clone(),
                    execution: execution.clone(),
                });
                Some(execution)
            } else {
                ran.iter().find(|e| e.id() == call.id()).cloned()
            }
        })
        .collect()
}

/// The trace with `note` added to its last tool result.
fn with_note(trace: &Messages, note: &str) -> Messages {
    let count = trace.len();
    trace
        .iter()
        .enumerate()
        .map(|(i, message)| {
            if i + 1 == count && message.role() == Role::Tool {
                message
                    .clone()
                    .with_content(format!("{}\n\n{note}", message.text()))
            } else {
                message.clone()
            }
        })
        .collect()
}

impl std::fmt::Debug for ToolCallingDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolCallingDriver")
            .field("model", &self.model.name())
            .field("settings", &self.settings)
            .field("parallel_tool_calls", &self.parallel_tool_calls)
            .field("streaming", &self.streaming)
            .field(
                "content_tool_call_recovery",
                &self.content_tool_call_recovery,
            )
            .field("recovered_calls_shown", &self.recovered_calls_shown)
            .finish_non_exhaustive()
    }
}

/// The step error for a finish reason that means the answer cannot be trusted.
pub(crate) fn finish_reason_error(reason: FinishReason) -> Option<StepError> {
    let message = match reason {
        FinishReason::Length => {
            "the model stopped at the token limit (finish reason `length`); its answer is incomplete"
        }
        FinishReason::ContentFilter => {
            "the provider's content filter stopped the answer (finish reason `content_filter`)"
        }
        FinishReason::Error => "the provider reported an error while generating (finish reason `error`)",
        _ => return None,
    };
    Some(StepError::new(ErrorType::Model, message))
}

/// Up to this many calls in one reply, their ids are compared pairwise rather than through a
/// set.
const FEW_CALLS: usize = 8;

/// An id must be replaced when it is empty (a server that sends none), already used in the
/// conversation, or used by an earlier call of the same reply (servers that number their
/// calls per reply).
fn replaced_id(id: &str, used: &std::collections::HashSet<&str>) -> bool {
    id.is_empty() || used.contains(id)
}

/// The ids of the calls already in the conversation. `Messages::tool_call_ids` stops at the
/// earliest message with calls, so a separated-mode history of questions and answers is not
/// walked on every step.
fn used_ids(conversation: &Messages) -> std::collections::HashSet<&str> {
    conversation.tool_call_ids().collect()
}

/// The calls with the ids that must be replaced (see [`replaced_id`]) renamed
/// `call_<execution>_<step>_<n>` (`<execution>` the last 12 hex digits of the execution id):
/// unique across executions, so that an approval or a tool result can never refer to another
/// call. `None` when every id can stay, the common case.
fn with_new_ids(
    calls: &[ToolCall],
    conversation: &Messages,
    execution: &str,
    step: usize,
) -> Option<Vec<ToolCall>> {
    if calls.is_empty() {
        return None;
    }
    let used = used_ids(conversation);
    // A reply's few calls (most often one) are compared with each other directly: the common
    // case, every id kept, allocates nothing (issue 35); many calls go through a set below.
    if calls.len() <= FEW_CALLS
        && calls.iter().enumerate().all(|(i, call)| {
            !replaced_id(call.id(), &used) && calls[..i].iter().all(|c| c.id() != call.id())
        })
    {
        return None;
    }
    let mut seen = std::collections::HashSet::new();
    let replace: Vec<bool> = calls
        .iter()
        .map(|call| replaced_id(call.id(), &used) || !seen.insert(call.id()))
        .collect();
    if !replace.contains(&true) {
        return None;
    }
    let tag = crate::recover::execution_tag(execution);
    Some(
        calls
            .iter()
            .zip(replace)
            .enumerate()
            .map(|(i, (call, replace))| {
                if replace {
                    call.clone().with_id(format!("call_{tag}_{step}_{}", i + 1))
                } else {
                    call.clone()
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hint_ends_the_system_prompt_or_is_one() {
        let hint = "Reply with only a JSON call.";
        let with_prompt = Messages::from(vec![Message::system("Be brief."), Message::user("hi")]);
        let (messages, added) = with_hint(&with_prompt, hint);
        assert!(!added);
        assert_eq!(messages.len(), 2);
        assert_eq!(
            messages.first().unwrap().text(),
            "Be brief.\nReply with only a JSON call."
        );
        let (messages, added) = with_hint(&Messages::from(vec![Message::user("hi")]), hint);
        assert!(added);
        assert_eq!(messages.len(), 2);
        let first = messages.first().unwrap();
        assert_eq!(
            (first.role(), first.text()),
            (Role::System, hint.to_owned())
        );
    }
}
