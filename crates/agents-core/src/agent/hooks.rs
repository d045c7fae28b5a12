//! Hooks of the [`Agent`](crate::Agent): closures run at fixed points of the loop. Step hooks
//! are a processor, [`StepHooks`], the outermost layer of the step onion; execution hooks run
//! where an execution starts and finishes (outside the onion: an execution can stop before
//! its first step); stop hooks are asked with the verdict.

use std::sync::Arc;

use async_trait::async_trait;

use crate::processing::{Next, StateProcessor};
use crate::records::agent_error::AgentError;
use crate::state::agent_state::AgentState;

/// A hook that sees and may change the state (before/after an execution or a step).
pub type StateHook = Arc<dyn Fn(AgentState) -> AgentState + Send + Sync>;

/// A hook asked before the agent stops; it may veto the stop.
pub type StopHook = Arc<dyn Fn(&AgentState) -> StopDecision + Send + Sync>;

/// A stop hook's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopDecision {
    /// Let the agent stop.
    Allow,
    /// Run another step instead (bounded by [`Agent::with_max_stop_vetoes`](crate::Agent::with_max_stop_vetoes)).
    Prevent(String),
}

/// Step hooks as a processor: closures run before the rest of the onion and after it, in
/// the order they were added.
///
/// The after-step hooks see every step the layer wraps: a step the model made, a guard's
/// stop, and a failure (an inner layer's error is recorded as a failure step on the state
/// the before-step hooks returned, with [`Next::run_settled`]). A step held for approval
/// passes twice, like through every processor: when the run suspends, and when the decided
/// calls have run.
///
/// [`Agent::before_step`](crate::Agent::before_step) and
/// [`Agent::after_step`](crate::Agent::after_step) add to the agent's own `StepHooks`, the
/// outermost layer, kept apart from the list [`Agent::with_processors`](crate::Agent::with_processors)
/// replaces. Built by hand, it is a layer like any other, placed where the list puts it:
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use agents_core::{AgentState, StateProcessors, StepHooks};
///
/// let hooks = StepHooks::new()
///     .before(|s| s.with_metadata("seen", true))
///     .after(|s| s.with_metadata("done", true));
/// let chain = StateProcessors::new([std::sync::Arc::new(hooks) as _]);
/// let state = chain.apply(AgentState::new(), |s| async move { Ok(s) }).await.unwrap();
/// assert!(state.metadata().contains_key("seen") && state.metadata().contains_key("done"));
/// # });
/// ```
#[derive(Clone, Default)]
pub struct StepHooks {
    before: Vec<StateHook>,
    after: Vec<StateHook>,
}

impl StepHooks {
    /// No hooks.
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy with one more hook run before each step, after the ones added before it.
    pub fn before(
        mut self,
        hook: impl Fn(AgentState) -> AgentState + Send + Sync + 'static,
    ) -> Self {
        self.before.push(Arc::new(hook));
        self
    }

    /// A copy with one more hook run after each recorded step, after the ones added before it.
    pub fn after(
        mut self,
        hook: impl Fn(AgentState) -> AgentState + Send + Sync + 'static,
    ) -> Self {
        self.after.push(Arc::new(hook));
        self
    }

    /// True when there is no hook.
    pub fn is_empty(&self) -> bool {
        self.before.is_empty() && self.after.is_empty()
    }
}

#[async_trait]
impl StateProcessor for StepHooks {
    fn name(&self) -> &str {
        "StepHooks"
    }

    async fn process(&self, state: AgentState, next: Next<'_>) -> Result<AgentState, AgentError> {
        let state = run_state_hooks(&self.before, state);
        let state = next.run_settled(state).await?;
        Ok(run_state_hooks(&self.after, state))
    }
}

impl std::fmt::Debug for StepHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StepHooks")
            .field("before", &self.before.len())
            .field("after", &self.after.len())
            .finish()
    }
}

/// The hooks of an agent, by phase.
#[derive(Clone, Default)]
pub(crate) struct Hooks {
    pub(crate) before_execution: Vec<StateHook>,
    pub(crate) after_execution: Vec<StateHook>,
    /// The outermost processor (see `Agent::onion`).
    pub(crate) step: StepHooks,
    pub(crate) stop: Vec<StopHook>,
}

/// Runs state hooks in registration order.
pub(crate) fn run_state_hooks(hooks: &[StateHook], state: AgentState) -> AgentState {
    hooks.iter().fold(state, |state, hook| hook(state))
}
