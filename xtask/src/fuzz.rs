//! `cargo xtask fuzz [target] [--seconds N]`: runs the fuzz targets of `fuzz/` with cargo-fuzz
//! (libFuzzer) and reports executions and findings per target.
//!
//! cargo-fuzz passes nightly-only flags to rustc; on the stable toolchain they are allowed with
//! `RUSTC_BOOTSTRAP=1`, which this task sets. The sanitizer is off (`-s none`): the code under
//! test forbids `unsafe`, so what fuzzing finds here are panics, hangs and runaway memory, which
//! libFuzzer reports without it, and the build is much faster.
//!
//! Inputs that crash are written to `fuzz/artifacts/<target>/`; replay one with
//! `RUSTC_BOOTSTRAP=1 cargo fuzz run -s none <target> <file>` and turn it into a regression
//! test in the crate that owns the parser. The corpus grows in `fuzz/corpus/<target>/`
//! (ignored by git); `fuzz/seeds/<target>/` holds the committed starting inputs.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use crate::has_command;
use crate::run::{cargo, Step};

/// Seconds per target when `--seconds` is not given.
const DEFAULT_SECONDS: u64 = 60;

/// What one target's run gave.
struct Outcome {
    target: String,
    runs: Option<u64>,
    seconds: f64,
    finding: Option<String>,
}

pub fn run(args: &[String]) -> Result<(), String> {
    let (target, seconds) = parse_args(args)?;
    if !has_command("cargo-fuzz", "--version") {
        return Err(
            "cargo-fuzz is not installed: run `cargo install cargo-fuzz --locked`".to_owned(),
        );
    }
    let targets = match target {
        Some(target) => vec![target],
        None => list_targets()?,
    };
    Step::new("fuzz build", fuzz(&["build", "-s", "none"])).run()?;
    let mut outcomes = Vec::new();
    for target in &targets {
        outcomes.push(run_target(target, seconds)?);
    }
    eprintln!(
        "\n{:<22} {:>12} {:>9}  finding",
        "target", "executions", "seconds"
    );
    for outcome in &outcomes {
        eprintln!(
            "{:<22} {:>12} {:>9.1}  {}",
            outcome.target,
            outcome
                .runs
                .map_or_else(|| "?".to_owned(), |runs| runs.to_string()),
            outcome.seconds,
            outcome.finding.as_deref().unwrap_or("none")
        );
    }
    let failed: Vec<&str> = outcomes
        .iter()
        .filter(|o| o.finding.is_some())
        .map(|o| o.target.as_str())
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "findings in {}: the inputs are in fuzz/artifacts/<target>/",
            failed.join(", ")
        ))
    }
}

fn parse_args(args: &[String]) -> Result<(Option<String>, u64), String> {
    let mut target = None;
    let mut seconds = DEFAULT_SECONDS;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--seconds" => {
                let value = args
                    .next()
                    .ok_or("--seconds needs a number of seconds per target")?;
                seconds = value
                    .parse()
                    .map_err(|_| format!("--seconds: `{value}` is not a number of seconds"))?;
            }
            flag if flag.starts_with('-') => {
                return Err(format!(
                    "unknown option `{flag}`; usage: cargo xtask fuzz [target] [--seconds N]"
                ))
            }
            name if target.is_none() => target = Some(name.to_owned()),
            extra => {
                return Err(format!(
                    "unexpected argument `{extra}`: give one target at most"
                ))
            }
        }
    }
    Ok((target, seconds))
}

/// `cargo fuzz <args>` on `fuzz/`, allowed on stable.
fn fuzz(args: &[&str]) -> Command {
    let mut command = cargo(&["fuzz"]);
    command.args(args).args(["--fuzz-dir", "fuzz"]);
    command.env("RUSTC_BOOTSTRAP", "1");
    command
}

fn list_targets() -> Result<Vec<String>, String> {
    let output = fuzz(&["list"])
        .output()
        .map_err(|e| format!("cannot run `cargo fuzz list`: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "`cargo fuzz list` failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(str::to_owned)
        .collect())
}

/// Runs one target for `seconds`, with a 10 s limit per input (a slower input is a finding).
fn run_target(target: &str, seconds: u64) -> Result<Outcome, String> {
    let corpus = format!("fuzz/corpus/{target}");
    let seeds = format!("fuzz/seeds/{target}");
    std::fs::create_dir_all(&corpus).map_err(|e| format!("cannot create {corpus}: {e}"))?;
    let mut command = fuzz(&["run", "-s", "none", target, &corpus]);
    if Path::new(&seeds).is_dir() {
        command.arg(&seeds);
    }
    command.args([
        "--",
        &format!("-max_total_time={seconds}"),
        "-timeout=10",
        "-rss_limit_mb=2048",
    ]);
    eprintln!("==> fuzz {target} for {seconds}s");
    let started = Instant::now();
    let output = command
        .output()
        .map_err(|e| format!("cannot run cargo fuzz for {target}: {e}"))?;
    let elapsed = started.elapsed().as_secs_f64();
    let log = String::from_utf8_lossy(&output.stderr);
    let runs = executions(&log);
    let finding = if output.status.success() {
        None
    } else {
        let tail: Vec<&str> = log.lines().rev().take(30).collect();
        eprintln!("{}", tail.into_iter().rev().collect::<Vec<_>>().join("\n"));
        Some(
            log.lines()
                .find(|l| l.contains("panicked at") || l.contains("ERROR: libFuzzer"))
                .unwrap_or("cargo fuzz failed (see the output above)")
                .trim()
                .to_owned(),
        )
    };
    Ok(Outcome {
        target: target.to_owned(),
        runs,
        seconds: elapsed,
        finding,
    })
}

/// The executions libFuzzer reports: `Done N runs in S second(s)`, or the last `#N` status.
fn executions(log: &str) -> Option<u64> {
    let done = log.lines().rev().find_map(|line| {
        line.strip_prefix("Done ")?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    });
    done.or_else(|| {
        log.lines().rev().find_map(|line| {
            line.strip_prefix('#')?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executions_come_from_the_done_line_or_the_last_status() {
        let log = "#2 INITED cov: 10\n#1024 pulse cov: 12\nDone 52314 runs in 31 second(s)\n";
        assert_eq!(executions(log), Some(52314));
        assert_eq!(
            executions("#2 INITED\n#4096 pulse cov: 3\n==1== ERROR"),
            Some(4096)
        );
        assert_eq!(executions("nothing"), None);
    }

    #[test]
    fn arguments_are_a_target_and_seconds() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(parse_args(&args(&[])).unwrap(), (None, DEFAULT_SECONDS));
        assert_eq!(
            parse_args(&args(&["sse", "--seconds", "5"])).unwrap(),
            (Some("sse".to_owned()), 5)
        );
        assert!(parse_args(&args(&["--seconds", "x"])).is_err());
        assert!(parse_args(&args(&["a", "b"])).is_err());
        assert!(parse_args(&args(&["--fast"])).is_err());
    }
}
