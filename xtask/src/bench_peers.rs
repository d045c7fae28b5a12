//! `cargo xtask bench-peers [--quick] [--no-python]`: the performance guard of issue 15.
//!
//! Runs the same two-step script (a tool call, its result, a text answer; histories of 10,
//! 1,000 and 10,000 messages; zero-latency scripted models) through
//! - ours and rig 0.44, side by side in one process: the `peers` binary of
//!   `benches/rig-compare` (a separate cargo project, built in release);
//! - the Python peers, each in its own process: the OpenAI Agents SDK and Pydantic AI
//!   (`benches/peers/*.py`), installed at pinned versions into a cached venv
//!   (`~/.cache/agents-rs/peers-venv`). A peer that cannot be installed or run is recorded as
//!   `null` with the reason, never guessed.
//!
//! Writes `target/bench/peers.json` and `target/bench/peers.md`, prints the table and
//! whether each target holds (ours >= 5x faster than rig at 10 messages, >= 100x at 1,000,
//! flat within 20% from 10 to 10,000). The command succeeds whether the targets hold or not;
//! it fails only when ours or rig cannot be built or measured.
//!
//! `--quick` is a smoke run (short batches; the numbers mean nothing); `--no-python` skips
//! the Python peers. Target directories: `CARGO_TARGET_DIR` (or `target/`) for the report,
//! `RIG_COMPARE_TARGET_DIR` (or `target/rig-compare`) for the rig-compare build.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::bench::BenchDirs;
use crate::run::{cargo, Step};

/// The pinned Python peers: report name, pip requirement, script in `benches/peers/`.
const PYTHON_PEERS: [(&str, &str, &str); 2] = [
    (
        "openai-agents",
        "openai-agents==0.24.0",
        "openai_agents_bench.py",
    ),
    (
        "pydantic-ai",
        "pydantic-ai-slim==2.68.0",
        "pydantic_ai_bench.py",
    ),
];

/// The Python scripts' timing for a full run and for `--quick`, the same as the Rust side's
/// `Method::FULL` and `Method::QUICK` (`benches/rig-compare/src/peers.rs`).
const PYTHON_FULL: [&str; 6] = ["--warm-up", "0.3", "--batches", "9", "--batch-cpu", "0.1"];
const PYTHON_QUICK: [&str; 6] = ["--warm-up", "0.03", "--batches", "3", "--batch-cpu", "0.01"];

/// Runs the comparison and writes the report.
pub fn run(args: &[String]) -> Result<(), String> {
    for arg in args {
        if arg != "--quick" && arg != "--no-python" {
            return Err(format!(
                "unknown argument `{arg}`; bench-peers takes --quick and --no-python"
            ));
        }
    }
    let quick = args.iter().any(|a| a == "--quick");
    let python = !args.iter().any(|a| a == "--no-python");
    let BenchDirs {
        root,
        target,
        rig_target,
    } = BenchDirs::from_env()?;
    let out = target.join("bench");
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;

    // Built before the Python peers run, so a broken build fails fast.
    let manifest = root.join("benches/rig-compare/Cargo.toml");
    let mut build = cargo(&[
        "build",
        "--release",
        "--manifest-path",
        &manifest.to_string_lossy(),
        "--bin",
        "peers",
    ]);
    build
        .current_dir(&root)
        .env("CARGO_TARGET_DIR", &rig_target);
    Step::new("build ours-vs-rig (benches/rig-compare, release)", build).run()?;

    let outcomes = if python {
        python_peers(&root, &out, quick)
    } else {
        skip_all("skipped with --no-python")
    };

    let mut peers = Command::new(rig_target.join("release").join("peers"));
    peers.current_dir(&root).arg("--out").arg(&out);
    if quick {
        peers.arg("--quick");
    }
    for outcome in &outcomes {
        peers.args(outcome.args());
    }
    peers
        .arg("--context")
        .arg(format!("commit={}", commit(&root)));
    Step::new("measure ours and rig, write the report", peers).run()?;
    Ok(())
}

/// What became of a Python peer.
#[derive(Debug, PartialEq)]
enum PeerOutcome {
    /// Measured: its result file.
    Measured { name: &'static str, file: PathBuf },
    /// Not measured, and why.
    Skipped { name: &'static str, reason: String },
}

impl PeerOutcome {
    /// The `peers` binary's arguments for it.
    fn args(&self) -> [String; 2] {
        match self {
            Self::Measured { name, file } => {
                ["--peer".to_owned(), format!("{name}={}", file.display())]
            }
            Self::Skipped { name, reason } => ["--skipped".to_owned(), format!("{name}={reason}")],
        }
    }
}

/// Installs and runs the Python peers.
fn python_peers(root: &Path, out: &Path, quick: bool) -> Vec<PeerOutcome> {
    let venv = match venv_dir() {
        Ok(dir) => dir,
        Err(reason) => return skip_all(&reason),
    };
    let python = venv.join("bin").join("python");
    if !python.exists() {
        let mut create = Command::new("python3");
        create.arg("-m").arg("venv").arg(&venv);
        if let Err(e) = Step::new("python venv for the peers", create).run() {
            return skip_all(&format!("cannot create the venv {}: {e}", venv.display()));
        }
    }
    let timing: &[&str] = if quick { &PYTHON_QUICK } else { &PYTHON_FULL };
    let mut result = Vec::new();
    for (name, requirement, script) in PYTHON_PEERS {
        let mut install = Command::new(&python);
        install.args(["-m", "pip", "install", "-q", requirement]);
        if let Err(e) = Step::new("pip install a Python peer", install).run() {
            let reason = format!("pip install {requirement} failed ({e})");
            eprintln!("warning: {name} is not measured: {reason}");
            result.push(PeerOutcome::Skipped { name, reason });
            continue;
        }
        let file = out.join(format!("peer-{name}.json"));
        // A stale result must not stand in for a failed run.
        let _ = std::fs::remove_file(&file);
        let mut bench = Command::new(&python);
        bench
            .current_dir(root.join("benches/peers"))
            .arg(script)
            .args(timing)
            .arg("--out")
            .arg(&file)
            .env("OPENAI_AGENTS_DISABLE_TRACING", "1")
            .stdout(Stdio::null());
        let outcome = match Step::new("measure a Python peer", bench).run() {
            Ok(()) if file.exists() => PeerOutcome::Measured { name, file },
            Ok(()) => PeerOutcome::Skipped {
                name,
                reason: format!("benches/peers/{script} wrote no result"),
            },
            Err(e) => PeerOutcome::Skipped {
                name,
                reason: format!(
                    "benches/peers/{script} failed ({e}); its error is in the command's output"
                ),
            },
        };
        if let PeerOutcome::Skipped { reason, .. } = &outcome {
            eprintln!("warning: {name} is not measured: {reason}");
        }
        result.push(outcome);
    }
    result
}

fn skip_all(reason: &str) -> Vec<PeerOutcome> {
    eprintln!("warning: the Python peers are not measured: {reason}");
    PYTHON_PEERS
        .iter()
        .map(|(name, ..)| PeerOutcome::Skipped {
            name,
            reason: reason.to_owned(),
        })
        .collect()
}

fn venv_dir() -> Result<PathBuf, String> {
    let home =
        std::env::var_os("HOME").ok_or("HOME is not set, so there is no cache for the venv")?;
    Ok(PathBuf::from(home)
        .join(".cache")
        .join("agents-rs")
        .join("peers-venv"))
}

/// The commit measured, marked when the work tree has changes.
pub(crate) fn commit(root: &Path) -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(hash) => match git(&["status", "--porcelain", "--untracked-files=no"]) {
            Some(changes) if !changes.is_empty() => format!("{hash} with uncommitted changes"),
            _ => hash,
        },
        None => "unknown (git rev-parse failed)".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outcome_becomes_the_peers_binarys_arguments() {
        let measured = PeerOutcome::Measured {
            name: "pydantic-ai",
            file: PathBuf::from("/tmp/peer-pydantic-ai.json"),
        };
        assert_eq!(
            measured.args(),
            ["--peer", "pydantic-ai=/tmp/peer-pydantic-ai.json"]
        );
        let skipped = skip_all("skipped with --no-python");
        assert_eq!(skipped.len(), PYTHON_PEERS.len());
        assert_eq!(
            skipped[0].args(),
            ["--skipped", "openai-agents=skipped with --no-python"]
        );
    }

    #[test]
    fn every_peer_is_pinned_and_has_its_script() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../benches/peers");
        for (name, requirement, script) in PYTHON_PEERS {
            assert!(requirement.contains("=="), "{name} is not pinned");
            assert!(dir.join(script).exists(), "{script} is missing");
        }
    }

    #[test]
    fn an_unknown_argument_is_refused_before_anything_runs() {
        let error = run(&["--fast".to_owned()]).unwrap_err();
        assert!(error.contains("--fast"), "{error}");
    }
}
