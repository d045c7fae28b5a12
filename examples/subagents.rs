//! Subagents: the parent hands a task to a `researcher` child and gets back only its answer.
//!
//! Run with `cargo run --example subagents`.

#![allow(clippy::print_stdout)]

use agents::prelude::*;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The child inherits the parent's model, so one script serves both, in call order:
    // parent spawns -> child answers -> parent answers.
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([ToolCall::new(
            "call_1",
            "spawn_subagent",
            json!({"subagent": "researcher", "prompt": "Find the boiling point of water at sea level."}),
        )]),
        InferenceResponse::text("100 °C at 1 atm."),
        InferenceResponse::text("Water boils at 100 °C at sea level (my researcher checked)."),
    ]);

    let researcher = SubagentDefinition::new(
        "researcher",
        "Answers factual questions carefully",
        "You research one question and answer in one sentence.",
    );

    let agent = AgentBuilder::new()
        .with_model(model)
        .with_capability(UseSubagents::new([researcher]).with_max_depth(2))
        // Listeners (and tool hooks) are inherited: child events carry the parent's id.
        .on_event(|event| {
            if let Some(parent) = &event.source().parent_agent_id {
                println!(
                    "  [child of {}] {}",
                    &parent[..8.min(parent.len())],
                    event.name()
                );
            }
        })
        .build()?;

    let done = agent
        .execute(AgentState::new().with_user_message("At what temperature does water boil?"))
        .await?;
    println!(
        "answer: {}",
        done.final_response().map(|m| m.text()).unwrap_or_default()
    );
    Ok(())
}
