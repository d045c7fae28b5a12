//! Damaged rows, unknown formats and schema migrations, on a SQLite file (the row-level
//! checks are shared SQL, so Postgres runs the same code).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agents_core::incremental::StateEncoder;
use agents_core::AgentState;
use agents_sessions::{checksum, Commit, SessionError, SessionStore, SqliteSessionStore};

async fn commit_states(store: &dyn SessionStore, id: &str, count: usize) {
    let mut encoder = StateEncoder::new();
    let mut state = AgentState::new();
    for i in 0..count {
        state = state.with_user_message(format!("message {i}"));
        let commit = Commit {
            delta: encoder.encode(&state).unwrap(),
            commit_id: format!("c{i}"),
            title: String::new(),
            message_count: 0,
            committed_at: chrono::Utc::now(),
            lease: None,
        };
        store.write(id, i as u64, &commit).await.unwrap();
    }
}

async fn exec(store: &SqliteSessionStore, sql: &'static str, a: &str, b: &str) {
    sqlx::query(sql)
        .bind(a)
        .bind(b)
        .execute(store.pool())
        .await
        .unwrap();
}

#[tokio::test]
async fn damaged_rows_are_typed_errors_naming_session_and_version() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteSessionStore::open(dir.path().join("s.db"))
        .await
        .unwrap();
    commit_states(&store, "a", 3).await;
    commit_states(&store, "b", 2).await;

    exec(
        &store,
        "UPDATE session_messages SET body = body || $2 WHERE session_id = $1 AND position = 1",
        "a",
        " ",
    )
    .await;
    let error = store.load("a").await.unwrap_err();
    let SessionError::Corrupt {
        session,
        version,
        what,
        ..
    } = &error
    else {
        panic!("expected Corrupt, got {error}");
    };
    assert_eq!((session.as_str(), *version), ("a", 3));
    assert!(what.contains("message 1"), "{what}");
    assert!(error.to_string().contains("`a` version 3"), "{error}");
    // Version 1 does not use message 1; other sessions stay readable.
    assert!(store.load_version("a", 1).await.unwrap().is_some());
    assert_eq!(store.load("b").await.unwrap().unwrap().messages().len(), 2);

    // A truncated table.
    exec(
        &store,
        "DELETE FROM session_messages WHERE session_id = $1 AND position = $2",
        "b",
        "0",
    )
    .await;
    let error = store.load("b").await.unwrap_err();
    assert!(
        matches!(&error, SessionError::Corrupt { what, .. } if what.contains("missing")),
        "{error}"
    );

    // A head in a format this library does not read (checksum intact).
    commit_states(&store, "c", 1).await;
    let head = r#"{"version": 99}"#;
    let sum = checksum(head);
    sqlx::query("UPDATE session_heads SET body = $1, checksum = $2 WHERE session_id = 'c'")
        .bind(head)
        .bind(sum)
        .execute(store.pool())
        .await
        .unwrap();
    let error = store.load("c").await.unwrap_err();
    assert!(
        matches!(error, SessionError::UnsupportedFormat { .. }),
        "{error}"
    );
    // A row that is not JSON at all (checksum intact): Corrupt with the state error as source.
    let sum = checksum("{not json");
    sqlx::query(
        "UPDATE session_heads SET body = '{not json', checksum = $1 WHERE session_id = 'c'",
    )
    .bind(sum)
    .execute(store.pool())
    .await
    .unwrap();
    let error = store.load("c").await.unwrap_err();
    assert!(
        matches!(
            &error,
            SessionError::Corrupt {
                source: Some(_),
                ..
            }
        ),
        "{error}"
    );
}

/// The schema a database had after migration 1 (a fixture: what version 1 created).
const SCHEMA_1: [&str; 6] = [
    "CREATE TABLE agents_sessions_schema (version BIGINT PRIMARY KEY, applied_at BIGINT NOT NULL)",
    "INSERT INTO agents_sessions_schema VALUES (1, 0)",
    "CREATE TABLE sessions (id TEXT PRIMARY KEY, version BIGINT NOT NULL, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL)",
    "CREATE TABLE session_heads (session_id TEXT NOT NULL, version BIGINT NOT NULL, commit_id TEXT NOT NULL, step_count BIGINT NOT NULL, body TEXT NOT NULL, checksum TEXT NOT NULL, committed_at BIGINT NOT NULL, PRIMARY KEY (session_id, version))",
    "CREATE TABLE session_messages (session_id TEXT NOT NULL, position BIGINT NOT NULL, version BIGINT NOT NULL, body TEXT NOT NULL, checksum TEXT NOT NULL, PRIMARY KEY (session_id, position))",
    "CREATE TABLE session_steps (session_id TEXT NOT NULL, idx BIGINT NOT NULL, version BIGINT NOT NULL, body TEXT NOT NULL, checksum TEXT NOT NULL, PRIMARY KEY (session_id, idx, version))",
];

#[tokio::test]
async fn older_schemas_migrate_forward_and_newer_ones_are_refused() {
    use sqlx::Row;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    {
        let options = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(&path)
            .create_if_missing(true);
        let pool = sqlx::SqlitePool::connect_with(options).await.unwrap();
        for statement in SCHEMA_1 {
            sqlx::query(statement).execute(&pool).await.unwrap();
        }
        pool.close().await;
    }
    let store = SqliteSessionStore::open(&path).await.unwrap();
    let version: i64 = sqlx::query("SELECT MAX(version) FROM agents_sessions_schema")
        .fetch_one(store.pool())
        .await
        .unwrap()
        .get(0);
    assert_eq!(version, agents_sessions::SCHEMA_VERSION);
    commit_states(&store, "after-migration", 2).await;
    assert!(store.load("after-migration").await.unwrap().is_some());
    // Opening again is a no-op.
    drop(store);
    let store = SqliteSessionStore::open(&path).await.unwrap();
    assert!(store.load("after-migration").await.unwrap().is_some());

    sqlx::query("INSERT INTO agents_sessions_schema VALUES (99, 0)")
        .execute(store.pool())
        .await
        .unwrap();
    store.pool().close().await;
    let error = SqliteSessionStore::open(&path).await.unwrap_err();
    assert!(
        matches!(error, SessionError::SchemaTooNew { found: 99, .. }),
        "{error}"
    );
}

#[tokio::test]
async fn an_unwritable_location_is_a_typed_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, "not a directory").unwrap();
    let error = SqliteSessionStore::open(blocker.join("sessions.db"))
        .await
        .unwrap_err();
    assert!(matches!(error, SessionError::Unavailable { .. }), "{error}");
    assert!(error.to_string().contains("sessions.db"), "{error}");

    let error = agents_sessions::PostgresSessionStore::connect(
        "postgres://me:hunter2@127.0.0.1:1/db?connect_timeout=2",
    )
    .await
    .unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, SessionError::Unavailable { .. }), "{text}");
    assert!(
        text.contains("me:***@127.0.0.1:1") && !text.contains("hunter2"),
        "{text}"
    );
}
