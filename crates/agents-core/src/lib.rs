//! `agents_core`: agent state, steps, continuation, error policy, tools, events and the loop.
//!
//! (Crate documentation with an example is being written with the loop.)

pub mod tools;

pub use tools::*;
