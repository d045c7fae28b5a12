//! Time and heap allocations per 2-step run of each variant of
//! [`FEATURES`], for `cargo xtask bench --features` (which
//! adds instruction counts from callgrind and writes the table).
//!
//! Times are measured in alternation: each round runs a batch of every variant one after the
//! other, and a variant's time is the median over the rounds, so a shared machine's drift falls
//! on every variant alike. The counting allocator is on for all of them.

use std::time::Instant;

use agents_bench::features::{Change, Feature, FEATURES};
use agents_bench::{answered, state_with_history};

use crate::allocations::counted;

/// One variant's measurement.
#[derive(Clone, Debug)]
pub struct FeatureRun {
    /// The variant.
    pub feature: &'static Feature,
    /// Median nanoseconds per 2-step run over the rounds.
    pub ns_per_run: f64,
    /// Heap allocations (and reallocations) per run.
    pub allocations_per_run: f64,
}

/// Measures every variant: `rounds` rounds of `batch` runs each, from a state of 10 messages
/// of history and the request.
///
/// # Errors
/// A message when a run fails or does not end with the scripted answer.
pub fn measure(rounds: usize, batch: u32) -> Result<Vec<FeatureRun>, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let start = state_with_history(10).with_user_message("Run the tool, please.");
    let agents: Vec<_> = FEATURES.iter().map(|feature| feature.agent()).collect();
    let run_batch = |agent: &agents_core::Agent, runs: u32| -> Result<(), String> {
        for _ in 0..runs {
            answered(runtime.block_on(agent.execute(start.clone())))?;
        }
        Ok(())
    };
    let mut allocations = Vec::with_capacity(agents.len());
    for agent in &agents {
        run_batch(agent, 100)?;
        let (count, _bytes) = counted(|| run_batch(agent, 1_000))?;
        allocations.push(count as f64 / 1_000.0);
    }
    let mut times: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); agents.len()];
    for _ in 0..rounds {
        for (agent, times) in agents.iter().zip(&mut times) {
            let started = Instant::now();
            run_batch(agent, batch)?;
            times.push(started.elapsed().as_nanos() as f64 / f64::from(batch));
        }
    }
    Ok(FEATURES
        .iter()
        .zip(times)
        .zip(allocations)
        .map(|((feature, times), allocations_per_run)| FeatureRun {
            feature,
            ns_per_run: median(times),
            allocations_per_run,
        })
        .collect())
}

/// The median of `values` (the mean of the middle two for an even count; 0 for none).
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// The measurements as JSON lines, one object per variant, for the xtask to read.
pub fn json_lines(runs: &[FeatureRun]) -> String {
    runs.iter()
        .map(|run| {
            serde_json::json!({
                "name": run.feature.name,
                "what": run.feature.what,
                "change": match run.feature.change {
                    Change::Defaults => "defaults",
                    Change::Off => "off",
                    Change::On => "on",
                },
                "ns_per_run": run.ns_per_run,
                "allocations_per_run": run.allocations_per_run,
            })
            .to_string()
                + "\n"
        })
        .collect()
}
