//! What every criterion bench of this crate shares: the configuration (short with
//! `AGENTS_BENCH_QUICK`) and a current-thread runtime.

use std::time::Duration;

use criterion::Criterion;

/// Criterion's settings: a short smoke run when `AGENTS_BENCH_QUICK` is set.
pub fn config() -> Criterion {
    let quick = std::env::var_os("AGENTS_BENCH_QUICK").is_some();
    let (warm_up, measure, samples) = if quick {
        (Duration::from_millis(200), Duration::from_millis(500), 10)
    } else {
        (Duration::from_secs(1), Duration::from_secs(3), 30)
    };
    Criterion::default()
        .warm_up_time(warm_up)
        .measurement_time(measure)
        .sample_size(samples)
}

/// A current-thread runtime with time and IO.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}
