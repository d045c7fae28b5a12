//! The built-in processors, one per file.

mod accumulate_token_usage;
mod append_final_response;
mod append_tool_trace_to_buffer;
mod apply_cached_context;
mod callable_processor;
mod clear_execution_buffer;
mod mask_old_observations;
mod move_messages_to_buffer;
mod summarize_buffer;

pub use accumulate_token_usage::{AccumulateTokenUsage, TOKEN_USAGE_PARAMETER};
pub use agents_core::processors::{
    AppendContextMetadata, AppendStepMessages, CONTEXT_METADATA_KEY, CONTEXT_METADATA_PARAMETER,
};
pub use append_final_response::AppendFinalResponse;
pub use append_tool_trace_to_buffer::AppendToolTraceToBuffer;
pub use apply_cached_context::ApplyCachedContext;
pub use callable_processor::CallableProcessor;
pub use clear_execution_buffer::ClearExecutionBuffer;
pub use mask_old_observations::{
    is_observation, masked_conversation, MaskOldObservations, OBSERVATION_MASKED_KEY,
};
pub use move_messages_to_buffer::MoveMessagesToBuffer;
pub use summarize_buffer::SummarizeBuffer;
