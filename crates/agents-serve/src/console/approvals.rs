//! Approvals: the calls a suspended run waits on, with their full arguments and
//! fingerprint, and `POST /sessions/{id}/approvals` to approve, edit or reject one. A
//! decision carries the fingerprint its page showed: a call that changed since, or was
//! decided meanwhile, is refused as stale (`409`). With an agent, once every call is decided
//! the run resumes in the server; without one the page says how to resume from the CLI.

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use agents_core::{AgentState, AgentStatus, ApprovalVerdict};
use agents_sessions::{Session, SessionError, SessionStore};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::Form;
use maud::{html, Markup};
use serde::Deserialize;

use crate::console::chat::{csrf_refused, not_started};
use crate::console::format::{json, session_path};
use crate::console::layout::{error, store_error};
use crate::console::runs::{NotStarted, Turn};
use crate::console::state::ConsoleState;
use crate::fingerprint::fingerprint;

#[derive(Debug, Deserialize)]
pub(crate) struct DecisionForm {
    #[serde(default)]
    csrf: Option<String>,
    call_id: String,
    fingerprint: String,
    action: String,
    #[serde(default)]
    arguments: Option<String>,
    #[serde(default)]
    reason: Option<String>,
}

/// The waiting calls of `state`, each with its decision forms.
pub(crate) fn approvals_section<S>(
    console: &ConsoleState<S>,
    id: &str,
    version: u64,
    state: &AgentState,
) -> Markup {
    if state.status() != AgentStatus::Suspended {
        return html! {};
    }
    let execution_id = state
        .execution()
        .map(|e| e.id().to_owned())
        .unwrap_or_default();
    let action = session_path(id, "/approvals");
    let csrf = console.csrf.value();
    html! {
        section.approvals {
            h2 { "Waiting for approval" }
            @for pending in state.pending_approvals() {
                @let print = fingerprint(&execution_id, &pending);
                div.pending data-call=(pending.call_id()) data-fingerprint=(print) {
                    h3 {
                        "tool " code { (pending.tool_name()) } " · call " code { (pending.call_id()) }
                        " · fingerprint " code.fingerprint { (print) }
                        @if let Some(subagent) = pending.subagent() { " · subagent " (subagent) }
                    }
                    pre.arguments { (json(pending.arguments())) }
                    @match pending.decision() {
                        Some(ApprovalVerdict::Approved { .. }) => p.decided { "approved" },
                        Some(ApprovalVerdict::Rejected { reason }) => p.decided { "rejected: " (reason) },
                        None => {
                            form.decide method="post" action=(action) {
                                input type="hidden" name="csrf" value=(csrf);
                                input type="hidden" name="call_id" value=(pending.call_id());
                                input type="hidden" name="fingerprint" value=(print);
                                input type="hidden" name="version" value=(version);
                                button.approve type="submit" name="action" value="approve" { "Approve" }
                            }
                            form.decide method="post" action=(action) {
                                input type="hidden" name="csrf" value=(csrf);
                                input type="hidden" name="call_id" value=(pending.call_id());
                                input type="hidden" name="fingerprint" value=(print);
                                textarea name="arguments" rows="4" aria-label="edited arguments (JSON)" { (json(pending.arguments())) }
                                button.edit type="submit" name="action" value="edit" { "Approve with these arguments" }
                            }
                            form.decide method="post" action=(action) {
                                input type="hidden" name="csrf" value=(csrf);
                                input type="hidden" name="call_id" value=(pending.call_id());
                                input type="hidden" name="fingerprint" value=(print);
                                input type="text" name="reason" placeholder="why not (the model reads it)" aria-label="reason";
                                button.reject type="submit" name="action" value="reject" { "Reject" }
                            }
                        }
                    }
                }
            }
            @if state.approvals_decided() && console.agent.is_none() {
                p.resume {
                    "Every call is decided. This console runs no agent; resume the run with "
                    code { "agents run --session " (id) " --resume" }
                    " (and the same --definition and --db)."
                }
            }
        }
    }
}

pub(crate) async fn decide<S: SessionStore + Clone + Debug + 'static>(
    State(console): State<Arc<ConsoleState<S>>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Form(form): Form<DecisionForm>,
) -> Response {
    if !console.csrf.accepts(form.csrf.as_deref(), &headers) {
        return csrf_refused(&headers);
    }
    // With an agent a decision may resume the run, which a stopping server does not start:
    // refuse before recording it, so that the page's answer says what happened.
    if console.agent.is_some() && console.shutdown.is_cancelled() {
        return not_started(&NotStarted::ShuttingDown, &headers);
    }
    let state = match console.store.load(&id).await {
        Ok(Some(state)) => state,
        Ok(None) => return error(StatusCode::NOT_FOUND, "there is no session of that name"),
        Err(error) => return store_error(&error),
    };
    let execution_id = state
        .execution()
        .map(|e| e.id().to_owned())
        .unwrap_or_default();
    let Some(pending) = state
        .pending_approvals()
        .into_iter()
        .find(|p| p.call_id() == form.call_id && !p.is_decided())
    else {
        return stale("that call is no longer waiting (decided elsewhere, or the run moved on)");
    };
    if fingerprint(&execution_id, &pending) != form.fingerprint {
        return stale("that call changed since this page was shown");
    }
    let decision = match form.action.as_str() {
        "approve" => pending.approve(),
        "edit" => {
            let text = form.arguments.unwrap_or_default();
            match serde_json::from_str(&text) {
                Ok(arguments) => pending.approve_with(arguments),
                Err(e) => {
                    return error(
                        StatusCode::BAD_REQUEST,
                        &format!("the edited arguments are not JSON: {e}"),
                    )
                }
            }
        }
        "reject" => {
            let reason = form.reason.unwrap_or_default();
            let reason = reason.trim();
            pending.reject(if reason.is_empty() {
                "rejected from the console"
            } else {
                reason
            })
        }
        _ => return error(StatusCode::BAD_REQUEST, "action is approve, edit or reject"),
    };
    let decided = match Session::for_decisions(&console.store, id.clone())
        .decide(decision)
        .await
    {
        Ok(state) => state,
        Err(SessionError::Approval { source, .. }) => {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("the decision was refused: {source}"),
            )
        }
        Err(SessionError::Conflict { .. }) => {
            return stale("the session changed while deciding; reload and decide again")
        }
        Err(error) => return store_error(&error),
    };
    if decided.approvals_decided() {
        if let Some(agent) = &console.agent {
            let start = || {
                console
                    .runs
                    .start(agent, &console.store, &id, Turn::Resume, &console.shutdown)
            };
            let mut started = start();
            if matches!(started, Err(NotStarted::AlreadyRunning))
                && console.runs.ended(&id, SUSPENDING_TURN_ENDS_WITHIN).await
            {
                // The turn that suspended had committed the waiting calls (the page showed
                // them) but had not yet left the list of running turns: it ends without
                // another step, and the decided run resumes after it.
                started = start();
            }
            if let Err(reason) = started {
                return not_started(&reason, &headers);
            }
        }
    }
    Redirect::to(&session_path(&id, "")).into_response()
}

/// How long a decision waits for the session's suspending turn to end before it resumes the
/// run: that turn has committed its waiting calls and only returns, so on a loaded machine a
/// decision made at once used to find it still running and did not resume (the console's
/// browser test, under CI's load).
const SUSPENDING_TURN_ENDS_WITHIN: Duration = Duration::from_secs(5);

fn stale(why: &str) -> Response {
    error(
        StatusCode::CONFLICT,
        &format!("stale page: {why}. Reload the session and decide again."),
    )
}
