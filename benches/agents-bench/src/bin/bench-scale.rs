//! `bench-scale`: runs per second of one `Agent` by worker count, for runs that start from
//! their own state and for runs that all start from one shared state (the server case: one
//! system prompt and history, many users).
//!
//! ```text
//! bench-scale [--max-workers N | --workers N] [--seconds S] [--history H]
//!             [--agent-per-worker] [--out DIR]
//! ```
//!
//! Each worker is an OS thread with its own current-thread runtime, looping two-step runs
//! (a `noop` tool call, then the answer, from a zero-latency model that decides from the
//! request, so it shares nothing between runs) for `S` seconds (default 2). Worker counts are
//! 1, 2, 4, ... up to `N` (default: the machine's cores), and `N` itself; `--workers N` measures
//! `N` alone (to profile one count: its speed-ups are then against itself). A run is
//! `agent.execute(start.clone().with_user_message(..))`, where `start` holds `H` messages
//! (default 100): built per worker (own state) or built once and cloned by every worker
//! (shared state). With `--agent-per-worker` every worker builds its own `Agent` instead of
//! cloning one (a diagnostic: what sharing the agent's `Arc`s costs across cores).
//!
//! Each worker count also measures the machine's own ceiling: the same threads doing work that
//! shares nothing (small allocations filled with pseudo-random numbers and summed, about as
//! much allocation per microsecond as a run). A many-core virtual machine whose cores are
//! hyperthreads of fewer physical ones, or whose clock drops with load, shows it here: read a
//! run's speed-up against the ceiling's. Prints a table and writes `DIR/scale.json` (default
//! `target/bench`).
//! Needs no network and no file of the repository: copy the release binary anywhere.
// A benchmark binary: it prints its table.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::PathBuf;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use agents_bench::{history, tool_calling_agent, ReplyModel, ANSWER};
use agents_core::{Agent, AgentState};
use agents_processing::TraceRetention;
use messages::ToolCall;
use serde_json::json;

struct Options {
    max_workers: usize,
    /// `--workers N`: only this count instead of the sweep.
    only: bool,
    seconds: f64,
    history: usize,
    agent_per_worker: bool,
    out: PathBuf,
}

fn parse() -> Result<Options, String> {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut options = Options {
        max_workers: cores,
        only: false,
        seconds: 2.0,
        history: 100,
        agent_per_worker: false,
        out: PathBuf::from("target/bench"),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--max-workers" => {
                options.max_workers = value()?.parse().map_err(|_| "--max-workers N")?;
            }
            "--workers" => {
                options.max_workers = value()?.parse().map_err(|_| "--workers N")?;
                options.only = true;
            }
            "--seconds" => options.seconds = value()?.parse().map_err(|_| "--seconds S")?,
            "--history" => options.history = value()?.parse().map_err(|_| "--history H")?,
            "--out" => options.out = PathBuf::from(value()?),
            "--agent-per-worker" => options.agent_per_worker = true,
            "--help" | "-h" => {
                return Err("usage: bench-scale [--max-workers N | --workers N] \
                            [--seconds S] [--history H] [--agent-per-worker] [--out DIR]"
                    .into())
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if options.max_workers == 0 || options.seconds <= 0.0 {
        return Err("--max-workers, --workers and --seconds must be positive".into());
    }
    Ok(options)
}

/// 1, 2, 4, ... up to `max`, and `max`.
fn worker_counts(max: usize) -> Vec<usize> {
    let mut counts: Vec<usize> = std::iter::successors(Some(1usize), |n| n.checked_mul(2))
        .take_while(|n| *n <= max)
        .collect();
    if counts.last() != Some(&max) {
        counts.push(max);
    }
    counts
}

fn agent() -> Agent {
    tool_calling_agent(
        ReplyModel::new(vec![ToolCall::new("call_1", "noop", json!({}))], ANSWER),
        TraceRetention::Ephemeral,
    )
}

fn start_state(history_len: usize) -> AgentState {
    AgentState::new().with_messages(history(history_len))
}

/// Runs on `workers` threads at once: each prepares (`prepare(worker)`), all start together,
/// then each works (`work(prepared, started)`, returning how many units it did). A worker
/// whose preparation failed still takes its place at the start line, so its error is
/// reported instead of the others waiting for it forever. Returns the units of all workers
/// and the longest time one took.
fn on_threads<P>(
    workers: usize,
    prepare: impl Fn(usize) -> Result<P, String> + Sync,
    work: impl Fn(P, Instant) -> Result<u64, String> + Sync,
) -> Result<(u64, Duration), String> {
    let start_line = Barrier::new(workers + 1);
    let results = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|worker| {
                let (start_line, prepare, work) = (&start_line, &prepare, &work);
                scope.spawn(move || -> Result<(u64, Duration), String> {
                    let prepared = prepare(worker);
                    start_line.wait();
                    let started = Instant::now();
                    let units = work(prepared?, started)?;
                    Ok((units, started.elapsed()))
                })
            })
            .collect();
        start_line.wait();
        handles
            .into_iter()
            .map(|h| h.join().map_err(|_| "a worker panicked".to_owned())?)
            .collect::<Result<Vec<_>, String>>()
    })?;
    let units = results.iter().map(|(u, _)| u).sum();
    let elapsed = results
        .iter()
        .map(|(_, e)| *e)
        .max()
        .unwrap_or(Duration::ZERO);
    Ok((units, elapsed))
}

/// Runs from `workers` threads for `seconds`; every worker starts its runs from `start()`
/// (called once per worker). Returns (runs, elapsed).
fn measure(
    agent: &Agent,
    per_worker: bool,
    workers: usize,
    seconds: f64,
    start: &(dyn Fn() -> AgentState + Sync),
) -> Result<(u64, Duration), String> {
    let deadline_after = Duration::from_secs_f64(seconds);
    let prepare = |worker: usize| {
        let agent = if per_worker {
            self::agent()
        } else {
            agent.clone()
        };
        let state = start();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .map_err(|e| e.to_string())?;
        let question = format!("Worker {worker}: run the tool, please.");
        // Warm up, and check the run is the two-step conversation.
        let done = rt
            .block_on(agent.execute(state.clone().with_user_message(question.clone())))
            .map_err(|e| e.to_string())?;
        if done.final_response().map(|m| m.text()).as_deref() != Some(ANSWER) {
            return Err("the run did not end with the answer".to_owned());
        }
        Ok((rt, agent, state, question))
    };
    on_threads(workers, prepare, |(rt, agent, state, question), started| {
        let mut runs = 0u64;
        rt.block_on(async {
            while started.elapsed() < deadline_after {
                for _ in 0..64 {
                    let run = agent.execute(state.clone().with_user_message(question.as_str()));
                    std::hint::black_box(run.await.map_err(|e| e.to_string())?);
                    runs += 1;
                }
            }
            Ok::<_, String>(())
        })?;
        Ok(runs)
    })
}

/// The ceiling: `workers` threads doing `seconds` of work that shares nothing. Returns work
/// units per second.
fn ceiling(workers: usize, seconds: f64) -> Result<f64, String> {
    let deadline_after = Duration::from_secs_f64(seconds);
    let (units, elapsed) = on_threads(
        workers,
        |worker| Ok(0x9E37_79B9_7F4A_7C15u64 ^ worker as u64),
        |mut seed, started| {
            let mut units = 0u64;
            while started.elapsed() < deadline_after {
                for _ in 0..256 {
                    // One unit: a 32-word allocation filled and summed.
                    let words: Vec<u64> = (0..32)
                        .map(|_| {
                            seed ^= seed << 13;
                            seed ^= seed >> 7;
                            seed ^= seed << 17;
                            seed
                        })
                        .collect();
                    std::hint::black_box(words.iter().fold(0u64, |a, w| a ^ w));
                    units += 1;
                }
            }
            Ok(units)
        },
    )?;
    Ok(units as f64 / elapsed.as_secs_f64().max(f64::MIN_POSITIVE))
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("bench-scale: {message}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let options = parse()?;
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let agent = agent();
    let shared = start_state(options.history);
    let history_len = options.history;
    let own = move || start_state(history_len);
    let shared_start = move || shared.clone();
    println!(
        "bench-scale: 2-step runs of {}, {} history messages, {:.1} s per point, {cores} cores",
        if options.agent_per_worker {
            "an Agent per worker"
        } else {
            "one Agent"
        },
        options.history,
        options.seconds
    );
    println!(
        "{:>8} {:>14} {:>8} {:>14} {:>8} {:>13} {:>10}",
        "workers", "own runs/s", "x1", "shared runs/s", "x1", "shared/own", "ceiling x1"
    );
    let mut rows = Vec::new();
    let mut base = (0.0f64, 0.0f64, 0.0f64);
    let counts = if options.only {
        vec![options.max_workers]
    } else {
        worker_counts(options.max_workers)
    };
    for workers in counts {
        let (own_runs, own_time) = measure(
            &agent,
            options.agent_per_worker,
            workers,
            options.seconds,
            &own,
        )?;
        let (shared_runs, shared_time) = measure(
            &agent,
            options.agent_per_worker,
            workers,
            options.seconds,
            &shared_start,
        )?;
        let ceiling_rate = ceiling(workers, options.seconds)?;
        let own_rate = own_runs as f64 / own_time.as_secs_f64();
        let shared_rate = shared_runs as f64 / shared_time.as_secs_f64();
        if rows.is_empty() {
            base = (own_rate, shared_rate, ceiling_rate);
        }
        println!(
            "{workers:>8} {own_rate:>14.0} {:>7.2}x {shared_rate:>14.0} {:>7.2}x {:>12.2} {:>9.2}x",
            own_rate / base.0,
            shared_rate / base.1,
            shared_rate / own_rate,
            ceiling_rate / base.2
        );
        rows.push(json!({
            "workers": workers,
            "own_runs_per_second": own_rate,
            "shared_runs_per_second": shared_rate,
            "own_speedup": own_rate / base.0,
            "shared_speedup": shared_rate / base.1,
            "ceiling_speedup": ceiling_rate / base.2,
        }));
    }
    if options.max_workers > cores && cores > 0 {
        println!("note: more workers than the {cores} cores of this machine");
    }
    let report = json!({
        "benchmark": "scale",
        "cores": cores,
        "history_messages": options.history,
        "agent_per_worker": options.agent_per_worker,
        "seconds_per_point": options.seconds,
        "rows": rows,
    });
    std::fs::create_dir_all(&options.out).map_err(|e| format!("{}: {e}", options.out.display()))?;
    let path = options.out.join("scale.json");
    let text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("wrote {}", path.display());
    Ok(())
}
