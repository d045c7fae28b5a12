//! Criterion's estimates, read from its output directory.

use std::path::Path;

/// Mean time of one iteration, in nanoseconds, with its 95% confidence interval.
#[derive(Clone, Copy, Debug)]
pub struct Estimate {
    pub mean_ns: f64,
    pub lower_ns: f64,
    pub upper_ns: f64,
}

/// What the criterion runs measured (missing entries were not run).
#[derive(Debug, Default)]
pub struct CriterionData {
    /// `(mode, history length, time of one two-step execution)`.
    pub overhead: Vec<(String, usize, Estimate)>,
    pub to_json: Option<Estimate>,
    pub from_json: Option<Estimate>,
    /// `(framework, history length, time of one two-step conversation)`.
    pub rig_compare: Vec<(String, usize, Estimate)>,
    /// `(provider/mode, history length, time of one request's encoding)`, e.g.
    /// `openai/incremental`.
    pub encoding: Vec<(String, usize, Estimate)>,
    /// `(run|transfer|transfer_whole, history length, time of one two-step run or its two raw
    /// POSTs)`.
    pub http_step: Vec<(String, usize, Estimate)>,
    /// `(reply kind, time of the recovery checks on it)`.
    pub recovery: Vec<(String, Estimate)>,
}

/// Providers and modes of the encoding bench.
pub const ENCODINGS: [&str; 4] = [
    "openai/fresh",
    "openai/incremental",
    "anthropic/fresh",
    "anthropic/incremental",
];
/// Replies of the recovery bench.
pub const RECOVERY_REPLIES: [&str; 6] = [
    "plain_answer",
    "long_answer",
    "json_call",
    "fenced_call",
    "tagged_call",
    "announced_call",
];

/// History lengths of the overhead bench.
pub const HISTORIES: [usize; 3] = [10, 1_000, 10_000];
/// History lengths of the comparison with rig.
pub const RIG_HISTORIES: [usize; 2] = [10, 1_000];

/// The directory criterion writes a benchmark id's results to: `/` in a function's name
/// (`openai/fresh`) becomes `_` (`openai_fresh`), since it would open a directory.
fn criterion_dir(name: &str) -> String {
    name.replace('/', "_")
}

fn estimate(dir: &Path) -> Option<Estimate> {
    let text = std::fs::read_to_string(dir.join("new").join("estimates.json")).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    let mean = &value["mean"];
    Some(Estimate {
        mean_ns: mean["point_estimate"].as_f64()?,
        lower_ns: mean["confidence_interval"]["lower_bound"].as_f64()?,
        upper_ns: mean["confidence_interval"]["upper_bound"].as_f64()?,
    })
}

pub fn load(criterion: &Path, rig: Option<&Path>) -> CriterionData {
    let mut data = CriterionData::default();
    for mode in ["full", "ephemeral"] {
        for len in HISTORIES {
            let dir = criterion.join("overhead").join(mode).join(len.to_string());
            if let Some(e) = estimate(&dir) {
                data.overhead.push((mode.to_owned(), len, e));
            }
        }
    }
    for name in ENCODINGS {
        for len in HISTORIES {
            let dir = criterion
                .join("encoding")
                .join(criterion_dir(name))
                .join(len.to_string());
            if let Some(e) = estimate(&dir) {
                data.encoding.push((name.to_owned(), len, e));
            }
        }
    }
    for kind in ["run", "transfer", "transfer_whole"] {
        for len in HISTORIES {
            let dir = criterion.join("http_step").join(kind).join(len.to_string());
            if let Some(e) = estimate(&dir) {
                data.http_step.push((kind.to_owned(), len, e));
            }
        }
    }
    for reply in RECOVERY_REPLIES {
        if let Some(e) = estimate(&criterion.join("recovery").join(reply)) {
            data.recovery.push((reply.to_owned(), e));
        }
    }
    data.to_json = estimate(&criterion.join("serialization").join("to_json"));
    data.from_json = estimate(&criterion.join("serialization").join("from_json"));
    if let Some(rig) = rig {
        for framework in ["agents", "rig"] {
            for len in RIG_HISTORIES {
                let dir = rig
                    .join("rig_vs_agents")
                    .join(framework)
                    .join(len.to_string());
                if let Some(e) = estimate(&dir) {
                    data.rig_compare.push((framework.to_owned(), len, e));
                }
            }
        }
    }
    data
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes a criterion estimate of `mean_ns` into `dir`, as criterion lays it out.
    fn write_estimate(dir: &Path, mean_ns: f64) {
        std::fs::create_dir_all(dir.join("new")).unwrap();
        let estimates = serde_json::json!({"mean": {
            "point_estimate": mean_ns,
            "confidence_interval": {"lower_bound": mean_ns - 1.0, "upper_bound": mean_ns + 1.0},
        }});
        std::fs::write(
            dir.join("new").join("estimates.json"),
            estimates.to_string(),
        )
        .unwrap();
    }

    #[test]
    fn encoding_results_are_read_where_criterion_writes_them() {
        // `BenchmarkId::new("openai/fresh", 10)` is written to `encoding/openai_fresh/10`:
        // read as `encoding/openai/fresh/10`, the report said "not measured" after a full run.
        let criterion = tempfile::tempdir().unwrap();
        let encoding = criterion.path().join("encoding");
        write_estimate(&encoding.join("openai_fresh").join("10"), 2_000.0);
        write_estimate(&encoding.join("openai_incremental").join("10"), 500.0);
        let data = load(criterion.path(), None);
        let found: Vec<(&str, usize, f64)> = data
            .encoding
            .iter()
            .map(|(name, len, e)| (name.as_str(), *len, e.mean_ns))
            .collect();
        assert_eq!(
            found,
            [
                ("openai/fresh", 10, 2_000.0),
                ("openai/incremental", 10, 500.0)
            ]
        );
    }
}
