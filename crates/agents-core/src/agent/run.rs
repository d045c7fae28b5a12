//! `Run`: one execution of the agent loop, advanced one yielded state at a time.

use std::borrow::Borrow;
use std::sync::Arc;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::hooks::{run_state_hooks, StopDecision};
use super::step_runner::{StepEnv, StepRunner};
use crate::continuation::execution_start::during_execution;
use crate::{
    Agent, AgentError, AgentEvent, AgentState, AgentStatus, AgentStep, CurrentExecution,
    EnteredLayers, EventSource, InlineLayers, Next, StepContext, StopReason,
};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Start,
    Steps,
    Done,
}

/// The state of one execution between yielded items.
///
/// `A` is the agent, owned (`iterate` hands out a `'static` stream) or borrowed (`execute`
/// runs to the end within the caller's borrow, so nothing of the agent is cloned).
pub(crate) struct Run<A> {
    agent: A,
    state: AgentState,
    phase: Phase,
    vetoes: usize,
    /// The execution's events and cancellation token, handed to the driver each step.
    context: StepContext,
    /// When this execution was asked for (the baseline of time limits).
    started: Instant,
}

impl<A: Borrow<Agent>> Run<A> {
    pub(crate) fn new(agent: A, state: AgentState, cancellation: CancellationToken) -> Self {
        let context = StepContext {
            events: agent.borrow().events.clone(),
            cancellation,
        };
        Self {
            agent,
            state,
            phase: Phase::Start,
            vetoes: 0,
            context,
            started: Instant::now(),
        }
    }

    fn agent(&self) -> &Agent {
        self.agent.borrow()
    }

    /// What a step runs with, borrowed from the agent and this run.
    fn env(&self) -> StepEnv<'_> {
        let agent = self.agent();
        StepEnv {
            driver: agent.driver.as_ref(),
            tools: &agent.tools,
            executor: agent.executor.as_ref(),
            criteria: &agent.criteria,
            error_policy: agent.error_policy,
            context: &self.context,
            execution_start: self.started,
        }
    }

    /// The next item: the state after a step, or the final state, or `None` when done.
    pub(crate) async fn next_item(&mut self) -> Option<Result<AgentState, AgentError>> {
        match self.phase {
            Phase::Done => return None,
            Phase::Start => {
                self.start();
                self.phase = Phase::Steps;
            }
            Phase::Steps => {}
        }
        if self.run_step().await {
            return Some(Ok(self.state.clone()));
        }
        self.phase = Phase::Done;
        Some(Ok(self.finish()))
    }

    /// Runs every step and returns the final state: the last item of `next_item`, without
    /// handing out (and so sharing) the intermediate states.
    pub(crate) async fn run_to_end(mut self) -> Result<AgentState, AgentError> {
        self.start();
        self.phase = Phase::Steps;
        while self.run_step().await {}
        self.phase = Phase::Done;
        let state = std::mem::replace(&mut self.state, placeholder());
        Ok(self.finish_with(state))
    }

    fn start(&mut self) {
        self.agent().criteria.execution_started(self.started);
        let state = run_state_hooks(&self.agent().hooks.before_execution, self.state.clone());
        self.agent()
            .events
            .emit_with(|| AgentEvent::ExecutionStarted {
                source: EventSource::execution(&state),
                message_count: state.messages().len(),
                tool_count: self.agent().tools.len(),
            });
        self.state = state;
    }

    /// Runs one step if the agent should continue; false when it stops.
    async fn run_step(&mut self) -> bool {
        if !self.should_continue() {
            self.state = self.state.clear_current_execution();
            return false;
        }
        if self.context.cancellation.is_cancelled() {
            self.state = self
                .state
                .clear_current_execution()
                .with_stop_reason(StopReason::UserRequested);
            return false;
        }
        let state = self.state.begin_step_execution();
        // A failed step is recorded on the state as it began. A clone held through the step
        // would make every change the step makes copy the state, so the begun state is kept
        // only when before-step hooks may have changed it; otherwise it is rebuilt from the
        // state before the step and the running execution.
        let hooks = &self.agent().hooks.before_step;
        let state = run_state_hooks(hooks, state);
        let began = if hooks.is_empty() {
            Began::Execution(state.current_execution().cloned())
        } else {
            Began::State(state.clone())
        };
        self.agent().events.emit_with(|| AgentEvent::StepStarted {
            source: EventSource::step(&state),
            message_count: state.messages_for_inference().len(),
        });
        let processors = Arc::clone(&self.agent().processors);
        let result = match processors.inline_layers() {
            Some(layers) => self.run_inline(layers, state).await,
            None => processors.apply(state, self.terminal()).await,
        };
        let state = match result {
            Ok(state) if self.step_was_recorded(&state) => state,
            Ok(_) => self.env().record_failure(
                self.began_state(began),
                &AgentError::InvalidState(
                    "the step was not recorded: a processor returned without calling `next`".into(),
                ),
            ),
            Err(error) => self.env().record_failure(self.began_state(began), &error),
        };
        let state = run_state_hooks(&self.agent().hooks.after_step, state);
        self.emit_step_completed(&state);
        self.state = state;
        true
    }

    /// True when the step recorded a step execution (`self.state` is the state before it).
    fn step_was_recorded(&self, after: &AgentState) -> bool {
        after.current_execution().is_none() && after.step_count() > self.state.step_count()
    }

    /// The state the step began with (see `run_step`).
    fn began_state(&self, began: Began) -> AgentState {
        match began {
            Began::State(state) => state,
            Began::Execution(Some(execution)) => self.state.with_begun_execution(execution),
            Began::Execution(None) => self.state.begin_step_execution(),
        }
    }

    /// The step inside synchronous layers: the same as `apply` with a terminal, without boxing
    /// the step.
    async fn run_inline(
        &self,
        layers: &dyn InlineLayers,
        state: AgentState,
    ) -> Result<AgentState, AgentError> {
        let mut entered = EnteredLayers::default();
        let state = layers.enter(state, &mut entered)?;
        let state = self.env().run(state).await?;
        layers.leave(state, &entered)
    }

    fn terminal(&self) -> Next {
        let agent = self.agent();
        let runner = StepRunner {
            driver: Arc::clone(&agent.driver),
            tools: agent.tools.clone(),
            executor: Arc::clone(&agent.executor),
            criteria: agent.criteria.clone(),
            error_policy: agent.error_policy,
            context: self.context.clone(),
            execution_start: self.started,
        };
        Box::new(move |state| Box::pin(async move { runner.env().run(state).await }))
    }

    /// False after a failure; before the first step the criteria decide; afterwards the last
    /// outcome, unless a stop hook vetoes the stop.
    fn should_continue(&mut self) -> bool {
        let state = &self.state;
        if state.status() == AgentStatus::Failed {
            return false;
        }
        let events = &self.agent().events;
        let go_on = if state.step_count() > 0 {
            state.step_executions().should_continue()
        } else if events.is_observed() {
            let outcome =
                during_execution(self.started, || self.agent().criteria.evaluate_all(state));
            events.emit_with(|| AgentEvent::ContinuationEvaluated {
                source: EventSource::execution(state),
                outcome: outcome.clone(),
            });
            outcome.should_continue()
        } else {
            // Nobody sees this outcome: decide without building it.
            during_execution(self.started, || self.agent().criteria.continues(state))
        };
        go_on || self.stop_vetoed()
    }

    fn stop_vetoed(&mut self) -> bool {
        if self.vetoes >= self.agent().max_stop_vetoes {
            return false;
        }
        for hook in &self.agent().hooks.stop {
            if let StopDecision::Prevent(reason) = hook(&self.state) {
                self.vetoes += 1;
                tracing::info!(
                    target: "agents_core::agent",
                    agent_id = %self.state.agent_id(),
                    veto = self.vetoes,
                    %reason,
                    "a stop hook prevented the agent from stopping"
                );
                return true;
            }
        }
        false
    }

    fn emit_step_completed(&self, state: &AgentState) {
        if !self.agent().events.is_observed() {
            return;
        }
        let Some(execution) = state.step_executions().last() else {
            return;
        };
        let step = execution.step();
        let source = EventSource {
            step_number: execution.step_number(),
            ..EventSource::execution(state)
        };
        self.agent().events.emit_with(|| AgentEvent::StepCompleted {
            source: source.clone(),
            step_type: step.step_type(),
            has_tool_calls: step.has_tool_calls(),
            errors: step.error_messages(),
            usage: step.usage(),
            finish_reason: step.finish_reason(),
            duration: execution.duration(),
        });
        if !step.usage().is_empty() {
            self.agent().events.emit_with(|| AgentEvent::TokenUsage {
                source,
                usage: step.usage(),
            });
        }
    }

    fn finish(&mut self) -> AgentState {
        let state = self.finish_with(self.state.clone());
        self.state = state.clone();
        state
    }

    /// The final status, after-execution hooks and the closing event, on `state`.
    fn finish_with(&self, state: AgentState) -> AgentState {
        let failed = state.status() == AgentStatus::Failed;
        let status = if failed {
            AgentStatus::Failed
        } else {
            AgentStatus::Completed
        };
        let state = state.into_status(status);
        let state = run_state_hooks(&self.agent().hooks.after_execution, state);
        if failed {
            self.agent()
                .events
                .emit_with(|| AgentEvent::ExecutionFailed {
                    source: EventSource::execution(&state),
                    errors: state
                        .current_step()
                        .map(AgentStep::error_messages)
                        .unwrap_or_default(),
                    steps: state.step_count(),
                    usage: state.execution_usage(),
                });
        } else {
            self.agent()
                .events
                .emit_with(|| AgentEvent::ExecutionCompleted {
                    source: EventSource::execution(&state),
                    status: state.status(),
                    stop_reason: state.stop_reason(),
                    steps: state.step_count(),
                    usage: state.execution_usage(),
                });
        }
        state
    }
}

/// What `run_to_end` leaves in a finished run: one shared empty state, never read.
fn placeholder() -> AgentState {
    static EMPTY: std::sync::OnceLock<AgentState> = std::sync::OnceLock::new();
    EMPTY.get_or_init(AgentState::new).clone()
}

/// What a step began with, kept to record its failure on.
enum Began {
    /// The state after the before-step hooks.
    State(AgentState),
    /// The running execution (no hooks: the state is the one before the step, with it).
    Execution(Option<CurrentExecution>),
}
