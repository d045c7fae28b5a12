//! Approval across processes and crashes: a child process (this test binary again) starts a
//! session whose step holds a call for approval and exits suspended; the parent decides in its
//! own process; another child resumes and is killed with SIGKILL at a chosen point (before the
//! approved tool runs, after it ran and before the commit, after the commit); a last child
//! resumes to the end. The approved tool's line is in the file exactly once at every point, and
//! the call the step ran before suspending is never run again. A kill while the approved call
//! runs (its intent recorded, its result not) makes the resume ask the person again; the call
//! runs after the second approval.
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
    Agent, AgentState, AgentStatus, ContinuationCriteria, FunctionTool, StepsLimit, StopReason,
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

fn die() -> ! {
    let _ = Command::new("kill")
        .args(["-9", &std::process::id().to_string()])
        .status();
    loop {
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

fn kill_point() -> Option<String> {
    std::env::var("APPROVAL_KILL_AT").ok()
}

/// Decides from the conversation alone: first two appends (one safe, one that needs
/// approval), then an answer.
struct Planner;

#[async_trait]
impl LanguageModel for Planner {
    async fn complete(
        &self,
        request: InferenceRequest,
    ) -> Result<InferenceResponse, InferenceError> {
        if request.messages.iter().any(|m| m.role() == Role::Tool) {
            return Ok(InferenceResponse::text("done"));
        }
        Ok(InferenceResponse::with_tool_calls([
            ToolCall::new("safe", "append", json!({"line": "safe"})),
            ToolCall::new("danger", "append", json!({"line": "danger"})),
        ]))
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Line {
    line: String,
}

/// The store, dying around its `n`-th write when told to.
#[derive(Clone, Debug)]
struct Crashing {
    inner: SqliteSessionStore,
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
        let point = kill_point();
        if point.as_deref() == Some(&format!("before-commit:{n}")) {
            die();
        }
        let version = self.inner.write(id, expected, commit).await?;
        if point.as_deref() == Some(&format!("after-commit:{n}")) {
            die();
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

async fn store(dir: &Path) -> Crashing {
    Crashing {
        inner: SqliteSessionStore::open(dir.join("sessions.db"))
            .await
            .unwrap(),
        writes: Arc::new(AtomicUsize::new(0)),
    }
}

fn agent(dir: &Path) -> Agent {
    let log = dir.join("lines.log");
    let append = FunctionTool::new("append", "Appends a line.", move |args: Line| {
        let log = log.clone();
        async move {
            if kill_point().as_deref() == Some("before-tool") {
                die();
            }
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&log)
                .unwrap();
            writeln!(file, "{}", args.line).unwrap();
            file.sync_all().unwrap();
            Ok::<_, String>(format!("wrote {}", args.line))
        }
    });
    Agent::new(ToolCallingDriver::new(Planner).with_parallel_tool_calls(false))
        .with_tool(append)
        .with_approval_policy(|call| call.arguments()["line"] == "danger")
        .with_processors(agents_processing::standard_processors(
            agents_processing::TraceRetention::Ephemeral,
        ))
        .with_criteria(
            ContinuationCriteria::new()
                .with(ToolCallPresenceCheck::new())
                .with(StepsLimit::new(10)),
        )
}

/// The child: starts the session (phase `send`) or resumes it (phase `resume`).
#[tokio::test]
async fn approval_child() {
    let Ok(dir) = std::env::var("APPROVAL_DIR") else {
        return; // only runs as a child of the test below
    };
    let dir = Path::new(&dir).to_owned();
    let store = store(&dir).await;
    let session = agent(&dir).session(&store, "approve");
    match std::env::var("APPROVAL_PHASE").as_deref() {
        Ok("send") => {
            let state = session.send("write the lines").await.unwrap();
            assert_eq!(state.status(), AgentStatus::Suspended);
        }
        Ok("resume-asks-again") => {
            let state = session.resume().await.unwrap();
            assert_eq!(state.status(), AgentStatus::Suspended);
        }
        _ => {
            let state = session.resume().await.unwrap();
            assert_eq!(state.stop_reason(), Some(StopReason::Completed));
        }
    }
}

fn run_child(dir: &Path, phase: &str, kill: Option<&str>) -> std::process::ExitStatus {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--exact",
            "approval_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("APPROVAL_DIR", dir)
        .env("APPROVAL_PHASE", phase);
    match kill {
        Some(kill) => command.env("APPROVAL_KILL_AT", kill),
        None => command.env_remove("APPROVAL_KILL_AT"),
    };
    command.status().unwrap()
}

fn lines(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("lines.log")).unwrap_or_default();
    text.lines().map(str::to_owned).collect()
}

async fn load(dir: &Path) -> AgentState {
    store(dir).await.load("approve").await.unwrap().unwrap()
}

/// Approves the call the session waits on, in this process.
async fn approve_danger(dir: &Path) {
    let suspended = load(dir).await;
    assert_eq!(suspended.status(), AgentStatus::Suspended);
    let pending = suspended.pending_approvals();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].call_id(), "danger");
    assert!(!pending[0].is_decided());
    let store = store(dir).await;
    agent(dir)
        .session(&store, "approve")
        .decide(pending[0].approve())
        .await
        .unwrap();
}

#[tokio::test]
async fn an_approved_call_runs_exactly_once_across_processes_and_kills() {
    // Resume writes: 1 = the approval step (the approved call ran), 2 = the answer.
    for point in [
        None,
        Some("before-tool"),
        Some("before-commit:1"),
        Some("after-commit:1"),
        Some("before-commit:2"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        assert!(run_child(dir, "send", None).success(), "{point:?}: send");
        assert_eq!(lines(dir), ["safe"], "{point:?}: only the free call ran");

        // The decision, made in this process on what the session shows.
        approve_danger(dir).await;

        if let Some(point) = point {
            let status = run_child(dir, "resume", Some(point));
            assert_eq!(status.signal(), Some(9), "{point}: the child was killed");
        }
        if point == Some("before-tool") {
            // Killed while the approved call ran: not run again without a new decision.
            assert!(run_child(dir, "resume-asks-again", None).success());
            assert_eq!(lines(dir), ["safe"], "not run again");
            approve_danger(dir).await;
        }
        assert!(
            run_child(dir, "resume", None).success(),
            "{point:?}: resume"
        );
        assert_eq!(
            lines(dir),
            ["safe", "danger"],
            "{point:?}: every line exactly once"
        );
        let done = load(dir).await;
        assert_eq!(done.status(), AgentStatus::Completed, "{point:?}");
        assert_eq!(done.final_response().unwrap().text(), "done");
    }
}
