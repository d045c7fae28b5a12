//! Storage grows with the conversation, not with steps × history.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    missing_docs
)]

use agents_core::testing::ScriptedDriver;
use agents_core::{
    Agent, AgentStatus, ContinuationCriteria, FunctionTool, StepsLimit, ToolCallPresenceCheck,
};
use agents_sessions::{AgentSessionExt, SqliteSessionStore};
use inference::InferenceResponse;
use messages::ToolCall;
use serde_json::json;
use sqlx::Row;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Query {
    q: String,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_step_session_stores_at_most_twice_its_final_document() {
    const STEPS: usize = 1000;
    let mut replies: Vec<InferenceResponse> = (0..STEPS - 1)
        .map(|i| {
            InferenceResponse::with_tool_calls([ToolCall::new(
                format!("call_{i}"),
                "lookup",
                json!({"q": format!("question number {i}")}),
            )])
        })
        .collect();
    replies.push(InferenceResponse::text("done"));
    let lookup = FunctionTool::new("lookup", "Looks up.", |args: Query| async move {
        Ok::<_, String>(format!("the answer to {} is 42", args.q))
    });
    let agent = Agent::new(ScriptedDriver::new(replies))
        .with_tool(lookup)
        .with_processors(agents_processing::standard_processors(
            agents_processing::TraceRetention::Ephemeral,
        ))
        .with_criteria(
            ContinuationCriteria::new()
                .with(ToolCallPresenceCheck::new())
                .with(StepsLimit::new(STEPS + 10)),
        );
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteSessionStore::open(dir.path().join("s.db"))
        .await
        .unwrap();
    let state = agent.session(&store, "long").send("go").await.unwrap();
    assert_eq!(state.status(), AgentStatus::Completed);
    assert_eq!(state.step_count(), STEPS);

    let document = state.to_json().unwrap().len() as i64;
    let mut stored = 0i64;
    for table in [
        "SELECT COALESCE(SUM(LENGTH(body) + LENGTH(checksum)), 0) FROM session_messages",
        "SELECT COALESCE(SUM(LENGTH(body) + LENGTH(checksum)), 0) FROM session_steps",
        "SELECT COALESCE(SUM(LENGTH(body) + LENGTH(checksum) + LENGTH(commit_id)), 0) FROM session_heads",
    ] {
        let bytes: i64 = sqlx::query(table)
            .fetch_one(store.pool())
            .await
            .unwrap()
            .get(0);
        eprintln!("{table}: {bytes} bytes");
        stored += bytes;
    }
    eprintln!("final document {document} bytes, rows {stored} bytes");
    assert!(
        stored <= 2 * document,
        "rows {stored} bytes > 2 x the final document ({document} bytes)"
    );
}
