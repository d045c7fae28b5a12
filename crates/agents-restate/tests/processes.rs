//! The service in processes of its own, killed and started again.
//!
//! - Killed (SIGKILL) inside a tool call: Restate replays the invocation on the new process,
//!   which completes it. Model replies journaled before the kill are not asked for again; a
//!   completed effect is not applied twice; the call the kill interrupted is reported as
//!   interrupted, or run again when its tool is retry-safe.
//! - Suspended for an approval: no process holds the run; the service is killed, a new one
//!   started, and the approval sent through the ingress from this (third) process later
//!   resumes the run.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command};
use std::sync::Arc;
use std::time::Duration;

use agents_core::{AgentStatus, ToolEffects, INTERRUPTED_MESSAGE};
use agents_restate::{register_deployment, AgentSession, SessionClient};

use common::{agent_killing, read_lines, restate, unique_name, Instance, KillAt, Planner};

/// The child: serves the agent on `RESTATE_CHILD_PORT` until it is killed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_child() {
    let Ok(dir) = std::env::var("RESTATE_CHILD_DIR") else {
        return; // only runs as a child of the tests below
    };
    let dir = Path::new(&dir).to_owned();
    let name = std::env::var("RESTATE_CHILD_NAME").unwrap();
    let port: u16 = std::env::var("RESTATE_CHILD_PORT")
        .unwrap()
        .parse()
        .unwrap();
    let kill = std::env::var("RESTATE_CHILD_KILL").ok().map(|spec| {
        let (when, line) = spec.split_once(':').unwrap();
        match when {
            "before" => KillAt::Before(line.to_owned()),
            _ => KillAt::After(line.to_owned()),
        }
    });
    let mut model = Planner::new();
    model.log = Some(dir.join("model.log"));
    // A retry-safe append declares itself idempotent: an interrupted call of it runs again.
    let effects = if std::env::var("RESTATE_CHILD_RETRY_SAFE").is_ok() {
        ToolEffects::Idempotent
    } else {
        ToolEffects::SideEffecting
    };
    let mut agent = agent_killing(model, dir.join("ledger"), kill, effects);
    if std::env::var("RESTATE_CHILD_APPROVAL").is_ok() {
        agent = agent.with_approval_required(["append"]);
    }
    let session = AgentSession::new(Arc::new(agent)).with_name(name);
    let listener = bind(port).await;
    let _instance = Instance::on(session, listener);
    std::future::pending::<()>().await;
}

/// Binds the port again after the killed process released it.
async fn bind(port: u16) -> tokio::net::TcpListener {
    for _ in 0..50 {
        if let Ok(listener) = tokio::net::TcpListener::bind(("127.0.0.1", port)).await {
            return listener;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("port {port} stays busy");
}

struct Service {
    child: Child,
}

impl Service {
    fn spawn(dir: &Path, name: &str, port: u16, kill: Option<&str>, retry_safe: bool) -> Self {
        Self::spawn_with(dir, name, port, kill, retry_safe, false)
    }

    fn spawn_with(
        dir: &Path,
        name: &str,
        port: u16,
        kill: Option<&str>,
        retry_safe: bool,
        approval: bool,
    ) -> Self {
        let mut command = Command::new(std::env::current_exe().unwrap());
        command
            .args([
                "--exact",
                "service_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("RESTATE_CHILD_DIR", dir)
            .env("RESTATE_CHILD_NAME", name)
            .env("RESTATE_CHILD_PORT", port.to_string());
        match kill {
            Some(kill) => command.env("RESTATE_CHILD_KILL", kill),
            None => command.env_remove("RESTATE_CHILD_KILL"),
        };
        for (variable, on) in [
            ("RESTATE_CHILD_RETRY_SAFE", retry_safe),
            ("RESTATE_CHILD_APPROVAL", approval),
        ] {
            if on {
                command.env(variable, "1");
            } else {
                command.env_remove(variable);
            }
        }
        Self {
            child: command.spawn().unwrap(),
        }
    }

    /// Waits (at most 120 s) for the process to end by itself: it ends when Restate has
    /// delivered the invocation and the run reached the kill point, which on a loaded 2-core
    /// machine took more than 30 s once (a CI run beside two valgrind profiles).
    async fn exit_status(&mut self) -> std::process::ExitStatus {
        for _ in 0..1200 {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the service did not die");
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn wait_for_port(port: u16) {
    for _ in 0..300 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the service never listened on {port}");
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// What the model read for the call `id` (from the step records: the trace of an
/// execution is not kept in the conversation).
fn call_result(state: &agents_core::AgentState, id: &str) -> String {
    state
        .steps()
        .flat_map(|step| step.tool_executions().iter().cloned().collect::<Vec<_>>())
        .find(|execution| execution.id() == id)
        .unwrap_or_else(|| panic!("the call {id} has a recorded execution"))
        .result_text()
}

/// Model calls per process, in the order the processes made them.
fn model_calls(dir: &Path) -> Vec<String> {
    read_lines(&dir.join("model.log"))
}

/// Runs `lines a b c` on a service that dies at `kill`, restarts it, and answers the final
/// state and the model calls made by the first and the second process.
async fn run_killed(
    test: &str,
    kill: &str,
    retry_safe: bool,
) -> Option<(tempfile::TempDir, agents_core::AgentState, usize, usize)> {
    let restate = restate(test)?;
    let dir = tempfile::tempdir().unwrap();
    let name = unique_name(test);
    let port = free_port();
    let mut first = Service::spawn(dir.path(), &name, port, Some(kill), retry_safe);
    wait_for_port(port).await;
    register_deployment(&restate.admin, &format!("http://127.0.0.1:{port}"))
        .await
        .unwrap();
    let client = SessionClient::new(&restate.ingress)
        .unwrap()
        .with_object_name(&name);
    let invocation = client.send_later("k1", "lines a b c").await.unwrap();

    let status = first.exit_status().await;
    assert_eq!(status.signal(), Some(9), "killed inside the tool call");
    let before = model_calls(dir.path()).len();

    let _second = Service::spawn(dir.path(), &name, port, None, retry_safe);
    let reply = tokio::time::timeout(Duration::from_secs(60), client.attach(&invocation))
        .await
        .expect("the invocation completes on the new process")
        .unwrap();
    let state = client.state("k1").await.unwrap().unwrap();
    assert_eq!(
        reply.status,
        AgentStatus::Completed,
        "{}",
        state.to_json().unwrap()
    );
    assert_eq!(reply.answer.as_deref(), Some("wrote 3 lines"));
    common::assert_valid_conversation(&state);
    let after = model_calls(dir.path()).len() - before;
    Some((dir, state, before, after))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_after_the_effect_the_call_is_reported_interrupted_and_not_run_again() {
    let Some((dir, state, before, after)) =
        run_killed("killed_after_the_effect", "after:b", false).await
    else {
        return;
    };
    assert_eq!(
        read_lines(&dir.path().join("ledger")),
        ["a", "b", "c"],
        "every effect once: b was applied before the kill and not again"
    );
    assert_eq!(before, 2, "the first process asked for steps 1 and 2");
    assert_eq!(
        after, 2,
        "the second asked only for steps 3 and 4: replies 1 and 2 came from the journal"
    );
    let b_result = call_result(&state, "call_1");
    assert!(
        b_result.contains(INTERRUPTED_MESSAGE),
        "the model is told b may or may not have taken effect: {b_result}"
    );
    assert_eq!(state.step_count(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_before_the_effect_a_retry_safe_call_runs_again_once() {
    let Some((dir, state, before, after)) =
        run_killed("killed_before_the_effect", "before:b", true).await
    else {
        return;
    };
    assert_eq!(
        read_lines(&dir.path().join("ledger")),
        ["a", "b", "c"],
        "b ran again, once, on the new process"
    );
    assert_eq!((before, after), (2, 2), "no model reply asked for twice");
    let b_result = call_result(&state, "call_1");
    assert_eq!(b_result, "wrote b");
    // Both starts of b, before and after the kill, got one idempotency key: the execution id
    // is journaled, not made again by the new process.
    let keys: Vec<String> = read_lines(&dir.path().join("ledger.keys"))
        .into_iter()
        .filter(|line| line.starts_with("b "))
        .collect();
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert_eq!(keys[0], keys[1], "the same key on the replay");
    assert!(
        keys[0].ends_with(":call_1"),
        "execution id and call id: {keys:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_sent_later_through_the_ingress_resumes_a_run_no_process_held() {
    let Some(restate) = restate("an_approval_sent_later") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let name = unique_name("approval_later");
    let port = free_port();
    let mut first = Service::spawn_with(dir.path(), &name, port, None, false, true);
    wait_for_port(port).await;
    register_deployment(&restate.admin, &format!("http://127.0.0.1:{port}"))
        .await
        .unwrap();
    let client = SessionClient::new(&restate.ingress)
        .unwrap()
        .with_object_name(&name);
    let invocation = client.send_later("p1", "lines a").await.unwrap();
    let mut waiting = Vec::new();
    for _ in 0..300 {
        waiting = client.pending_approvals("p1").await.unwrap();
        if !waiting.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(waiting.len(), 1, "the run waits for one decision");
    assert_eq!(waiting[0].tool_name, "append");
    assert_eq!(waiting[0].arguments, serde_json::json!({"line": "a"}));

    // Nothing holds the run: its service dies, time passes, another one starts.
    first.child.kill().unwrap();
    let _ = first.exit_status().await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let _second = Service::spawn_with(dir.path(), &name, port, None, false, true);
    let unknown = client
        .approve("p1", "no-such-call", None)
        .await
        .unwrap_err();
    assert_eq!(unknown.status(), Some(404), "{unknown}");
    client
        .approve("p1", &waiting[0].call_id, None)
        .await
        .unwrap();

    let reply = tokio::time::timeout(Duration::from_secs(60), client.attach(&invocation))
        .await
        .expect("the approved run completes")
        .unwrap();
    assert_eq!(reply.status, AgentStatus::Completed);
    assert_eq!(reply.answer.as_deref(), Some("wrote 1 lines"));
    assert_eq!(read_lines(&dir.path().join("ledger")), ["a"], "ran once");
    assert!(client.pending_approvals("p1").await.unwrap().is_empty());
}
