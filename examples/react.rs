//! The ReAct driver: the model writes Thought/Action decisions as JSON instead of native tool
//! calls; the run stops on its `final_answer` decision.
//!
//! Run with `cargo run --example react`.

#![allow(clippy::print_stdout)]

use agents::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let add = FunctionTool::new("add", "Adds two integers", |args: AddArgs| async move {
        Ok::<_, ToolError>((args.a + args.b).to_string())
    });

    // What a model following the ReAct prompt answers: one JSON decision per step.
    let model = ScriptedModel::new([
        InferenceResponse::text(
            json!({"thought": "I should add the numbers.", "type": "call_tool",
                   "tool": "add", "args": {"a": 2, "b": 40}})
            .to_string(),
        ),
        InferenceResponse::text(
            json!({"thought": "The tool said 42.", "type": "final_answer", "answer": "2 + 40 = 42"})
                .to_string(),
        ),
    ]);

    let agent = AgentBuilder::new()
        .with_react(model)
        .with_tool(add)
        .with_max_steps(5)
        .build()?;
    let done = agent
        .execute(AgentState::new().with_user_message("What is 2 + 40?"))
        .await?;

    for step in done.steps() {
        println!(
            "step {:?}:\n{}",
            step.step_type(),
            step.output_messages().to_transcript()
        );
    }
    println!(
        "answer: {}",
        done.final_response().map(|m| m.text()).unwrap_or_default()
    );
    Ok(())
}
