//! `McpAgentServer`: an agent as an MCP server (`agents mcp serve`), on rmcp's server side,
//! over stdio ([`McpAgentServer::serve_stdio`]) or streamable HTTP
//! ([`McpAgentServer::router`], behind [`Access`](crate::Access)).
//!
//! Tools:
//! - `ask` (`prompt`, optional `session`): one turn of the agent; without `session` a new
//!   conversation starts, and the result names it so the next call continues it. While the
//!   turn runs, a client that sent a progress token gets a progress notification per step and
//!   per tool call. A cancellation from the client stops the turn at the next step boundary;
//!   the conversation is committed and stays valid.
//! - `approve` / `reject` (`session`, `call_id`, `fingerprint`[, `reason`]): decide on a call
//!   a run waits on. A turn that waits for approval returns a result saying so, with each
//!   waiting call and its fingerprint; the decision quotes the fingerprint, and a call that
//!   changed since is refused. Where the client declared the `elicitation` capability, the
//!   person is asked about each waiting call through it first ([`elicitation`]; off with
//!   [`McpAgentServer::without_elicitation`]), and `ask` returns the rest of the turn.
//! - with [`McpAgentServer::with_exposed_tools`], the agent's own tools (those that need no
//!   approval), annotated as side-effecting (`readOnlyHint: false`) until tools declare
//!   their effects.
//!
//! Results carry the turn as structured content (`session`, `status`, `text` or `calls`,
//! `cost_usd`) and as text. A refused turn (busy, waiting for approval, stale fingerprint)
//! is a tool error result the caller reads; malformed arguments are a protocol error.

pub mod elicitation;

use std::borrow::Cow;
use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use agents_core::{AgentEvent, Tool, ToolContext};
use agents_sessions::SessionStore;
use axum::Router;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InputRequiredResult, InputResponses, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ServerCapabilities, ServerConfig, Tool as McpTool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use crate::served::{Outcome, ServedAgent, Turn, TurnError, Verdict, WaitingCall};
use elicitation::{Asked, Channel, RoundState};

/// The longest text an exposed tool's result carries (characters); longer ones are cut with
/// a note.
pub const MAX_RESULT_CHARS: usize = 100_000;
/// How long an exposed tool may run by default.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(300);

/// An agent served as an MCP server.
pub struct McpAgentServer<S> {
    served: ServedAgent<S>,
    exposed: Vec<Arc<dyn Tool>>,
    tool_timeout: Duration,
    elicitation: bool,
}

/// A turn run in a task of its own, joined.
type Joined = Result<Result<Turn, TurnError>, tokio::task::JoinError>;

impl<S: Debug> Debug for McpAgentServer<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let exposed: Vec<&str> = self.exposed.iter().map(|t| t.name()).collect();
        f.debug_struct("McpAgentServer")
            .field("served", &self.served)
            .field("exposed", &exposed)
            .field("tool_timeout", &self.tool_timeout)
            .field("elicitation", &self.elicitation)
            .finish()
    }
}

impl<S> Clone for McpAgentServer<S> {
    fn clone(&self) -> Self {
        Self {
            served: self.served.clone(),
            exposed: self.exposed.clone(),
            tool_timeout: self.tool_timeout,
            elicitation: self.elicitation,
        }
    }
}

impl<S: SessionStore + Clone + Debug + 'static> McpAgentServer<S> {
    /// Serves `served` as the tool `ask` (and `approve`/`reject`).
    pub fn new(served: ServedAgent<S>) -> Self {
        Self {
            served,
            exposed: Vec::new(),
            tool_timeout: DEFAULT_TOOL_TIMEOUT,
            elicitation: true,
        }
    }

    /// Never asks through elicitation: a turn waiting for approval always returns the
    /// waiting calls, for the `approve`/`reject` tools (as for a client without the
    /// capability).
    pub fn without_elicitation(mut self) -> Self {
        self.elicitation = false;
        self
    }

    /// Also serves the agent's own tools directly, except those whose calls need approval
    /// (a direct call would bypass it) and those named `ask`, `approve` or `reject`.
    pub fn with_exposed_tools(mut self) -> Self {
        let agent = self.served.agent();
        let gated: Vec<&str> = agent.approval_policy().tool_names().collect();
        self.exposed = agent
            .tools()
            .iter()
            .filter(|tool| !gated.contains(&tool.name()) && !OWN_TOOLS.contains(&tool.name()))
            .cloned()
            .collect();
        self
    }

    /// An exposed tool's call stops after `timeout`.
    pub fn with_tool_timeout(mut self, timeout: Duration) -> Self {
        self.tool_timeout = timeout;
        self
    }

    /// The names of the tools served.
    pub fn tool_names(&self) -> Vec<String> {
        self.tools()
            .into_iter()
            .map(|t| t.name.into_owned())
            .collect()
    }

    /// Serves one client over this process's stdin and stdout until it disconnects or
    /// `shutdown` is cancelled.
    ///
    /// # Errors
    /// [`McpServeError`] when the handshake or the transport fails.
    pub async fn serve_stdio(self, shutdown: CancellationToken) -> Result<(), McpServeError> {
        let running = self
            .serve_with_ct(rmcp::transport::stdio(), shutdown)
            .await
            .map_err(|e| McpServeError::Handshake(e.to_string()))?;
        running
            .waiting()
            .await
            .map_err(|e| McpServeError::Transport(e.to_string()))?;
        Ok(())
    }

    /// The streamable HTTP endpoint at `/mcp` (put [`Access::protect`](crate::Access::protect)
    /// in front of it: it checks the token, `Host` and `Origin`). Sessions of the protocol
    /// end when `shutdown` is cancelled.
    pub fn router(self, shutdown: CancellationToken) -> Router {
        let config = StreamableHttpServerConfig::default()
            // Access checks Host and Origin against the bound address before this runs.
            .disable_allowed_hosts()
            .with_cancellation_token(shutdown);
        let service = StreamableHttpService::new(
            move || Ok(self.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        Router::new().nest_service("/mcp", service)
    }

    fn tools(&self) -> Vec<McpTool> {
        let mut tools = vec![
            McpTool::new(
                "ask",
                format!(
                    "Ask the agent{}. Without `session` a new conversation starts; the result \
                     names its session: pass it back to continue the conversation. If the agent \
                     wants to run a tool that needs a person's approval, the person is asked \
                     through elicitation where the client supports it; otherwise the result \
                     lists the waiting calls with their fingerprints: call `approve` or `reject`.",
                    agent_label(self.served.agent().name())
                ),
                object_schema(json!({
                    "type": "object",
                    "properties": {
                        "prompt": {"type": "string", "description": "What to ask or tell the agent."},
                        "session": {"type": "string", "description": "The session to continue (from an earlier result)."}
                    },
                    "required": ["prompt"]
                })),
            )
            .annotate(ToolAnnotations::new().read_only(false).idempotent(false).open_world(true)),
            McpTool::new(
                "approve",
                "Approve a call the agent waits on (from an `ask` result): it runs, and the \
                 agent goes on; the result is the rest of the turn.",
                object_schema(decision_schema(false)),
            )
            .annotate(ToolAnnotations::new().read_only(false).idempotent(false)),
            McpTool::new(
                "reject",
                "Reject a call the agent waits on: it does not run, and the agent reads the \
                 reason; the result is the rest of the turn.",
                object_schema(decision_schema(true)),
            )
            .annotate(ToolAnnotations::new().read_only(false).idempotent(false)),
        ];
        for tool in &self.exposed {
            let schema = match tool.parameters() {
                Value::Object(map) => map,
                _ => Map::from_iter([("type".to_owned(), json!("object"))]),
            };
            tools.push(
                McpTool::new(
                    tool.name().to_owned(),
                    tool.description().to_owned(),
                    Arc::new(schema),
                )
                // Side-effecting until tools declare their effects (ToolEffects, on main
                // soon): then readOnlyHint/idempotentHint come from them.
                .annotate(ToolAnnotations::new().read_only(false).idempotent(false)),
            );
        }
        tools
    }

    async fn ask(
        &self,
        request: AskRequest,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args: AskArgs = parse(request.arguments)?;
        let channel = elicitation::channel(self.elicitation, context);
        let progress = Progress::start(context);
        let cancel = context.ct.clone();
        let (joined, asked) = match request.request_state {
            // A retry with the person's answers (an `InputRequiredResult` earlier).
            Some(state) => {
                let state = RoundState::decode(&state).ok_or_else(|| {
                    ErrorData::invalid_params(
                        "requestState is not one this server gave; call `ask` again without it",
                        None,
                    )
                })?;
                let verdicts = state.verdicts(request.input_responses.as_ref());
                let joined = self
                    .apply(&state.session, verdicts, &cancel, &progress)
                    .await;
                (joined, state.asked)
            }
            None => {
                let session = args
                    .session
                    .filter(|s| !s.trim().is_empty())
                    .unwrap_or_else(|| crate::served::new_session("mcp"));
                let served = self.served.clone();
                let reporter = progress.clone();
                // In a task of its own: when the client cancels, the turn still ends at a
                // step boundary and commits, even if the request's future is dropped.
                let turn = tokio::spawn(async move {
                    served
                        .ask(&session, &args.prompt, cancel, move |event| {
                            reporter.report(event);
                        })
                        .await
                });
                (turn.await, Vec::new())
            }
        };
        match channel {
            Channel::Off => finish(joined).map(Into::into),
            Channel::Request => {
                finish(self.ask_person(joined, context, &progress).await).map(Into::into)
            }
            Channel::InputRequired => {
                let Some((session, calls)) = waiting(&joined) else {
                    return finish(joined).map(Into::into);
                };
                let fresh = elicitation::to_ask(calls, &asked);
                if fresh.is_empty() {
                    return finish(joined).map(Into::into);
                }
                let state = RoundState::new(session, &fresh, &asked);
                Ok(InputRequiredResult::new(
                    Some(elicitation::input_requests(&fresh)),
                    Some(state.encode()),
                )
                .into())
            }
        }
    }

    /// Asks the person about each waiting call with `elicitation/create` requests, deciding
    /// each as answered, until the turn no longer waits on a call not asked about yet, an
    /// answer decides nothing, or [`elicitation::MAX_ASKED`] calls were asked about.
    async fn ask_person(
        &self,
        mut joined: Joined,
        context: &RequestContext<RoleServer>,
        progress: &Progress,
    ) -> Joined {
        let mut asked = Vec::new();
        loop {
            let Some((session, calls)) = waiting(&joined) else {
                return joined;
            };
            let Some(call) = elicitation::to_ask(calls, &asked)
                .first()
                .map(|c| (*c).clone())
            else {
                return joined;
            };
            let session = session.to_owned();
            asked.push(Asked::of(&call));
            let request = context.peer.create_elicitation_with_timeout(
                elicitation::request(&call),
                Some(elicitation::ELICITATION_TIMEOUT),
            );
            let answer = tokio::select! {
                answer = request => answer,
                () = context.ct.cancelled() => return joined,
            };
            let verdict = match answer {
                Ok(answer) => elicitation::verdict(&answer),
                Err(error) => {
                    tracing::warn!(%error, call_id = %call.call_id, "elicitation failed; the call stays waiting");
                    None
                }
            };
            let Some(verdict) = verdict else {
                return joined;
            };
            joined = self
                .apply(
                    &session,
                    vec![(Asked::of(&call), verdict)],
                    &context.ct,
                    progress,
                )
                .await;
        }
    }

    /// Records the `verdicts` in `session` in order (each checked against the fingerprint
    /// shown) and returns how the turn stands after the last: the rest of the turn once
    /// every waiting call is decided; how the session stands when there is nothing to record.
    async fn apply(
        &self,
        session: &str,
        verdicts: Vec<(Asked, Verdict)>,
        cancel: &CancellationToken,
        progress: &Progress,
    ) -> Joined {
        let served = self.served.clone();
        let session = session.to_owned();
        let cancel = cancel.clone();
        let progress = progress.clone();
        tokio::spawn(async move {
            let mut last = None;
            for (call, verdict) in verdicts {
                let reporter = progress.clone();
                let turn = served
                    .decide(
                        &session,
                        &call.call_id,
                        &call.fingerprint,
                        verdict,
                        cancel.clone(),
                        move |event| reporter.report(event),
                    )
                    .await?;
                let waits = matches!(turn.outcome, Outcome::Waiting { .. });
                last = Some(turn);
                if !waits {
                    break;
                }
            }
            match last {
                Some(turn) => Ok(turn),
                None => served
                    .status(&session)
                    .await?
                    .ok_or(TurnError::NotFound { session }),
            }
        })
        .await
    }

    async fn decide(
        &self,
        arguments: Value,
        reject: bool,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let args: DecisionArgs = parse(arguments)?;
        let verdict = if reject {
            Verdict::Reject(
                args.reason
                    .filter(|r| !r.trim().is_empty())
                    .unwrap_or_else(|| "rejected by the MCP client".to_owned()),
            )
        } else {
            Verdict::Approve
        };
        let progress = Progress::start(context);
        let call = Asked {
            call_id: args.call_id,
            fingerprint: args.fingerprint,
        };
        finish(
            self.apply(&args.session, vec![(call, verdict)], &context.ct, &progress)
                .await,
        )
    }

    async fn call_exposed(
        &self,
        tool: Arc<dyn Tool>,
        arguments: Value,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let tool_context = ToolContext::new(self.served.agent().name().to_owned())
            .with_cancellation(context.ct.clone());
        let call = tool.call(arguments, &tool_context);
        match tokio::time::timeout(self.tool_timeout, call).await {
            Ok(Ok(output)) => {
                CallToolResult::success(vec![ContentBlock::text(capped(output.content()))])
            }
            Ok(Err(error)) => CallToolResult::error(vec![ContentBlock::text(error.to_string())]),
            Err(_) => CallToolResult::error(vec![ContentBlock::text(format!(
                "the tool did not finish within {} seconds",
                self.tool_timeout.as_secs()
            ))]),
        }
    }
}

/// The tools every server offers (an exposed tool of the same name is left out).
const OWN_TOOLS: [&str; 3] = ["ask", "approve", "reject"];

impl<S: SessionStore + Clone + Debug + 'static> ServerHandler for McpAgentServer<S> {
    fn get_info(&self) -> ServerConfig {
        let name = self.served.agent().name();
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                if name.is_empty() { "agents" } else { name },
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(
                "An agent served by agents-rs: call `ask` with a prompt (and the `session` a \
                 result named, to continue a conversation). Calls that need approval come \
                 back listed with fingerprints: decide with `approve` or `reject`.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    fn get_tool(&self, name: &str) -> Option<McpTool> {
        self.tools().into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let result = match request.name.as_ref() {
            "ask" => {
                return self
                    .ask(
                        AskRequest {
                            arguments,
                            input_responses: request.input_responses,
                            request_state: request.request_state,
                        },
                        &context,
                    )
                    .await
            }
            "approve" => self.decide(arguments, false, &context).await?,
            "reject" => self.decide(arguments, true, &context).await?,
            name => {
                let Some(tool) = self.exposed.iter().find(|t| t.name() == name).cloned() else {
                    return Err(ErrorData::invalid_params(
                        format!("there is no tool {name:?}; list the tools"),
                        None,
                    ));
                };
                self.call_exposed(tool, arguments, &context).await
            }
        };
        Ok(result.into())
    }
}

/// What can stop an MCP server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpServeError {
    /// The client's handshake failed.
    #[error("the MCP handshake failed: {0}")]
    Handshake(String),
    /// The transport failed while serving.
    #[error("the MCP transport failed: {0}")]
    Transport(String),
}

/// A call of `ask`: its arguments, and on a retry the answers to an `InputRequiredResult`.
struct AskRequest {
    arguments: Value,
    input_responses: Option<InputResponses>,
    request_state: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AskArgs {
    prompt: String,
    #[serde(default)]
    session: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DecisionArgs {
    session: String,
    call_id: String,
    fingerprint: String,
    #[serde(default)]
    reason: Option<String>,
}

fn parse<T: serde::de::DeserializeOwned>(arguments: Value) -> Result<T, ErrorData> {
    serde_json::from_value(arguments)
        .map_err(|e| ErrorData::invalid_params(format!("invalid arguments: {e}"), None))
}

fn decision_schema(with_reason: bool) -> Value {
    let mut schema = json!({
        "type": "object",
        "properties": {
            "session": {"type": "string", "description": "The session the call waits in."},
            "call_id": {"type": "string", "description": "The waiting call's id."},
            "fingerprint": {"type": "string", "description": "The call's fingerprint, as the `ask` result showed it."}
        },
        "required": ["session", "call_id", "fingerprint"]
    });
    if with_reason {
        schema["properties"]["reason"] =
            json!({"type": "string", "description": "Why not (the agent reads it)."});
    }
    schema
}

fn object_schema(schema: Value) -> Arc<Map<String, Value>> {
    match schema {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(Map::new()),
    }
}

fn agent_label(name: &str) -> String {
    if name.is_empty() {
        String::new()
    } else {
        format!(" `{name}`")
    }
}

fn capped(text: &str) -> String {
    if text.chars().count() <= MAX_RESULT_CHARS {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(MAX_RESULT_CHARS).collect();
    cut.push_str(&format!(
        "\n[cut: the result is longer than {MAX_RESULT_CHARS} characters]"
    ));
    cut
}

/// The session and the calls of a turn that waits for approval.
fn waiting(joined: &Joined) -> Option<(&str, &[WaitingCall])> {
    match joined {
        Ok(Ok(Turn {
            session,
            outcome: Outcome::Waiting { calls },
            ..
        })) if !calls.is_empty() => Some((session, calls)),
        _ => None,
    }
}

/// The result of a finished (or refused) turn.
fn finish(joined: Joined) -> Result<CallToolResult, ErrorData> {
    let turn = match joined {
        Ok(Ok(turn)) => turn,
        Ok(Err(error)) => return Ok(refused(&error)),
        Err(error) => {
            tracing::error!(%error, "a served turn panicked or was aborted");
            return Err(ErrorData::internal_error(
                "the turn stopped unexpectedly",
                None,
            ));
        }
    };
    let text = describe(&turn);
    let structured = serde_json::to_value(&turn).unwrap_or(Value::Null);
    let mut result = if matches!(turn.outcome, Outcome::Failed { .. }) {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    };
    result.structured_content = Some(structured);
    Ok(result)
}

fn refused(error: &TurnError) -> CallToolResult {
    let mut result = CallToolResult::error(vec![ContentBlock::text(error.to_string())]);
    if let TurnError::WaitingForApproval { session, calls } = error {
        result.structured_content = Some(json!({
            "session": session, "status": "waiting", "calls": calls
        }));
    }
    result
}

/// The text of a turn's result.
pub fn describe(turn: &Turn) -> String {
    let footer = format!("\n\n[session: {}]", turn.session);
    match &turn.outcome {
        Outcome::Answered { text } => format!("{text}{footer}"),
        Outcome::Waiting { calls } => {
            let mut text = format!(
                "The agent waits for approval of {} call(s) before it goes on. Approve or \
                 reject each with the `approve` or `reject` tool (session {:?}):\n",
                calls.len(),
                turn.session
            );
            for call in calls {
                text.push_str(&format!(
                    "- call_id {:?}, fingerprint {:?}: {} {}\n",
                    call.call_id, call.fingerprint, call.tool, call.arguments
                ));
            }
            text
        }
        Outcome::Stopped { reason, text } => format!(
            "The run stopped before answering ({reason}).{}{footer}",
            text.as_deref()
                .map(|t| format!(" Its last text: {t}"))
                .unwrap_or_default()
        ),
        Outcome::Failed { message } => format!("The run failed: {message}{footer}"),
    }
}

/// Progress notifications for one request, if its client asked for them.
#[derive(Clone)]
struct Progress {
    sender: Option<tokio::sync::mpsc::UnboundedSender<String>>,
}

impl Progress {
    fn start(context: &RequestContext<RoleServer>) -> Self {
        let Some(token) = context.meta.get_progress_token() else {
            return Self { sender: None };
        };
        let peer = context.peer.clone();
        let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel::<String>();
        tokio::spawn(async move {
            let mut count = 0.0;
            while let Some(message) = receiver.recv().await {
                count += 1.0;
                let param =
                    ProgressNotificationParam::new(token.clone(), count).with_message(message);
                if peer.notify_progress(param).await.is_err() {
                    break;
                }
            }
        });
        Self {
            sender: Some(sender),
        }
    }

    fn report(&self, event: &AgentEvent) {
        let Some(sender) = &self.sender else { return };
        let message: Cow<'static, str> = match event {
            AgentEvent::StepStarted { source, .. } => format!("step {}", source.step_number).into(),
            AgentEvent::ToolCallStarted { call, .. } => format!("calling {}", call.name()).into(),
            AgentEvent::ApprovalRequested { .. } => "waiting for approval".into(),
            _ => return,
        };
        // The receiver is gone once the request ended; nothing to tell then.
        let _ = sender.send(message.into_owned());
    }
}
