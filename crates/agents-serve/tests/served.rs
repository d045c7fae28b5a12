//! `ServedAgent`, the turns both servers run: the bounds (one turn per session, at most
//! `max_runs`), refusals of bad prompts, a cancelled turn that leaves the conversation
//! usable, and decisions checked against the call's fingerprint.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::Duration;

use agents_serve::testing;
use agents_serve::{Outcome, ServedAgent, TurnError, Verdict};
use agents_sessions::{MemorySessionStore, SessionStore};
use inference::InferenceResponse;
use tokio_util::sync::CancellationToken;

fn served(
    responses: Vec<InferenceResponse>,
    dir: &std::path::Path,
    pause: Duration,
) -> ServedAgent<MemorySessionStore> {
    ServedAgent::new(
        testing::scripted_agent(responses, dir, pause),
        MemorySessionStore::new(),
    )
}

#[tokio::test]
async fn one_turn_per_session_and_at_most_max_runs() {
    let dir = tempfile::tempdir().unwrap();
    let served = served(
        vec![
            InferenceResponse::text("one"),
            InferenceResponse::text("two"),
        ],
        dir.path(),
        Duration::ZERO,
    )
    .with_max_runs(1);
    let first = served
        .start_ask("s1", "hello", CancellationToken::new(), |_| {})
        .await
        .unwrap();
    assert!(served.is_running("s1"));
    let again = served
        .start_ask("s1", "hello", CancellationToken::new(), |_| {})
        .await;
    assert!(
        matches!(again, Err(TurnError::AlreadyRunning { .. })),
        "{:?}",
        again.err()
    );
    let other = served
        .start_ask("s2", "hello", CancellationToken::new(), |_| {})
        .await;
    assert!(
        matches!(other, Err(TurnError::Busy { max: 1 })),
        "{:?}",
        other.err()
    );
    let turn = first.await.unwrap();
    assert_eq!(turn.outcome, Outcome::Answered { text: "one".into() });
    assert_eq!(served.running(), 0, "the place is given back");
    let turn = served
        .ask("s2", "hello", CancellationToken::new(), |_| {})
        .await
        .unwrap();
    assert_eq!(turn.outcome, Outcome::Answered { text: "two".into() });
}

#[tokio::test]
async fn bad_prompts_and_names_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let served = served(vec![], dir.path(), Duration::ZERO);
    let empty = served
        .ask("s", "  \n", CancellationToken::new(), |_| {})
        .await;
    assert!(matches!(empty, Err(TurnError::EmptyPrompt)));
    let long = "x".repeat(agents_serve::served::MAX_PROMPT_CHARS + 1);
    let long = served
        .ask("s", &long, CancellationToken::new(), |_| {})
        .await;
    assert!(matches!(long, Err(TurnError::PromptTooLong { .. })));
    for bad in [
        "../x",
        "..",
        "a/b",
        "a\\b",
        ".hidden",
        "two words",
        "<script>",
        "\"quoted\"",
        "caf\u{e9}",
        "",
    ] {
        let name = served
            .ask(bad, "hi", CancellationToken::new(), |_| {})
            .await;
        assert!(
            matches!(name, Err(TurnError::Session(_))),
            "{bad:?}: {name:?}"
        );
    }
    for good in ["mcp-0190a1b2-c3d4", "a2a:task.1", "me@work_2"] {
        agents_serve::served::validate_session(good).unwrap();
    }
    assert_eq!(served.running(), 0);
    assert!(served.store().load("s").await.unwrap().is_none());
}

#[tokio::test]
async fn a_cancelled_turn_stops_and_the_conversation_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    // Streamed a word every 200 ms: long enough to cancel in the middle.
    let served = served(
        vec![
            InferenceResponse::text("a long answer that takes a while to stream out"),
            InferenceResponse::text("back again"),
        ],
        dir.path(),
        Duration::from_millis(200),
    );
    let cancel = CancellationToken::new();
    let running = tokio::spawn({
        let served = served.clone();
        let cancel = cancel.clone();
        async move { served.ask("chat", "start", cancel, |_| {}).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(served.cancel("chat"), "the turn was running");
    let _ = cancel; // the caller's token is linked too
    let turn = running.await.unwrap().unwrap();
    assert!(
        matches!(&turn.outcome, Outcome::Stopped { reason, .. } if reason == "user_requested"),
        "{turn:?}"
    );
    assert!(!served.cancel("chat"), "nothing runs any more");
    let next = served
        .ask("chat", "are you there?", CancellationToken::new(), |_| {})
        .await
        .unwrap();
    assert_eq!(
        next.outcome,
        Outcome::Answered {
            text: "back again".into()
        }
    );
}

#[tokio::test]
async fn decisions_name_the_call_and_its_current_fingerprint() {
    let dir = tempfile::tempdir().unwrap();
    let served = served(
        vec![
            InferenceResponse::with_tool_calls([testing::write_call("call_1", "n.txt", "hi")]),
            InferenceResponse::text("done"),
        ],
        dir.path(),
        Duration::ZERO,
    );
    let turn = served
        .ask("w", "write", CancellationToken::new(), |_| {})
        .await
        .unwrap();
    let Outcome::Waiting { calls } = &turn.outcome else {
        panic!("{turn:?}")
    };
    let call = &calls[0];
    assert_eq!(
        (call.call_id.as_str(), call.tool.as_str()),
        ("call_1", "write_note")
    );

    let busy = served
        .ask("w", "hello?", CancellationToken::new(), |_| {})
        .await;
    assert!(
        matches!(busy, Err(TurnError::WaitingForApproval { .. })),
        "{busy:?}"
    );
    let stale = served
        .decide(
            "w",
            "call_1",
            "000000000000",
            Verdict::Approve,
            CancellationToken::new(),
            |_| {},
        )
        .await;
    assert!(matches!(stale, Err(TurnError::Stale { .. })), "{stale:?}");
    let unknown = served
        .decide(
            "w",
            "call_9",
            &call.fingerprint,
            Verdict::Approve,
            CancellationToken::new(),
            |_| {},
        )
        .await;
    assert!(
        matches!(unknown, Err(TurnError::NotWaiting { .. })),
        "{unknown:?}"
    );
    let missing = served
        .decide(
            "nobody",
            "call_1",
            &call.fingerprint,
            Verdict::Approve,
            CancellationToken::new(),
            |_| {},
        )
        .await;
    assert!(
        matches!(missing, Err(TurnError::NotFound { .. })),
        "{missing:?}"
    );
    assert!(
        !dir.path().join("n.txt").exists(),
        "nothing ran before the decision"
    );

    let done = served
        .decide(
            "w",
            "call_1",
            &call.fingerprint,
            Verdict::Approve,
            CancellationToken::new(),
            |_| {},
        )
        .await
        .unwrap();
    assert_eq!(
        done.outcome,
        Outcome::Answered {
            text: "done".into()
        }
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("n.txt")).unwrap(),
        "hi"
    );
    let again = served
        .decide(
            "w",
            "call_1",
            &call.fingerprint,
            Verdict::Approve,
            CancellationToken::new(),
            |_| {},
        )
        .await;
    assert!(
        matches!(again, Err(TurnError::NotWaiting { .. })),
        "decided once: {again:?}"
    );
}

/// A session another process is running (it holds the session's lease) is not run a second
/// time by the server: the turn fails at once saying who holds it, and the model is not asked.
#[tokio::test]
async fn a_session_another_runner_holds_is_refused_not_run_twice() {
    let dir = tempfile::tempdir().unwrap();
    let store = MemorySessionStore::new();
    let served = ServedAgent::new(
        testing::scripted_agent(
            vec![InferenceResponse::text("one")],
            dir.path(),
            Duration::ZERO,
        ),
        store.clone(),
    );
    // Another runner, on another host, holds s1's lease for a minute.
    testing::lease_elsewhere(&store, "s1").await.unwrap();
    let refused = served
        .ask("s1", "hello", CancellationToken::new(), |_| {})
        .await;
    let text = match refused {
        Err(error) => error.to_string(),
        Ok(turn) => format!("{:?}", turn.outcome),
    };
    assert!(
        text.contains("another process") && text.contains("elsewhere"),
        "{text}"
    );
    // The scripted model still holds its one answer: another session gets it.
    let turn = served
        .ask("s2", "hello", CancellationToken::new(), |_| {})
        .await
        .unwrap();
    assert_eq!(turn.outcome, Outcome::Answered { text: "one".into() });
}
