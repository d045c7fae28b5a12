//! Summarization: old messages move to the buffer, the buffer becomes a summary.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::Arc;

use agents_core::testing::ScriptedDriver;
use agents_core::{Agent, AgentState, BUFFER_SECTION, SUMMARY_SECTION};
use agents_processing::{
    AppendContextMetadata, AppendFinalResponse, MoveMessagesToBuffer, StateProcessor,
    StateProcessors, SummarizeBuffer, CONTEXT_METADATA_KEY,
};
use inference::{InferenceError, InferenceResponse, ScriptedModel};
use messages::{Message, Role, ToolCall};

fn long_history() -> AgentState {
    let mut state = AgentState::new();
    for i in 0..10 {
        let messages = state.messages();
        state = state.with_messages(
            messages
                .appended(Message::user(format!(
                    "question {i}: {}",
                    "words ".repeat(40)
                )))
                .appended(Message::assistant(format!(
                    "answer {i}: {}",
                    "words ".repeat(40)
                ))),
        );
    }
    state
}

fn chain(summarizer: ScriptedModel, move_at: usize, summarize_at: usize) -> StateProcessors {
    // Outermost first: summarization runs after messages were moved (post-logic runs inward out).
    StateProcessors::new([
        Arc::new(SummarizeBuffer::new(summarizer, summarize_at)) as Arc<dyn StateProcessor>,
        Arc::new(MoveMessagesToBuffer::new(move_at)),
        Arc::new(AppendFinalResponse::new()),
    ])
}

#[tokio::test]
async fn old_messages_move_to_the_buffer_and_become_a_summary() {
    let summarizer = ScriptedModel::new([InferenceResponse::text(
        "The user asked ten questions about words.",
    )]);
    let agent = Agent::new(ScriptedDriver::new([InferenceResponse::text(
        "final answer",
    )]))
    .with_processors(chain(summarizer.clone(), 300, 200));
    let done = agent
        .execute(long_history().with_user_message("one more"))
        .await
        .unwrap();

    let kept = done.messages();
    assert!(kept.len() < 22, "messages were trimmed: {}", kept.len());
    assert_eq!(kept.last().unwrap().text(), "final answer");
    assert!(
        done.store().section(BUFFER_SECTION).is_empty(),
        "buffer summarized and cleared"
    );
    let summary = done.store().section(SUMMARY_SECTION).messages();
    assert_eq!(summary.len(), 1);
    assert_eq!(summary.get(0).unwrap().role(), Role::System);
    assert!(summary
        .get(0)
        .unwrap()
        .text()
        .contains("ten questions about words"));

    // The summarizer saw the moved messages, oldest first.
    let request = summarizer.last_request().unwrap();
    let prompt = request.messages.last().unwrap().text();
    assert!(prompt.contains("question 0"), "{prompt}");
    assert_eq!(request.max_tokens, Some(512));

    // The next inference sees summary first, then the kept messages.
    let context = done.messages_for_inference();
    assert_eq!(context.first().unwrap().role(), Role::System);
    assert_eq!(context.len(), kept.len() + 1);
}

#[tokio::test]
async fn a_failing_summarizer_keeps_the_buffer() {
    let summarizer = ScriptedModel::from_results([Err(InferenceError::Timeout {
        after: std::time::Duration::from_secs(30),
    })]);
    let agent = Agent::new(ScriptedDriver::new([InferenceResponse::text("ok")]))
        .with_processors(chain(summarizer, 300, 200));
    let done = agent
        .execute(long_history().with_user_message("more"))
        .await
        .unwrap();
    assert!(
        !done.store().section(BUFFER_SECTION).is_empty(),
        "nothing lost"
    );
    assert!(done.store().section(SUMMARY_SECTION).is_empty());
}

#[tokio::test]
async fn moving_never_splits_a_tool_call_from_its_result() {
    let state = AgentState::new().with_messages(vec![
        Message::user(format!("q {}", "x ".repeat(200))),
        Message::assistant_tool_calls([ToolCall::new("c1", "t", serde_json::json!({}))]),
        Message::tool_result("c1", "t", "y ".repeat(200)),
        Message::assistant("short answer"),
    ]);
    let agent = Agent::new(ScriptedDriver::new([InferenceResponse::text("done")])).with_processors(
        StateProcessors::new([
            Arc::new(MoveMessagesToBuffer::new(120)) as Arc<dyn StateProcessor>,
            Arc::new(AppendFinalResponse::new()),
        ]),
    );
    let done = agent
        .execute(state.with_user_message("next"))
        .await
        .unwrap();
    let first_kept = done.messages().first().unwrap().clone();
    assert_ne!(
        first_kept.role(),
        Role::Tool,
        "kept part must not start with an orphan tool result"
    );
    let buffer = done.store().section(BUFFER_SECTION).messages();
    if buffer.iter().any(|m| m.has_tool_calls()) {
        assert!(
            buffer.iter().any(|m| m.role() == Role::Tool),
            "call and result moved together"
        );
    }
}

#[tokio::test]
async fn context_metadata_is_shown_once_per_change() {
    let agent = Agent::new(ScriptedDriver::new([
        InferenceResponse::text("first"),
        InferenceResponse::text("second"),
        InferenceResponse::text("third"),
    ]))
    .with_processors(StateProcessors::new([
        Arc::new(AppendFinalResponse::new()) as Arc<dyn StateProcessor>,
        Arc::new(AppendContextMetadata),
    ]));
    let state = AgentState::new()
        .with_metadata("customer", "ACME")
        .with_user_message("1");
    let one = agent.execute(state).await.unwrap();
    let two = agent.execute(one.with_user_message("2")).await.unwrap();
    let three = agent
        .execute(
            two.with_metadata("customer", "Globex")
                .with_user_message("3"),
        )
        .await
        .unwrap();
    let notes: Vec<String> = three
        .messages()
        .iter()
        .filter(|m| m.metadata().contains_key(CONTEXT_METADATA_KEY))
        .map(|m| m.text())
        .collect();
    assert_eq!(notes.len(), 2, "once for ACME, once for Globex: {notes:?}");
    assert!(notes[0].contains("ACME") && notes[1].contains("Globex"));
    let texts: Vec<String> = three.messages().iter().map(|m| m.text()).collect();
    let acme = texts.iter().position(|t| t.contains("ACME")).unwrap();
    assert_eq!(texts[acme + 1], "first", "the note precedes the answer");
}
