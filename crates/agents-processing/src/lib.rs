//! `agents_processing`: the state-processor middleware chain and the built-in processors.
//!
//! ```
//! use agents_processing::{EstimateTokenCounter, TokenCounter};
//! assert!(EstimateTokenCounter.count_text("hello world") >= 2);
//! ```

mod token_counter;

#[cfg(feature = "tiktoken")]
pub use token_counter::TiktokenCounter;
pub use token_counter::{EstimateTokenCounter, TokenCounter};
