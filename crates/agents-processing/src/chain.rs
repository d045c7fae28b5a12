//! `StateProcessors`: the chain, folded so that the first processor is the outermost layer.

use std::sync::Arc;

use agents_core::{AgentError, AgentState, EnteredLayers, InlineLayers, Next, StepProcessing};
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
    /// Every processor is inline: the loop may run the chain without boxing the step.
    all_inline: bool,
}

impl StateProcessors {
    /// A chain of `processors`, outermost first.
    pub fn new(processors: impl IntoIterator<Item = Arc<dyn StateProcessor>>) -> Self {
        let processors: Arc<[Arc<dyn StateProcessor>]> = processors.into_iter().collect();
        let all_inline = processors.iter().all(|p| p.as_inline().is_some());
        Self {
            processors,
            all_inline,
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
        run_from(Arc::clone(&self.processors), 0, state, terminal).await
    }
}

/// The chain from `start` inward. `can_process` is asked when a layer is reached, on the state
/// as it arrives there.
///
/// Inline layers ([`StateProcessor::as_inline`]) run in this frame: their `before` on the way
/// in, their `after` (innermost first) on the way out. Only a layer that needs `process`
/// itself gets a boxed `next` and a future of its own, so a chain of built-ins costs no
/// allocation per layer.
async fn run_from(
    processors: Arc<[Arc<dyn StateProcessor>]>,
    start: usize,
    state: AgentState,
    terminal: Next,
) -> Result<AgentState, AgentError> {
    let mut entered = EnteredLayers::default();
    let (state, around) = enter_from(&processors, start, state, &mut entered)?;
    let state = match around {
        None => terminal(state).await?,
        Some(index) => {
            let processor = Arc::clone(&processors[index]);
            let next = link(processors.clone(), index + 1, terminal);
            processor.process(state, next).await?
        }
    };
    leave(&processors, state, &entered)
}

/// Runs the `before` of the inline layers from `start` inward that take part (recording them
/// in `entered`), up to the first layer that takes part and needs `process`: its index is
/// returned with the state, `None` when the chain ends first.
fn enter_from(
    processors: &[Arc<dyn StateProcessor>],
    start: usize,
    mut state: AgentState,
    entered: &mut EnteredLayers,
) -> Result<(AgentState, Option<usize>), AgentError> {
    for (index, processor) in processors.iter().enumerate().skip(start) {
        if !processor.can_process(&state) {
            continue;
        }
        match processor.as_inline() {
            Some(inline) => {
                state = inline.before(state)?;
                entered.push(index);
            }
            None => return Ok((state, Some(index))),
        }
    }
    Ok((state, None))
}

/// `next` for a layer that runs `process`: the chain from `index` inward.
fn link(processors: Arc<[Arc<dyn StateProcessor>]>, index: usize, terminal: Next) -> Next {
    Box::new(move |state| Box::pin(run_from(processors, index, state, terminal)))
}

/// The post-step parts of the inline layers in `entered`, innermost first.
fn leave(
    processors: &[Arc<dyn StateProcessor>],
    mut state: AgentState,
    entered: &EnteredLayers,
) -> Result<AgentState, AgentError> {
    for index in entered.innermost_first() {
        if let Some(inline) = processors.get(index).and_then(|p| p.as_inline()) {
            state = inline.after(state)?;
        }
    }
    Ok(state)
}

#[async_trait]
impl StepProcessing for StateProcessors {
    async fn apply(&self, state: AgentState, terminal: Next) -> Result<AgentState, AgentError> {
        StateProcessors::apply(self, state, terminal).await
    }

    fn inline_layers(&self) -> Option<&dyn InlineLayers> {
        self.all_inline.then_some(self as &dyn InlineLayers)
    }
}

impl InlineLayers for StateProcessors {
    fn enter(
        &self,
        state: AgentState,
        entered: &mut EnteredLayers,
    ) -> Result<AgentState, AgentError> {
        // Every layer is inline (`inline_layers` says so only then), so this runs them all.
        enter_from(&self.processors, 0, state, entered).map(|(state, _)| state)
    }

    fn leave(&self, state: AgentState, entered: &EnteredLayers) -> Result<AgentState, AgentError> {
        leave(&self.processors, state, entered)
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
