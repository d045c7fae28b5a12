//! What the Restate tests share: the server from `cargo xtask restate start`, a model that
//! plans from the conversation alone (so a restarted process continues the script), a
//! ledger tool whose effects a test can count, and a service started and registered under a
//! name of its own (tests run side by side on one server).
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr
)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use agents_core::{
    Agent, AgentState, AnswerOnStop, ContinuationCriteria, ErrorPolicy, FunctionTool, StepsLimit,
    ToolCallPresenceCheck, ToolEffects,
};
use agents_restate::{register_deployment, serve, AgentSession, SessionClient};
use async_trait::async_trait;
use drivers_toolcalling::ToolCallingDriver;
use inference::{InferenceError, InferenceRequest, InferenceResponse, LanguageModel};
use messages::{Role, ToolCall};
use serde_json::json;
use tokio::net::TcpListener;

/// Where the Restate server of `cargo xtask restate start` listens.
#[derive(Clone, Debug)]
pub struct Restate {
    pub ingress: String,
    pub admin: String,
}

/// The server from the environment; `None` (with a loud line) off CI when there is none.
/// With `CI=true` a missing server fails the test.
pub fn restate(test: &str) -> Option<Restate> {
    let ingress = std::env::var("AGENTS_TEST_RESTATE_INGRESS").ok();
    let admin = std::env::var("AGENTS_TEST_RESTATE_ADMIN").ok();
    match (ingress, admin) {
        (Some(ingress), Some(admin)) => Some(Restate { ingress, admin }),
        _ if std::env::var("CI").is_ok_and(|ci| ci == "true") => panic!(
            "{test}: AGENTS_TEST_RESTATE_INGRESS and AGENTS_TEST_RESTATE_ADMIN are not set; \
             in CI the Restate tests must run (.ci/run starts the server with \
             `cargo xtask restate start`)"
        ),
        _ => {
            eprintln!(
                "SKIPPED {test}: no Restate server. Run `cargo xtask restate start` and export \
                 the AGENTS_TEST_RESTATE_INGRESS and AGENTS_TEST_RESTATE_ADMIN it prints."
            );
            None
        }
    }
}

/// A service name no other test run uses.
pub fn unique_name(test: &str) -> String {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{test}_{}_{stamp}", std::process::id())
}

/// A model that plans from the conversation: the user message `lines a b c` asks for one
/// `append` call per line, one call per step, then the answer `wrote N lines`. `wait S`
/// calls `wait` once. Every call is counted (and, with a file, appended to it, so calls made
/// by several processes add up).
pub struct Planner {
    pub calls: Arc<AtomicUsize>,
    pub log: Option<PathBuf>,
}

impl Planner {
    pub fn new() -> Self {
        Self {
            calls: Arc::new(AtomicUsize::new(0)),
            log: None,
        }
    }
}

#[async_trait]
impl LanguageModel for Planner {
    async fn complete(
        &self,
        request: InferenceRequest,
    ) -> Result<InferenceResponse, InferenceError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if let Some(log) = &self.log {
            append_line(log, &format!("model {}", std::process::id()));
        }
        let asked = request
            .messages
            .iter()
            .rev()
            .find(|m| m.role() == Role::User)
            .map(|m| m.text())
            .unwrap_or_default();
        let calls_made = request
            .messages
            .iter()
            .filter(|m| m.role() == Role::Assistant && m.has_tool_calls())
            .count();
        let mut words = asked.split_whitespace();
        match words.next() {
            Some("lines") => {
                let lines: Vec<&str> = words.collect();
                match lines.get(calls_made) {
                    Some(line) => Ok(InferenceResponse::with_tool_calls([ToolCall::new(
                        format!("call_{calls_made}"),
                        "append",
                        json!({ "line": line }),
                    )])),
                    None => Ok(InferenceResponse::text(format!(
                        "wrote {} lines",
                        lines.len()
                    ))),
                }
            }
            Some("wait") if calls_made == 0 => {
                Ok(InferenceResponse::with_tool_calls([ToolCall::new(
                    "call_wait",
                    "wait",
                    json!({ "seconds": 30 }),
                )]))
            }
            _ => Ok(InferenceResponse::text("done")),
        }
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Line {
    pub line: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Wait {
    pub seconds: u64,
}

pub fn append_line(path: &Path, line: &str) {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    // One write per line: concurrent appenders (the scale test's 40 invocations) must not
    // interleave a line and its newline.
    file.write_all(format!("{line}\n").as_bytes()).unwrap();
    file.sync_all().unwrap();
}

pub fn read_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Where `append` kills its own process with SIGKILL: just before or just after writing
/// `line`, the first time only (a marker file beside the ledger remembers it).
#[derive(Clone, Debug)]
pub enum KillAt {
    Before(String),
    After(String),
}

/// The agent the tests serve: the planner, `append` (writes its line to `ledger`), `wait`
/// (sleeps, or stops when the run is cancelled, noting both in the ledger).
pub fn agent(model: Planner, ledger: PathBuf) -> Agent {
    agent_killing(model, ledger, None, ToolEffects::SideEffecting)
}

/// [`agent`] whose `append` dies at `kill`.
/// `append_effects`: what the append tool declares (a retry-safe one runs again after a
/// crash interrupted it; any other is reported interrupted).
pub fn agent_killing(
    model: Planner,
    ledger: PathBuf,
    kill: Option<KillAt>,
    append_effects: ToolEffects,
) -> Agent {
    let append_ledger = ledger.clone();
    let append = FunctionTool::with_context(
        "append",
        "Appends a line to the ledger.",
        move |args: Line, context: agents_core::ToolContext| {
            let ledger = append_ledger.clone();
            let kill = kill.clone();
            async move {
                // Every start of the call writes its idempotency key (the same on a replay).
                let key = context.idempotency_key().unwrap_or_default();
                append_line(
                    &ledger.with_extension("keys"),
                    &format!("{} {key}", args.line),
                );
                let marker = ledger.with_extension("killed");
                let first = !marker.exists();
                if first && matches!(&kill, Some(KillAt::Before(line)) if *line == args.line) {
                    append_line(&marker, "before");
                    die();
                }
                append_line(&ledger, &args.line);
                if first && matches!(&kill, Some(KillAt::After(line)) if *line == args.line) {
                    append_line(&marker, "after");
                    die();
                }
                Ok::<_, String>(format!("wrote {}", args.line))
            }
        },
    )
    .with_effects(append_effects);
    let wait = FunctionTool::with_context(
        "wait",
        "Waits.",
        move |args: Wait, context: agents_core::ToolContext| {
            let ledger = ledger.clone();
            async move {
                append_line(&ledger, "wait started");
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_secs(args.seconds)) => {
                        append_line(&ledger, "wait finished");
                        Ok::<_, String>("waited".to_owned())
                    }
                    () = context.cancellation.cancelled() => {
                        append_line(&ledger, "wait cancelled");
                        Err("cancelled".to_owned())
                    }
                }
            }
        },
    );
    Agent::new(ToolCallingDriver::new(model).with_parallel_tool_calls(false))
        .with_tool(append)
        .with_tool(wait)
        .with_processors(agents_processing::standard_processors(
            agents_processing::TraceRetention::Ephemeral,
        ))
        .with_criteria(
            ContinuationCriteria::new()
                .with(ToolCallPresenceCheck::new())
                .with(StepsLimit::new(20)),
        )
        // A failed call (an interrupted one included) goes back to the model.
        .with_error_policy(ErrorPolicy::retry_tool_errors(2))
        // A run stopped early (cancelled) still ends with an answer, as the facade's do.
        .with_answer_on_stop(AnswerOnStop::Notice)
}

/// SIGKILL to this process.
pub fn die() -> ! {
    let _ = std::process::Command::new("kill")
        .args(["-9", &std::process::id().to_string()])
        .status();
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// A service instance serving `session` on a free port of 127.0.0.1, stopped when dropped.
pub struct Instance {
    pub addr: std::net::SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Instance {
    pub async fn start(session: AgentSession) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        Self::on(session, listener)
    }

    pub fn on(session: AgentSession, listener: TcpListener) -> Self {
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            serve(session, listener, stopped).await.unwrap();
        });
        Self {
            addr,
            stop: Some(stop),
        }
    }

    pub fn uri(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Starts one instance of `session`, registers it, and gives a client for its name.
pub async fn start(restate: &Restate, session: AgentSession) -> (Instance, SessionClient) {
    let name = session.name().to_owned();
    let instance = Instance::start(session).await;
    register_deployment(&restate.admin, &instance.uri())
        .await
        .unwrap();
    let client = SessionClient::new(&restate.ingress)
        .unwrap()
        .with_object_name(name);
    (instance, client)
}

/// Every tool call in the conversation has its result, and every result its call, in order
/// (what every provider accepts as the history of the next request).
pub fn assert_valid_conversation(state: &AgentState) {
    let messages = state.messages();
    let calls: Vec<String> = messages
        .iter()
        .flat_map(|m| m.tool_calls().iter().map(|c| c.id().to_owned()))
        .collect();
    let results: Vec<String> = messages
        .iter()
        .filter_map(|m| m.tool_call_id().map(str::to_owned))
        .collect();
    assert_eq!(calls, results, "each tool call has exactly one result");
}
