//! What a step cost and how full its model's context window was: the step priced at the
//! agent's catalog, and a warning past [`CONTEXT_WINDOW_WARNING`].

use crate::agent::agent::Agent;
use crate::events::agent_event::{AgentEvent, EventSource};
use crate::records::agent_step::AgentStep;
use crate::records::cost::RunCost;
use crate::state::agent_state::AgentState;

/// The share of a model's context window past which a request is reported
/// ([`AgentEvent::ContextWindowNearlyFull`] and a `tracing` warning): 0.8.
pub const CONTEXT_WINDOW_WARNING: f64 = 0.8;

impl Agent {
    /// `step` with its cost: its usage at the catalog price of the model its inference
    /// reported (unknown when the catalog has no price for it).
    pub(super) fn priced(&self, step: AgentStep) -> AgentStep {
        let model = step.inference_response().and_then(|r| r.model());
        let cost = RunCost::of_usage(step.usage(), model, &self.telemetry.catalog);
        if !cost.is_known() {
            tracing::debug!(
                target: "agents_core::agent",
                model = model.unwrap_or("(none reported)"),
                "no price for the step's model in the catalog: its cost is unknown"
            );
        }
        step.with_cost(cost)
    }

    /// Warns (event and `tracing`) when the largest request of `step`, the next step of
    /// `state`, used more than [`CONTEXT_WINDOW_WARNING`] of its model's context window:
    /// `largest_request` prompt tokens, as the driver's replies counted them, else (a driver
    /// that did not call the model through `journaled_inference`) the step's.
    pub(super) fn check_context_window(
        &self,
        state: &AgentState,
        step: &AgentStep,
        largest_request: u64,
    ) {
        let Some(model) = step.inference_response().and_then(|r| r.model()) else {
            return;
        };
        let number = state.next_step_number();
        let input_tokens = match largest_request {
            0 => step.usage().prompt_tokens(),
            tokens => tokens,
        };
        if input_tokens == 0 {
            return;
        }
        let Some(window) = self
            .telemetry
            .context_window
            .or_else(|| {
                self.telemetry
                    .catalog
                    .lookup(model)
                    .and_then(|info| info.context_window)
            })
            .filter(|window| *window > 0)
        else {
            return;
        };
        if (input_tokens as f64) <= CONTEXT_WINDOW_WARNING * window as f64 {
            return;
        }
        tracing::warn!(
            target: "agents_core::agent",
            agent_id = %state.agent_id(),
            model,
            input_tokens,
            context_window = window,
            "the request used over {:.0}% of the model's context window; summarize or trim \
             the conversation before it no longer fits",
            CONTEXT_WINDOW_WARNING * 100.0
        );
        self.events
            .emit_with(|| AgentEvent::ContextWindowNearlyFull {
                source: EventSource {
                    step_number: number,
                    ..EventSource::execution(state)
                },
                model: model.to_owned(),
                input_tokens,
                context_window: window,
            });
    }
}
