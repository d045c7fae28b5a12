//! Criterion bench: recovering tool calls written as text on adversarial replies (issue 28: a
//! 2 MiB reply of `<tool_call>x</tool_call>` blocks took 11-16 s of CPU). Each shape is measured
//! at two sizes; linear time means the larger takes about twice as long, not four times. The
//! last group runs one whole driver step (the trust rules included) on such replies.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use agents_bench::noop_tool;
use agents_core::{Agent, AgentState, Tools};
use common::{config, runtime};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use drivers_toolcalling::{
    is_tool_call_text, recover_announced_call, recover_tool_calls, ToolCallingDriver,
};
use inference::{InferenceResponse, ScriptedModel};

/// The adversarial replies of `bytes` bytes (cut to a block boundary).
fn shapes(bytes: usize) -> Vec<(&'static str, String)> {
    let repeat = |unit: &str| unit.repeat(bytes / unit.len());
    vec![
        ("tags", repeat("<tool_call>x</tool_call>")),
        ("tags on lines", repeat("<tool_call>x</tool_call>\n")),
        ("fences", repeat("```\nx\n```\n")),
        ("open objects", repeat("{\"name\": ")),
        ("braces", repeat("{")),
        (
            "prose and calls",
            repeat("see {\"name\": \"noop\", \"arguments\": {\"a\": 1}} "),
        ),
    ]
}

fn recovery(c: &mut Criterion) {
    let tools = Tools::new().with(noop_tool());
    let mut group = c.benchmark_group("recovery");
    for bytes in [512 << 10, 1 << 20] {
        for (name, reply) in shapes(bytes) {
            group.throughput(Throughput::Bytes(reply.len() as u64));
            group.bench_with_input(BenchmarkId::new(name, bytes), &reply, |b, reply| {
                b.iter(|| {
                    (
                        recover_tool_calls(reply, &tools, 1).is_some(),
                        recover_announced_call(reply, &tools, 1).is_some(),
                        is_tool_call_text(reply),
                    )
                })
            });
        }
    }
    group.finish();
}

/// One driver step on a 1 MiB adversarial reply: every rule of the trust model runs.
fn driver_step(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("recovery_step");
    for (name, reply) in shapes(1 << 20) {
        let state = AgentState::new().with_user_message("go");
        group.throughput(Throughput::Bytes(reply.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| {
                let model = ScriptedModel::new([InferenceResponse::text(reply.clone())]);
                let agent = Agent::new(ToolCallingDriver::new(model)).with_tool(noop_tool());
                rt.block_on(agent.step(state.clone())).unwrap()
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = recovery, driver_step
}
criterion_main!(benches);
