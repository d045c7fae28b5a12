//! Legacy vs separated tool trace: the same run, and what persists in `messages` afterwards.
//!
//! Run with `cargo run --example separated_trace`.

#![allow(clippy::print_stdout)]

use agents::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct FileArgs {
    path: String,
}

fn script() -> ScriptedModel {
    ScriptedModel::new([
        InferenceResponse::with_tool_calls([ToolCall::new(
            "call_1",
            "read",
            json!({"path": "notes.txt"}),
        )]),
        InferenceResponse::text("The notes say: buy milk."),
    ])
}

async fn run(separated: bool) -> Result<AgentState, Box<dyn std::error::Error>> {
    let read = FunctionTool::new("read", "Reads a file", |args: FileArgs| async move {
        // A big tool result: exactly what you do not want to resend forever.
        Ok::<_, ToolError>(format!(
            "{}: buy milk\n{}",
            args.path,
            "(padding) ".repeat(200)
        ))
    });
    let agent = AgentBuilder::new()
        .with_model(script())
        .with_tool(read)
        .with_separated_tool_trace(separated)
        .build()?;
    Ok(agent
        .execute(AgentState::new().with_user_message("What do my notes say?"))
        .await?)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    for separated in [false, true] {
        let done = run(separated).await?;
        let chars: usize = done.messages().iter().map(|m| m.text().len()).sum();
        println!(
            "{}: {} persisted messages ({} chars); execution_buffer empty: {}; steps recorded: {}",
            if separated { "separated" } else { "legacy   " },
            done.messages().len(),
            chars,
            done.store().section(EXECUTION_BUFFER_SECTION).is_empty(),
            done.step_executions().len(),
        );
    }
    Ok(())
}
