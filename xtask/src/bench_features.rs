//! `cargo xtask bench --features [--quick]`: what each feature of the step costs, written to
//! `docs/benchmarks-features.md` (with `--quick`, under the target directory).
//!
//! The overhead harness's 2-step run (one `noop` call, then the answer; separated mode; 10
//! messages of history; zero-latency scripted model) in the variants of
//! `agents_bench::features::FEATURES`: the defaults, one default switched off, or one opt-in
//! switched on. For each: the time per run (`bench-report --features`: medians of rounds that
//! alternate the variants), heap allocations per run (its counting allocator), and, when
//! `valgrind` is installed, instructions per run (`valgrind --tool=callgrind` of
//! `loop-profile 10 N scripted VARIANT`, (Ir(2N) − Ir(N)) / N, which takes start-up out).
//! Instructions are the before/after that holds on a shared machine; times move with its
//! clock.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::bench::BenchDirs;
use crate::run::{cargo, Step};

/// One variant's numbers.
#[derive(Clone, Debug)]
struct Measured {
    name: String,
    what: String,
    sign: Sign,
    ns_per_run: f64,
    allocations_per_run: f64,
    instructions_per_run: Option<f64>,
}

/// How a variant's cost is read against the defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sign {
    Defaults,
    /// A default switched off: cost = defaults − variant.
    Off,
    /// An opt-in switched on: cost = variant − defaults.
    On,
}

impl Sign {
    /// The cost of the feature a variant changes, from the variant's number and the
    /// defaults' (`None` for the defaults' row, or where either was not measured).
    fn cost(self, variant: Option<f64>, defaults: Option<f64>) -> Option<f64> {
        let (variant, defaults) = (variant?, defaults?);
        match self {
            Sign::Defaults => None,
            Sign::Off => Some(defaults - variant),
            Sign::On => Some(variant - defaults),
        }
    }
}

/// Builds the two binaries, measures, writes the page.
pub fn run(quick: bool) -> Result<(), String> {
    let BenchDirs { root, target, .. } = BenchDirs::from_env()?;
    let mut build = cargo(&[
        "build",
        "--release",
        "-p",
        "agents-bench",
        "--bin",
        "bench-report",
        "--bin",
        "loop-profile",
    ]);
    build.current_dir(&root).env("CARGO_TARGET_DIR", &target);
    Step::new("build bench-report and loop-profile", build).run()?;
    let release = target.join("release");

    eprintln!("==> time and allocations per variant (bench-report --features)");
    let mut report = Command::new(release.join("bench-report"));
    report.arg("--features");
    if quick {
        report.arg("--quick");
    }
    let output = report.output().map_err(|e| format!("bench-report: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "bench-report --features failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let mut measured = parse_runs(&String::from_utf8_lossy(&output.stdout))?;

    let valgrind = Command::new("valgrind").arg("--version").output().is_ok();
    if valgrind {
        let runs = if quick { 200 } else { 1_000 };
        for variant in &mut measured {
            eprintln!("==> callgrind: {}", variant.name);
            variant.instructions_per_run = Some(instructions_per_run(
                &release.join("loop-profile"),
                &target.join("bench"),
                &variant.name,
                runs,
            )?);
        }
    } else {
        eprintln!("warning: valgrind is not installed; the table has no instruction counts");
    }

    let docs = if quick {
        target.join("bench-quick")
    } else {
        root.join("docs")
    };
    std::fs::create_dir_all(&docs).map_err(|e| format!("{}: {e}", docs.display()))?;
    let page = docs.join("benchmarks-features.md");
    let measured_at = crate::bench_peers::commit(&root);
    std::fs::write(&page, markdown(&measured, &measured_at, quick)?)
        .map_err(|e| format!("{}: {e}", page.display()))?;
    eprintln!("report: {}", page.display());
    Ok(())
}

/// `bench-report --features`' JSON lines: one object per variant, the defaults among them.
fn parse_runs(stdout: &str) -> Result<Vec<Measured>, String> {
    let measured: Vec<Measured> = stdout
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let value: Value =
                serde_json::from_str(line).map_err(|e| format!("bench-report line {line}: {e}"))?;
            let number = |key: &str| {
                value[key]
                    .as_f64()
                    .ok_or_else(|| format!("bench-report line without `{key}`: {line}"))
            };
            let text = |key: &str| {
                value[key]
                    .as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| format!("bench-report line without `{key}`: {line}"))
            };
            Ok(Measured {
                name: text("name")?,
                what: text("what")?,
                sign: match text("change")?.as_str() {
                    "defaults" => Sign::Defaults,
                    "off" => Sign::Off,
                    "on" => Sign::On,
                    other => return Err(format!("bench-report: unknown change `{other}`")),
                },
                ns_per_run: number("ns_per_run")?,
                allocations_per_run: number("allocations_per_run")?,
                instructions_per_run: None,
            })
        })
        .collect::<Result<_, String>>()?;
    if !measured.iter().any(|m| m.sign == Sign::Defaults) {
        return Err("bench-report --features measured no defaults row".to_owned());
    }
    Ok(measured)
}

/// Instructions per run of `variant`: callgrind of `runs` and of `2 × runs` runs, the
/// difference over `runs`.
fn instructions_per_run(
    loop_profile: &Path,
    scratch: &Path,
    variant: &str,
    runs: u64,
) -> Result<f64, String> {
    std::fs::create_dir_all(scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let mut totals = [0u64; 2];
    for (total, n) in totals.iter_mut().zip([runs, 2 * runs]) {
        let out: PathBuf = scratch.join(format!("callgrind.{variant}.{n}"));
        let status = Command::new("valgrind")
            .arg("--tool=callgrind")
            .arg(format!("--callgrind-out-file={}", out.display()))
            .arg(loop_profile)
            .args(["10", &n.to_string(), "scripted", variant])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .map_err(|e| format!("valgrind: {e}"))?;
        if !status.success() {
            return Err(format!("valgrind of loop-profile {variant} {n}: {status}"));
        }
        let text = std::fs::read_to_string(&out).map_err(|e| format!("{}: {e}", out.display()))?;
        *total = callgrind_total(&text)
            .ok_or_else(|| format!("{}: no `totals:` or `summary:` line", out.display()))?;
        // The profile is large and read once.
        let _ = std::fs::remove_file(&out);
    }
    Ok(totals[1].saturating_sub(totals[0]) as f64 / runs as f64)
}

/// The instruction total of a callgrind output file (`totals: N`, or `summary: N`).
fn callgrind_total(text: &str) -> Option<u64> {
    text.lines().rev().find_map(|line| {
        let rest = line
            .strip_prefix("totals:")
            .or_else(|| line.strip_prefix("summary:"))?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

/// The page.
fn markdown(measured: &[Measured], commit: &str, quick: bool) -> Result<String, String> {
    let defaults = measured
        .iter()
        .find(|m| m.sign == Sign::Defaults)
        .ok_or("no defaults row")?;
    let mut page = String::from(
        "# What each feature of the step costs\n\n\
         Generated by `cargo xtask bench --features`; do not edit by hand. The overhead \
         harness's 2-step run (one `noop` tool call, then the answer; separated mode; 10 \
         messages of history; a zero-latency scripted model; current-thread runtime) in \
         variants that switch one default off or one opt-in feature on. A feature's cost is \
         the difference from the defaults' row: defaults − variant for a default switched \
         off, variant − defaults for an opt-in switched on.\n\n\
         - **time**: median over rounds that run a batch of every variant in turn \
         (`bench-report --features`), so a shared machine's drift falls on all of them; \
         the counting allocator is on for every variant.\n\
         - **instructions**: `valgrind --tool=callgrind` of `loop-profile 10 N scripted \
         VARIANT`, (Ir(2N) − Ir(N)) / N: start-up taken out, the same on every run of one \
         build, the number to compare across builds.\n\
         - **allocations**: heap allocations and reallocations per run.\n\n",
    );
    page.push_str(&format!(
        "Commit {commit}. Machine: {} worker threads (`available_parallelism`), release \
         build{}.\n\n",
        std::thread::available_parallelism().map_or(0, usize::from),
        if quick {
            ", quick run (few rounds: not for comparison)"
        } else {
            ""
        }
    ));
    page.push_str(
        "| variant | what it changes | time per run | feature's time | instructions per run | \
         feature's instructions | allocations per run | feature's allocations |\n\
         |---|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for m in measured {
        // A feature's cost as the column's text: "–" for the defaults' own row or a number
        // not measured.
        let cost = |ours: Option<f64>, base: Option<f64>, scale: f64, decimals: usize, unit| {
            m.sign.cost(ours, base).map_or("–".to_owned(), |cost| {
                format!("{:+.decimals$}{unit}", cost / scale)
            })
        };
        let instructions = m
            .instructions_per_run
            .map_or("–".to_owned(), |i| format!("{i:.0}"));
        page.push_str(&format!(
            "| `{}` | {} | {:.2} µs | {} | {} | {} | {:.1} | {} |\n",
            m.name,
            m.what,
            m.ns_per_run / 1_000.0,
            cost(
                Some(m.ns_per_run),
                Some(defaults.ns_per_run),
                1_000.0,
                2,
                " µs"
            ),
            instructions,
            cost(
                m.instructions_per_run,
                defaults.instructions_per_run,
                1.0,
                0,
                ""
            ),
            m.allocations_per_run,
            cost(
                Some(m.allocations_per_run),
                Some(defaults.allocations_per_run),
                1.0,
                1,
                ""
            ),
        ));
    }
    page.push_str(
        "\nA negative cost is a variant that did more work than the defaults or, for times, \
         the clock's noise: read the instructions. Goal (issue 35): a 2-step run with every \
         default on at most 3 µs at 10 messages.\n",
    );
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_total_is_read_from_a_callgrind_file() {
        let text = "events: Ir\nfn=main\n1 5\nsummary: 123\n\ntotals: 60740223\n";
        assert_eq!(callgrind_total(text), Some(60_740_223));
        assert_eq!(callgrind_total("events: Ir\nsummary: 77\n"), Some(77));
        assert_eq!(callgrind_total("events: Ir\n"), None);
    }

    #[test]
    fn the_lines_of_bench_report_are_read() {
        let lines = "{\"name\":\"defaults\",\"what\":\"all on\",\"change\":\"defaults\",\
                     \"ns_per_run\":5000.0,\"allocations_per_run\":60.0}\n\
                     {\"name\":\"ids\",\"what\":\"no uuid\",\"change\":\"off\",\
                     \"ns_per_run\":4500.0,\"allocations_per_run\":55.0}\n";
        let measured = parse_runs(lines).unwrap_or_default();
        assert_eq!(measured.len(), 2);
        assert_eq!(measured[1].sign, Sign::Off);
        assert!(parse_runs("{\"name\":\"x\"}\n").is_err());
        let no_defaults = lines.lines().nth(1).unwrap_or_default();
        assert!(parse_runs(no_defaults).is_err_and(|e| e.contains("defaults")));
        assert!(parse_runs(&lines.replace("\"off\"", "\"sideways\"")).is_err());
    }

    #[test]
    fn costs_are_signed_by_the_kind_of_change() {
        let row = |name: &str, sign: Sign, ns: f64, instructions: f64| Measured {
            name: name.to_owned(),
            what: format!("{name} changed"),
            sign,
            ns_per_run: ns,
            allocations_per_run: 10.0,
            instructions_per_run: Some(instructions),
        };
        let measured = [
            row("defaults", Sign::Defaults, 5_000.0, 50_000.0),
            row("reply-checks", Sign::Off, 4_000.0, 40_000.0),
            row("event-listener", Sign::On, 5_500.0, 53_000.0),
        ];
        let page = markdown(&measured, "abc123", false).unwrap_or_default();
        assert!(page.contains("| `reply-checks` |"), "{page}");
        assert!(page.contains("Commit abc123."), "{page}");
        assert!(
            page.contains("| 5.00 µs | – | 50000 | – | 10.0 | – |"),
            "{page}"
        );
        assert!(
            page.contains("| 4.00 µs | +1.00 µs | 40000 | +10000 |"),
            "{page}"
        );
        assert!(
            page.contains("| 5.50 µs | +0.50 µs | 53000 | +3000 |"),
            "{page}"
        );
    }
}
