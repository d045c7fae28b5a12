//! `cargo xtask bench [--quick]`: runs the criterion benches of `benches/agents-bench`, the
//! side-by-side comparison with rig in `benches/rig-compare` (a separate cargo project), then
//! `bench-report`, which measures context cost, scale and parallel tools and writes
//! `docs/benchmarks.md` with its SVG plots.
//!
//! `--quick` uses short criterion runs and a smaller scale run, and writes its report under the
//! target directory instead of `docs/` (a smoke run must not overwrite the real numbers).
//!
//! `--scale` runs only `bench-scale` (runs per second by worker count, own and shared starting
//! states) and writes `target/bench/scale.json`; the release binary it builds,
//! `target/release/bench-scale`, runs anywhere on its own (`--max-workers N --out DIR`).
//!
//! `--features` (dispatched by `main.rs` to `bench_features.rs`) measures what each feature of
//! the step costs instead, and writes `docs/benchmarks-features.md`.
//!
//! Target directories: the workspace's `CARGO_TARGET_DIR` (or `target/`), and for rig-compare
//! `RIG_COMPARE_TARGET_DIR` (or `target/rig-compare`), so rig's build is kept between runs.

use std::path::{Path, PathBuf};

use crate::run::{cargo, Step};

/// Runs every benchmark and writes the report.
pub fn run(args: &[String]) -> Result<(), String> {
    let quick = args.iter().any(|a| a == "--quick");
    let skip_rig = args.iter().any(|a| a == "--no-rig");
    let BenchDirs {
        root,
        target,
        rig_target,
    } = BenchDirs::from_env()?;
    if args.iter().any(|a| a == "--scale") {
        return scale(&root, &target, quick);
    }
    let docs = if quick {
        target.join("bench-quick")
    } else {
        root.join("docs")
    };

    let mut agents = cargo(&["bench", "-p", "agents-bench", "--bench", "agent_loop"]);
    agents.current_dir(&root).env("CARGO_TARGET_DIR", &target);
    if quick {
        agents.env("AGENTS_BENCH_QUICK", "1");
    }
    Step::new("criterion: overhead and serialization", agents).run()?;

    let mut encoding = cargo(&["bench", "-p", "agents-bench", "--bench", "encoding"]);
    encoding.current_dir(&root).env("CARGO_TARGET_DIR", &target);
    if quick {
        encoding.env("AGENTS_BENCH_QUICK", "1");
    }
    Step::new(
        "criterion: request encoding, HTTP step, text recovery",
        encoding,
    )
    .run()?;

    let mut recovery = cargo(&["bench", "-p", "agents-bench", "--bench", "recovery"]);
    recovery.current_dir(&root).env("CARGO_TARGET_DIR", &target);
    if quick {
        recovery.env("AGENTS_BENCH_QUICK", "1");
    }
    Step::new(
        "criterion: tool calls written as text, adversarial replies",
        recovery,
    )
    .run()?;

    let mut rig_criterion = None;
    if !skip_rig {
        let manifest = root.join("benches/rig-compare/Cargo.toml");
        let mut rig = cargo(&["bench", "--manifest-path", &manifest.to_string_lossy()]);
        rig.current_dir(&root).env("CARGO_TARGET_DIR", &rig_target);
        if quick {
            rig.env("AGENTS_BENCH_QUICK", "1");
        }
        // The comparison is part of the report, but a failed rig build must not hide the rest.
        match Step::new("criterion: agents vs rig", rig).run() {
            Ok(()) => rig_criterion = Some(rig_target.join("criterion")),
            Err(message) => eprintln!("warning: {message}; the report says rig was not measured"),
        }
    }

    let mut report = cargo(&[
        "run",
        "--release",
        "-p",
        "agents-bench",
        "--bin",
        "bench-report",
        "--",
    ]);
    report.current_dir(&root).env("CARGO_TARGET_DIR", &target);
    if quick {
        report.arg("--quick");
    }
    report.arg("--criterion").arg(target.join("criterion"));
    if let Some(dir) = rig_criterion {
        report.arg("--rig-criterion").arg(dir);
    }
    report.arg("--docs").arg(&docs);
    Step::new("bench-report", report).run()?;
    eprintln!("report: {}", docs.join("benchmarks.md").display());
    Ok(())
}

/// `--scale`: builds and runs `bench-scale`, which prints runs per second by worker count and
/// writes `target/bench/scale.json`.
fn scale(root: &Path, target: &Path, quick: bool) -> Result<(), String> {
    let mut command = cargo(&[
        "run",
        "--release",
        "-p",
        "agents-bench",
        "--bin",
        "bench-scale",
        "--",
    ]);
    command.current_dir(root).env("CARGO_TARGET_DIR", target);
    command.arg("--out").arg(target.join("bench"));
    if quick {
        command.args(["--seconds", "0.3"]);
    }
    Step::new("bench-scale: runs per second by worker count", command).run()
}

/// Where the benchmarks run: the workspace root, the workspace's target directory
/// (`CARGO_TARGET_DIR` or `target/`) and rig-compare's (`RIG_COMPARE_TARGET_DIR` or
/// `target/rig-compare`, so rig's build is kept between runs).
pub(crate) struct BenchDirs {
    pub(crate) root: PathBuf,
    pub(crate) target: PathBuf,
    pub(crate) rig_target: PathBuf,
}

impl BenchDirs {
    pub(crate) fn from_env() -> Result<Self, String> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .map(Path::to_path_buf)
            .ok_or_else(|| "xtask has no parent directory".to_owned())?;
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("target"));
        let rig_target = std::env::var_os("RIG_COMPARE_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| target.join("rig-compare"));
        Ok(Self {
            root,
            target,
            rig_target,
        })
    }
}
