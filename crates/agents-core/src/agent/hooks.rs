//! Execution and step hooks of the [`Agent`](crate::Agent).

use std::sync::Arc;

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

/// The hooks of an agent, by phase.
#[derive(Clone, Default)]
pub(crate) struct Hooks {
    pub(crate) before_execution: Vec<StateHook>,
    pub(crate) after_execution: Vec<StateHook>,
    pub(crate) before_step: Vec<StateHook>,
    pub(crate) after_step: Vec<StateHook>,
    pub(crate) stop: Vec<StopHook>,
}

/// Runs state hooks in registration order.
pub(crate) fn run_state_hooks(hooks: &[StateHook], state: AgentState) -> AgentState {
    hooks.iter().fold(state, |state, hook| hook(state))
}
