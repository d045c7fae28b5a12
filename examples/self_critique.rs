//! Self-critique: a critic model reviews the final answer; a rejection sends the agent back
//! for one more try with the critique, bounded by `with_max_iterations`.
//!
//! Run with `cargo run --example self_critique`.

#![allow(clippy::print_stdout)]

use agents::prelude::*;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = ScriptedModel::new([
        InferenceResponse::text("The capital of Australia is Sydney."),
        InferenceResponse::text("The capital of Australia is Canberra."),
    ]);
    // The critic answers with a JSON verdict.
    let critic = ScriptedModel::new([InferenceResponse::text(
        json!({"approved": false, "feedback": "Sydney is not the capital; check again."})
            .to_string(),
    )]);

    let agent = AgentBuilder::new()
        .with_model(model.clone())
        .with_capability(UseSelfCritique::new(critic).with_max_iterations(1))
        .with_separated_tool_trace(true)
        .build()?;
    let done = agent
        .execute(AgentState::new().with_user_message("What is the capital of Australia?"))
        .await?;

    println!("what the model saw on its second try:");
    println!("{}", model.requests()[1].messages.to_transcript());
    println!("persisted:\n{}", done.messages().to_transcript());
    Ok(())
}
