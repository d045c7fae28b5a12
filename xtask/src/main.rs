//! Project automation, run as `cargo xtask <task>` (see `cargo xtask help`).
//!
//! Tasks are Rust code rather than shell scripts so they run the same everywhere and can be
//! read and tested like the rest of the project.

use std::env;
use std::process::{Command, ExitCode};

mod bench;
mod bench_features;
mod bench_peers;
mod browser;
mod chaos;
mod deny;
mod e2e;
mod eval;
mod fuzz;
mod local_llm;
mod longrun;
mod mcp;
mod pg;
mod prices;
mod restate;
mod run;

use run::{cargo, Step};

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let task = args.first().map(String::as_str).unwrap_or("help");
    let result = match task {
        "ci" => ci(),
        "deny" => deny::check(),
        // `--features` is its own measurement (bench_features.rs), not a part of the report.
        "bench" if args.iter().any(|a| a == "--features") => {
            bench_features::run(args.iter().any(|a| a == "--quick"))
        }
        "bench" => bench::run(&args[1..]),
        "bench-peers" => bench_peers::run(&args[1..]),
        "browser" => browser::install(),
        "chaos" => chaos::run(&args[1..]),
        "e2e" => e2e::run(),
        "fuzz" => fuzz::run(&args[1..]),
        "eval" => eval::run(&args[1..]),
        "longrun" => longrun::run(&args[1..]),
        "mcp-servers" => mcp::install(),
        "pg" => pg::run(&args[1..]),
        "restate" => restate::run(&args[1..]),
        "prices" => prices::run(&args[1..]),
        "help" | "--help" | "-h" => {
            print_help();
            Ok(())
        }
        other => Err(format!("unknown task `{other}`; run `cargo xtask help`")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask {task} failed: {message}");
            ExitCode::FAILURE
        }
    }
}

fn print_help() {
    println!(
        "cargo xtask <task>\n\n\
         tasks:\n  \
         ci      fmt check, clippy -D warnings, tests, doc tests, cargo deny (the CI job)\n  \
         deny    cargo deny: licenses, bans, sources, and advisories when the database can be fetched\n  \
         e2e     start llmock and llama-server on 127.0.0.1 and run the end-to-end tests\n  \
         eval    task success of `agents run` on local Qwen 0.5B/1.5B models (dev and held-out halves), written to target/eval-report.md\n          \
         (--configs 1.5b/separated/toolcalling,... (default: the required three) --half dev|heldout|both --tasks d1,h2\n          \
         --before OLD-AGENTS-BINARY --agents PATH --timeout S --max-steps N --out NAME\n          \
         --agents-arg ARG (repeatable: passed to every `agents run`) --keep DIR (keep every run's folder);\n          \
         or --models/--modes/--drivers crossed)\n  \
         longrun a 32-turn conversation through `agents run` per trace mode on local Qwen 1.5B (-c 32768):\n          \
         tokens, prompt-cache reuse, success, recall, tool use; target/longrun/ (JSON, markdown, SVG charts)\n          \
         (--models 1.5b,0.5b --modes legacy,separated,digest,masked --turns N --max-steps N --timeout S\n          \
         --masked-executions N --agents PATH --server URL (a running endpoint) --write-docs: into docs/long-horizon.md; --report-only: that page again from the recorded runs)\n  \
         bench   benchmarks and docs/benchmarks.md (--quick: short smoke run, report under target/; --no-rig;\n  \
                 --scale: only runs/s by worker count, own and shared states, to target/bench/scale.json;\n  \
                 --features: what each feature of the step costs, to docs/benchmarks-features.md)\n  \
         bench-peers  ours vs rig 0.44, OpenAI Agents SDK and Pydantic AI on one script; writes\n  \
                 target/bench/peers.json and peers.md, checks issue 15's targets (--quick; --no-python)\n  \
         browser install Chromium and chromedriver (Debian, pinned) for the web console's browser tests\n  \
         chaos   the kill test at scale: SIGKILL at every I/O operation and at random, on SQLite and Postgres\n          \
         (--kills N per store, default 10000; --races N, default 100; --jobs N; CI runs 200 and 100)\n  \
         fuzz    fuzz targets of fuzz/ with cargo-fuzz: [target] [--seconds N per target, default 60]\n  \
         mcp-servers  install the MCP test servers and the interop clients (npm server-everything and inspector, PyPI mcp and a2a-sdk) under ~/.cache/agents-rs/mcp\n  \
         pg      a throwaway Postgres on 127.0.0.1 for the session tests (start | stop DIR | nothing: until Enter)\n  \
         restate a throwaway Restate server on 127.0.0.1 for the agents-restate tests (start | stop DIR | install)\n  \
         prices  regenerate crates/inference/data/models.json from the pinned genai-prices package [--date YYYY-MM-DD]\n"
    );
}

/// The CI job, in order: formatting, lints, tests, doc tests, dependency policy.
fn ci() -> Result<(), String> {
    let steps = [
        Step::new("fmt", cargo(&["fmt", "--all", "--", "--check"])),
        Step::new(
            "clippy",
            cargo(&[
                "clippy",
                "--workspace",
                "--all-targets",
                "--",
                "-D",
                "warnings",
            ]),
        ),
        Step::new("test", cargo(&["test", "--workspace", "--all-targets"])),
        Step::new("doc tests", cargo(&["test", "--workspace", "--doc"])),
        Step::new("docs build without warnings", {
            let mut command = cargo(&["doc", "--workspace", "--no-deps"]);
            command.env("RUSTDOCFLAGS", "-D warnings");
            command
        }),
        // Optional features are compiled and tested too, not only the defaults.
        Step::new(
            "clippy (tiktoken feature)",
            cargo(&[
                "clippy",
                "-p",
                "agents-processing",
                "--all-targets",
                "--features",
                "tiktoken",
                "--",
                "-D",
                "warnings",
            ]),
        ),
        Step::new(
            "test (tiktoken feature)",
            cargo(&["test", "-p", "agents-processing", "--features", "tiktoken"]),
        ),
        // OpenTelemetry export: the in-memory span test and the CLI-to-OTLP-receiver test.
        Step::new(
            "clippy (otel feature)",
            cargo(&[
                "clippy",
                "-p",
                "agents",
                "--all-targets",
                "--features",
                "otel",
                "--",
                "-D",
                "warnings",
            ]),
        ),
        Step::new(
            "test (otel feature)",
            cargo(&["test", "-p", "agents", "--features", "otel"]),
        ),
    ];
    for step in steps {
        step.run()?;
    }
    each_crate_alone()?;
    run_examples()?;
    deny::check()
}

/// The layers, lowest first, whose whole test suites also run alone (`cargo test -p NAME`):
/// they need no server, so the run is short.
const LAYERS_TESTED_ALONE: [&str; 6] = [
    "messages",
    "inference",
    "agents-core",
    "agents-processing",
    "drivers-toolcalling",
    "drivers-react",
];

/// Each library crate stands alone, as a user who depends on one layer builds it: with only
/// the features it asks for itself, not the ones the workspace build happens to unify in
/// (`cargo test -p messages` once failed to compile for that reason). For every crate: its
/// tests, examples and benches compile alone and its doc tests pass alone; the layers in
/// [`LAYERS_TESTED_ALONE`] also run their tests alone. The crates above them (sessions, MCP,
/// Restate, the console, the facade) run theirs in the workspace pass, next to the servers
/// they need; alone, their features differ only in what they themselves name.
fn each_crate_alone() -> Result<(), String> {
    let crates = LAYERS_TESTED_ALONE.iter().copied().chain([
        "agents-sessions",
        "agents-mcp",
        "agents-restate",
        "agents-serve",
        "agents",
    ]);
    for name in crates {
        if LAYERS_TESTED_ALONE.contains(&name) {
            Step::new(
                "test, crate alone",
                cargo(&["test", "-p", name, "--all-targets"]),
            )
            .run()?;
        } else {
            Step::new(
                "build tests, crate alone",
                cargo(&["test", "-p", name, "--all-targets", "--no-run"]),
            )
            .run()?;
        }
        Step::new(
            "doc tests, crate alone",
            cargo(&["test", "-p", name, "--doc"]),
        )
        .run()?;
    }
    Ok(())
}

/// Every example in `examples/` runs (a scripted model, or the local MCP server `.ci/run`
/// installs; no network). Each exits non-zero when it does not do what it shows.
fn run_examples() -> Result<(), String> {
    let dir = std::path::Path::new("examples");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".rs")
                .filter(|stem| *stem != "lib")
                .map(str::to_owned)
        })
        .collect();
    names.sort();
    for name in names {
        Step::new(
            "example",
            cargo(&[
                "run",
                "--quiet",
                "-p",
                "agents-examples",
                "--example",
                &name,
            ]),
        )
        .run()?;
    }
    Ok(())
}

/// A command that must exist on the machine (used by `deny` to find cargo-deny).
pub(crate) fn has_command(program: &str, probe: &str) -> bool {
    Command::new(program)
        .arg(probe)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}
