//! Criterion benches of what a model call costs outside the loop, and of the text-recovery
//! paths:
//!
//! - `encoding/{openai,anthropic}/{fresh,incremental}/N`: the request body of a step on a
//!   history of N messages. `fresh` is `serde_json::to_vec` of the provider's public body
//!   function (what every call paid before incremental encoding); `incremental` is the
//!   provider's own encoder on a conversation that grows by one tool round (two messages) per
//!   request, as an execution's requests do.
//! - `http_step/{run,transfer,transfer_whole}/N`: a two-step run through the real
//!   `OpenAiCompatible` provider against a local mock server (`run`), and two raw POSTs of the
//!   same bodies: sent as the provider sends them, a chain of shared chunks (`transfer`: the
//!   cost of moving the bytes, which `run` pays too), and each in one buffer
//!   (`transfer_whole`: what the chain costs in the client's writes).
//! - `recovery/...`: the text-recovery checks a tool-calling step makes on a reply without
//!   native calls (a plain answer, the common case, and each kind of call written as text).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use agents_bench::mock_openai::http_step_agent;
use agents_bench::{history, noop_tool, state_with_history, two_step_requests, ANSWER};
use agents_core::Tools;
use common::{config, runtime};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use drivers_toolcalling::{recover_announced_call, recover_tool_calls};
use inference::providers::{anthropic, openai};
use inference::{
    Anthropic, InferenceRequest, Message, Messages, OpenAiCompatible, RequestBody, ToolCall,
    ToolSchema,
};
use serde_json::json;

const SIZES: [usize; 3] = [10, 1_000, 10_000];

/// Tool definitions of a small agent (shared by every request, as an agent's are).
fn tools() -> Arc<[ToolSchema]> {
    (0..5)
        .map(|i| {
            ToolSchema::new(
                format!("tool_{i}"),
                format!("Tool number {i}: looks something up and answers in a sentence."),
                json!({"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["query"]}),
            )
        })
        .collect()
}

/// One tool round: the assistant's call and its result.
fn tool_round(i: usize) -> [Message; 2] {
    [
        Message::assistant_tool_calls([ToolCall::new(
            format!("call_{i}"),
            "tool_0",
            json!({"query": format!("ticket {i}")}),
        )]),
        Message::tool_result(
            format!("call_{i}"),
            "tool_0",
            format!("Ticket {i}: open, owned by the platform team."),
        ),
    ]
}

/// The request of a step: the history, the tools, a breakpoint at the end of the history
/// (the stable part) as the drivers set it.
fn request(messages: Messages, stable: usize, tools: &Arc<[ToolSchema]>) -> InferenceRequest {
    InferenceRequest::new(messages)
        .with_shared_tools(Arc::clone(tools))
        .with_cache_breakpoint(stable)
}

/// The base history of N messages: a system prompt, then questions and answers.
fn base(len: usize) -> Messages {
    Messages::from(vec![Message::system("You answer questions about tickets.")])
        .concat(&history(len - 1))
}

/// Encodes `steps` requests of a growing conversation on `base` with `encode`, timing only
/// the encoding; every 32 steps the conversation starts again from `base` (a new execution on
/// the same history).
fn time_steps(
    base: &Messages,
    tools: &Arc<[ToolSchema]>,
    steps: u64,
    mut encode: impl FnMut(&InferenceRequest) -> usize,
) -> Duration {
    let mut total = Duration::ZERO;
    let mut messages = base.clone();
    for step in 0..steps {
        if step % 32 == 0 {
            messages = base.clone();
        }
        messages = messages.extended(tool_round(step as usize));
        let request = request(messages.clone(), base.len() - 1, tools);
        let started = Instant::now();
        let bytes = encode(&request);
        total += started.elapsed();
        std::hint::black_box(bytes);
    }
    total
}

fn encoding(c: &mut Criterion) {
    let tools = tools();
    let mut group = c.benchmark_group("encoding");
    for len in SIZES {
        let base = base(len);
        group.throughput(Throughput::Elements(1));

        // Sanity: both encoders give the same bytes.
        let openai_model = OpenAiCompatible::new("http://127.0.0.1:9/v1", None, "m").unwrap();
        let anthropic_model = Anthropic::builder()
            .base_url("http://127.0.0.1:9")
            .model("m")
            .build()
            .unwrap();
        let probe = request(base.extended(tool_round(0)), len - 1, &tools);
        assert_eq!(
            openai_model.encode_request(&probe, true).unwrap().to_vec(),
            serde_json::to_vec(&openai::request_body(&probe, "m", true, false)).unwrap()
        );
        assert_eq!(
            anthropic_model
                .encode_request(&probe, true)
                .unwrap()
                .to_vec(),
            serde_json::to_vec(&anthropic::request_body(&probe, "m", 4096, true, true)).unwrap()
        );

        group.bench_function(BenchmarkId::new("openai/fresh", len), |b| {
            b.iter_custom(|steps| {
                time_steps(&base, &tools, steps, |request| {
                    let body = openai::request_body(request, "m", true, false);
                    serde_json::to_vec(&body).unwrap().len()
                })
            })
        });
        group.bench_function(BenchmarkId::new("openai/incremental", len), |b| {
            b.iter_custom(|steps| {
                let model = OpenAiCompatible::new("http://127.0.0.1:9/v1", None, "m").unwrap();
                model
                    .encode_request(&request(base.clone(), len - 1, &tools), true)
                    .unwrap();
                time_steps(&base, &tools, steps, |request| {
                    model.encode_request(request, true).unwrap().len()
                })
            })
        });
        group.bench_function(BenchmarkId::new("anthropic/fresh", len), |b| {
            b.iter_custom(|steps| {
                time_steps(&base, &tools, steps, |request| {
                    let body = anthropic::request_body(request, "m", 4096, true, true);
                    serde_json::to_vec(&body).unwrap().len()
                })
            })
        });
        group.bench_function(BenchmarkId::new("anthropic/incremental", len), |b| {
            b.iter_custom(|steps| {
                let model = Anthropic::builder()
                    .base_url("http://127.0.0.1:9")
                    .model("m")
                    .build()
                    .unwrap();
                model
                    .encode_request(&request(base.clone(), len - 1, &tools), true)
                    .unwrap();
                time_steps(&base, &tools, steps, |request| {
                    model.encode_request(request, true).unwrap().len()
                })
            })
        });
    }
    group.finish();
}

/// A two-step run through the real HTTP provider, against the local mock server.
fn http_step(c: &mut Criterion) {
    let rt = runtime();
    let (server, model, agent) = http_step_agent().unwrap();
    let client = reqwest::Client::new();
    let mut group = c.benchmark_group("http_step");
    for len in SIZES {
        let state = state_with_history(len).with_user_message("Run the tool, please.");
        let done = rt.block_on(agent.execute(state.clone())).unwrap();
        assert_eq!(done.final_response().unwrap().text(), ANSWER);
        group.throughput(Throughput::Elements(2));
        group.bench_with_input(BenchmarkId::new("run", len), &state, |b, state| {
            b.iter(|| rt.block_on(agent.execute(state.clone())).unwrap());
        });
        // The same bytes, posted raw: what moving them costs, sent as the provider sends them
        // (a chain of chunks) and each in one buffer.
        let bodies: Vec<RequestBody> = two_step_requests(&state)
            .iter()
            .map(|r| model.encode_request(r, false).unwrap())
            .collect();
        let whole: Vec<bytes::Bytes> = bodies.iter().map(|b| b.to_vec().into()).collect();
        let post = |body: reqwest::Body| {
            let reply = server.post_chat(&client, body);
            async move {
                std::hint::black_box(reply.await.unwrap());
            }
        };
        group.bench_function(BenchmarkId::new("transfer", len), |b| {
            b.iter(|| {
                rt.block_on(async {
                    for body in &bodies {
                        post(body.for_attempt()).await;
                    }
                })
            });
        });
        group.bench_function(BenchmarkId::new("transfer_whole", len), |b| {
            b.iter(|| {
                rt.block_on(async {
                    for body in &whole {
                        post(body.clone().into()).await;
                    }
                })
            });
        });
    }
    group.finish();
}

/// The replies the recovery benches read.
fn replies() -> Vec<(&'static str, String)> {
    let answer = "The build failed because the integration tests timed out after 30 seconds; \
                  the database container took 41 seconds to start. Raise the test timeout to \
                  60 seconds or start the container before the suite, then run `cargo test` \
                  again. The config is {\"timeout\": 30} in ci.json."
        .to_owned();
    vec![
        ("plain_answer", answer.clone()),
        ("long_answer", answer.repeat(20)),
        ("json_call", r#"{"name": "noop", "arguments": {}}"#.to_owned()),
        (
            "fenced_call",
            "```json\n{\"name\": \"noop\", \"arguments\": {}}\n```".to_owned(),
        ),
        (
            "tagged_call",
            "<tool_call>\n{\"name\": \"noop\", \"arguments\": {}}\n</tool_call>".to_owned(),
        ),
        (
            "announced_call",
            "I will run the tool now.\n```json\n{\"name\": \"noop\", \"arguments\": {}}\n```\nIt said ok."
                .to_owned(),
        ),
    ]
}

/// What a step with content recovery on does to a reply without native calls: look for calls
/// written as the whole reply, then for one announced in prose.
fn recovery(c: &mut Criterion) {
    let tools = Tools::new().with(noop_tool());
    let mut group = c.benchmark_group("recovery");
    for (name, reply) in replies() {
        let found = recover_tool_calls(&reply, &tools, 1).is_some()
            || recover_announced_call(&reply, &tools, 1).is_some();
        assert_eq!(found, name.ends_with("_call"), "{name}");
        group.throughput(Throughput::Bytes(reply.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| {
                recover_tool_calls(&reply, &tools, 1)
                    .map(|calls| calls.len())
                    .or_else(|| recover_announced_call(&reply, &tools, 1).map(|_| 1))
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = encoding, http_step, recovery
}
criterion_main!(benches);
