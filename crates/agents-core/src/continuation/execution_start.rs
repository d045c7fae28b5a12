//! When the running execution started, for the criteria the loop evaluates.
//!
//! One agent serves many executions at once, so a criterion instance cannot keep "the"
//! execution's start. The loop sets it around each evaluation (evaluations are synchronous)
//! on the evaluating thread, and [`ExecutionTimeLimit`](super::ExecutionTimeLimit) reads it.

use std::cell::Cell;

use tokio::time::Instant;

thread_local! {
    static START: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Runs `evaluate` with `start` as the running execution's start.
pub(crate) fn during_execution<R>(start: Instant, evaluate: impl FnOnce() -> R) -> R {
    /// Puts the previous value back, also when `evaluate` panics.
    struct Restore(Option<Instant>);
    impl Drop for Restore {
        fn drop(&mut self) {
            START.with(|cell| cell.set(self.0));
        }
    }
    let _restore = Restore(START.with(|cell| cell.replace(Some(start))));
    evaluate()
}

/// The start of the execution whose criteria are being evaluated on this thread, if any.
pub(crate) fn current() -> Option<Instant> {
    START.with(Cell::get)
}
