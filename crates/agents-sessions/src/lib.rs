//! Durable sessions: a conversation committed after every step, run by one process at a time
//! (a lease with a fencing token), resumed after a crash without running a finished tool again,
//! and served by any number of processes without forking. After a crash, tools run
//! **effectively once when read-only or idempotent, at most once and then asked about
//! otherwise**: see [`Session`].
//!
//! - [`SessionStore`]: where sessions live. [`SqliteSessionStore`] (embedded, the default:
//!   `open(path)` or `in_memory()`), [`PostgresSessionStore`] (`connect(url)`, for many
//!   processes and machines) and [`MemorySessionStore`] (tests) pass one conformance suite.
//!   A commit writes only what the step added (new messages, the step record, a small head;
//!   see [`agents_core::incremental`]), carries the version it expects and fails with
//!   [`SessionError::Conflict`] when another writer got there first. Every row has a checksum.
//! - [`Session`] (`agent.session(&store, "chat-42")`, from [`AgentSessionExt`]):
//!   [`Session::send`] appends a user message and runs the agent step by step, committing each
//!   step; [`Session::resume`] finishes a run a crash left `InProgress`; [`Session::step`] is
//!   one load → step → commit.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use agents_core::testing::ScriptedDriver;
//! use agents_core::{Agent, AgentStatus};
//! use agents_sessions::{AgentSessionExt, SessionStore, SqliteSessionStore};
//! use inference::InferenceResponse;
//!
//! let store = SqliteSessionStore::in_memory().await.unwrap();
//! let agent = Agent::new(ScriptedDriver::new([
//!     InferenceResponse::text("Hello!"),
//!     InferenceResponse::text("Still here."),
//! ]));
//! let chat = agent.session(&store, "chat-42");
//! let state = chat.send("hi").await.unwrap();
//! assert_eq!(state.status(), AgentStatus::Completed);
//! let state = chat.send("are you there?").await.unwrap();
//!
//! // Every step was committed: the stored state is the one `send` returned.
//! let loaded = store.load("chat-42").await.unwrap().unwrap();
//! assert_eq!(loaded, state);
//! assert_eq!(loaded.final_response().unwrap().text(), "Still here.");
//! assert!(store.load("nobody").await.unwrap().is_none());
//! # });
//! ```

mod batch;
mod error;
mod lease;
mod memory;
mod postgres;
mod session;
mod sql;
mod sqlite;
mod store;

pub use error::{redact_url, validate_name, SessionError};
pub use lease::{this_host, DEFAULT_LEASE_TTL};
pub use memory::MemorySessionStore;
pub use postgres::PostgresSessionStore;
pub use session::{AgentSessionExt, Session};
pub use sql::SCHEMA_VERSION;
pub use sqlite::SqliteSessionStore;
pub use store::{
    checksum, decode_rows, Commit, ExecutionVersions, Lease, LeaseHolder, LeaseRequest, ListPage,
    Loaded, Prune, SessionStore, SessionSummary, VersionRows,
};
