//! The step at the centre of the processors: the driver makes the step, then the agent
//! records it and its verdict. A layer that returns without calling it gets a guard stop.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use tokio_util::sync::CancellationToken;

use crate::agent::agent::Agent;
use crate::agent::step_options::StepOptions;
use crate::cached_context::CachedContext;
use crate::driver::LargestRequest;
use crate::driver::StepContext;
use crate::processing::{StepFuture, StepTerminal};
use crate::records::agent_error::AgentError;
use crate::records::agent_step::AgentStep;
use crate::state::agent_state::AgentState;
use crate::tools::limits::PreviousCalls;
use crate::tools::tool::StepHeldRuns;

/// The step at the centre of the processors: the driver, then the recording.
pub(super) struct Terminal<'a> {
    pub(super) agent: &'a Agent,
    options: &'a StepOptions,
    token: &'a CancellationToken,
    /// When the step began (before the processors): a failure step is recorded as begun then.
    pub(super) started_at: DateTime<Utc>,
    /// Whether the step was recorded (run, or stopped by a guard).
    recorded: AtomicBool,
}

impl<'a> Terminal<'a> {
    pub(super) fn new(agent: &'a Agent, options: &'a StepOptions) -> Self {
        Self {
            agent,
            options,
            token: &options.cancellation,
            started_at: agent.clock.now(),
            recorded: AtomicBool::new(false),
        }
    }
    pub(super) fn context(&self, cached_context: Arc<CachedContext>) -> StepContext<'a> {
        self.context_with(cached_context, Arc::default())
    }

    /// [`context`](Self::context) with the calls made so far.
    pub(super) fn context_with(
        &self,
        cached_context: Arc<CachedContext>,
        previous_calls: Arc<PreviousCalls>,
    ) -> StepContext<'a> {
        StepContext {
            events: Cow::Borrowed(&self.agent.events),
            cancellation: self.token.clone(),
            cached_context,
            clock: Cow::Borrowed(&self.agent.clock),
            tool_limits: self.agent.tool_limits,
            previous_calls,
            journal: self.options.journal.clone(),
            capture_content: self.agent.telemetry.capture_content,
            approval: Cow::Borrowed(&self.agent.approval),
            tool_layers: Cow::Borrowed(&self.agent.tool_layers),
            step_id: None,
            held: StepHeldRuns::default(),
            decided: false,
            largest_request: LargestRequest::default(),
        }
    }

    /// [`context`](Self::context) for a step of `state`, knowing the calls made so far.
    pub(super) fn step_context(
        &self,
        state: &AgentState,
        cached_context: Arc<CachedContext>,
    ) -> StepContext<'a> {
        let previous_calls = if self.agent.tool_limits.repeated_call_limit.is_some() {
            Arc::new(PreviousCalls::of(state))
        } else {
            Arc::default()
        };
        StepContext {
            step_id: Some(self.agent.ids.new_id()),
            ..self.context_with(cached_context, previous_calls)
        }
    }
}

impl StepTerminal for Terminal<'_> {
    fn run<'a>(&'a self, state: AgentState, cached_context: Arc<CachedContext>) -> StepFuture<'a> {
        Box::pin(async move {
            let agent = self.agent;
            let context = self.step_context(&state, cached_context);
            let tools = crate::tools::source::merged(&agent.tools, &agent.tool_sources).await;
            let started_at = agent.clock.now();
            let result = agent
                .driver
                .next_step(&state, &tools, agent.executor.as_ref(), &context)
                .await;
            let step = match result {
                Ok(step) => step,
                Err(error) => failure_step(&context.prompt_messages(&state), &error),
            };
            self.recorded.store(true, Ordering::Release);
            agent.check_context_window(&state, &step, context.largest_request.tokens());
            Ok(agent.record(
                state,
                step,
                started_at,
                self.token,
                &context.held,
                context.step_id.clone(),
            ))
        })
    }

    fn after_layer(&self, state: AgentState) -> AgentState {
        if self.recorded.swap(true, Ordering::AcqRel) {
            return state;
        }
        self.agent.record_guard_stop(state)
    }

    fn settle_failure(
        &self,
        began: AgentState,
        error: AgentError,
    ) -> Result<AgentState, AgentError> {
        Ok(self.record_failure(began, &error))
    }
}

impl Terminal<'_> {
    /// Records a failure step for `error` on `began`, the state the failed part of the chain
    /// was given: what the model would have been given, the error, the error policy's verdict.
    pub(super) fn record_failure(&self, began: AgentState, error: &AgentError) -> AgentState {
        self.recorded.store(true, Ordering::Release);
        let step = failure_step(&began_input(self, &began), error);
        self.agent.record(
            began,
            step,
            self.started_at,
            self.token,
            &StepHeldRuns::default(),
            None,
        )
    }
}

/// What the model would have been given for the step `state` begins.
pub(super) fn began_input(terminal: &Terminal<'_>, state: &AgentState) -> messages::Messages {
    terminal
        .context(Arc::clone(&terminal.agent.cached_context))
        .prompt_messages(state)
}

/// A failed step: what the model was given and the error.
pub(super) fn failure_step(input: &messages::Messages, error: &AgentError) -> AgentStep {
    tracing::warn!(
        target: "agents_core::agent",
        error = %crate::records::agent_error::error_chain(error),
        error_type = ?error.error_type(),
        "step failed"
    );
    AgentStep::failure(input.clone(), error)
}
