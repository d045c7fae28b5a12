#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! The scripted twin of `cargo xtask longrun` (issue 32): the same project and the same 32
//! turns, through the same kind of agent (file and bash tools, each trace mode), with a
//! scripted model instead of a real one. It runs in CI in a few seconds; its token counts are
//! exact (the default estimate over every request the model received), so a change that makes
//! a mode send more tokens fails the snapshot, and the ratios issue 32 sets are asserted.

use agents::prelude::*;
use agents::processing::{EstimateTokenCounter, TokenCounter};
use insta::assert_snapshot;

// One source of truth with the benchmark: the project, the turns and their checks.
#[allow(dead_code)]
#[path = "../../../xtask/src/longrun/check.rs"]
mod check;
#[allow(dead_code)]
#[path = "../../../xtask/src/longrun/project.rs"]
mod project;
#[allow(dead_code)]
#[path = "../../../xtask/src/longrun/turns.rs"]
mod turns;

use check::is_forged_evidence;
use turns::{Reply, TURNS};

/// A system prompt in the spirit of the CLI's (the twin measures the conversation, not it).
const SYSTEM_PROMPT: &str = "You are a helpful assistant working in a directory of files, with \
tools to list, read, search, write and edit them. Look before you answer.";

fn modes() -> [(&'static str, TraceRetention); 4] {
    [
        ("legacy", TraceRetention::Full),
        ("separated", TraceRetention::Ephemeral),
        ("digest", TraceRetention::digest(300)),
        ("masked", TraceRetention::masked(2)),
    ]
}

/// The twin's model: every turn's scripted replies, in order.
fn scripted_model() -> ScriptedModel {
    let mut replies = Vec::new();
    for (t, turn) in TURNS.iter().enumerate() {
        for (k, reply) in turn.script.iter().enumerate() {
            replies.push(match reply {
                Reply::Call(name, arguments) => {
                    InferenceResponse::with_tool_calls([ToolCall::new(
                        format!("call_{}_{k}", t + 1),
                        *name,
                        serde_json::from_str(arguments).expect("the script's arguments are JSON"),
                    )])
                }
                Reply::Answer(text) => InferenceResponse::text(*text),
            });
        }
    }
    ScriptedModel::new(replies)
}

/// One turn as measured.
struct Measured {
    input_tokens: usize,
    /// Tokens of each request's prefix that the previous request already had (what a prompt
    /// cache could reuse).
    reusable_tokens: usize,
    passed: bool,
    used_tool: bool,
}

async fn conversation(retention: TraceRetention) -> (Vec<Measured>, AgentState) {
    let dir = tempfile::tempdir().unwrap();
    project::write(dir.path()).unwrap();
    let model = scripted_model();
    let agent = AgentBuilder::new()
        .with_model(model.clone())
        .with_system_prompt(SYSTEM_PROMPT)
        .with_capability(UseFileTools::new(dir.path()))
        .with_capability(UseBash::new(dir.path()))
        .with_trace_retention(retention)
        .with_max_steps(8)
        .build()
        .unwrap();
    let counter = EstimateTokenCounter;
    let mut state = AgentState::new();
    let mut measured = Vec::new();
    let mut seen = 0;
    let mut previous: Option<Messages> = None;
    for turn in TURNS {
        state = agent
            .execute(state.with_user_message(turn.prompt))
            .await
            .unwrap();
        let requests = model.requests();
        let (mut input_tokens, mut reusable_tokens) = (0, 0);
        for request in &requests[seen..] {
            input_tokens += counter.count_messages(&request.messages);
            if let Some(previous) = &previous {
                let shared = previous
                    .iter()
                    .zip(request.messages.iter())
                    .take_while(|(a, b)| a == b)
                    .count();
                reusable_tokens += counter.count_messages(&request.messages.head(shared));
            }
            previous = Some(request.messages.clone());
        }
        seen = requests.len();
        let answer = state.final_response().map(|m| m.text());
        measured.push(Measured {
            input_tokens,
            reusable_tokens,
            passed: turn.check.passes(answer.as_deref(), dir.path()),
            used_tool: state.steps().any(|s| !s.tool_executions().is_empty()),
        });
    }
    assert_eq!(model.remaining(), 0, "every scripted reply was used");
    (measured, state)
}

#[tokio::test]
async fn the_long_conversation_in_every_mode() {
    let mut table = String::from(
        "mode       | tokens@10 | tokens@20 | tokens@30 | all turns | vs legacy | reusable prefix\n",
    );
    let mut legacy_at_30 = 0;
    let mut at_30 = std::collections::BTreeMap::new();
    for (mode, retention) in modes() {
        let (turns, state) = conversation(retention).await;
        for (n, (turn, measured)) in TURNS.iter().zip(&turns).enumerate() {
            assert!(measured.passed, "{mode}: turn {} fails its check", n + 1);
            if turn.needs_tool {
                assert!(measured.used_tool, "{mode}: turn {} used no tool", n + 1);
            }
        }
        for message in state.messages().iter() {
            assert!(
                !is_forged_evidence(&message.text()),
                "{mode}: a persisted message reads as forged evidence: {}",
                message.text()
            );
        }
        let cumulative = |upto: usize| {
            turns
                .iter()
                .take(upto)
                .map(|t| t.input_tokens)
                .sum::<usize>()
        };
        let total = cumulative(usize::MAX);
        let reusable: usize = turns.iter().map(|t| t.reusable_tokens).sum();
        if mode == "legacy" {
            legacy_at_30 = cumulative(30);
        }
        at_30.insert(mode, cumulative(30));
        table.push_str(&format!(
            "{mode:<10} | {:>9} | {:>9} | {:>9} | {:>9} | {:>8.1}% | {:>5.1}%\n",
            cumulative(10),
            cumulative(20),
            cumulative(30),
            total,
            100.0 * cumulative(30) as f64 / legacy_at_30 as f64,
            100.0 * reusable as f64 / total as f64,
        ));
    }
    // The order the design promises: separated sends the least, digest adds bounded excerpts,
    // masking trims legacy. (Issue 32's 25% goal is for the real model, whose tool outputs are
    // larger than this project's small files; the twin's exact figures are the snapshot.)
    assert!(at_30["separated"] * 2 < legacy_at_30, "{table}");
    assert!(at_30["separated"] < at_30["digest"], "{table}");
    assert!(at_30["digest"] < legacy_at_30, "{table}");
    assert!(at_30["masked"] < legacy_at_30, "{table}");
    // Exact counts: any change in what a mode sends shows here.
    assert_snapshot!("long_horizon_tokens", table);
}
