//! The HTTP step's own overhead beside moving the bytes, measured in alternation.
//!
//! Criterion's `http_step/run/N` and `http_step/transfer/N` are measured one after the other,
//! seconds apart, and their difference (a sixth of either at 10,000 messages) carries the
//! drift of a shared machine's clock between them. Here the two alternate in rounds, on one
//! runtime against one mock server: each round times a batch of runs (a 2-step run through the
//! real `OpenAiCompatible`), then a batch of transfers (the run's two bodies POSTed raw, as the
//! provider sends them), and the overhead is the median over the rounds of run − transfer.

use std::time::Instant;

use agents_bench::mock_openai::http_step_agent;
use agents_bench::{answered, state_with_history, two_step_requests};
use inference::RequestBody;

/// The HTTP step at one history length.
#[derive(Clone, Debug)]
pub struct HttpOverhead {
    /// Messages of history before the question.
    pub history: usize,
    /// Median wall time of a run, µs.
    pub run_us: f64,
    /// Median wall time of moving its two bodies, µs.
    pub transfer_us: f64,
    /// Median over the rounds of run − transfer, µs.
    pub overhead_us: f64,
    /// Rounds measured.
    pub rounds: usize,
}

/// The histories measured: the ends of the flatness goal.
const HISTORIES: [usize; 2] = [10, 10_000];

/// Measures [`HISTORIES`]: `rounds` rounds of `batch` runs and `batch` transfers each.
///
/// # Errors
/// A message when the mock server cannot start, a run fails or does not end with the
/// scripted answer, or a transfer fails.
pub fn measure(quick: bool) -> Result<Vec<HttpOverhead>, String> {
    let (rounds, batch) = if quick { (3, 50) } else { (7, 1_000) };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let (server, model, agent) = http_step_agent()?;
    let client = reqwest::Client::new();
    let mut measured = Vec::new();
    for history in HISTORIES {
        let start = state_with_history(history).with_user_message("Run the tool, please.");
        let run = || async { answered(agent.execute(start.clone()).await) };
        // One run first: the provider's encoder then holds the history, as in every later run.
        runtime.block_on(run())?;
        let bodies: Vec<RequestBody> = two_step_requests(&start)
            .iter()
            .map(|request| model.encode_request(request, false))
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
        let transfer = || async {
            for body in &bodies {
                let reply = server.post_chat(&client, body.for_attempt()).await;
                std::hint::black_box(reply.map_err(|e| e.to_string())?);
            }
            Ok::<(), String>(())
        };
        let mut runs = Vec::with_capacity(rounds);
        let mut transfers = Vec::with_capacity(rounds);
        let mut overheads = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            let started = Instant::now();
            for _ in 0..batch {
                runtime.block_on(run())?;
            }
            let run_us = started.elapsed().as_secs_f64() * 1e6 / batch as f64;
            let started = Instant::now();
            for _ in 0..batch {
                runtime.block_on(transfer())?;
            }
            let transfer_us = started.elapsed().as_secs_f64() * 1e6 / batch as f64;
            runs.push(run_us);
            transfers.push(transfer_us);
            overheads.push(run_us - transfer_us);
        }
        measured.push(HttpOverhead {
            history,
            run_us: median(&mut runs),
            transfer_us: median(&mut transfers),
            overhead_us: median(&mut overheads),
            rounds,
        });
    }
    Ok(measured)
}

/// The middle value (the mean of the two middle ones for an even count); 0 when empty.
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn the_median_is_the_middle_of_the_sorted_rounds() {
        assert_eq!(median(&mut [5.0, 1.0, 3.0]), 3.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&mut []), 0.0);
    }
}
