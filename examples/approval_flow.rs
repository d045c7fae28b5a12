//! Human approval: a call to a tool that needs a person's decision suspends the run; the
//! suspended state can be saved (JSON, or a session), shown, decided and resumed, in this
//! process or another. The approved call runs once (at most once across crashes); a rejection reaches the model.
//!
//! Run with `cargo run --example approval_flow`. Needs nothing (a scripted model).
//! See docs/approvals.md; the CLI does the same with `--require-approval` and a prompt.

#![allow(clippy::print_stdout)]

use std::sync::{Arc, Mutex};

use agents::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct PathArgs {
    /// The file to delete.
    path: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let deleted = Arc::new(Mutex::new(Vec::<String>::new()));
    let log = Arc::clone(&deleted);
    let delete = FunctionTool::new("delete_file", "Deletes a file", move |args: PathArgs| {
        let log = Arc::clone(&log);
        async move {
            log.lock()
                .map_err(|_| ToolError::failed("log poisoned"))?
                .push(args.path.clone());
            Ok::<_, ToolError>(format!("deleted {}", args.path))
        }
    });
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([
            ToolCall::new("c1", "delete_file", json!({"path": "build/"})),
            ToolCall::new("c2", "delete_file", json!({"path": "src/"})),
        ]),
        InferenceResponse::text("I deleted build/ and kept src/, as you asked."),
    ]);
    let agent = AgentBuilder::new()
        .with_model(model)
        .with_tool(delete)
        .with_approval_required(["delete_file"])
        .build()?;

    let state = agent
        .execute(AgentState::new().with_user_message("Clean up the project."))
        .await?;
    println!("status: {:?}", state.status());
    for pending in state.pending_approvals() {
        println!(
            "  waiting: {} {} ({})",
            pending.tool_name(),
            pending.arguments(),
            pending.call_id()
        );
    }

    // The suspended state is plain data: save it, show it to a person, load it anywhere.
    let saved = state.to_json()?;
    let loaded = AgentState::from_json(&saved)?;
    let decided = loaded
        .approve("c1")?
        .reject("c2", "src/ holds the code; never delete it")?;
    let done = agent.execute(decided).await?;

    println!(
        "answer: {}",
        done.final_response().ok_or("no answer")?.text()
    );
    let ran = deleted.lock().map_err(|_| "log poisoned")?.clone();
    println!("deleted: {ran:?}");
    if ran != ["build/"] || done.status() != AgentStatus::Completed {
        return Err("only the approved call should have run, once".into());
    }
    Ok(())
}
