//! Watching a run: `iterate` yields the state after every step; `on_event` sees every event.
//!
//! Run with `cargo run --example streaming_events`.

#![allow(clippy::print_stdout)]

use agents::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Query {
    q: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let search = FunctionTool::new("search", "Searches the web", |args: Query| async move {
        Ok::<_, ToolError>(format!("3 results for '{}'", args.q))
    });
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([ToolCall::new(
            "c1",
            "search",
            json!({"q": "rust agents"}),
        )]),
        InferenceResponse::text("Found 3 results."),
    ]);

    let agent = AgentBuilder::new()
        .with_model(model)
        .with_tool(search)
        .on_event(|event| println!("  event: {} (step {})", event.name(), event.step_number()))
        .build()?;

    let mut states =
        Box::pin(agent.iterate(AgentState::new().with_user_message("Search rust agents")));
    while let Some(state) = states.next().await {
        let state = state?;
        println!(
            "state after step {}: status {:?}, last step {:?}",
            state.step_count(),
            state.status(),
            state.steps().last().map(|s| s.step_type()),
        );
    }
    Ok(())
}
