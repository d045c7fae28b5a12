//! `lenient_json/...`: `json_values` on one megabyte of adversarial model output. Each input
//! once took time quadratic in its length (22 s for 200,000 `[`); the bound is linear now.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use inference::lenient_json::json_values;

const SIZE: usize = 1_000_000;
const ANSWER: &str = r#"{"name": "search", "arguments": {"q": "x"}}"#;

/// `pattern` repeated to about one megabyte, then a tool call.
fn adversarial(pattern: &str) -> String {
    let mut text = pattern.repeat((SIZE - ANSWER.len()) / pattern.len());
    text.push_str(ANSWER);
    text
}

fn adversarial_inputs(c: &mut Criterion) {
    let mut group = c.benchmark_group("lenient_json/1MB");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    let inputs = [
        ("open_brackets", adversarial("[")),
        ("open_objects", adversarial(r#"{"a":"#)),
        ("unbalanced_quotes", adversarial(r#""{"#)),
        ("escaped_quotes", adversarial(r#"[\""#)),
        ("closed_nesting", {
            let depth = SIZE / 2 - 2;
            format!("{}{}", "[".repeat(depth), "]".repeat(depth))
        }),
        ("many_values", "[1] ".repeat(SIZE / 4)),
        ("fences_on_one_line", "```[".repeat(SIZE / 4)),
    ];
    for (name, text) in &inputs {
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(name), text, |b, text| {
            b.iter(|| json_values(black_box(text)))
        });
    }
    group.finish();
}

criterion_group!(benches, adversarial_inputs);
criterion_main!(benches);
