//! `A2aServer`: the agent card and the JSON-RPC endpoint (see the module documentation of
//! [`crate::a2a`]).

use std::convert::Infallible;
use std::fmt::Debug;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use agents_core::AgentEvent;
use agents_sessions::{SessionError, SessionStore};
use axum::body::Bytes;
use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures::StreamExt;
use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::a2a::compat;
use crate::a2a::wire::{self, code, Incoming, State as TaskState};
use crate::served::{ServedAgent, Turn, TurnError, TurnFuture, Verdict};

/// How long `CancelTask` waits for the turn to stop before answering.
const CANCEL_WAIT: Duration = Duration::from_secs(30);

/// An agent served over A2A 1.0 (JSON-RPC binding).
#[derive(Debug)]
pub struct A2aServer<S> {
    served: ServedAgent<S>,
    url: String,
    description: String,
    bearer: bool,
}

struct Shared<S> {
    served: ServedAgent<S>,
    card: Value,
}

impl<S: SessionStore + Clone + Debug + 'static> A2aServer<S> {
    /// Serves `served`, reachable at `url` (the address clients post to, as the agent card
    /// names it: `http://127.0.0.1:PORT/`).
    pub fn new(served: ServedAgent<S>, url: impl Into<String>) -> Self {
        Self {
            served,
            url: url.into(),
            description: String::new(),
            bearer: false,
        }
    }

    /// The agent's description on its card.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// The card says requests need `Authorization: Bearer` (when the server has a token).
    pub fn with_bearer_auth(mut self, bearer: bool) -> Self {
        self.bearer = bearer;
        self
    }

    /// The agent card served at `/.well-known/agent-card.json`.
    pub fn card(&self) -> Value {
        let name = self.served.agent().name();
        let name = if name.is_empty() { "agent" } else { name };
        let description = if self.description.is_empty() {
            format!("The agent {name}, served by agents-rs")
        } else {
            self.description.clone()
        };
        let mut card = json!({
            "name": name,
            "description": description,
            "version": env!("CARGO_PKG_VERSION"),
            "supportedInterfaces": [{
                "url": self.url,
                "protocolBinding": "JSONRPC",
                "protocolVersion": "1.0",
            }],
            "capabilities": { "streaming": true, "pushNotifications": false },
            "defaultInputModes": ["text/plain", "application/json"],
            "defaultOutputModes": ["text/plain", "application/json"],
            "skills": [{
                "id": "ask",
                "name": "ask",
                "description": format!(
                    "Send {name} a message; a task is a conversation: send on the same task \
                     to continue it. Calls that need a person's approval leave the task \
                     input-required with the calls and their fingerprints."
                ),
                "tags": ["agent", "conversation"],
            }],
        });
        if self.bearer {
            card["securitySchemes"] =
                json!({ "bearer": { "httpAuthSecurityScheme": { "scheme": "Bearer" } } });
            card["securityRequirements"] = json!([{ "schemes": { "bearer": { "list": [] } } }]);
        }
        card
    }

    /// The routes (put [`Access::protect`](crate::Access::protect) in front of them).
    pub fn router(self) -> Router {
        let shared = Arc::new(Shared {
            card: self.card(),
            served: self.served,
        });
        Router::new()
            .route("/.well-known/agent-card.json", get(card::<S>))
            .route("/", post(rpc::<S>))
            .with_state(shared)
    }
}

async fn card<S>(State(shared): State<Arc<Shared<S>>>) -> Json<Value> {
    Json(shared.card.clone())
}

/// A JSON-RPC error.
struct RpcError {
    code: i64,
    message: String,
}

impl RpcError {
    fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

fn reply(id: &Value, result: Result<Value, RpcError>) -> Response {
    Json(envelope(id, result)).into_response()
}

fn envelope(id: &Value, result: Result<Value, RpcError>) -> Value {
    match result {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        Err(error) => json!({
            "jsonrpc": "2.0", "id": id,
            "error": { "code": error.code, "message": error.message },
        }),
    }
}

async fn rpc<S: SessionStore + Clone + Debug + 'static>(
    State(shared): State<Arc<Shared<S>>>,
    body: Bytes,
) -> Response {
    let request: Value = match serde_json::from_slice(&body) {
        Ok(request) => request,
        Err(e) => {
            return reply(
                &Value::Null,
                Err(RpcError::new(code::PARSE_ERROR, format!("not JSON: {e}"))),
            )
        }
    };
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let method = match (
        request.get("jsonrpc").and_then(Value::as_str),
        request.get("method").and_then(Value::as_str),
    ) {
        (Some("2.0"), Some(method)) => method.to_owned(),
        _ => {
            return reply(
                &id,
                Err(RpcError::new(
                    code::INVALID_REQUEST,
                    "a JSON-RPC 2.0 request needs \"jsonrpc\": \"2.0\" and a method",
                )),
            )
        }
    };
    let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
    // A2A 0.3's names and shapes, translated to and from 1.0's.
    let (method, params, legacy) = match compat::method(&method) {
        Some(current) => (current.to_owned(), compat::params_in(params), true),
        None => (method, params, false),
    };
    let out = |result: Result<Value, RpcError>| {
        let result = if legacy {
            result.map(|value| compat::result_out(&method, value))
        } else {
            result
        };
        reply(&id, result)
    };
    let served = &shared.served;
    match method.as_str() {
        "SendMessage" => out(send(served, &params).await),
        "SendStreamingMessage" => stream(served, id.clone(), &params, legacy).await,
        "GetTask" => out(get_task(served, &params).await),
        "CancelTask" => out(cancel_task(served, &params).await),
        "ListTasks"
        | "SubscribeToTask"
        | "GetExtendedAgentCard"
        | "CreateTaskPushNotificationConfig"
        | "GetTaskPushNotificationConfig"
        | "ListTaskPushNotificationConfigs"
        | "DeleteTaskPushNotificationConfig"
        | "tasks/resubscribe"
        | "tasks/pushNotificationConfig/set"
        | "tasks/pushNotificationConfig/get"
        | "tasks/pushNotificationConfig/list"
        | "tasks/pushNotificationConfig/delete" => out(Err(RpcError::new(
            code::UNSUPPORTED_OPERATION,
            format!("{method} is not supported by this server"),
        ))),
        other => out(Err(RpcError::new(
            code::METHOD_NOT_FOUND,
            format!("no method {other:?}"),
        ))),
    }
}

fn task_id(params: &Value) -> Result<String, RpcError> {
    let id = params
        .get("id")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .ok_or_else(|| RpcError::new(code::INVALID_PARAMS, "params.id (the task id) is missing"))?;
    crate::served::validate_session(id)
        .map_err(|e| RpcError::new(code::INVALID_PARAMS, format!("params.id: {e}")))?;
    Ok(id.to_owned())
}

fn turn_error(error: TurnError) -> RpcError {
    match error {
        TurnError::NotFound { .. } => RpcError::new(code::TASK_NOT_FOUND, error.to_string()),
        TurnError::EmptyPrompt
        | TurnError::PromptTooLong { .. }
        | TurnError::NotWaiting { .. }
        | TurnError::Stale { .. }
        | TurnError::Session(SessionError::InvalidName { .. }) => {
            RpcError::new(code::INVALID_PARAMS, error.to_string())
        }
        other => RpcError::new(code::INTERNAL_ERROR, other.to_string()),
    }
}

/// What a message starts: a turn that runs when polled, or (for a prompt sent to a task
/// that waits for approval) the task as it stands.
enum Started {
    Run(TurnFuture),
    Waiting(Turn),
}

async fn begin<S: SessionStore + Clone + Debug + 'static>(
    served: &ServedAgent<S>,
    session: &str,
    incoming: Incoming,
    on_event: impl Fn(&AgentEvent) + Send + Sync + Clone + 'static,
) -> Result<Started, RpcError> {
    if incoming.decisions.is_empty() {
        let cancel = CancellationToken::new();
        return match served
            .start_ask(session, &incoming.text, cancel, on_event)
            .await
        {
            Ok(future) => Ok(Started::Run(future)),
            Err(TurnError::WaitingForApproval { .. }) => {
                match served.status(session).await.map_err(turn_error)? {
                    Some(turn) => Ok(Started::Waiting(turn)),
                    None => Err(RpcError::new(code::TASK_NOT_FOUND, "no such task")),
                }
            }
            Err(error) => Err(turn_error(error)),
        };
    }
    let served = served.clone();
    let session = session.to_owned();
    Ok(Started::Run(Box::pin(async move {
        let mut last = None;
        for decision in incoming.decisions {
            let verdict = if decision.approve {
                Verdict::Approve
            } else {
                Verdict::Reject(
                    decision
                        .reason
                        .unwrap_or_else(|| "rejected by the A2A client".to_owned()),
                )
            };
            last = Some(
                served
                    .decide(
                        &session,
                        &decision.call_id,
                        &decision.fingerprint,
                        verdict,
                        CancellationToken::new(),
                        on_event.clone(),
                    )
                    .await?,
            );
        }
        last.ok_or(TurnError::EmptyPrompt)
    })))
}

fn session_of(incoming: &Incoming) -> String {
    incoming
        .task_id
        .clone()
        .or_else(|| incoming.context_id.clone())
        .unwrap_or_else(|| crate::served::new_session("a2a"))
}

async fn send<S: SessionStore + Clone + Debug + 'static>(
    served: &ServedAgent<S>,
    params: &Value,
) -> Result<Value, RpcError> {
    let incoming = wire::incoming(params).map_err(|m| RpcError::new(code::INVALID_PARAMS, m))?;
    let immediately = params
        .pointer("/configuration/returnImmediately")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let session = session_of(&incoming);
    let future = match begin(served, &session, incoming, |_| {}).await? {
        Started::Run(future) => future,
        Started::Waiting(turn) => return Ok(json!({ "task": wire::turn_task(&turn) })),
    };
    // In a task of its own: a client that hangs up does not stop the turn mid-step.
    let running = tokio::spawn(future);
    if immediately {
        let task = wire::task(&session, TaskState::Working, None, Vec::new(), None);
        return Ok(json!({ "task": task }));
    }
    match running.await {
        Ok(Ok(turn)) => Ok(json!({ "task": wire::turn_task(&turn) })),
        Ok(Err(error)) => Err(turn_error(error)),
        Err(_) => Err(RpcError::new(
            code::INTERNAL_ERROR,
            "the turn stopped unexpectedly",
        )),
    }
}

async fn stream<S: SessionStore + Clone + Debug + 'static>(
    served: &ServedAgent<S>,
    id: Value,
    params: &Value,
    legacy: bool,
) -> Response {
    let incoming = match wire::incoming(params) {
        Ok(incoming) => incoming,
        Err(m) => return reply(&id, Err(RpcError::new(code::INVALID_PARAMS, m))),
    };
    let session = session_of(&incoming);
    let (sender, receiver) = mpsc::unbounded_channel::<Value>();
    let streamed = Arc::new(AtomicBool::new(false));
    let on_event = {
        let sender = sender.clone();
        let session = session.clone();
        let streamed = Arc::clone(&streamed);
        move |event: &AgentEvent| {
            let update = match event {
                AgentEvent::TextDelta { delta, .. } => {
                    let append = streamed.swap(true, Ordering::Relaxed);
                    json!({ "artifactUpdate": {
                        "taskId": session, "contextId": session,
                        "artifact": { "artifactId": "answer", "name": "answer", "parts": [wire::text_part(delta)] },
                        "append": append, "lastChunk": false,
                    }})
                }
                AgentEvent::ReplySetAside { .. } => {
                    // What streamed is not the answer: the next text (or the final answer)
                    // replaces the artifact instead of extending it.
                    streamed.store(false, Ordering::Relaxed);
                    return;
                }
                AgentEvent::ToolCallStarted { call, .. } => json!({ "statusUpdate": {
                    "taskId": session, "contextId": session,
                    "status": wire::status(TaskState::Working, Some(wire::agent_message(
                        &session, vec![wire::text_part(&format!("calling {}", call.name()))],
                    ))),
                }}),
                _ => return,
            };
            // The stream is gone when the client hung up; the turn goes on regardless.
            let _ = sender.send(update);
        }
    };
    let future = match begin(served, &session, incoming, on_event).await {
        Ok(Started::Run(future)) => future,
        Ok(Started::Waiting(turn)) => {
            let _ = sender.send(json!({ "task": wire::turn_task(&turn) }));
            drop(sender);
            return sse(id, receiver, legacy);
        }
        Err(error) => return reply(&id, Err(error)),
    };
    let _ = sender
        .send(json!({ "task": wire::task(&session, TaskState::Working, None, Vec::new(), None) }));
    tokio::spawn(async move {
        let last = match future.await {
            Ok(turn) => {
                let (state, message, artifacts) = wire::turn_state(&turn);
                if !streamed.load(Ordering::Relaxed) {
                    for artifact in artifacts {
                        let _ = sender.send(json!({ "artifactUpdate": {
                            "taskId": session, "contextId": session,
                            "artifact": artifact, "append": false, "lastChunk": true,
                        }}));
                    }
                }
                json!({ "statusUpdate": {
                    "taskId": session, "contextId": session,
                    "status": wire::status(state, message),
                    "metadata": { "costUsd": turn.cost_usd },
                }})
            }
            Err(error) => json!({ "statusUpdate": {
                "taskId": session, "contextId": session,
                "status": wire::status(TaskState::Failed, Some(wire::agent_message(
                    &session, vec![wire::text_part(&error.to_string())],
                ))),
            }}),
        };
        let _ = sender.send(last);
    });
    sse(id, receiver, legacy)
}

fn sse(id: Value, receiver: mpsc::UnboundedReceiver<Value>, legacy: bool) -> Response {
    let events = tokio_stream_of(receiver).map(move |result| {
        let result = if legacy {
            compat::result_out("SendStreamingMessage", result)
        } else {
            result
        };
        let data = envelope(&id, Ok(result)).to_string();
        Ok::<_, Infallible>(Event::default().data(data))
    });
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
}

fn tokio_stream_of(
    mut receiver: mpsc::UnboundedReceiver<Value>,
) -> impl futures::Stream<Item = Value> {
    futures::stream::poll_fn(move |cx| receiver.poll_recv(cx))
}

async fn get_task<S: SessionStore + Clone + Debug + 'static>(
    served: &ServedAgent<S>,
    params: &Value,
) -> Result<Value, RpcError> {
    let id = task_id(params)?;
    let running = served.is_running(&id);
    match served.status(&id).await.map_err(turn_error)? {
        Some(_) if running => Ok(wire::task(&id, TaskState::Working, None, Vec::new(), None)),
        Some(turn) => Ok(wire::turn_task(&turn)),
        None if running => Ok(wire::task(&id, TaskState::Working, None, Vec::new(), None)),
        None => Err(RpcError::new(
            code::TASK_NOT_FOUND,
            format!("no task {id:?}"),
        )),
    }
}

async fn cancel_task<S: SessionStore + Clone + Debug + 'static>(
    served: &ServedAgent<S>,
    params: &Value,
) -> Result<Value, RpcError> {
    let id = task_id(params)?;
    if !served.cancel(&id) {
        return match served.status(&id).await.map_err(turn_error)? {
            Some(_) => Err(RpcError::new(
                code::TASK_NOT_CANCELABLE,
                format!("task {id:?} is not running"),
            )),
            None => Err(RpcError::new(
                code::TASK_NOT_FOUND,
                format!("no task {id:?}"),
            )),
        };
    }
    let waited = tokio::time::timeout(CANCEL_WAIT, async {
        while served.is_running(&id) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    if waited.is_err() {
        return Err(RpcError::new(
            code::INTERNAL_ERROR,
            "the task was asked to stop but is still running",
        ));
    }
    match served.status(&id).await.map_err(turn_error)? {
        Some(turn) => Ok(wire::turn_task(&turn)),
        None => Ok(wire::task(&id, TaskState::Canceled, None, Vec::new(), None)),
    }
}
