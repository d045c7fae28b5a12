//! Testing an agent without a network: script the model, run, then check what it was sent.
//!
//! In a test you would typically snapshot the transcript with `insta`:
//!
//! ```ignore
//! insta::assert_snapshot!(done.messages().to_transcript());
//! insta::assert_json_snapshot!(model.requests()[1].messages, { "[]._metadata" => "[meta]" });
//! ```
//!
//! Run with `cargo run --example testing_with_scripted_model`.

#![allow(clippy::print_stdout)]

use agents::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Order {
    id: u32,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let lookup = FunctionTool::new(
        "order_status",
        "Status of an order",
        |o: Order| async move { Ok::<_, ToolError>(format!("order {} shipped", o.id)) },
    );
    // Clones share the script and the request record: keep one, give one to the builder.
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([ToolCall::new("c1", "order_status", json!({"id": 7}))]),
        InferenceResponse::text("Order 7 has shipped."),
    ]);
    let agent = AgentBuilder::new()
        .with_model(model.clone())
        .with_tool(lookup)
        .with_system_prompt("You are a support agent.")
        .build()?;

    let done = agent
        .execute(AgentState::new().with_user_message("Where is order 7?"))
        .await?;

    // What a test asserts: the outcome, and what the model was actually sent.
    assert_eq!(done.status(), AgentStatus::Completed);
    let second = &model.requests()[1];
    let tool_result = second.messages.iter().find(|m| m.role() == Role::Tool);
    assert_eq!(
        tool_result.map(|m| m.text()).as_deref(),
        Some("order 7 shipped")
    );
    assert_eq!(model.remaining(), 0, "the script was used up");

    println!("transcript:\n{}", done.messages().to_transcript());
    Ok(())
}
