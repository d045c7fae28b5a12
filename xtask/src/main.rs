//! Project automation, run as `cargo xtask <task>`.
fn main() {}
