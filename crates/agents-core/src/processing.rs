//! Middleware around each step: [`StateProcessor`] layers folded into one onion,
//! [`StateProcessors`], with the step at its centre.
//!
//! There is one path: the loop calls [`StateProcessors::run`], which hands the state to the
//! outermost layer that wants it ([`StateProcessor::can_process`]) together with [`Next`], the
//! rest of the onion. A layer works before calling [`Next::run`], after it, or both, like a
//! `tower` layer around a service. [`InlineProcessor`] is the short way to write a layer whose
//! work is synchronous; it runs through the same path.

use std::future::Future;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::future::BoxFuture;
use messages::SharedSlice;

use crate::cached_context::CachedContext;
use crate::records::agent_error::AgentError;
use crate::state::agent_state::AgentState;

/// The future of a step, or of the rest of a middleware chain.
pub type StepFuture<'a> = BoxFuture<'a, Result<AgentState, AgentError>>;

/// One layer of middleware around each step of the agent loop.
///
/// `process` receives the state and [`Next`], the rest of the chain: the inner layers and, at
/// the centre, the step itself (the driver, the continuation verdict, the recording). A layer
/// can act before calling [`Next::run`], after it, or both.
///
/// A layer that returns without calling `next.run` is a guard: the step does not run, and the
/// loop records a step with no model call whose outcome stops the execution with
/// [`StopReason::Guard`](crate::StopReason::Guard).
///
/// `can_process` is asked on the state as it reaches the layer (before the step). After
/// `next.run` returns, the step is recorded: [`AgentState::current_step`] is the new step and
/// [`AgentState::continuation_outcome`] the loop's verdict, decided once; read it, never decide
/// it again.
#[async_trait]
pub trait StateProcessor: Send + Sync {
    /// A short name for logs and tests.
    fn name(&self) -> &str {
        short_type_name(std::any::type_name::<Self>())
    }

    /// Whether this layer runs for `state`; when false, the chain goes straight to the next
    /// layer.
    fn can_process(&self, _state: &AgentState) -> bool {
        true
    }

    /// Runs this layer.
    ///
    /// # Errors
    /// Whatever the layer or the rest of the chain reports; the loop records it as a failed
    /// step and the error policy decides what follows.
    async fn process(&self, state: AgentState, next: Next<'_>) -> Result<AgentState, AgentError>;

    /// This layer as an [`InlineProcessor`], when it is one (every `InlineProcessor` says so;
    /// default `None`). The chain then runs its `before` and `after` itself, in the same order
    /// as `process` would, without a future per layer: a step through the four standard
    /// separated-mode processors made eight boxed futures for work that never waits.
    fn as_inline(&self) -> Option<&dyn InlineProcessor> {
        None
    }
}

/// A layer whose work is synchronous and wraps the step: [`before`](Self::before) the rest of
/// the chain runs, [`after`](Self::after) it returned (like tower's `map_request` and
/// `map_response`). Every `InlineProcessor` is a [`StateProcessor`].
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use std::sync::Arc;
///
/// use agents_core::{AgentError, AgentState, InlineProcessor, StateProcessor, StateProcessors};
///
/// /// Marks every state that comes out of a step.
/// struct MarkStepped;
///
/// impl InlineProcessor for MarkStepped {
///     fn after(&self, state: AgentState) -> Result<AgentState, AgentError> {
///         Ok(state.with_metadata("stepped", true))
///     }
/// }
///
/// let chain = StateProcessors::new([Arc::new(MarkStepped) as Arc<dyn StateProcessor>]);
/// let state = chain.apply(AgentState::new(), |state| async move { Ok(state) }).await.unwrap();
/// assert!(state.metadata().contains_key("stepped"));
/// assert_eq!(chain.names(), ["MarkStepped"]);
/// # });
/// ```
pub trait InlineProcessor: Send + Sync {
    /// A short name for logs and tests.
    fn name(&self) -> &str {
        short_type_name(std::any::type_name::<Self>())
    }

    /// Whether this layer runs for `state` (asked before `before`, as for any layer).
    fn can_process(&self, _state: &AgentState) -> bool {
        true
    }

    /// Pre-step work, on the state as it reaches this layer.
    ///
    /// # Errors
    /// An error stops the step: the inner layers and the step do not run.
    fn before(&self, state: AgentState) -> Result<AgentState, AgentError> {
        Ok(state)
    }

    /// Post-step work, on the state the inner layers returned.
    ///
    /// # Errors
    /// Recorded by the loop as a failed step.
    fn after(&self, state: AgentState) -> Result<AgentState, AgentError> {
        Ok(state)
    }
}

#[async_trait]
impl<P: InlineProcessor> StateProcessor for P {
    fn name(&self) -> &str {
        InlineProcessor::name(self)
    }

    fn can_process(&self, state: &AgentState) -> bool {
        InlineProcessor::can_process(self, state)
    }

    async fn process(&self, state: AgentState, next: Next<'_>) -> Result<AgentState, AgentError> {
        let state = self.before(state)?;
        let state = next.run(state).await?;
        self.after(state)
    }

    fn as_inline(&self) -> Option<&dyn InlineProcessor> {
        Some(self)
    }
}

/// The step at the centre of the onion, as the loop (or a test) supplies it.
pub trait StepTerminal: Send + Sync {
    /// Runs the step on `state`, asking the model with `cached_context` as the fixed request
    /// prefix (system prompt, tool choice, response format).
    fn run<'a>(&'a self, state: AgentState, cached_context: Arc<CachedContext>) -> StepFuture<'a>;

    /// Called with the state a layer returned: when the step has not run (the layer is a
    /// guard), the loop records the guard's stop here, so the layers outside it see a recorded
    /// step and a stopping verdict, as after any step. Default: the state unchanged.
    fn after_layer(&self, state: AgentState) -> AgentState {
        state
    }

    /// Called by [`Next::run_settled`] when the rest of the chain failed: the loop records a
    /// failure step on `began`, the state the rest of the chain was given, and the error
    /// policy judges it, so the layer sees a recorded step, as after any step. Default: the
    /// error, unchanged (a chain run without an agent has nothing to record it in).
    ///
    /// # Errors
    /// `error`, where the terminal cannot record it.
    fn settle_failure(
        &self,
        began: AgentState,
        error: AgentError,
    ) -> Result<AgentState, AgentError> {
        let _ = began;
        Err(error)
    }
}

/// The rest of the chain below a layer. Consumed by [`Next::run`].
pub struct Next<'a> {
    rest: &'a [Arc<dyn StateProcessor>],
    terminal: &'a dyn StepTerminal,
    cached_context: Arc<CachedContext>,
}

impl<'a> Next<'a> {
    /// Runs the rest of the chain (the inner layers that want `state`, then the step).
    ///
    /// The [inline](StateProcessor::as_inline) layers met before the first layer that is not
    /// inline run here: their `before`s now, outermost first, their `after`s in one future
    /// once the rest returned, innermost first, each followed by the terminal's
    /// [`after_layer`](StepTerminal::after_layer), as when each layer's `process` runs (an
    /// error from a `before` or an `after` ends the chain there, as `?` would).
    pub fn run(self, state: AgentState) -> StepFuture<'a> {
        /// At most this many inline layers are run by one `Next::run` (a bit each); a longer
        /// run of them continues in a nested one.
        const MAX_INLINE: usize = u64::BITS as usize;
        let Next {
            rest: layers,
            terminal,
            cached_context,
        } = self;
        let mut state = state;
        // Bit `i`: `layers[i]` is inline and its `before` ran.
        let mut inline_ran: u64 = 0;
        let mut at = 0;
        let inner: StepFuture<'a> = loop {
            let Some((layer, tail)) = layers[at..].split_first() else {
                break terminal.run(state, cached_context);
            };
            if !layer.can_process(&state) {
                at += 1;
                continue;
            }
            match layer.as_inline() {
                Some(inline) if at < MAX_INLINE => {
                    state = match inline.before(state) {
                        Ok(state) => state,
                        Err(error) => return Box::pin(std::future::ready(Err(error))),
                    };
                    inline_ran |= 1 << at;
                    at += 1;
                }
                _ => {
                    let next = Next {
                        rest: tail,
                        terminal,
                        cached_context,
                    };
                    let layer = layer.process(state, next);
                    break Box::pin(async move { Ok(terminal.after_layer(layer.await?)) });
                }
            }
        };
        if inline_ran == 0 {
            return inner;
        }
        Box::pin(async move {
            let mut state = inner.await?;
            for (at, layer) in layers.iter().enumerate().take(MAX_INLINE).rev() {
                if inline_ran & (1 << at) == 0 {
                    continue;
                }
                if let Some(inline) = layer.as_inline() {
                    state = terminal.after_layer(inline.after(state)?);
                }
            }
            Ok(state)
        })
    }

    /// Runs the rest of the chain like [`run`](Self::run), but a failure of an inner layer
    /// (or of the step) comes back as a recorded failure step on the state given here, judged
    /// by the error policy, instead of an error: the layer's post-step work then runs on every
    /// step, failed ones included. [`StepHooks`](crate::StepHooks) runs its after-step hooks
    /// this way. Outside an agent (see [`StateProcessors::apply`]) the error comes back as is.
    pub fn run_settled(self, state: AgentState) -> StepFuture<'a> {
        let terminal = self.terminal;
        // A reference count: the state is shared, not copied.
        let began = state.clone();
        let rest = self.run(state);
        Box::pin(async move {
            match rest.await {
                Ok(state) => Ok(state),
                Err(error) => terminal.settle_failure(began, error),
            }
        })
    }

    /// The fixed request prefix the step will send (the agent's configuration, unless an outer
    /// layer replaced it for this step).
    pub fn cached_context(&self) -> &CachedContext {
        &self.cached_context
    }

    /// The rest of the chain with another request prefix for this step only (nothing of it is
    /// stored in the state).
    pub fn with_cached_context(mut self, cached_context: Arc<CachedContext>) -> Self {
        self.cached_context = cached_context;
        self
    }
}

/// An ordered list of layers applied around each step, built once with the agent.
///
/// The **first** layer is the **outermost**: its pre-step logic runs first and its post-step
/// logic runs **last**.
///
/// ```text
/// [A, B, C] around step:  A.before → B.before → C.before → step → C.after → B.after → A.after
/// ```
#[derive(Clone, Default)]
pub struct StateProcessors {
    layers: SharedSlice<Arc<dyn StateProcessor>>,
}

impl StateProcessors {
    /// A chain of `processors`, outermost first.
    pub fn new(processors: impl IntoIterator<Item = Arc<dyn StateProcessor>>) -> Self {
        Self {
            layers: processors.into_iter().collect(),
        }
    }

    /// A copy with `processor` added as the innermost layer.
    pub fn with(&self, processor: impl StateProcessor + 'static) -> Self {
        self.with_shared(Arc::new(processor))
    }

    /// A copy with a shared `processor` added as the innermost layer.
    pub fn with_shared(&self, processor: Arc<dyn StateProcessor>) -> Self {
        Self::new(self.layers.iter().cloned().chain([processor]))
    }

    /// The layers, outermost first.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn StateProcessor>> {
        self.layers.iter()
    }

    /// The layers' names, outermost first.
    pub fn names(&self) -> Vec<String> {
        self.layers.iter().map(|p| p.name().to_owned()).collect()
    }

    /// Number of layers.
    pub fn len(&self) -> usize {
        self.layers.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }

    /// Runs `terminal` on `state` inside every layer, with `cached_context` as the request
    /// prefix the layers see (what the loop does for each step).
    pub fn run<'a>(
        &'a self,
        state: AgentState,
        terminal: &'a dyn StepTerminal,
        cached_context: Arc<CachedContext>,
    ) -> StepFuture<'a> {
        Next {
            rest: &self.layers,
            terminal,
            cached_context,
        }
        .run(state)
    }

    /// Runs `step` on `state` inside every layer, with an empty request prefix: for testing a
    /// chain without an agent.
    ///
    /// # Errors
    /// Whatever a layer or `step` reports.
    pub async fn apply<F, Fut>(&self, state: AgentState, step: F) -> Result<AgentState, AgentError>
    where
        F: FnOnce(AgentState) -> Fut + Send,
        Fut: Future<Output = Result<AgentState, AgentError>> + Send + 'static,
    {
        let terminal = OnceTerminal(Mutex::new(Some(step)));
        self.run(state, &terminal, Arc::default()).await
    }
}

/// A closure as the step, run at most once (a [`Next`] is consumed when it runs).
struct OnceTerminal<F>(Mutex<Option<F>>);

impl<F, Fut> StepTerminal for OnceTerminal<F>
where
    F: FnOnce(AgentState) -> Fut + Send,
    Fut: Future<Output = Result<AgentState, AgentError>> + Send + 'static,
{
    fn run<'a>(&'a self, state: AgentState, _: Arc<CachedContext>) -> StepFuture<'a> {
        let step = self.0.lock().unwrap_or_else(|e| e.into_inner()).take();
        Box::pin(async move {
            match step {
                Some(step) => step(state).await,
                None => Err(AgentError::InvalidState(
                    "the step of a processor chain ran twice; call `next.run` at most once".into(),
                )),
            }
        })
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

fn short_type_name(full: &str) -> &str {
    let without_generics = full.split('<').next().unwrap_or(full);
    without_generics
        .rsplit("::")
        .next()
        .unwrap_or(without_generics)
}
