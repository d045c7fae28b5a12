//! Criterion benches of the file tools' inputs that used to take exponential time:
//! `search_files` with the 27-character glob that backtracked for minutes on a long name, and
//! with the longest pattern allowed (`MAX_PATTERN_CHARS`, 500 characters).
//! `AGENTS_BENCH_QUICK=1` shortens the runs.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use agents::capabilities::{FileTools, Sandbox};
use agents_core::tools::{ToolContext, Tools};
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;

fn config() -> Criterion {
    let quick = std::env::var_os("AGENTS_BENCH_QUICK").is_some();
    let (warm_up, measure, samples) = if quick {
        (Duration::from_millis(200), Duration::from_millis(500), 10)
    } else {
        (Duration::from_secs(1), Duration::from_secs(3), 30)
    };
    Criterion::default()
        .warm_up_time(warm_up)
        .measurement_time(measure)
        .sample_size(samples)
}

/// A workspace of 100 files whose names are 200 `a`s and a number: the worst case for
/// patterns made of `a` and `*`.
fn workspace() -> (tempfile::TempDir, Tools) {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..100 {
        std::fs::write(dir.path().join(format!("{}{i}", "a".repeat(200))), "").unwrap();
    }
    let tools = FileTools::new(Sandbox::new(dir.path()).unwrap()).read_only();
    (dir, tools)
}

fn search(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (_dir, tools) = workspace();
    let tool = tools.get("search_files").unwrap();
    let context = ToolContext::default();
    let longest = "*a".repeat(249) + "*b";
    for (name, pattern) in [
        ("pathological_glob_27_chars", "a*a*a*a*a*a*a*a*a*a*a*a*a*b"),
        ("longest_glob_500_chars", longest.as_str()),
    ] {
        c.bench_function(&format!("search_files/{name}/100_files"), |b| {
            b.iter(|| {
                let output = runtime
                    .block_on(tool.call(json!({"pattern": pattern}), &context))
                    .unwrap();
                assert!(output.content().starts_with("(no files match"));
            });
        });
    }
}

criterion_group! {
    name = benches;
    config = config();
    targets = search
}
criterion_main!(benches);
