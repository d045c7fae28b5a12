//! `GET /sessions/{id}/context?version=V&step=N`: what the model saw at step `N` of the
//! execution whose steps version `V` holds: the step's input messages in order, each marked
//! with the section it came from (summary, buffer, messages: the persistent conversation;
//! execution_buffer: the running execution's tool calls and results, which vanish when it
//! ends).

use std::collections::HashSet;
use std::fmt::Debug;
use std::sync::Arc;

use agents_core::AgentState;
use agents_sessions::SessionStore;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use maud::html;
use messages::Message;
use serde::Deserialize;

use crate::console::format::session_path;
use crate::console::layout::{error, page as layout_page, store_error};
use crate::console::session::message_view;
use crate::console::state::ConsoleState;

/// The persistent sections, in the order the model sees them.
const PERSISTENT: [&str; 3] = ["summary", "buffer", "messages"];
const EXECUTION_BUFFER: &str = "execution_buffer";

#[derive(Debug, Deserialize)]
pub(crate) struct ContextQuery {
    version: u64,
    step: usize,
}

pub(crate) async fn page<S: SessionStore + Clone + Debug + 'static>(
    State(console): State<Arc<ConsoleState<S>>>,
    Path(id): Path<String>,
    Query(query): Query<ContextQuery>,
) -> Response {
    let state = match console.store.load_version(&id, query.version).await {
        Ok(Some(state)) => state,
        Ok(None) => {
            return error(
                StatusCode::NOT_FOUND,
                "no such session or version (pruned?)",
            )
        }
        Err(error) => return store_error(&error),
    };
    let Some(record) = state.step_executions().get(query.step) else {
        return error(StatusCode::NOT_FOUND, "that version holds no such step");
    };
    let sections = label_sections(&state, record.step().input_messages().iter());
    let back = session_path(&id, "");
    layout_page(
        "What the model saw",
        html! {
            h1 { "What the model saw at step " (record.step_number()) }
            p.meta { a href=(back) { "back to the session" } " · version " (query.version) }
            p.legend {
                "Sections: "
                span.section-summary { "summary" } ", "
                span.section-buffer { "buffer" } ", "
                span.section-messages { "messages" } " (the persistent conversation) and "
                span.section-execution_buffer { "execution_buffer" }
                " (this execution's tool calls and results, cleared when it ends)."
            }
            ol.context {
                @for (section, message) in &sections {
                    li class=(format!("section-{section}")) data-section=(section) {
                        span.section-name { (section) }
                        (message_view(message))
                    }
                }
            }
        },
    )
}

/// Each message of `seen` with the section of `state` it belongs to: a persistent section
/// when that section holds this very message (the store shares one copy of each message
/// between sections and steps), else the execution buffer.
fn label_sections<'a>(
    state: &AgentState,
    seen: impl Iterator<Item = &'a Message>,
) -> Vec<(&'static str, &'a Message)> {
    let persistent: Vec<(&'static str, HashSet<*const Message>)> = PERSISTENT
        .iter()
        .map(|name| {
            let messages = state.store().section(name).messages();
            let pointers = messages.iter().map(|m| m as *const Message).collect();
            (*name, pointers)
        })
        .collect();
    seen.map(|message| {
        let pointer = message as *const Message;
        let section = persistent
            .iter()
            .find(|(_, pointers)| pointers.contains(&pointer))
            .map_or(EXECUTION_BUFFER, |(name, _)| name);
        (section, message)
    })
    .collect()
}
