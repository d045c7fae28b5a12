//! Agents against a real model (Qwen2.5-Coder-0.5B-Instruct on llama.cpp's llama-server).
//!
//! Small local models are unreliable, so these tests check what must hold for any answer (a
//! completed run, a non-empty answer, usage recorded, no panic) and report what the model did.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::Instant;

use agents::prelude::*;
use agents::processing::{EstimateTokenCounter, TokenCounter};
use agents_e2e::{report, server};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Calculation {
    /// An arithmetic expression with + - * / and parentheses, e.g. "17 * 23".
    expression: String,
}

fn calculator() -> FunctionTool {
    FunctionTool::new(
        "calculate",
        "Evaluate an arithmetic expression",
        |c: Calculation| async move {
            evaluate(&c.expression)
                .map(|v| v.to_string())
                .ok_or_else(|| ToolError::failed(format!("cannot evaluate `{}`", c.expression)))
        },
    )
}

#[derive(Deserialize, JsonSchema)]
struct CityArgs {
    /// The city.
    city: String,
}

fn weather() -> FunctionTool {
    FunctionTool::new(
        "get_weather",
        "Get the current weather for a city",
        |args: CityArgs| async move { Ok::<_, ToolError>(format!("18°C and cloudy in {}", args.city)) },
    )
}

/// A tiny recursive-descent evaluator for + - * / and parentheses.
fn evaluate(expression: &str) -> Option<f64> {
    fn expr(s: &[u8], i: &mut usize) -> Option<f64> {
        let mut value = term(s, i)?;
        while let Some(op) = peek(s, i).filter(|c| *c == b'+' || *c == b'-') {
            *i += 1;
            let rhs = term(s, i)?;
            value = if op == b'+' { value + rhs } else { value - rhs };
        }
        Some(value)
    }
    fn term(s: &[u8], i: &mut usize) -> Option<f64> {
        let mut value = atom(s, i)?;
        while let Some(op) = peek(s, i).filter(|c| *c == b'*' || *c == b'/') {
            *i += 1;
            let rhs = atom(s, i)?;
            value = if op == b'*' { value * rhs } else { value / rhs };
        }
        Some(value)
    }
    fn atom(s: &[u8], i: &mut usize) -> Option<f64> {
        match peek(s, i)? {
            b'(' => {
                *i += 1;
                let value = expr(s, i)?;
                (peek(s, i)? == b')').then(|| *i += 1)?;
                Some(value)
            }
            b'-' => {
                *i += 1;
                atom(s, i).map(|v| -v)
            }
            _ => {
                let start = *i;
                while *i < s.len() && (s[*i].is_ascii_digit() || s[*i] == b'.') {
                    *i += 1;
                }
                std::str::from_utf8(&s[start..*i]).ok()?.parse().ok()
            }
        }
    }
    fn peek(s: &[u8], i: &mut usize) -> Option<u8> {
        while *i < s.len() && s[*i].is_ascii_whitespace() {
            *i += 1;
        }
        s.get(*i).copied()
    }
    let bytes = expression.as_bytes();
    let mut index = 0;
    let value = expr(bytes, &mut index)?;
    (peek(bytes, &mut index).is_none()).then_some(value)
}

fn model(url: &str) -> OpenAiCompatible {
    let name = std::env::var("E2E_LLAMA_MODEL").unwrap_or_else(|_| "local".into());
    OpenAiCompatible::builder()
        .base_url(format!("{url}/v1"))
        .model(name)
        .build()
        .unwrap()
}

fn tools_used(state: &AgentState) -> Vec<String> {
    state
        .step_executions()
        .steps()
        .flat_map(|s| s.tool_executions().iter())
        .map(|e| format!("{}({}) -> {}", e.name(), e.arguments(), e.result_text()))
        .collect()
}

#[test]
fn the_evaluator_is_right() {
    assert_eq!(evaluate("17 * 23"), Some(391.0));
    assert_eq!(evaluate("(1 + 2) * -3"), Some(-9.0));
    assert_eq!(evaluate("2 +"), None);
}

#[tokio::test]
async fn react_run_with_a_calculator_reaches_a_final_answer() {
    let Some(url) = server("E2E_LLAMA_URL") else {
        return;
    };
    let agent = AgentBuilder::new()
        .with_react(model(&url))
        .with_tool(calculator())
        .with_temperature(0.0)
        .with_max_tokens(256)
        .with_max_steps(6)
        .with_separated_tool_trace(true)
        .build()
        .unwrap();
    let started = Instant::now();
    let done = agent
        .execute(AgentState::new().with_user_message("What is 17 * 23? Use the calculate tool."))
        .await
        .unwrap();
    let elapsed = started.elapsed();
    let steps = done.step_count().max(1);
    report(&format!(
        "real model, ReAct: status {:?}, {steps} steps, {:.2}s per step, tools: {:?}, answer: {:?}",
        done.status(),
        elapsed.as_secs_f64() / steps as f64,
        tools_used(&done),
        done.final_response().map(|m| m.text())
    ));
    assert!(done.usage().total() > 0, "usage recorded");
    assert!(done.step_count() >= 1);
    if done.status() == AgentStatus::Completed {
        assert!(!done.final_response().unwrap().text().trim().is_empty());
    }
}

#[tokio::test]
async fn tool_call_written_as_json_text_is_recovered_and_executed() {
    let Some(url) = server("E2E_LLAMA_URL") else {
        return;
    };
    let agent = AgentBuilder::new()
        .with_model(model(&url))
        .with_tool(weather())
        .with_content_tool_call_recovery(true)
        .with_temperature(0.0)
        .with_max_tokens(128)
        .with_max_steps(3)
        .with_separated_tool_trace(true)
        .with_system_prompt("You are a helpful assistant. Use the tools when they help.")
        .build()
        .unwrap();
    let started = Instant::now();
    let done = agent
        .execute(AgentState::new().with_user_message("What is the weather in Paris right now?"))
        .await
        .unwrap();
    let used = tools_used(&done);
    report(&format!(
        "real model, tool calling with JSON-in-content recovery: {} steps in {:.2}s, tools: {used:?}, answer: {:?}",
        done.step_count(),
        started.elapsed().as_secs_f64(),
        done.final_response().map(|m| m.text())
    ));
    assert!(done.usage().total() > 0);
    // Every run ends with an answer: whatever stopped it (a step limit, repeated calls), the
    // persisted conversation ends with a non-empty assistant answer.
    let last = done.messages().iter().last().cloned().unwrap();
    assert_eq!(
        last.role(),
        Role::Assistant,
        "{}",
        done.messages().to_transcript()
    );
    assert!(
        !last.text().trim().is_empty(),
        "{}",
        done.messages().to_transcript()
    );
    assert!(
        used.iter().any(|u| u.starts_with("get_weather")),
        "the model's JSON call should have been recovered and executed: {}",
        done.step_executions()
            .steps()
            .map(|s| s.output_messages().to_transcript())
            .collect::<String>()
    );
}

#[tokio::test]
async fn streaming_run_forwards_text_deltas() {
    let Some(url) = server("E2E_LLAMA_URL") else {
        return;
    };
    let deltas = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&deltas);
    let agent = AgentBuilder::new()
        .with_model(model(&url))
        .with_streaming(true)
        .with_temperature(0.0)
        .with_max_tokens(64)
        .on_event(move |e| {
            if matches!(e, AgentEvent::TextDelta { .. }) {
                counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        })
        .build()
        .unwrap();
    let done = agent
        .execute(AgentState::new().with_user_message("Name three colours."))
        .await
        .unwrap();
    let deltas = deltas.load(std::sync::atomic::Ordering::Relaxed);
    report(&format!(
        "real model, streaming: {deltas} text deltas, usage {:?}",
        done.usage()
    ));
    assert!(deltas > 1, "several deltas expected");
    assert!(!done.final_response().unwrap().text().is_empty());
}

#[tokio::test]
async fn three_turns_tokens_per_turn_in_both_modes() {
    let Some(url) = server("E2E_LLAMA_URL") else {
        return;
    };
    let questions = [
        "What is the weather in Paris?",
        "And in Berlin?",
        "Which of the two is warmer?",
    ];
    let counter = EstimateTokenCounter;
    let mut lines = Vec::new();
    for separated in [false, true] {
        let agent = AgentBuilder::new()
            .with_model(model(&url))
            .with_tool(weather())
            .with_content_tool_call_recovery(true)
            .with_temperature(0.0)
            .with_max_tokens(128)
            .with_max_steps(3)
            .with_separated_tool_trace(separated)
            .with_system_prompt("You are a helpful assistant. Use the tools when they help.")
            .build()
            .unwrap();
        let mut state = AgentState::new();
        let mut per_turn = Vec::new();
        for (turn, question) in questions.into_iter().enumerate() {
            let started = Instant::now();
            state = agent
                .execute(state.with_user_message(question))
                .await
                .unwrap();
            let steps = state.step_executions().len().max(1);
            // What the server counted per request, cached prefix included (llama-server reports
            // the reused prompt cache separately).
            let prompt_per_step: Vec<u64> = state
                .step_executions()
                .steps()
                .map(|s| s.usage().input_tokens + s.usage().cache_read_tokens)
                .collect();
            let estimated: usize = state
                .step_executions()
                .steps()
                .map(|s| counter.count_messages(s.input_messages()))
                .sum();
            per_turn.push(format!(
                "turn {}: {steps} steps, prompt tokens per step {prompt_per_step:?} (sum {}), \
                 {estimated} estimated, {} persisted messages after, {:.2}s/step",
                turn + 1,
                prompt_per_step.iter().sum::<u64>(),
                state.messages().len(),
                started.elapsed().as_secs_f64() / steps as f64
            ));
            assert!(state.execution_usage().total() > 0);
            assert!(prompt_per_step.iter().all(|t| *t > 0), "usage per step");
        }
        lines.push(format!(
            "real model, three turns, {}: {}",
            if separated { "separated" } else { "legacy" },
            per_turn.join("; ")
        ));
    }
    for line in lines {
        report(&line);
    }
}
