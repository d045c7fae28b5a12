//! Summarization: old messages move to a buffer and a model condenses them into a summary.
//!
//! Run with `cargo run --example summarization`.

#![allow(clippy::print_stdout)]

use agents::core::{BUFFER_SECTION, SUMMARY_SECTION};
use agents::prelude::*;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = ScriptedModel::new([InferenceResponse::text("Noted.")]);
    let summarizer = ScriptedModel::new([InferenceResponse::text(
        "The user described their week in detail.",
    )]);

    let agent = AgentBuilder::new()
        .with_model(model)
        .with_capability(
            UseSummarization::new(summarizer)
                .with_max_message_tokens(50) // tiny budgets to trigger it in one turn
                .with_max_buffer_tokens(20),
        )
        .build()?;

    // A long history, then one more turn.
    let mut state = AgentState::new();
    for day in ["Monday", "Tuesday", "Wednesday", "Thursday"] {
        state = state.with_user_message(format!("On {day} I worked on the garden for hours."));
    }
    let done = agent
        .execute(state.with_user_message("Remember all that."))
        .await?;

    println!("messages kept: {}", done.messages().len());
    println!(
        "buffer: {} messages",
        done.store().section(BUFFER_SECTION).len()
    );
    println!(
        "summary:\n{}",
        done.store()
            .section(SUMMARY_SECTION)
            .messages()
            .to_transcript()
    );
    Ok(())
}
