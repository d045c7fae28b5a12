//! Structured output: the model must hand over data matching a schema; a mismatch goes back
//! to it as a tool error and it retries; the accepted data lands in the state's metadata.
//!
//! Run with `cargo run --example structured_output`.

#![allow(clippy::print_stdout)]

use agents::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Debug, Deserialize, JsonSchema)]
struct Invoice {
    number: String,
    total_cents: u64,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = ScriptedModel::new([
        // First try: `total_cents` has the wrong type.
        InferenceResponse::with_tool_calls([ToolCall::new(
            "c1",
            "structured_output",
            json!({"schema": "invoice", "data": {"number": "A-17", "total_cents": "12.50"}}),
        )]),
        // The model read the error and fixed it.
        InferenceResponse::with_tool_calls([ToolCall::new(
            "c2",
            "structured_output",
            json!({"schema": "invoice", "data": {"number": "A-17", "total_cents": 1250}}),
        )]),
        InferenceResponse::text("Extracted invoice A-17."),
    ]);

    let agent = AgentBuilder::new()
        .with_model(model.clone())
        .with_capability(UseStructuredOutput::new().with_schema::<Invoice>("invoice", "An invoice"))
        .with_separated_tool_trace(true)
        .build()?;
    let done = agent
        .execute(AgentState::new().with_user_message("Invoice A-17, total 12.50 EUR"))
        .await?;

    let first_error = model.requests()[1]
        .messages
        .iter()
        .filter(|m| m.role() == Role::Tool)
        .map(|m| m.text())
        .next()
        .unwrap_or_default();
    println!("the model was told: {first_error}");
    let invoice: Option<Invoice> = UseStructuredOutput::read(&done, "invoice").transpose()?;
    if let Some(invoice) = invoice {
        println!(
            "stored: invoice {} over {} cents",
            invoice.number, invoice.total_cents
        );
    }
    Ok(())
}
