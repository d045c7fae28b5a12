//! The side-by-side report of `cargo xtask bench-peers`: how runs are timed (warm-up, then
//! several batches, the median of their per-run times), the Python peers' figures read from
//! their scripts' output, the ratios, the targets of issue 15 and the JSON and markdown files.
//!
//! Every figure is microseconds per run of the two-step script (a tool call, its result, a
//! text answer: two model calls), so "per step" is half of it. Each batch is timed twice: in
//! process CPU time (all threads), the headline figure because it does not count the time the
//! process waits for a core while other builds run on the machine, and in wall-clock time.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

/// The history lengths measured, in messages before the prompt.
pub const SIZES: [usize; 3] = [10, 1_000, 10_000];

/// The Python peers, in the order they are reported.
pub const PYTHON_PEERS: [&str; 2] = ["openai-agents", "pydantic-ai"];

/// The rig version measured (pinned in `benches/rig-compare/Cargo.toml`).
pub const RIG_VERSION: &str = "0.44.0";

/// How the sides are timed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Method {
    /// Running time (wall clock) before the first batch, per side; it also sizes the batches.
    pub warm_up: Duration,
    /// Number of timed batches per side.
    pub batches: usize,
    /// Target CPU time of one batch.
    pub batch_cpu: Duration,
}

impl Method {
    /// The full measurement: 0.3 s warm-up, 9 batches of about 0.1 s of CPU each.
    pub const FULL: Method = Method {
        warm_up: Duration::from_millis(300),
        batches: 9,
        batch_cpu: Duration::from_millis(100),
    };

    /// A smoke run: short warm-up, 3 batches of about 10 ms (numbers are not meaningful).
    pub const QUICK: Method = Method {
        warm_up: Duration::from_millis(30),
        batches: 3,
        batch_cpu: Duration::from_millis(10),
    };

    /// The method in words, for the report.
    pub fn describe(&self) -> String {
        format!(
            "per history length and side: {:.2} s warm-up, then {} batches of about {:.2} s of \
             CPU each, ours and rig alternating batch by batch in one process (the Python \
             peers: the same scheme in their own process); a batch's time over its runs is \
             microseconds per run (one run = the two-step script: a tool call, its result, a \
             text answer); each figure is the median of the batches; headline figures are \
             process CPU time, wall-clock figures are under \"wall_us\"",
            self.warm_up.as_secs_f64(),
            self.batches,
            self.batch_cpu.as_secs_f64()
        )
    }
}

/// CPU time used by this process so far, all threads.
pub fn process_cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(
        u64::try_from(t.tv_sec).unwrap_or(0),
        u32::try_from(t.tv_nsec).unwrap_or(0),
    )
}

/// One timed batch: microseconds per run in CPU time and in wall-clock time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Process CPU microseconds per run.
    pub cpu_us: f64,
    /// Wall-clock microseconds per run.
    pub wall_us: f64,
}

/// One side being timed: a run of the script, repeatable.
pub type Side<'a, E> = &'a mut dyn FnMut() -> Result<(), E>;

/// Times every side with `method`, alternating batch by batch so that a change in the
/// machine's load touches all sides alike. Returns the batches of each side. The first error
/// of a run stops the measurement.
///
/// # Errors
/// The first error a run returns.
pub fn measure_alternating<E>(
    method: Method,
    sides: &mut [Side<'_, E>],
) -> Result<Vec<Vec<Sample>>, E> {
    let mut runs_per_batch = Vec::with_capacity(sides.len());
    for side in sides.iter_mut() {
        let (start, cpu_start) = (Instant::now(), process_cpu_time());
        let mut runs: u64 = 0;
        while runs == 0 || start.elapsed() < method.warm_up {
            side()?;
            runs += 1;
        }
        let cpu_per_run =
            (process_cpu_time().saturating_sub(cpu_start)).as_secs_f64() / runs as f64;
        runs_per_batch.push(batch_runs(method.batch_cpu, cpu_per_run));
    }
    let mut samples = vec![Vec::with_capacity(method.batches); sides.len()];
    for _ in 0..method.batches {
        for ((side, runs), samples) in sides.iter_mut().zip(&runs_per_batch).zip(&mut samples) {
            let (start, cpu_start) = (Instant::now(), process_cpu_time());
            for _ in 0..*runs {
                side()?;
            }
            let cpu = process_cpu_time().saturating_sub(cpu_start);
            samples.push(Sample {
                cpu_us: cpu.as_secs_f64() * 1e6 / *runs as f64,
                wall_us: start.elapsed().as_secs_f64() * 1e6 / *runs as f64,
            });
        }
    }
    Ok(samples)
}

/// Runs in a batch of about `batch` when one run takes `per_run` seconds (at least one).
fn batch_runs(batch: Duration, per_run: f64) -> u64 {
    if per_run <= 0.0 {
        return 1;
    }
    ((batch.as_secs_f64() / per_run).round() as u64).max(1)
}

/// The median of `samples` (the mean of the middle two for an even count); `None` when empty
/// or when a sample is not a finite number.
pub fn median(samples: &[f64]) -> Option<f64> {
    if samples.is_empty() || samples.iter().any(|s| !s.is_finite()) {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    Some(if sorted.len().is_multiple_of(2) {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    } else {
        sorted[mid]
    })
}

/// The CPU and wall medians of `samples`.
pub fn medians(samples: &[Sample]) -> Option<(f64, f64)> {
    let cpu: Vec<f64> = samples.iter().map(|s| s.cpu_us).collect();
    let wall: Vec<f64> = samples.iter().map(|s| s.wall_us).collect();
    median(&cpu).zip(median(&wall))
}

/// Microseconds per run, by history length.
pub type BySize = BTreeMap<usize, f64>;

/// One clock's figures: ours, rig and the measured Python peers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Figures {
    /// Ours.
    pub ours: BySize,
    /// rig.
    pub rig: BySize,
    /// The Python peers that were measured.
    pub peers: BTreeMap<String, BySize>,
}

/// A Python peer: its version and figures, or why there are none.
#[derive(Clone, Debug, PartialEq)]
pub enum PeerResult {
    /// Measured.
    Measured {
        /// The installed version of the framework.
        version: String,
        /// CPU microseconds per run.
        cpu: BySize,
        /// Wall-clock microseconds per run.
        wall: BySize,
    },
    /// Not measured, with the reason.
    Skipped(String),
}

/// A problem with a peer's output file.
#[derive(Debug, thiserror::Error)]
pub enum PeerOutputError {
    /// The file is not JSON.
    #[error("the peer's output is not JSON; run its script by hand to see what it printed")]
    NotJson(#[source] serde_json::Error),
    /// A field is missing or has the wrong type.
    #[error("the peer's output has no {0}; the script in benches/peers/ and this reader disagree")]
    Missing(String),
}

impl PeerResult {
    /// Reads what a script in `benches/peers/` printed: `{"version", "unit": "us_per_run",
    /// "us": {"10": .., "1000": .., "10000": ..}, "wall_us": {..}}` (`us` in CPU time).
    ///
    /// # Errors
    /// A [`PeerOutputError`] naming what is missing.
    pub fn from_script_output(text: &str) -> Result<Self, PeerOutputError> {
        let value: Value = serde_json::from_str(text).map_err(PeerOutputError::NotJson)?;
        let version = value
            .get("version")
            .and_then(Value::as_str)
            .ok_or_else(|| PeerOutputError::Missing("\"version\" string".to_owned()))?
            .to_owned();
        if value.get("unit").and_then(Value::as_str) != Some("us_per_run") {
            return Err(PeerOutputError::Missing(
                "\"unit\": \"us_per_run\"".to_owned(),
            ));
        }
        Ok(Self::Measured {
            version,
            cpu: read_sizes(&value, "us")?,
            wall: read_sizes(&value, "wall_us")?,
        })
    }
}

fn read_sizes(value: &Value, field: &str) -> Result<BySize, PeerOutputError> {
    let figures = value
        .get(field)
        .and_then(Value::as_object)
        .ok_or_else(|| PeerOutputError::Missing(format!("\"{field}\" object")))?;
    SIZES
        .iter()
        .map(|size| {
            figures
                .get(&size.to_string())
                .and_then(Value::as_f64)
                .filter(|f| f.is_finite() && *f > 0.0)
                .map(|f| (*size, f))
                .ok_or_else(|| {
                    PeerOutputError::Missing(format!(
                        "positive figure for \"{size}\" in \"{field}\""
                    ))
                })
        })
        .collect()
}

/// A target of issue 15 and whether it holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    /// What is required.
    pub name: String,
    /// What was measured.
    pub measured: String,
    /// Whether it holds.
    pub pass: bool,
}

const FLAT: &str = "ours flat (every length within +-20% of 10 messages) up to 10000 messages";

/// The targets: ours at least 5x faster than rig at 10 messages, at least 100x at 1,000, and
/// ours flat (every length within 20% of the 10-message figure) from 10 to 10,000.
pub fn targets(ours: &BySize, rig: &BySize) -> Vec<Target> {
    let ratio_target = |size: usize, at_least: f64| {
        let ratio = ratio_at(ours, rig, size);
        Target {
            name: format!("ours >= {at_least}x faster than rig at {size} messages"),
            measured: ratio.map_or_else(|| "not measured".to_owned(), |r| format!("{r:.1}x")),
            pass: ratio.is_some_and(|r| r >= at_least),
        }
    };
    let deviations: Option<Vec<f64>> = ours.get(&SIZES[0]).filter(|b| **b > 0.0).and_then(|base| {
        SIZES[1..]
            .iter()
            .map(|size| ours.get(size).map(|us| us / base - 1.0))
            .collect()
    });
    let flat = match deviations {
        Some(deviations) => {
            let worst = deviations
                .iter()
                .copied()
                .max_by(|a, b| a.abs().total_cmp(&b.abs()))
                .unwrap_or(0.0);
            Target {
                name: FLAT.to_owned(),
                measured: format!("largest deviation {:+.1}%", worst * 100.0),
                pass: worst.abs() <= 0.2,
            }
        }
        None => Target {
            name: FLAT.to_owned(),
            measured: "not measured".to_owned(),
            pass: false,
        },
    };
    vec![ratio_target(10, 5.0), ratio_target(1_000, 100.0), flat]
}

/// `other`'s time over ours at `size`, when both were measured.
pub fn ratio_at(ours: &BySize, other: &BySize, size: usize) -> Option<f64> {
    match (ours.get(&size), other.get(&size)) {
        (Some(&o), Some(&r)) if o > 0.0 => Some(r / o),
        _ => None,
    }
}

/// Everything `cargo xtask bench-peers` reports.
#[derive(Clone, Debug)]
pub struct Report {
    /// CPU-time figures (the headline).
    pub cpu: Figures,
    /// Wall-clock figures.
    pub wall: Figures,
    /// Versions of the measured Python peers.
    pub peer_versions: BTreeMap<String, String>,
    /// Python peers not measured, with the reason.
    pub skipped: BTreeMap<String, String>,
    /// The method, in words.
    pub method: String,
    /// Where it was measured: commit, cores, load.
    pub context: BTreeMap<String, String>,
}

impl Report {
    /// A report of ours and rig (`cpu`, `wall`) and the Python `peers`.
    pub fn new(
        mut cpu: Figures,
        mut wall: Figures,
        peers: BTreeMap<String, PeerResult>,
        method: String,
        context: BTreeMap<String, String>,
    ) -> Self {
        let (mut peer_versions, mut skipped) = (BTreeMap::new(), BTreeMap::new());
        for (name, result) in peers {
            match result {
                PeerResult::Measured {
                    version,
                    cpu: c,
                    wall: w,
                } => {
                    cpu.peers.insert(name.clone(), c);
                    wall.peers.insert(name.clone(), w);
                    peer_versions.insert(name, version);
                }
                PeerResult::Skipped(reason) => {
                    skipped.insert(name, reason);
                }
            }
        }
        Self {
            cpu,
            wall,
            peer_versions,
            skipped,
            method,
            context,
        }
    }

    /// The targets, on the headline (CPU) figures.
    pub fn targets(&self) -> Vec<Target> {
        targets(&self.cpu.ours, &self.cpu.rig)
    }

    fn peer_names(&self) -> impl Iterator<Item = &String> {
        let mut names: Vec<&String> = self
            .peer_versions
            .keys()
            .chain(self.skipped.keys())
            .collect();
        names.sort();
        names.into_iter()
    }

    fn figures_json(&self, figures: &Figures) -> Map<String, Value> {
        let ratio: Map<String, Value> = SIZES
            .iter()
            .filter_map(|&size| {
                ratio_at(&figures.ours, &figures.rig, size)
                    .map(|r| (size.to_string(), json!(round2(r))))
            })
            .collect();
        let peers: Map<String, Value> = self
            .peer_names()
            .map(|name| {
                let value = figures.peers.get(name).map_or(Value::Null, by_size_json);
                (name.clone(), value)
            })
            .collect();
        let mut out = Map::new();
        out.insert("ours_us".to_owned(), by_size_json(&figures.ours));
        out.insert("rig_us".to_owned(), by_size_json(&figures.rig));
        out.insert("ratio".to_owned(), Value::Object(ratio));
        out.insert("peers".to_owned(), Value::Object(peers));
        out
    }

    /// The JSON of `target/bench/peers.json`.
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("unit".to_owned(), json!("us_per_run"));
        out.insert(
            "clock".to_owned(),
            json!("process CPU time, all threads (wall-clock figures: \"wall_us\")"),
        );
        out.insert("method".to_owned(), json!(self.method));
        out.insert("ratio_is".to_owned(), json!("rig_us / ours_us"));
        out.extend(self.figures_json(&self.cpu));
        out.insert(
            "wall_us".to_owned(),
            Value::Object(self.figures_json(&self.wall)),
        );
        out.insert("skipped".to_owned(), json!(self.skipped));
        let mut versions = self.peer_versions.clone();
        versions.insert("rig-core".to_owned(), RIG_VERSION.to_owned());
        out.insert("versions".to_owned(), json!(versions));
        let targets: Vec<Value> = self
            .targets()
            .into_iter()
            .map(|t| json!({"target": t.name, "measured": t.measured, "pass": t.pass}))
            .collect();
        out.insert("targets".to_owned(), Value::Array(targets));
        out.insert("context".to_owned(), json!(self.context));
        Value::Object(out)
    }

    fn table(&self, figures: &Figures) -> String {
        let mut header = String::from(
            "| history (messages) | ours µs/run | ours µs/step | rig µs/run | rig / ours |",
        );
        let mut rule = String::from("|---:|---:|---:|---:|---:|");
        let names: Vec<&String> = self.peer_names().collect();
        for name in &names {
            header.push_str(&format!(" {name} µs/run | {name} / ours |"));
            rule.push_str("---:|---:|");
        }
        let mut out = format!("{header}\n{rule}\n");
        for size in SIZES {
            let ours = figures.ours.get(&size).copied();
            out.push_str(&format!(
                "| {size} | {} | {} | {} | {} |",
                fmt_us(ours),
                fmt_us(ours.map(|o| o / 2.0)),
                fmt_us(figures.rig.get(&size).copied()),
                fmt_ratio(ratio_at(&figures.ours, &figures.rig, size)),
            ));
            for name in &names {
                match figures.peers.get(*name) {
                    Some(us) => out.push_str(&format!(
                        " {} | {} |",
                        fmt_us(us.get(&size).copied()),
                        fmt_ratio(ratio_at(&figures.ours, us, size))
                    )),
                    None => out.push_str(" skipped | – |"),
                }
            }
            out.push('\n');
        }
        out
    }

    /// The markdown: the CPU table, the targets, the wall-clock table, versions and method.
    pub fn to_markdown(&self) -> String {
        let mut out = String::from("Process CPU time per run (the headline figures):\n\n");
        out.push_str(&self.table(&self.cpu));
        out.push('\n');
        for target in self.targets() {
            out.push_str(&format!(
                "- {}: {} ({})\n",
                if target.pass { "PASS" } else { "FAIL" },
                target.name,
                target.measured
            ));
        }
        out.push_str("\nWall-clock time per run (inflated by other processes on the machine):\n\n");
        out.push_str(&self.table(&self.wall));
        out.push('\n');
        out.push_str(&format!("- rig-core and rig-agent {RIG_VERSION}\n"));
        for (name, version) in &self.peer_versions {
            out.push_str(&format!("- {name} {version}\n"));
        }
        for (name, reason) in &self.skipped {
            out.push_str(&format!("- {name} not measured: {reason}\n"));
        }
        out.push_str(&format!("- method: {}\n", self.method));
        for (key, value) in &self.context {
            out.push_str(&format!("- {key}: {value}\n"));
        }
        out
    }
}

fn by_size_json(figures: &BySize) -> Value {
    Value::Object(
        figures
            .iter()
            .map(|(size, us)| (size.to_string(), json!(round2(*us))))
            .collect(),
    )
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn fmt_us(us: Option<f64>) -> String {
    match us {
        None => "–".to_owned(),
        Some(us) if us >= 1_000.0 => format!("{us:.0}"),
        Some(us) if us >= 10.0 => format!("{us:.1}"),
        Some(us) => format!("{us:.2}"),
    }
}

fn fmt_ratio(ratio: Option<f64>) -> String {
    ratio.map_or_else(|| "–".to_owned(), |r| format!("{r:.0}×"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(values: [f64; 3]) -> BySize {
        SIZES.iter().copied().zip(values).collect()
    }

    #[test]
    fn median_takes_the_middle_and_rejects_nan() {
        assert_eq!(median(&[5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[1.0, f64::NAN]), None);
    }

    #[test]
    fn targets_pass_and_fail_at_their_thresholds() {
        let rig = sizes([15.0, 400.0, 3000.0]);
        let t = targets(&sizes([3.0, 3.5, 3.6]), &rig);
        assert_eq!(t.len(), 3);
        assert!(t.iter().all(|t| t.pass), "{t:?}");

        let t = targets(&sizes([3.0, 3.1, 3.7]), &sizes([14.9, 309.0, 3000.0]));
        assert!(!t[0].pass, "14.9/3 is below 5x");
        assert!(!t[1].pass, "309/3.1 is below 100x");
        assert!(!t[2].pass, "3.7 is 23% above 3.0");
        assert_eq!(t[2].measured, "largest deviation +23.3%");

        assert!(targets(&sizes([3.0, 2.5, 3.0]), &rig)[2].pass);
        assert!(
            !targets(&sizes([3.0, 2.3, 3.0]), &rig)[2].pass,
            "faster by more than 20% is not flat either"
        );
    }

    #[test]
    fn a_missing_figure_fails_its_target() {
        let mut ours = sizes([3.0, 3.0, 3.0]);
        ours.remove(&10_000);
        let t = targets(&ours, &BySize::new());
        assert!(t.iter().all(|t| !t.pass), "{t:?}");
        assert_eq!(t[0].measured, "not measured");
        assert_eq!(t[2].measured, "not measured");
    }

    fn report() -> Report {
        let mut peers = BTreeMap::new();
        peers.insert(
            "openai-agents".to_owned(),
            PeerResult::Measured {
                version: "0.24.0".to_owned(),
                cpu: sizes([100.0, 900.0, 8000.0]),
                wall: sizes([300.0, 2700.0, 24000.0]),
            },
        );
        peers.insert(
            "pydantic-ai".to_owned(),
            PeerResult::Skipped("pip install failed".to_owned()),
        );
        let cpu = Figures {
            ours: sizes([2.0, 2.0, 2.2]),
            rig: sizes([20.0, 400.0, 4000.0]),
            peers: BTreeMap::new(),
        };
        let wall = Figures {
            ours: sizes([6.0, 6.0, 6.6]),
            rig: sizes([60.0, 1200.0, 12000.0]),
            peers: BTreeMap::new(),
        };
        Report::new(cpu, wall, peers, "m".to_owned(), BTreeMap::new())
    }

    #[test]
    fn the_json_has_the_shape_the_issue_asks_for() {
        let json = report().to_json();
        assert_eq!(json["unit"], "us_per_run");
        assert_eq!(
            json["ours_us"],
            json!({"10": 2.0, "1000": 2.0, "10000": 2.2})
        );
        assert_eq!(json["rig_us"]["1000"], 400.0);
        assert_eq!(
            json["ratio"],
            json!({"10": 10.0, "1000": 200.0, "10000": 1818.18})
        );
        assert_eq!(json["peers"]["openai-agents"]["10000"], 8000.0);
        assert_eq!(json["peers"]["pydantic-ai"], Value::Null);
        assert_eq!(json["skipped"]["pydantic-ai"], "pip install failed");
        assert_eq!(json["wall_us"]["ours_us"]["10"], 6.0);
        assert_eq!(json["wall_us"]["peers"]["openai-agents"]["10"], 300.0);
        assert_eq!(json["wall_us"]["peers"]["pydantic-ai"], Value::Null);
        assert_eq!(json["versions"]["openai-agents"], "0.24.0");
        assert_eq!(json["targets"][0]["pass"], true);
        assert_eq!(json["targets"].as_array().map(Vec::len), Some(3));
    }

    #[test]
    fn the_markdown_has_both_tables_the_targets_and_the_skips() {
        let md = report().to_markdown();
        assert!(
            md.contains("| 1000 | 2.00 | 1.00 | 400.0 | 200× | 900.0 | 450× | skipped | – |"),
            "{md}"
        );
        assert!(
            md.contains("| 10 | 6.00 | 3.00 | 60.0 | 10× | 300.0 | 50× | skipped | – |"),
            "{md}"
        );
        assert!(
            md.contains("- PASS: ours >= 5x faster than rig at 10 messages (10.0x)"),
            "{md}"
        );
        assert!(
            md.contains("- pydantic-ai not measured: pip install failed"),
            "{md}"
        );
    }

    #[test]
    fn a_peer_output_is_read_and_checked() {
        let good = r#"{"framework":"pydantic-ai","version":"2.68.0","unit":"us_per_run",
            "us":{"10":120.5,"1000":900,"10000":8800.25},
            "wall_us":{"10":130,"1000":950,"10000":9000}}"#;
        assert_eq!(
            PeerResult::from_script_output(good).unwrap(),
            PeerResult::Measured {
                version: "2.68.0".to_owned(),
                cpu: sizes([120.5, 900.0, 8800.25]),
                wall: sizes([130.0, 950.0, 9000.0]),
            }
        );
        let missing = r#"{"version":"1","unit":"us_per_run","us":{"10":1,"1000":2},"wall_us":{}}"#;
        let error = PeerResult::from_script_output(missing).unwrap_err();
        assert!(error.to_string().contains("\"10000\" in \"us\""), "{error}");
        let zero = r#"{"version":"1","unit":"us_per_run","us":{"10":0,"1000":2,"10000":3}}"#;
        assert!(PeerResult::from_script_output(zero).is_err());
        let wrong_unit = r#"{"version":"1","unit":"ms","us":{"10":1,"1000":2,"10000":3}}"#;
        assert!(PeerResult::from_script_output(wrong_unit).is_err());
        assert!(matches!(
            PeerResult::from_script_output("Traceback"),
            Err(PeerOutputError::NotJson(_))
        ));
    }

    #[test]
    fn measuring_alternates_sides_and_stops_at_the_first_error() {
        let method = Method {
            warm_up: Duration::from_millis(1),
            batches: 3,
            batch_cpu: Duration::from_millis(1),
        };
        let order = std::cell::RefCell::new(Vec::new());
        let mut a = || -> Result<(), String> {
            order.borrow_mut().push('a');
            Ok(())
        };
        let mut b = || -> Result<(), String> {
            order.borrow_mut().push('b');
            Ok(())
        };
        let samples = measure_alternating(method, &mut [&mut a, &mut b]).unwrap();
        assert_eq!(samples.len(), 2);
        assert!(samples
            .iter()
            .all(|s| s.len() == 3 && s.iter().all(|x| x.cpu_us >= 0.0 && x.wall_us >= 0.0)));
        // Warm-ups a then b (one switch), then batches a, b, a, b, a, b (six more).
        let order = order.into_inner();
        let switches = order.windows(2).filter(|w| w[0] != w[1]).count();
        assert_eq!(switches, 7, "{order:?}");

        let mut calls = 0;
        let mut failing = || -> Result<(), String> {
            calls += 1;
            if calls > 2 {
                Err("boom".to_owned())
            } else {
                Ok(())
            }
        };
        assert_eq!(
            measure_alternating(method, &mut [&mut failing]).unwrap_err(),
            "boom"
        );
    }

    #[test]
    fn cpu_time_advances_with_work() {
        let before = process_cpu_time();
        let mut x = 0u64;
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(20) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        assert!(process_cpu_time() > before, "{x}");
    }

    #[test]
    fn a_batch_has_at_least_one_run() {
        assert_eq!(batch_runs(Duration::from_millis(200), 1.0), 1);
        assert_eq!(batch_runs(Duration::from_millis(200), 0.0), 1);
        assert_eq!(batch_runs(Duration::from_millis(200), 0.001), 200);
    }
}
