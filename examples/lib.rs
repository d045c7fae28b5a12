//! The workspace's runnable examples: `cargo run --example NAME` from the root. Each file in
//! `examples/` starts with what it shows and what it needs; this library is empty.
