//! The verdict on a recorded step: the built-in guards (cancellation, the error policy on a
//! failed step, repeated calls, the cost limit: `standard_guards`), then the agent's criteria,
//! then the stop hooks when the verdict is to stop. Decided once per step, here.

use tokio_util::sync::CancellationToken;

use crate::agent::agent::Agent;
use crate::agent::hooks::StopDecision;
use crate::continuation::criterion::StepFacts;
use crate::events::agent_event::{AgentEvent, EventSource};
use crate::records::agent_step::AgentStep;
use crate::records::decision::StopReason;
use crate::records::evaluation::ContinuationEvaluation;
use crate::records::outcome::ContinuationOutcome;
use crate::records::step_execution::StepExecution;
use crate::state::agent_state::{AgentState, Execution};

impl Agent {
    /// The verdict on the last recorded step: the guards and the criteria
    /// ([`ContinuationCriteria::decide_after_step`](crate::continuation::criterion::ContinuationCriteria::decide_after_step)),
    /// then the stop hooks when the verdict is to stop.
    pub(super) fn judge(&self, state: AgentState, token: &CancellationToken) -> AgentState {
        let number = state.step_count();
        let facts = StepFacts::default().cancelled(token.is_cancelled());
        let outcome = self
            .criteria
            .decide_after_step(&self.guards, &state, &facts);
        let (state, outcome) = self.apply_stop_hooks(state, outcome);
        self.events.emit_with(|| AgentEvent::ContinuationEvaluated {
            source: EventSource {
                step_number: number,
                ..EventSource::execution(&state)
            },
            outcome: outcome.clone(),
        });
        state.judged(outcome)
    }

    /// A stop that a stop hook prevents (at most `max_stop_vetoes` times per execution, never
    /// after a failure) becomes a continue, recorded as such.
    fn apply_stop_hooks(
        &self,
        state: AgentState,
        outcome: ContinuationOutcome,
    ) -> (AgentState, ContinuationOutcome) {
        let vetoes = state.execution().map_or(0, Execution::stop_vetoes);
        if outcome.should_continue()
            || outcome.stop_reason() == Some(StopReason::Error)
            || vetoes >= self.max_stop_vetoes
        {
            return (state, outcome);
        }
        for hook in &self.hooks.stop {
            if let StopDecision::Prevent(reason) = hook(&state) {
                tracing::info!(
                    target: "agents_core::agent",
                    agent_id = %state.agent_id(),
                    veto = vetoes + 1,
                    %reason,
                    "a stop hook prevented the agent from stopping"
                );
                return (state.vetoed(), outcome.vetoed(reason));
            }
        }
        (state, outcome)
    }

    /// A layer returned without running the step: a step with no model call is recorded, and
    /// its outcome stops the execution with [`StopReason::Guard`].
    pub(super) fn record_guard_stop(&self, state: AgentState) -> AgentState {
        let now = self.clock.now();
        let number = state.next_step_number();
        let outcome = ContinuationOutcome::from_evaluation(
            ContinuationEvaluation::forbid("StateProcessor", StopReason::Guard)
                .with_reason("a processor returned without running the step"),
        );
        let step = AgentStep::new(state.messages_for_inference());
        tracing::info!(
            target: "agents_core::agent",
            agent_id = %state.agent_id(),
            "a processor did not run the step: the execution stops (guard)"
        );
        state
            .recorded(StepExecution::new(step, outcome.clone(), now, now, number))
            .judged(outcome)
    }
}
