//! Crashes for real: a child process (this test binary again) runs a multi-step, multi-tool
//! session on a SQLite file against a scripted model and tools that append a line to a file;
//! it kills itself with SIGKILL at a chosen point (before a model reply, while a tool runs,
//! before a commit, after a commit). A new process resumes. For every point the final
//! conversation equals an uninterrupted run's and every tool's line appears once (the tool is
//! idempotent, so a call interrupted while it ran runs again; `chaos.rs` covers the others).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    missing_docs
)]

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use agents_core::{
    Agent, AgentState, ContinuationCriteria, FunctionTool, StepsLimit, StopReason,
    ToolCallPresenceCheck,
};
use agents_sessions::{
    AgentSessionExt, Commit, Lease, LeaseHolder, LeaseRequest, ListPage, Prune, SessionError,
    SessionStore, SessionSummary, SqliteSessionStore, VersionRows,
};
use async_trait::async_trait;
use drivers_toolcalling::ToolCallingDriver;
use inference::{InferenceError, InferenceRequest, InferenceResponse, LanguageModel};
use messages::{Role, ToolCall};
use serde_json::json;

const ROUNDS: usize = 3;

/// Where the child dies: `what` counted from 1 (`model`, `tool`, `before-commit`,
/// `after-commit`), or `lost-ack` (a commit stored whose acknowledgement is lost).
#[derive(Clone, Debug)]
struct KillAt {
    what: String,
    at: usize,
}

impl KillAt {
    fn from_env() -> Option<Self> {
        let spec = std::env::var("CRASH_KILL_AT").ok()?;
        let (what, at) = spec.split_once(':')?;
        Some(Self {
            what: what.into(),
            at: at.parse().ok()?,
        })
    }
}

fn die() -> ! {
    let _ = Command::new("kill")
        .args(["-9", &std::process::id().to_string()])
        .status();
    loop {
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

/// A model that decides from the conversation alone (so a new process continues the script):
/// two tool calls per round for `ROUNDS` rounds, then an answer.
struct Planner {
    kill: Option<KillAt>,
    calls: AtomicUsize,
}

#[async_trait]
impl LanguageModel for Planner {
    async fn complete(
        &self,
        request: InferenceRequest,
    ) -> Result<InferenceResponse, InferenceError> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if self
            .kill
            .as_ref()
            .is_some_and(|k| k.what == "model" && k.at == n)
        {
            die();
        }
        let round = request
            .messages
            .iter()
            .filter(|m| m.role() == Role::Tool)
            .count()
            / 2;
        if round >= ROUNDS {
            return Ok(InferenceResponse::text("all lines written"));
        }
        Ok(InferenceResponse::with_tool_calls([
            ToolCall::new(
                format!("r{round}a"),
                "append",
                json!({"line": format!("{round}-a")}),
            ),
            ToolCall::new(
                format!("r{round}b"),
                "append",
                json!({"line": format!("{round}-b")}),
            ),
        ]))
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Line {
    line: String,
}

/// The store, dying around its `at`-th write when told to.
#[derive(Clone, Debug)]
struct Crashing {
    inner: SqliteSessionStore,
    kill: Option<KillAt>,
    writes: Arc<AtomicUsize>,
}

#[async_trait]
impl SessionStore for Crashing {
    fn describe(&self) -> String {
        self.inner.describe()
    }
    async fn read_rows(
        &self,
        id: &str,
        v: Option<u64>,
    ) -> Result<Option<VersionRows>, SessionError> {
        self.inner.read_rows(id, v).await
    }
    async fn write(&self, id: &str, expected: u64, commit: &Commit) -> Result<u64, SessionError> {
        let n = self.writes.fetch_add(1, Ordering::SeqCst) + 1;
        let point = |what: &str| {
            self.kill
                .as_ref()
                .is_some_and(|k| k.what == what && k.at == n)
        };
        if point("before-commit") {
            die();
        }
        let version = self.inner.write(id, expected, commit).await?;
        if point("after-commit") {
            die();
        }
        if point("lost-ack") {
            return Err(SessionError::NotFound {
                session: "the acknowledgement was lost".into(),
            });
        }
        Ok(version)
    }
    async fn commit_id(&self, id: &str, v: u64) -> Result<Option<String>, SessionError> {
        self.inner.commit_id(id, v).await
    }
    async fn list(&self, page: ListPage) -> Result<Vec<SessionSummary>, SessionError> {
        self.inner.list(page).await
    }

    async fn executions(
        &self,
        id: &str,
    ) -> Result<Vec<agents_sessions::ExecutionVersions>, SessionError> {
        self.inner.executions(id).await
    }
    async fn delete(&self, id: &str) -> Result<bool, SessionError> {
        self.inner.delete(id).await
    }
    async fn prune(&self, id: &str, keep: Prune) -> Result<u64, SessionError> {
        self.inner.prune(id, keep).await
    }
    async fn journal_get(
        &self,
        id: &str,
        v: u64,
        key: &str,
    ) -> Result<Option<String>, SessionError> {
        self.inner.journal_get(id, v, key).await
    }
    async fn journal_put(
        &self,
        id: &str,
        v: u64,
        key: &str,
        body: &str,
        lease: Option<u64>,
    ) -> Result<(), SessionError> {
        self.inner.journal_put(id, v, key, body, lease).await
    }
    async fn acquire_lease(&self, id: &str, request: &LeaseRequest) -> Result<Lease, SessionError> {
        self.inner.acquire_lease(id, request).await
    }
    async fn renew_lease(
        &self,
        id: &str,
        lease: &Lease,
        expires_at: chrono::DateTime<chrono::Utc>,
    ) -> Result<Lease, SessionError> {
        self.inner.renew_lease(id, lease, expires_at).await
    }
    async fn release_lease(&self, id: &str, lease: &Lease) -> Result<(), SessionError> {
        self.inner.release_lease(id, lease).await
    }
    async fn lease_holder(
        &self,
        id: &str,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<Option<LeaseHolder>, SessionError> {
        self.inner.lease_holder(id, now).await
    }
}

/// The child: runs (or resumes) the session in `CRASH_DIR`.
#[tokio::test]
async fn crash_child() {
    let Ok(dir) = std::env::var("CRASH_DIR") else {
        return; // only runs as a child of the tests below
    };
    let dir = Path::new(&dir).to_owned();
    let kill = KillAt::from_env();
    let tools_run = Arc::new(AtomicUsize::new(0));
    let log = dir.join("lines.log");
    let tool_kill = kill.clone();
    let append = FunctionTool::new("append", "Appends a line.", move |args: Line| {
        let n = tools_run.fetch_add(1, Ordering::SeqCst) + 1;
        let log = log.clone();
        let kill = tool_kill.clone();
        async move {
            // "Between tool results": the earlier calls' results are recorded, this one has
            // not started.
            if kill.is_some_and(|k| k.what == "tool" && k.at == n) {
                die();
            }
            // Idempotent: a line already written is not written again (so a call a crash
            // interrupted runs again on resume).
            let written = std::fs::read_to_string(&log).unwrap_or_default();
            if !written.lines().any(|line| line == args.line) {
                let mut file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&log)
                    .unwrap();
                writeln!(file, "{}", args.line).unwrap();
                file.sync_all().unwrap();
            }
            Ok::<_, String>(format!("wrote {}", args.line))
        }
    })
    .with_effects(agents_core::ToolEffects::Idempotent);
    let model = Planner {
        kill: kill.clone(),
        calls: AtomicUsize::new(0),
    };
    let agent = Agent::new(ToolCallingDriver::new(model).with_parallel_tool_calls(false))
        .with_tool(append)
        .with_processors(agents_processing::standard_processors(
            agents_processing::TraceRetention::Ephemeral,
        ))
        .with_criteria(
            ContinuationCriteria::new()
                .with(ToolCallPresenceCheck::new())
                .with(StepsLimit::new(20)),
        );
    let store = Crashing {
        inner: SqliteSessionStore::open(dir.join("sessions.db"))
            .await
            .unwrap(),
        kill,
        writes: Arc::new(AtomicUsize::new(0)),
    };
    let session = agent.session(&store, "crash");
    let state = if store.load("crash").await.unwrap().is_some() {
        session.resume().await.unwrap()
    } else {
        session.send("write the lines").await.unwrap()
    };
    assert_eq!(
        state.stop_reason(),
        Some(StopReason::Completed),
        "{:?}",
        state.status()
    );
}

fn run_child(dir: &Path, kill: Option<&str>) -> std::process::ExitStatus {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
        .env("CRASH_DIR", dir);
    match kill {
        Some(kill) => command.env("CRASH_KILL_AT", kill),
        None => command.env_remove("CRASH_KILL_AT"),
    };
    command.status().unwrap()
}

async fn final_state(dir: &Path) -> AgentState {
    let store = SqliteSessionStore::open(dir.join("sessions.db"))
        .await
        .unwrap();
    store.load("crash").await.unwrap().unwrap()
}

fn lines(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("lines.log")).unwrap_or_default();
    text.lines().map(str::to_owned).collect()
}

#[tokio::test]
async fn a_killed_session_resumes_to_the_uninterrupted_result_with_each_tool_run_once() {
    let reference_dir = tempfile::tempdir().unwrap();
    assert!(run_child(reference_dir.path(), None).success());
    let reference = final_state(reference_dir.path()).await;
    let reference_lines = lines(reference_dir.path());
    assert_eq!(reference_lines.len(), 2 * ROUNDS);

    // Model calls: 1..=ROUNDS+1; tools: 1..=2*ROUNDS; writes: 1 (user message) ..= ROUNDS+2.
    let points = [
        "model:1",
        "model:2",
        "model:4",
        "tool:1",
        "tool:2",
        "tool:4",
        "before-commit:1",
        "before-commit:2",
        "before-commit:3",
        "before-commit:5",
        "after-commit:1",
        "after-commit:2",
        "after-commit:4",
    ];
    for point in points {
        let dir = tempfile::tempdir().unwrap();
        let status = run_child(dir.path(), Some(point));
        assert_eq!(
            status.signal(),
            Some(9),
            "{point}: the child was killed ({status})"
        );
        if point != "before-commit:1" {
            assert!(
                run_child(dir.path(), None).success(),
                "{point}: the resume succeeds"
            );
        } else {
            // Nothing was committed: the conversation starts again from the message.
            assert!(
                run_child(dir.path(), None).success(),
                "{point}: the new run succeeds"
            );
        }
        let state = final_state(dir.path()).await;
        assert_eq!(
            state.messages(),
            reference.messages(),
            "{point}: the same conversation"
        );
        assert_eq!(state.step_count(), reference.step_count(), "{point}");
        assert_eq!(
            lines(dir.path()),
            reference_lines,
            "{point}: every line exactly once"
        );
    }
}

#[tokio::test]
async fn a_lost_acknowledgement_counts_as_the_commit_it_was() {
    let reference_dir = tempfile::tempdir().unwrap();
    assert!(run_child(reference_dir.path(), None).success());
    let reference = final_state(reference_dir.path()).await;
    for point in ["lost-ack:1", "lost-ack:3"] {
        let dir = tempfile::tempdir().unwrap();
        assert!(run_child(dir.path(), Some(point)).success(), "{point}");
        let state = final_state(dir.path()).await;
        assert_eq!(state.messages(), reference.messages(), "{point}");
        assert_eq!(
            state.step_count(),
            reference.step_count(),
            "{point}: no step twice"
        );
        assert_eq!(lines(dir.path()).len(), 2 * ROUNDS, "{point}");
    }
}
