#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! The one builder: its defaults are `Agent::new`'s, and `build` says what to fix.

use std::time::Duration;

use agents_core::testing::ScriptedDriver;
use agents_core::{
    Agent, AgentBuilder, AgentState, AgentStatus, BuildError, ErrorPolicy, FunctionTool,
    StopReason, ToolError,
};
use inference::InferenceResponse;
use messages::ToolCall;
use serde_json::json;

fn echo(name: &str) -> FunctionTool {
    FunctionTool::new(name, "Echoes", |args: serde_json::Value| async move {
        Ok::<_, ToolError>(args.to_string())
    })
}

#[test]
fn agent_new_is_the_builder_with_nothing_changed() {
    let built = AgentBuilder::new()
        .with_driver(ScriptedDriver::new([]))
        .build()
        .unwrap();
    let new = Agent::new(ScriptedDriver::new([]));
    for agent in [&built, &new] {
        assert_eq!(
            agent.criteria().names(),
            ["StepsLimit", "EmptyResponseCheck", "ToolCallPresenceCheck"]
        );
        assert_eq!(*agent.error_policy(), ErrorPolicy::retry_tool_errors(3));
        assert_eq!(
            agent.processors().names(),
            ["AppendStepMessages", "AppendContextMetadata"]
        );
        assert_eq!(agent.name(), "agent");
    }
}

#[test]
fn build_says_what_to_fix() {
    assert_eq!(
        AgentBuilder::new().build().unwrap_err(),
        BuildError::MissingDriver
    );
    let zero = AgentBuilder::new()
        .with_driver(ScriptedDriver::new([]))
        .with_max_steps(0)
        .build()
        .unwrap_err();
    assert_eq!(zero, BuildError::ZeroStepLimit);
    assert!(zero.to_string().contains("with_max_steps(1)"), "{zero}");
    let twice = AgentBuilder::new()
        .with_driver(ScriptedDriver::new([]))
        .with_tool(echo("lookup"))
        .with_tool(echo("other"))
        .with_tool(echo("lookup"))
        .build()
        .unwrap_err();
    assert_eq!(
        twice,
        BuildError::DuplicateTool {
            name: "lookup".into()
        }
    );
}

/// What the builder is given is what the agent does: its limits, its own processors around
/// the defaults, its criteria after the standard ones, its listeners.
#[tokio::test]
async fn an_agent_does_what_its_builder_was_given() {
    let calls = (1..=5).map(|i| {
        InferenceResponse::with_tool_calls([ToolCall::new(
            format!("call_{i}"),
            "lookup",
            json!({ "n": i }),
        )])
    });
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&seen);
    let agent = AgentBuilder::new()
        .with_driver(ScriptedDriver::new(calls))
        .with_tool(echo("lookup"))
        .with_max_steps(3)
        .with_time_limit(Duration::from_secs(60))
        .with_name("looker")
        .on_event(move |_| {
            counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        })
        .build()
        .unwrap();
    assert_eq!(agent.name(), "looker");
    assert_eq!(
        agent.criteria().names(),
        [
            "StepsLimit",
            "EmptyResponseCheck",
            "ExecutionTimeLimit",
            "ToolCallPresenceCheck"
        ]
    );
    let done = agent
        .execute(AgentState::new().with_user_message("look"))
        .await
        .unwrap();
    assert_eq!(done.status(), AgentStatus::Completed);
    assert_eq!(done.stop_reason(), Some(StopReason::StepsLimit));
    assert_eq!(done.step_count(), 3);
    // Every call and its result persisted (the default processors).
    assert_eq!(done.messages().len(), 1 + 3 * 2);
    assert!(seen.load(std::sync::atomic::Ordering::Relaxed) > 0);
}
