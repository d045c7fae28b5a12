//! `StateProcessors`: the chain, folded so that the first processor is the outermost layer.

use std::sync::Arc;

use agents_core::{AgentError, AgentState, Next, StepProcessing};
use async_trait::async_trait;

use crate::StateProcessor;

/// An ordered list of processors applied around each step.
///
/// The **first** processor is the **outermost** layer: its pre-step logic runs first and its
/// post-step logic runs **last**. So a processor that must see everything the others did after
/// the step (like `ClearExecutionBuffer`) goes first in the list.
///
/// ```text
/// [A, B, C] around step:  A.pre → B.pre → C.pre → step → C.post → B.post → A.post
/// ```
#[derive(Clone, Default)]
pub struct StateProcessors {
    processors: Arc<[Arc<dyn StateProcessor>]>,
}

impl StateProcessors {
    /// A chain of `processors`, outermost first.
    pub fn new(processors: impl IntoIterator<Item = Arc<dyn StateProcessor>>) -> Self {
        Self {
            processors: processors.into_iter().collect(),
        }
    }

    /// A copy with `processor` added as the innermost layer.
    pub fn with(&self, processor: impl StateProcessor + 'static) -> Self {
        self.with_shared(Arc::new(processor))
    }

    /// A copy with a shared `processor` added as the innermost layer.
    pub fn with_shared(&self, processor: Arc<dyn StateProcessor>) -> Self {
        let mut list: Vec<_> = self.processors.iter().cloned().collect();
        list.push(processor);
        Self::new(list)
    }

    /// The processors, outermost first.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn StateProcessor>> {
        self.processors.iter()
    }

    /// The processors' names, outermost first.
    pub fn names(&self) -> Vec<String> {
        self.processors
            .iter()
            .map(|p| p.name().to_owned())
            .collect()
    }

    /// Number of processors.
    pub fn len(&self) -> usize {
        self.processors.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.processors.is_empty()
    }

    /// Runs `terminal` (the step) wrapped in every processor.
    ///
    /// # Errors
    /// Whatever a processor or the terminal reports.
    pub async fn apply(&self, state: AgentState, terminal: Next) -> Result<AgentState, AgentError> {
        link(Arc::clone(&self.processors), 0, terminal)(state).await
    }
}

/// The chain from `index` inward. `can_process` is asked when the link is entered, on the state
/// as it arrives there.
fn link(processors: Arc<[Arc<dyn StateProcessor>]>, index: usize, terminal: Next) -> Next {
    Box::new(move |state| {
        Box::pin(async move {
            let Some(processor) = processors.get(index).cloned() else {
                return terminal(state).await;
            };
            let next = link(processors, index + 1, terminal);
            if processor.can_process(&state) {
                processor.process(state, next).await
            } else {
                next(state).await
            }
        })
    })
}

#[async_trait]
impl StepProcessing for StateProcessors {
    async fn apply(&self, state: AgentState, terminal: Next) -> Result<AgentState, AgentError> {
        StateProcessors::apply(self, state, terminal).await
    }
}

impl std::fmt::Debug for StateProcessors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("StateProcessors")
            .field(&self.names())
            .finish()
    }
}

impl FromIterator<Arc<dyn StateProcessor>> for StateProcessors {
    fn from_iter<I: IntoIterator<Item = Arc<dyn StateProcessor>>>(iter: I) -> Self {
        Self::new(iter)
    }
}
