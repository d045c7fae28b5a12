//! The standard processor stacks for each trace mode.

use std::sync::Arc;

use crate::{
    AppendContextMetadata, AppendFinalResponse, AppendStepMessages, AppendToolTraceToBuffer,
    ClearExecutionBuffer, MaskOldObservations, StateProcessor, StateProcessors, TraceRetention,
};

/// The standard chain for `retention`, in the order the design gives.
///
/// The list reads outermost first, so post-step logic runs right to left: in separated mode
/// the trace is appended to the buffer, then the final answer to `messages`, and the buffer is
/// cleared **last** when the execution stops. Every layer reads the loop's recorded verdict
/// ([`AgentState::is_stopping`](agents_core::AgentState::is_stopping)); none decides again.
///
/// - separated (`Ephemeral`, `Digest`): `ClearExecutionBuffer, AppendFinalResponse,
///   AppendToolTraceToBuffer, AppendContextMetadata`
/// - legacy (`Full`): `AppendStepMessages, AppendContextMetadata`
/// - observation masking (`Masked`): `MaskOldObservations, AppendStepMessages,
///   AppendContextMetadata` (everything persists, then old outputs become placeholders when
///   the execution stops)
///
/// The system prompt is the agent's configuration (`Agent::with_cached_context`), not a layer.
pub fn standard_processors(retention: TraceRetention) -> StateProcessors {
    let list: Vec<Arc<dyn StateProcessor>> = match retention {
        TraceRetention::Full => vec![
            Arc::new(AppendStepMessages),
            Arc::new(AppendContextMetadata),
        ],
        TraceRetention::Masked { keep } => vec![
            Arc::new(MaskOldObservations::new(keep)),
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
    StateProcessors::new(list)
}

/// The legacy chain: every step message persists.
pub fn legacy_processors() -> StateProcessors {
    standard_processors(TraceRetention::Full)
}

/// The separated chain with an ephemeral trace (the seeds' design).
pub fn separated_processors() -> StateProcessors {
    standard_processors(TraceRetention::Ephemeral)
}
