//! The step-processing contract: middleware around each step.

use async_trait::async_trait;
use futures::future::BoxFuture;

use crate::{AgentError, AgentState};

/// The future of a step (or of the rest of a middleware chain).
pub type StepFuture = BoxFuture<'static, Result<AgentState, AgentError>>;

/// The rest of the chain: call it with the state to run the step (driver, `record_step`,
/// continuation evaluation, `record_step_execution`). `'static`, so a chain can move it into
/// its own futures.
pub type Next = Box<dyn FnOnce(AgentState) -> StepFuture + Send>;

/// Wraps each step of the loop. `agents-processing` implements it with its processor chain;
/// [`PassThrough`] runs the step alone.
///
/// The terminal never fails for driver errors: it records a failure step and an outcome
/// instead. An `Err` from `apply` (a failing processor) is handled by the loop like a driver
/// error.
#[async_trait]
pub trait StepProcessing: Send + Sync {
    /// Runs `terminal` on `state`, with whatever happens around it.
    ///
    /// # Errors
    /// Whatever a processor or the terminal reports.
    async fn apply(&self, state: AgentState, terminal: Next) -> Result<AgentState, AgentError>;

    /// This processing as synchronous layers, when every layer only works right before and
    /// right after the step. The loop then runs [`InlineLayers::enter`], the step and
    /// [`InlineLayers::leave`] itself, without boxing the step as a [`Next`]. `apply` must give
    /// the same result. Default: `None`.
    fn inline_layers(&self) -> Option<&dyn InlineLayers> {
        None
    }
}

/// Step processing whose layers are all synchronous (see [`StepProcessing::inline_layers`]).
pub trait InlineLayers: Send + Sync {
    /// Runs the pre-step part of every layer that takes part, outermost first, and records in
    /// `entered` which ones did.
    ///
    /// # Errors
    /// A layer's error: the step does not run.
    fn enter(
        &self,
        state: AgentState,
        entered: &mut EnteredLayers,
    ) -> Result<AgentState, AgentError>;

    /// Runs the post-step part of the layers in `entered`, innermost first.
    ///
    /// # Errors
    /// A layer's error, handled by the loop like a driver error.
    fn leave(&self, state: AgentState, entered: &EnteredLayers) -> Result<AgentState, AgentError>;
}

/// Which layers of a chain took part in a step (by index), without allocating for the first
/// 64.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EnteredLayers {
    bits: u64,
    more: Vec<usize>,
}

impl EnteredLayers {
    /// Records that layer `index` took part.
    pub fn push(&mut self, index: usize) {
        match u32::try_from(index) {
            Ok(shift) if shift < 64 => self.bits |= 1 << shift,
            _ => {
                // Kept sorted, so `innermost_first` needs no copy.
                if let Err(position) = self.more.binary_search(&index) {
                    self.more.insert(position, index);
                }
            }
        }
    }

    /// The layers that took part, innermost (highest index) first.
    pub fn innermost_first(&self) -> impl Iterator<Item = usize> + '_ {
        let bits = self.bits;
        self.more.iter().rev().copied().chain(
            (0..64usize)
                .rev()
                .filter(move |index| bits & (1 << index) != 0),
        )
    }
}

/// No processing: the step alone.
#[derive(Clone, Copy, Debug, Default)]
pub struct PassThrough;

#[async_trait]
impl StepProcessing for PassThrough {
    async fn apply(&self, state: AgentState, terminal: Next) -> Result<AgentState, AgentError> {
        terminal(state).await
    }

    fn inline_layers(&self) -> Option<&dyn InlineLayers> {
        Some(self)
    }
}

impl InlineLayers for PassThrough {
    fn enter(&self, state: AgentState, _: &mut EnteredLayers) -> Result<AgentState, AgentError> {
        Ok(state)
    }

    fn leave(&self, state: AgentState, _: &EnteredLayers) -> Result<AgentState, AgentError> {
        Ok(state)
    }
}

#[cfg(test)]
mod tests {
    use super::EnteredLayers;

    #[test]
    fn entered_layers_come_back_innermost_first_beyond_64_and_in_any_push_order() {
        let mut entered = EnteredLayers::default();
        for index in [70, 3, 65, 0, 70, 63] {
            entered.push(index);
        }
        assert_eq!(
            entered.innermost_first().collect::<Vec<_>>(),
            [70, 65, 63, 3, 0]
        );
    }
}
