//! `peers [--quick] [--out DIR] [--peer NAME=FILE].. [--skipped NAME=REASON].. [--context KEY=VALUE]..`
//!
//! Measures ours and rig in this one process on the same two-step script (a tool call, its
//! result, a text answer) over histories of 10, 1,000 and 10,000 messages, adds the Python
//! peers' figures (files written by `benches/peers/*.py`), and writes `DIR/peers.json` and
//! `DIR/peers.md` (default `DIR`: `target/bench`), printing the table and the targets.
//! Run by `cargo xtask bench-peers`, which also runs the Python peers.
//!
//! Exits 0 whether the targets hold or not (the table says PASS or FAIL); non-zero only when
//! something could not be measured or written.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use agents_bench::{state_with_history, tool_calling_agent, two_step_script, CycleModel};
use agents_processing::TraceRetention;
use rig_compare::peers::{
    measure_alternating, medians, Figures, Method, PeerResult, Report, PYTHON_PEERS, SIZES,
};
use rig_compare::{rig_agent, rig_history, run_rig, ANSWER, PROMPT};

struct Args {
    method: Method,
    out: PathBuf,
    peers: BTreeMap<String, PeerResult>,
    context: BTreeMap<String, String>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        method: Method::FULL,
        out: PathBuf::from("target/bench"),
        peers: BTreeMap::new(),
        context: BTreeMap::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| {
            it.next().ok_or_else(|| {
                format!("{name} needs a value; see the usage at the top of src/bin/peers.rs")
            })
        };
        match arg.as_str() {
            "--quick" => args.method = Method::QUICK,
            "--out" => args.out = PathBuf::from(value("--out")?),
            "--peer" => {
                let (name, file) = split_pair(&value("--peer")?)?;
                let result = std::fs::read_to_string(&file)
                    .map_err(|e| format!("cannot read {file}: {e}"))
                    .and_then(|text| {
                        PeerResult::from_script_output(&text).map_err(|e| format!("{file}: {e}"))
                    })
                    .unwrap_or_else(PeerResult::Skipped);
                args.peers.insert(name, result);
            }
            "--skipped" => {
                let (name, reason) = split_pair(&value("--skipped")?)?;
                args.peers.insert(name, PeerResult::Skipped(reason));
            }
            "--context" => {
                let (key, val) = split_pair(&value("--context")?)?;
                args.context.insert(key, val);
            }
            other => {
                return Err(format!(
                    "unknown argument `{other}`; see the usage at the top of src/bin/peers.rs"
                ))
            }
        }
    }
    for name in PYTHON_PEERS {
        args.peers.entry(name.to_owned()).or_insert_with(|| {
            PeerResult::Skipped(
                "not run by this binary alone; `cargo xtask bench-peers` runs the Python peers"
                    .to_owned(),
            )
        });
    }
    Ok(args)
}

fn split_pair(pair: &str) -> Result<(String, String), String> {
    pair.split_once('=')
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .ok_or_else(|| format!("`{pair}` is not NAME=VALUE"))
}

/// Ours and rig, median microseconds per run by history length: CPU, then wall clock.
fn measure(method: Method) -> Result<(Figures, Figures), String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a tokio runtime: {e}"))?;
    let ours = tool_calling_agent(
        CycleModel::new(two_step_script()),
        TraceRetention::Ephemeral,
    );
    let (rig, rig_model) = rig_agent().map_err(|e| format!("cannot build the rig model: {e}"))?;
    let (mut cpu, mut wall) = (Figures::default(), Figures::default());
    for len in SIZES {
        let state = state_with_history(len).with_user_message(PROMPT);
        let history = rig_history(len);

        // Both sides run the script as intended before anything is timed.
        let done = rt
            .block_on(ours.execute(state.clone()))
            .map_err(|e| format!("ours failed at {len} messages: {e}"))?;
        let answer = done.final_response().map(|m| m.text().to_owned());
        if answer.as_deref() != Some(ANSWER) || done.step_executions().len() != 2 {
            return Err(format!(
                "ours did not run the two-step script at {len} messages: answer {answer:?}, {} steps",
                done.step_executions().len()
            ));
        }
        let before = rig_model.transport.calls();
        let answer = rt
            .block_on(run_rig(&rig, &history))
            .map_err(|e| format!("rig failed at {len} messages: {e}"))?;
        let calls = rig_model.transport.calls() - before;
        if answer != ANSWER || calls != 2 {
            return Err(format!(
                "rig did not run the two-step script at {len} messages: answer {answer:?}, {calls} model calls"
            ));
        }

        let mut run_ours = || -> Result<(), String> {
            rt.block_on(ours.execute(state.clone()))
                .map(drop)
                .map_err(|e| format!("ours failed at {len} messages: {e}"))
        };
        let mut run_rig_side = || -> Result<(), String> {
            rt.block_on(run_rig(&rig, &history))
                .map(drop)
                .map_err(|e| format!("rig failed at {len} messages: {e}"))
        };
        eprintln!("measuring ours and rig at {len} messages");
        let samples = measure_alternating(method, &mut [&mut run_ours, &mut run_rig_side])?;
        let [ours_samples, rig_samples] = samples.as_slice() else {
            return Err("expected the samples of two sides".to_owned());
        };
        let ((ours_cpu, ours_wall), (rig_cpu, rig_wall)) = medians(ours_samples)
            .zip(medians(rig_samples))
            .ok_or_else(|| format!("no usable samples at {len} messages"))?;
        eprintln!(
            "  CPU: ours {ours_cpu:.2} us/run, rig {rig_cpu:.1} us/run; \
             wall: ours {ours_wall:.2} us/run, rig {rig_wall:.1} us/run"
        );
        cpu.ours.insert(len, ours_cpu);
        cpu.rig.insert(len, rig_cpu);
        wall.ours.insert(len, ours_wall);
        wall.rig.insert(len, rig_wall);
    }
    if rig_model.transport.calls() % 2 != 0 {
        return Err(
            "rig made an odd number of model calls: a run stopped after its tool call".to_owned(),
        );
    }
    Ok((cpu, wall))
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    let (cpu, wall) = measure(args.method)?;
    let mut context = args.context;
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    context.insert("cores".to_owned(), cores.to_string());
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        let load: Vec<&str> = load.split_whitespace().take(3).collect();
        context.insert(
            "load average after the Rust sides".to_owned(),
            load.join(" "),
        );
    }
    let report = Report::new(cpu, wall, args.peers, args.method.describe(), context);
    std::fs::create_dir_all(&args.out)
        .map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;
    let json_path = args.out.join("peers.json");
    let json = serde_json::to_string_pretty(&report.to_json())
        .map_err(|e| format!("cannot serialize the report: {e}"))?;
    std::fs::write(&json_path, json + "\n")
        .map_err(|e| format!("cannot write {}: {e}", json_path.display()))?;
    let md_path = args.out.join("peers.md");
    let markdown = report.to_markdown();
    std::fs::write(&md_path, &markdown)
        .map_err(|e| format!("cannot write {}: {e}", md_path.display()))?;
    println!("{markdown}");
    println!("wrote {} and {}", json_path.display(), md_path.display());
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("peers: {message}");
            ExitCode::FAILURE
        }
    }
}
