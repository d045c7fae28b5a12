//! Criterion benches: framework overhead per step (`overhead/...`) and state serialization
//! (`serialization/...`). Run through `cargo xtask bench`, which turns the results into
//! `docs/benchmarks.md`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use agents_bench::{
    big_state, state_with_history, tool_calling_agent, two_step_script, CycleModel, ANSWER,
};
use agents_core::AgentState;
use agents_processing::TraceRetention;
mod common;

use common::{config, runtime};
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};

/// One full `Agent::execute` of the two-step conversation (tool call, then answer) on top of a
/// history; the reported time is for two steps.
fn overhead(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("overhead");
    for (mode, retention) in [
        ("full", TraceRetention::Full),
        ("ephemeral", TraceRetention::Ephemeral),
    ] {
        let agent = tool_calling_agent(CycleModel::new(two_step_script()), retention);
        for len in [10usize, 1_000, 10_000] {
            let state = state_with_history(len).with_user_message("Run the tool, please.");
            // Sanity: the measured run ends with the scripted answer.
            let done = rt.block_on(agent.execute(state.clone())).unwrap();
            assert_eq!(done.final_response().unwrap().text(), ANSWER);
            assert_eq!(done.step_executions().len(), 2);
            group.throughput(Throughput::Elements(2));
            group.bench_with_input(BenchmarkId::new(mode, len), &state, |b, state| {
                b.iter(|| rt.block_on(agent.execute(state.clone())).unwrap());
            });
        }
    }
    group.finish();
}

fn serialization(c: &mut Criterion) {
    let rt = runtime();
    let state = rt.block_on(big_state()).unwrap();
    let json = state.to_json().unwrap();
    let restored = AgentState::from_json(&json).unwrap();
    assert_eq!(restored.messages().len(), 1_000);
    assert_eq!(restored.step_executions().len(), 100);
    let mut group = c.benchmark_group("serialization");
    group.throughput(Throughput::Bytes(json.len() as u64));
    group.bench_function("to_json", |b| b.iter(|| state.to_json().unwrap()));
    group.bench_function("from_json", |b| {
        b.iter_batched(
            || json.clone(),
            |text: String| AgentState::from_json(&text).unwrap(),
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

/// Validating a realistic tool call's arguments (what every tool call pays before the tool
/// runs): a string, an enum, a bounded integer, an optional list and a nested object.
fn argument_validation(c: &mut Criterion) {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer", "minimum": 1, "maximum": 14},
            "fields": {"type": "array", "items": {"type": "string"}},
            "location": {
                "type": "object",
                "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
                "required": ["lat", "lon"]
            }
        },
        "required": ["city", "days"],
        "additionalProperties": false
    });
    let arguments = serde_json::json!({
        "city": "Paris",
        "unit": "celsius",
        "days": 3,
        "fields": ["temperature", "wind", "rain"],
        "location": {"lat": 48.85, "lon": 2.35}
    });
    assert!(agents_core::validate_arguments(&schema, &arguments).is_ok());
    c.bench_function("tools/validate_arguments", |b| {
        b.iter(|| agents_core::validate_arguments(&schema, &arguments))
    });
}

criterion_group! {
    name = benches;
    config = config();
    targets = overhead, serialization, argument_validation
}
criterion_main!(benches);
