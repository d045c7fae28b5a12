//! A run keeps no empty list that every thread of the process shares.
//!
//! The standard library's `Arc::<[T]>::default()` and `Arc::<str>::default()` hand out one
//! static allocation: every empty list made that way, in any thread, counts on the same
//! reference count, so copying and dropping them makes every core write to one cache line. A
//! server running conversations on 16 cores spent about half of its time there (issue 35).
//! This test runs a conversation with a tool call through the builder's defaults and checks,
//! while the tool runs and after the run with its state kept, that nothing holds such a list.
//! (Its own test binary: the count is process-wide, so no other test may run beside it.)

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::{Arc, Mutex};

use agents::prelude::*;

/// How many empty `Arc<[T]>`/`Arc<str>` defaults are alive in the process.
fn shared_empty_lists() -> usize {
    let probe: Arc<[u8]> = Arc::default();
    Arc::strong_count(&probe) - 2
}

#[tokio::test(flavor = "current_thread")]
async fn a_run_keeps_no_empty_list_that_every_thread_shares(
) -> Result<(), Box<dyn std::error::Error>> {
    let seen_in_tool = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&seen_in_tool);
    let tool = FunctionTool::untyped(
        "lookup",
        "Looks something up",
        json!({"type": "object", "properties": {}}),
        move |_args: serde_json::Value, _context| {
            seen.lock().unwrap().push(shared_empty_lists());
            async { Ok::<_, ToolError>("found".to_owned()) }
        },
    );
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([ToolCall::new("call_1", "lookup", json!({}))]),
        InferenceResponse::text("It was found."),
    ]);
    let agent = AgentBuilder::new()
        .with_model(model)
        .with_tool(tool)
        .with_system_prompt("You are a helpful assistant.")
        .with_max_steps(5)
        .build()?;
    let start = AgentState::new().with_user_message("Look it up.");

    let before = shared_empty_lists();
    let done = agent.execute(start.clone()).await?;
    let after = shared_empty_lists();

    assert_eq!(done.status(), AgentStatus::Completed);
    assert_eq!(before, 0, "the built agent and its starting state");
    assert_eq!(*seen_in_tool.lock().unwrap(), vec![0], "while the tool ran");
    assert_eq!(after, 0, "after the run, its state kept");
    // The probe is right: one default `Arc<[T]>` more is seen.
    let one_more: Arc<[String]> = Arc::default();
    assert_eq!(shared_empty_lists(), 1);
    drop((one_more, done));
    Ok(())
}
