//! A multi-turn chat in separated mode: each turn is one execution; the persistent
//! conversation keeps only the user's messages and the answers, while each turn's tool calls
//! and results live in the execution buffer during the turn and in the step executions after.
//!
//! Run with `cargo run --example chat_loop`. Needs nothing (a scripted model). To chat with a
//! real model, build the agent with `OpenAiCompatible::from_env()?` instead.

#![allow(clippy::print_stdout)]

use agents::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct CityArgs {
    /// The city to look up.
    city: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let weather = FunctionTool::new(
        "get_weather",
        "Current weather",
        |args: CityArgs| async move {
            let report = match args.city.as_str() {
                "Paris" => "22°C, sunny",
                "Berlin" => "15°C, rain",
                _ => "unknown",
            };
            Ok::<_, ToolError>(format!("{}: {report}", args.city))
        },
    );
    let call = |id: &str, city: &str| {
        InferenceResponse::with_tool_calls([ToolCall::new(
            id,
            "get_weather",
            json!({ "city": city }),
        )])
    };
    let model = ScriptedModel::new([
        call("c1", "Paris"),
        InferenceResponse::text("Paris: 22°C and sunny."),
        call("c2", "Berlin"),
        InferenceResponse::text("Berlin: 15°C with rain."),
        InferenceResponse::text("Paris is warmer, by 7°C."),
    ]);
    let agent = AgentBuilder::new()
        .with_model(model)
        .with_tool(weather)
        .with_separated_tool_trace(true)
        .build()?;

    let mut state = AgentState::new();
    for question in [
        "What is the weather in Paris?",
        "And in Berlin?",
        "Which of the two is warmer?",
    ] {
        println!("you: {question}");
        state = agent.execute(state.with_user_message(question)).await?;
        let answer = state
            .final_response()
            .ok_or("the turn ended without an answer")?;
        println!("agent: {}", answer.text());
        println!(
            "  (this turn: {} steps, tools: {:?})",
            state.step_executions().len(),
            state
                .step_executions()
                .steps()
                .flat_map(|s| s
                    .tool_executions()
                    .iter()
                    .map(|e| e.name().to_owned())
                    .collect::<Vec<_>>())
                .collect::<Vec<_>>()
        );
    }

    println!(
        "\npersisted conversation ({} messages):",
        state.messages().len()
    );
    print!("{}", state.messages().to_transcript());
    // Only the questions and the answers persist; the tool calls never reach `messages`.
    if state.messages().len() != 6 || state.messages().iter().any(|m| !m.tool_calls().is_empty()) {
        return Err("the persistent conversation should hold 3 questions and 3 answers".into());
    }
    if !state.store().section(EXECUTION_BUFFER_SECTION).is_empty() {
        return Err("the execution buffer is cleared when a turn ends".into());
    }
    Ok(())
}
