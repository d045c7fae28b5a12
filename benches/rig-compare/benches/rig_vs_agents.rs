//! The same two-step tool-calling conversation (one tool call, then the answer) through our
//! agent and through a rig agent, in one criterion group: `rig_vs_agents/{agents,rig}/{len}`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use agents_bench::{state_with_history, tool_calling_agent, two_step_script, CycleModel};
use agents_processing::TraceRetention;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rig_compare::{rig_agent, rig_history, run_rig, ANSWER, PROMPT};

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

fn compare(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ours = tool_calling_agent(
        CycleModel::new(two_step_script()),
        TraceRetention::Ephemeral,
    );
    let (rig, rig_model) = rig_agent().unwrap();
    let mut group = c.benchmark_group("rig_vs_agents");
    group.throughput(Throughput::Elements(2));
    for len in [10usize, 1_000] {
        let state = state_with_history(len).with_user_message(PROMPT);
        let done = rt.block_on(ours.execute(state.clone())).unwrap();
        assert_eq!(done.final_response().unwrap().text(), ANSWER);
        assert_eq!(done.step_executions().len(), 2);

        let history = rig_history(len);
        let before = rig_model.transport.calls();
        let answer = rt.block_on(run_rig(&rig, &history)).unwrap();
        assert_eq!(answer, ANSWER);
        assert_eq!(
            rig_model.transport.calls() - before,
            2,
            "two model calls, as ours"
        );

        group.bench_with_input(BenchmarkId::new("agents", len), &state, |b, state| {
            b.iter(|| rt.block_on(ours.execute(state.clone())).unwrap());
        });
        group.bench_with_input(BenchmarkId::new("rig", len), &history, |b, history| {
            b.iter(|| rt.block_on(run_rig(&rig, history)).unwrap());
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = compare
}
criterion_main!(benches);
