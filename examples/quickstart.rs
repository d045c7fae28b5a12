//! Quickstart: one tool, a scripted model, the separated tool trace.
//!
//! Run with `cargo run --example quickstart`. Swap `ScriptedModel` for
//! `OpenAiCompatible::from_env()?` or `Anthropic::from_env()?` to talk to a real model.

#![allow(clippy::print_stdout)]

use agents::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct WeatherArgs {
    /// The city to look up.
    city: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A tool is a typed async function; its JSON Schema comes from `WeatherArgs`.
    let weather = FunctionTool::new(
        "get_weather",
        "Current weather for a city",
        |args: WeatherArgs| async move {
            Ok::<_, ToolError>(format!("22°C and sunny in {}", args.city))
        },
    );

    // The scripted model answers in order: first a tool call, then the final text.
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([ToolCall::new(
            "call_1",
            "get_weather",
            json!({"city": "Paris"}),
        )]),
        InferenceResponse::text("It is 22°C and sunny in Paris."),
    ]);

    let agent = AgentBuilder::new()
        .with_model(model)
        .with_tool(weather)
        .with_system_prompt("You are a helpful assistant.")
        .with_separated_tool_trace(true) // tool calls/results stay out of `messages`
        .with_max_steps(10)
        .build()?;

    let done = agent
        .execute(AgentState::new().with_user_message("What's the weather in Paris?"))
        .await?;

    println!("status: {:?}, steps: {}", done.status(), done.step_count());
    println!(
        "persisted conversation:\n{}",
        done.messages().to_transcript()
    );
    Ok(())
}
