//! The session database holds every conversation: its directory is created 0700 and the
//! database, its `-wal` and its `-shm` are 0600, under the usual umask 022.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::os::unix::fs::PermissionsExt;

use agents_core::testing::ScriptedDriver;
use agents_core::Agent;
use agents_sessions::{AgentSessionExt, SqliteSessionStore};
use inference::InferenceResponse;

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

#[tokio::test]
async fn the_database_its_wal_and_shm_and_new_directories_are_private() {
    // nextest runs each test in a process of its own: the umask is this test's
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o022));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("data").join("agents").join("sessions.db");
    let store = SqliteSessionStore::open(&db).await.unwrap();
    let agent = Agent::new(ScriptedDriver::new([InferenceResponse::text("hello")]));
    agent.session(&store, "s").send("a secret").await.unwrap();

    assert_eq!(mode(&dir.path().join("data")), 0o700);
    assert_eq!(mode(&dir.path().join("data").join("agents")), 0o700);
    for file in ["sessions.db", "sessions.db-wal", "sessions.db-shm"] {
        let path = dir.path().join("data").join("agents").join(file);
        assert_eq!(mode(&path), 0o600, "{file}");
    }
}
