//! Heap allocations per agent step, counted by a global allocator that wraps the system one.
//!
//! The only `unsafe` in the project: a [`GlobalAlloc`] that forwards every call to
//! [`System`] unchanged and counts. It lives in this measuring binary only; the library crates
//! forbid `unsafe`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use agents_bench::{answered, state_with_history, tool_calling_agent, two_step_script, CycleModel};
use agents_processing::TraceRetention;

/// The system allocator, counting allocations and requested bytes.
pub struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

fn count(size: usize) {
    ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    BYTES.fetch_add(size as u64, Ordering::Relaxed);
}

// SAFETY: every method forwards its arguments unchanged to `System`, which upholds the
// `GlobalAlloc` contract; counting touches only atomics and never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller's guarantees for `alloc` are passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        // SAFETY: `ptr` and `layout` come from this allocator, i.e. from `System`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` and `layout` come from this allocator, i.e. from `System`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// What `work` allocated: heap allocations (and reallocations) and bytes requested, counted
/// on this thread's view of the global counters (the measuring binary runs one thing at a
/// time).
///
/// # Errors
/// `work`'s own error.
pub fn counted(work: impl FnOnce() -> Result<(), String>) -> Result<(u64, u64), String> {
    let (allocations, bytes) = (
        ALLOCATIONS.load(Ordering::Relaxed),
        BYTES.load(Ordering::Relaxed),
    );
    work()?;
    Ok((
        ALLOCATIONS.load(Ordering::Relaxed) - allocations,
        BYTES.load(Ordering::Relaxed) - bytes,
    ))
}

/// Allocations of one step, averaged over many executions.
#[derive(Clone, Copy, Debug)]
pub struct StepAllocations {
    /// Trace mode (`full` or `ephemeral`).
    pub mode: &'static str,
    /// Messages of history before the question.
    pub history: usize,
    /// Heap allocations (and reallocations) per step.
    pub allocations: f64,
    /// Bytes requested per step.
    pub bytes: f64,
}

/// Counts the allocations of the overhead bench's execution (two steps) in both modes.
///
/// # Errors
/// A message when a run fails or does not end with the scripted answer.
pub fn measure() -> Result<Vec<StepAllocations>, String> {
    const RUNS: u64 = 1_000;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let mut measured = Vec::new();
    for (mode, retention) in [
        ("full", TraceRetention::Full),
        ("ephemeral", TraceRetention::Ephemeral),
    ] {
        let agent = tool_calling_agent(CycleModel::new(two_step_script()), retention);
        for history in [10usize, 10_000] {
            let state = state_with_history(history).with_user_message("Run the tool, please.");
            let run = || answered(runtime.block_on(agent.execute(state.clone())));
            for _ in 0..10 {
                run()?;
            }
            let (allocations, bytes) = counted(|| {
                for _ in 0..RUNS {
                    runtime
                        .block_on(agent.execute(state.clone()))
                        .map_err(|e| e.to_string())?;
                }
                Ok(())
            })?;
            let steps = (RUNS * 2) as f64;
            measured.push(StepAllocations {
                mode,
                history,
                allocations: allocations as f64 / steps,
                bytes: bytes as f64 / steps,
            });
        }
    }
    Ok(measured)
}
