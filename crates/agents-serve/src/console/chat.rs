//! Chat (with an agent): `POST /sessions` starts a session with a message,
//! `POST /sessions/{id}/messages` runs a turn, `GET /sessions/{id}/events` streams the
//! running turn (server-sent events: text as it arrives, each tool call as it starts and
//! ends, then `done`), `POST /sessions/{id}/cancel` stops it.
//!
//! A turn runs under the session's lease, like any other runner's: a session whose lease
//! another live process holds is refused before anything runs (`409`, naming the holder).
//! Refusals of a request that asks for JSON (the page's script) are JSON
//! (`{"error": "..."}`), so the page can say why.

use std::convert::Infallible;
use std::fmt::Debug;
use std::sync::Arc;

use agents_core::Agent;
use agents_sessions::{LeaseHolder, SessionError, SessionStore};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Form, Json};
use futures::stream::{self, Stream};
use serde::Deserialize;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::console::format::session_path;
use crate::console::layout::{error, store_error};
use crate::console::runs::{NotStarted, Run, RunEvent, Turn};
use crate::console::state::ConsoleState;

/// The longest message the page may send: 100,000 characters.
const MAX_MESSAGE_CHARS: usize = 100_000;

#[derive(Debug, Deserialize)]
pub(crate) struct MessageForm {
    #[serde(default)]
    csrf: Option<String>,
    text: String,
}

#[derive(Debug, Deserialize)]
pub(crate) struct CsrfForm {
    #[serde(default)]
    csrf: Option<String>,
}

pub(crate) async fn start_session<S: SessionStore + Clone + Debug + 'static>(
    State(console): State<Arc<ConsoleState<S>>>,
    headers: HeaderMap,
    Form(form): Form<MessageForm>,
) -> Response {
    let id = format!("web-{}", uuid::Uuid::now_v7());
    start(&console, &id, &headers, form).await
}

pub(crate) async fn send<S: SessionStore + Clone + Debug + 'static>(
    State(console): State<Arc<ConsoleState<S>>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Form(form): Form<MessageForm>,
) -> Response {
    if let Err(error) = agents_sessions::validate_name(&id) {
        return store_error(&error);
    }
    start(&console, &id, &headers, form).await
}

async fn start<S: SessionStore + Clone + Debug + 'static>(
    console: &ConsoleState<S>,
    id: &str,
    headers: &HeaderMap,
    form: MessageForm,
) -> Response {
    if !console.csrf.accepts(form.csrf.as_deref(), headers) {
        return csrf_refused(headers);
    }
    let Some(agent) = &console.agent else {
        return refused(
            StatusCode::CONFLICT,
            "this console has no agent to run turns: start it with --definition FILE",
            headers,
        );
    };
    let text = form.text.trim();
    if text.is_empty() {
        return refused(StatusCode::BAD_REQUEST, "the message is empty", headers);
    }
    if text.chars().count() > MAX_MESSAGE_CHARS {
        return refused(
            StatusCode::PAYLOAD_TOO_LARGE,
            "the message is longer than 100,000 characters",
            headers,
        );
    }
    match console.store.load(id).await {
        Ok(Some(state)) if state.status() == agents_core::AgentStatus::Suspended => {
            return refused(
                StatusCode::CONFLICT,
                "the run waits for approvals: decide on its calls first",
                headers,
            )
        }
        Ok(_) => {}
        Err(error) => return store_error(&error),
    }
    match held_elsewhere(agent, &console.store, id).await {
        Ok(None) => {}
        Ok(Some(busy)) => return refused(StatusCode::CONFLICT, &busy.to_string(), headers),
        Err(error) => return store_error(&error),
    }
    match console.runs.start(
        agent,
        &console.store,
        id,
        Turn::Send(text.to_owned()),
        &console.shutdown,
    ) {
        Ok(_) => started(id, headers),
        Err(reason) => not_started(&reason, headers),
    }
}

/// [`SessionError::Busy`] when another live runner holds the lease of session `id`. The run
/// would be refused the same way when it takes the lease, but only after the page was told
/// the turn started (and a page that connects after the refusal finds nothing running). Not
/// a refusal: a holder of this host that is gone (the run takes its lease over), and this
/// very process (a turn of this console: the running turns answer for it).
async fn held_elsewhere<S: SessionStore>(
    agent: &Agent,
    store: &S,
    id: &str,
) -> Result<Option<SessionError>, SessionError> {
    let this_process = |holder: &LeaseHolder| {
        holder.pid == std::process::id() && holder.host == agents_sessions::this_host()
    };
    Ok(store
        .lease_holder(id, agent.clock().now())
        .await?
        .filter(|holder| !holder.is_gone() && !this_process(holder))
        .map(|holder| SessionError::Busy {
            session: id.to_owned(),
            holder,
        }))
}

fn wants_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|accept| accept.contains("application/json"))
}

/// A refusal saying `message`: `{"error": message}` for the script, else an error page.
pub(crate) fn refused(status: StatusCode, message: &str, headers: &HeaderMap) -> Response {
    if wants_json(headers) {
        (status, Json(serde_json::json!({ "error": message }))).into_response()
    } else {
        error(status, message)
    }
}

/// The answer to a request that started a turn: JSON for the script, else a redirect to
/// the session's page (which follows the turn).
pub(crate) fn started(id: &str, headers: &HeaderMap) -> Response {
    let page = session_path(id, "");
    if wants_json(headers) {
        (
            StatusCode::ACCEPTED,
            Json(serde_json::json!({
                "session": id,
                "page": page,
                "events": session_path(id, "/events"),
            })),
        )
            .into_response()
    } else {
        Redirect::to(&page).into_response()
    }
}

pub(crate) fn not_started(reason: &NotStarted, headers: &HeaderMap) -> Response {
    let (status, message) = match reason {
        NotStarted::AlreadyRunning => (
            StatusCode::CONFLICT,
            "a turn of this session is already running; wait for it or cancel it",
        ),
        NotStarted::Busy => (
            StatusCode::SERVICE_UNAVAILABLE,
            "the server runs as many turns as it may; try again in a moment",
        ),
        NotStarted::ShuttingDown => (
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is shutting down: no new turn starts (running ones finish first)",
        ),
    };
    refused(status, message, headers)
}

pub(crate) fn csrf_refused(headers: &HeaderMap) -> Response {
    refused(
        StatusCode::FORBIDDEN,
        "the form's CSRF token is missing or wrong; reload the page and try again",
        headers,
    )
}

pub(crate) async fn cancel<S: SessionStore + Clone + Debug + 'static>(
    State(console): State<Arc<ConsoleState<S>>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Form(form): Form<CsrfForm>,
) -> Response {
    if !console.csrf.accepts(form.csrf.as_deref(), &headers) {
        return csrf_refused(&headers);
    }
    match console.runs.get(&id) {
        Some(run) => {
            run.cancel();
            Redirect::to(&session_path(&id, "")).into_response()
        }
        None => error(StatusCode::CONFLICT, "no turn of this session is running"),
    }
}

pub(crate) async fn events<S: SessionStore + Clone + Debug + 'static>(
    State(console): State<Arc<ConsoleState<S>>>,
    Path(id): Path<String>,
) -> Response {
    let stream: Box<dyn Stream<Item = Result<Event, Infallible>> + Send + Unpin> =
        match console.runs.get(&id) {
            Some(run) => Box::new(Box::pin(follow(run, console.shutdown.clone()))),
            None => Box::new(stream::iter([Ok(Event::default()
                .event("idle")
                .data("{}"))])),
        };
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// The events of `run`: those logged so far, then the live ones, until the last one or the
/// server's shutdown.
fn follow(
    run: Arc<Run>,
    shutdown: CancellationToken,
) -> impl Stream<Item = Result<Event, Infallible>> + Send {
    let (past, live) = run.subscribe();
    let ended = past.iter().any(Run::is_last);
    let replay = stream::iter(past.into_iter().map(|event| Ok(sse(&event))));
    let live = stream::unfold(
        (live, shutdown, ended),
        |(mut live, shutdown, ended)| async move {
            if ended {
                return None;
            }
            let next = tokio::select! {
                next = live.recv() => next,
                () = shutdown.cancelled() => return None,
            };
            match next {
                Ok(event) => {
                    let last = Run::is_last(&event);
                    Some((Ok(sse(&event)), (live, shutdown, last)))
                }
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    let note = Event::default()
                        .event("lagged")
                        .data(format!("{{\"missed\":{missed}}}"));
                    Some((Ok(note), (live, shutdown, false)))
                }
                Err(broadcast::error::RecvError::Closed) => None,
            }
        },
    );
    futures::StreamExt::chain(replay, live)
}

fn sse(event: &RunEvent) -> Event {
    let data = serde_json::to_string(event).unwrap_or_else(|_| "{}".to_owned());
    Event::default().event("run").data(data)
}
