//! A conversation stored in SQLite: every step is committed, and a second "process" (a fresh
//! agent on a reopened database) continues the conversation where the first left it.
//!
//! Run with `cargo run --example sqlite_session`. Needs nothing: the database is a file in the
//! system's temporary directory, deleted at the end. See docs/sessions.md (Postgres too).

#![allow(clippy::print_stdout)]

use agents::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct ItemArgs {
    /// What to add to the list.
    item: String,
}

/// The agent each "process" builds: same tools, its own scripted replies.
fn agent(replies: Vec<InferenceResponse>) -> Result<Agent, BuildError> {
    let add = FunctionTool::new(
        "add_to_list",
        "Adds an item to the shopping list",
        |args: ItemArgs| async move { Ok::<_, ToolError>(format!("added {}", args.item)) },
    );
    AgentBuilder::new()
        .with_model(ScriptedModel::new(replies))
        .with_tool(add)
        .with_separated_tool_trace(true)
        .build()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::temp_dir().join(format!("agents-example-{}.db", std::process::id()));

    // First process: one turn with a tool call, committed step by step.
    {
        let store = SqliteSessionStore::open(&path).await?;
        let first = agent(vec![
            InferenceResponse::with_tool_calls([ToolCall::new(
                "c1",
                "add_to_list",
                json!({"item": "milk"}),
            )]),
            InferenceResponse::text("Added milk to your list."),
        ])?;
        let state = first
            .session(&store, "groceries")
            .send("Put milk on my list.")
            .await?;
        println!(
            "first process: {}",
            state.final_response().ok_or("no answer")?.text()
        );
    }

    // Second process: a new agent, the database reopened; the conversation continues.
    let store = SqliteSessionStore::open(&path).await?;
    let second = agent(vec![InferenceResponse::text("Your list has milk on it.")])?;
    let state = second
        .session(&store, "groceries")
        .send("What is on my list?")
        .await?;
    println!(
        "second process: {}",
        state.final_response().ok_or("no answer")?.text()
    );
    println!(
        "\nstored conversation:\n{}",
        state.messages().to_transcript()
    );

    // Both turns are there: two questions, two answers.
    let kept = state.messages().len();
    drop(store);
    let _ = std::fs::remove_file(&path);
    if kept != 4 {
        return Err(format!("expected 4 stored messages, found {kept}").into());
    }
    Ok(())
}
