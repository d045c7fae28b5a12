//! A custom processor: tower-style middleware around every step. `StepLog` runs code before
//! and after the rest of the onion (like a tower layer around a service); `ToolBudget` is a
//! guard that skips the step (the run stops with `StopReason::Guard`) once the execution has
//! made a given number of tool calls.
//!
//! Run with `cargo run --example custom_processor`. Needs nothing (a scripted model).
//! See docs/processors.md.

#![allow(clippy::print_stdout)]

use std::sync::{Arc, Mutex};

use agents::prelude::*;
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

/// Logs each step: what the state looked like going in, what the step did coming out.
struct StepLog {
    lines: Arc<Mutex<Vec<String>>>,
}

#[async_trait]
impl StateProcessor for StepLog {
    fn name(&self) -> &str {
        "step_log"
    }

    async fn process(&self, state: AgentState, next: Next<'_>) -> Result<AgentState, AgentError> {
        let before = state.step_count();
        let state = next.run(state).await?; // the inner layers, then the step itself
        let tools: Vec<String> = state
            .current_step()
            .map(|step| {
                step.tool_executions()
                    .iter()
                    .map(|e| e.name().to_owned())
                    .collect()
            })
            .unwrap_or_default();
        let line = format!(
            "step {} -> tools {tools:?}, stopping: {}",
            before + 1,
            state.is_stopping()
        );
        println!("{line}");
        if let Ok(mut lines) = self.lines.lock() {
            lines.push(line);
        }
        Ok(state)
    }
}

/// Skips the step once the execution has made `max` tool calls.
struct ToolBudget {
    max: usize,
}

#[async_trait]
impl StateProcessor for ToolBudget {
    fn name(&self) -> &str {
        "tool_budget"
    }

    async fn process(&self, state: AgentState, next: Next<'_>) -> Result<AgentState, AgentError> {
        let calls: usize = state.steps().map(|s| s.tool_executions().len()).sum();
        if calls >= self.max {
            println!(
                "tool budget of {} calls spent: the step is skipped",
                self.max
            );
            return Ok(state); // not calling `next`: a guard
        }
        next.run(state).await
    }
}

#[derive(Deserialize, JsonSchema)]
struct PageArgs {
    /// Which page to fetch.
    page: u32,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let fetch = FunctionTool::new(
        "fetch_page",
        "Fetches one page of results",
        |args: PageArgs| async move { Ok::<_, ToolError>(format!("page {} of 10", args.page)) },
    );
    let page = |n: u32| {
        InferenceResponse::with_tool_calls([ToolCall::new(
            format!("c{n}"),
            "fetch_page",
            json!({ "page": n }),
        )])
    };
    // A model that would page forever.
    let model = ScriptedModel::new([page(1), page(2), page(3), page(4)]);
    let lines = Arc::new(Mutex::new(Vec::new()));
    let agent = AgentBuilder::new()
        .with_model(model)
        .with_tool(fetch)
        .with_separated_tool_trace(true)
        .with_answer_on_stop(AnswerOnStop::Notice)
        .with_processor(StepLog {
            lines: Arc::clone(&lines),
        }) // outermost: first in, last out
        .with_processor(ToolBudget { max: 2 })
        .build()?;

    let done = agent
        .execute(AgentState::new().with_user_message("Read all the pages."))
        .await?;
    println!("stop reason: {:?}", done.stop_reason());
    println!(
        "answer: {}",
        done.final_response().ok_or("no answer")?.text()
    );

    let logged = lines.lock().map_err(|_| "log poisoned")?.len();
    if done.stop_reason() != Some(StopReason::Guard) || logged != 3 {
        return Err(format!(
            "expected a guard stop after 3 logged steps, got {:?} after {logged}",
            done.stop_reason()
        )
        .into());
    }
    Ok(())
}
