//! What the model sees at every step of a three-step run, in both trace modes.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agents_core::testing::ScriptedDriver;
use agents_core::{
    Agent, AgentState, CachedContext, ContinuationCriteria, FunctionTool, StepsLimit,
    ToolCallPresenceCheck, ToolError,
};
use agents_processing::{standard_processors, TraceRetention};
use inference::InferenceResponse;
use messages::{Message, ToolCall};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct Expr {
    expression: String,
}

/// Runs a three-step execution and a one-step follow-up turn; returns the transcript of every
/// step's input (the last one is the next turn's) and the first execution's persisted messages.
async fn run(retention: TraceRetention) -> (Vec<String>, String) {
    let calc = FunctionTool::new(
        "calculate",
        "Evaluate an arithmetic expression",
        |e: Expr| async move {
            match e.expression.as_str() {
                "21*2" => Ok::<_, ToolError>("42".to_owned()),
                "42+8" => Ok("50".to_owned()),
                other => Err(ToolError::failed(format!("cannot evaluate {other}"))),
            }
        },
    );
    let driver = ScriptedDriver::new([
        InferenceResponse::with_tool_calls([ToolCall::new(
            "call_1",
            "calculate",
            json!({"expression": "21*2"}),
        )])
        .with_content("First I multiply."),
        InferenceResponse::with_tool_calls([ToolCall::new(
            "call_2",
            "calculate",
            json!({"expression": "42+8"}),
        )]),
        InferenceResponse::text("21*2+8 = 50."),
        InferenceResponse::text("You're welcome."),
    ]);
    let agent = Agent::new(driver.clone())
        .with_tool(calc)
        .with_criteria(
            ContinuationCriteria::new()
                .with(StepsLimit::new(5))
                .with(ToolCallPresenceCheck::new()),
        )
        .with_processors(standard_processors(retention))
        .with_cached_context(
            CachedContext::new()
                .with_messages(vec![Message::system("You are a careful calculator.")]),
        );
    let earlier = AgentState::new().with_messages(vec![
        Message::user("Hi"),
        Message::assistant("Hello! What shall I compute?"),
    ]);
    let done = agent
        .execute(earlier.with_user_message("What is 21*2+8?"))
        .await
        .unwrap();
    // A second turn: its context shows what persisted from the first.
    agent
        .execute(done.clone().with_user_message("Thanks!"))
        .await
        .unwrap();
    let inputs = driver.inputs().iter().map(|m| m.to_transcript()).collect();
    (inputs, done.messages().to_transcript())
}

#[tokio::test]
async fn separated_mode_context_at_every_step() {
    let (inputs, persisted) = run(TraceRetention::Ephemeral).await;
    for (i, input) in inputs.iter().enumerate() {
        insta::assert_snapshot!(format!("separated_step_{}", i + 1), input);
    }
    insta::assert_snapshot!("separated_persisted", persisted);
}

#[tokio::test]
async fn legacy_mode_context_at_every_step() {
    let (inputs, persisted) = run(TraceRetention::Full).await;
    for (i, input) in inputs.iter().enumerate() {
        insta::assert_snapshot!(format!("legacy_step_{}", i + 1), input);
    }
    insta::assert_snapshot!("legacy_persisted", persisted);
}

#[tokio::test]
async fn digest_mode_persisted_conversation() {
    let (_, persisted) = run(TraceRetention::digest(200)).await;
    insta::assert_snapshot!("digest_persisted", persisted);
}

/// Observation masking keeping one execution: three turns that each read a file; what the
/// model sees at the third turn's request, and what persists after it.
#[tokio::test]
async fn masked_mode_conversation_after_three_turns() {
    #[derive(Deserialize, JsonSchema)]
    struct Path {
        path: String,
    }
    let read = FunctionTool::new("read_file", "Read a file", |p: Path| async move {
        Ok::<_, ToolError>(format!(
            "contents of {}: {}",
            p.path,
            "lorem ipsum ".repeat(8)
        ))
    });
    let turn = |id: &str, path: &str, answer: &str| {
        [
            InferenceResponse::with_tool_calls([ToolCall::new(
                id,
                "read_file",
                json!({ "path": path }),
            )]),
            InferenceResponse::text(answer),
        ]
    };
    let driver = ScriptedDriver::new(
        turn("call_1", "a.txt", "a.txt says lorem.")
            .into_iter()
            .chain(turn("call_2", "b.txt", "b.txt says lorem too."))
            .chain(turn("call_3", "c.txt", "So does c.txt.")),
    );
    let agent = Agent::new(driver.clone())
        .with_tool(read)
        .with_criteria(
            ContinuationCriteria::new()
                .with(StepsLimit::new(5))
                .with(ToolCallPresenceCheck::new()),
        )
        .with_processors(standard_processors(TraceRetention::masked(1)));
    let mut state = AgentState::new();
    for question in ["What is in a.txt?", "And b.txt?", "And c.txt?"] {
        state = agent
            .execute(state.with_user_message(question))
            .await
            .unwrap();
    }
    let inputs = driver.inputs();
    // The third turn's first request: a.txt's output is masked, b.txt's (the last execution)
    // is still there.
    insta::assert_snapshot!("masked_third_turn_request", inputs[4].to_transcript());
    insta::assert_snapshot!("masked_persisted", state.messages().to_transcript());
}
