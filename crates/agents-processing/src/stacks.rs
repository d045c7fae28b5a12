//! The standard processor stacks for each trace mode.

use std::sync::Arc;

use agents_core::CachedContext;

use crate::{
    AppendContextMetadata, AppendFinalResponse, AppendStepMessages, AppendToolTraceToBuffer,
    ApplyCachedContext, ClearExecutionBuffer, StateProcessor, StateProcessors, TraceRetention,
};

/// The standard chain for `retention`, in the order the design gives.
///
/// The list reads outermost first, so post-step logic runs right to left: in separated mode
/// the trace is appended to the buffer, then the final answer to `messages`, and the buffer is
/// cleared **last** when the execution stops.
///
/// - separated (`Ephemeral`, `Digest`): `ClearExecutionBuffer, AppendFinalResponse,
///   AppendToolTraceToBuffer, AppendContextMetadata, ApplyCachedContext`
/// - legacy (`Full`): `AppendStepMessages, AppendContextMetadata, ApplyCachedContext`
///
/// `ApplyCachedContext` is included when `cached_context` is not empty.
pub fn standard_processors(
    retention: TraceRetention,
    cached_context: CachedContext,
) -> StateProcessors {
    let mut list: Vec<Arc<dyn StateProcessor>> = match retention {
        TraceRetention::Full => vec![
            Arc::new(AppendStepMessages),
            Arc::new(AppendContextMetadata),
        ],
        separated => vec![
            Arc::new(ClearExecutionBuffer),
            Arc::new(AppendFinalResponse::with_retention(separated)),
            Arc::new(AppendToolTraceToBuffer),
            Arc::new(AppendContextMetadata),
        ],
    };
    if !cached_context.is_empty() {
        list.push(Arc::new(ApplyCachedContext::new(cached_context)));
    }
    StateProcessors::new(list)
}

/// The legacy chain: every step message persists.
pub fn legacy_processors(cached_context: CachedContext) -> StateProcessors {
    standard_processors(TraceRetention::Full, cached_context)
}

/// The separated chain with an ephemeral trace (the seeds' design).
pub fn separated_processors(cached_context: CachedContext) -> StateProcessors {
    standard_processors(TraceRetention::Ephemeral, cached_context)
}
