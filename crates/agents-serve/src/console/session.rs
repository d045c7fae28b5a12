//! `GET /sessions/{id}`: the conversation as the user sees it, each answer's execution
//! unfolded step by step, the chart of tokens and cost per turn, the waiting calls, and (with
//! an agent) the chat box.

use std::fmt::Debug;
use std::sync::Arc;

use agents_core::{AgentState, AgentStatus, StepExecution, ToolExecution};
use agents_sessions::SessionStore;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use maud::{html, Markup};
use messages::{Message, Role};

use crate::console::approvals::approvals_section;
use crate::console::chart::{turns_chart, TurnPoint};
use crate::console::format::{count, duration, json, session_path, time, trace_id, usd};
use crate::console::layout::{error, page as layout_page, store_error};
use crate::console::state::ConsoleState;

/// How many of the latest executions are shown step by step (each is one stored version to
/// load); older turns show their messages only.
pub(crate) const DETAILED_EXECUTIONS: usize = 30;

/// One execution as the page shows it: the state its last version holds.
pub(crate) struct Turn {
    /// The version whose state holds the execution's steps.
    pub(crate) version: u64,
    pub(crate) state: AgentState,
}

pub(crate) async fn page<S: SessionStore + Clone + Debug + 'static>(
    State(console): State<Arc<ConsoleState<S>>>,
    Path(id): Path<String>,
) -> Response {
    if let Err(error) = agents_sessions::validate_name(&id) {
        return store_error(&error);
    }
    let latest = match console.store.load_latest(&id).await {
        Ok(Some(latest)) => latest,
        // a session the console just started has no commit yet: show its turn running
        Ok(None) if console.runs.is_running(&id) => {
            return layout_page(
                &id,
                html! { h1 { (id) } p.meta { "starting…" } (chat_section(&console, &id, true)) },
            )
        }
        Ok(None) => return error(StatusCode::NOT_FOUND, "there is no session of that name"),
        Err(error) => return store_error(&error),
    };
    let executions = match console.store.executions(&id).await {
        Ok(executions) => executions,
        Err(error) => return store_error(&error),
    };
    let skipped = executions.len().saturating_sub(DETAILED_EXECUTIONS);
    let mut turns = Vec::with_capacity(executions.len() - skipped);
    for execution in executions.iter().skip(skipped) {
        let state = if execution.last_version == latest.version {
            latest.state.clone()
        } else {
            match console
                .store
                .load_version(&id, execution.last_version)
                .await
            {
                Ok(Some(state)) => state,
                // pruned meanwhile: that turn shows its messages only
                Ok(None) => continue,
                Err(error) => return store_error(&error),
            }
        };
        turns.push(Turn {
            version: execution.last_version,
            state,
        });
    }
    let running = console.runs.is_running(&id);
    let state = &latest.state;
    let title = state
        .messages()
        .iter()
        .find(|m| m.role() == Role::User)
        .map(|m| m.text().chars().take(80).collect::<String>())
        .unwrap_or_else(|| id.clone());
    let points: Vec<TurnPoint> = turns
        .iter()
        .enumerate()
        .map(|(i, turn)| TurnPoint::of(skipped + i + 1, &turn.state))
        .collect();
    layout_page(
        &title,
        html! {
            h1 { (title) }
            p.meta {
                "session " code { (id) } " · version " (latest.version)
                " · " (status_badge(state.status()))
                @if let Some(reason) = state.stop_reason() { " · stopped: " (format!("{reason:?}")) }
                " · tokens " (count(state.usage().input_tokens)) " in, "
                (count(state.usage().cache_read_tokens)) " cached, "
                (count(state.usage().output_tokens)) " out · cost " (usd(state.cost().usd()))
                " · last activity " (time(state.updated_at()))
            }
            (approvals_section(&console, &id, latest.version, state))
            @if !points.is_empty() {
                section.charts {
                    h2 { "Tokens and cost per turn" }
                    (turns_chart(&points))
                }
            }
            section.conversation {
                h2 { "Conversation" }
                (conversation(&console, &id, state, &turns, skipped))
            }
            (chat_section(&console, &id, running))
        },
    )
}

fn status_badge(status: AgentStatus) -> Markup {
    let name = format!("{status:?}");
    html! { span class=(format!("status {}", name.to_ascii_lowercase())) { (name) } }
}

/// The persistent conversation, with each turn's execution after its messages.
fn conversation<S>(
    console: &ConsoleState<S>,
    id: &str,
    state: &AgentState,
    turns: &[Turn],
    skipped: usize,
) -> Markup {
    let summary = state.store().section("summary").messages();
    let messages: Vec<Message> = state.messages().iter().cloned().collect();
    // Each turn shows the messages its execution added (by message count), then the
    // execution; what comes after the last one follows.
    let mut shown = 0;
    let mut parts = Vec::with_capacity(turns.len());
    for turn in turns {
        let end = turn.state.messages().len().min(messages.len()).max(shown);
        parts.push((shown..end, turn));
        shown = end;
    }
    html! {
        @if !summary.is_empty() {
            div.summary {
                h3 { "Summary of earlier conversation" }
                @for message in summary.iter() { (message_view(message)) }
            }
        }
        @if skipped > 0 {
            p.note { (skipped) " earlier turns show their messages only (their steps are in older versions)." }
        }
        @for (i, (range, turn)) in parts.iter().enumerate() {
            @for message in &messages[range.clone()] { (message_view(message)) }
            (execution_view(console, id, turn, skipped + i + 1))
        }
        @for message in &messages[shown..] { (message_view(message)) }
    }
}

/// One message of the conversation.
pub(crate) fn message_view(message: &Message) -> Markup {
    let role = format!("{:?}", message.role()).to_ascii_lowercase();
    html! {
        div class=(format!("message {role}")) {
            div.role { (role) @if let Some(name) = message.tool_name() { " · " (name) } }
            @if message.has_text() { pre.text { (message.text()) } }
            @for call in message.tool_calls() {
                div.call { "calls " code { (call.name()) } " " small { (call.id()) } pre { (json(call.arguments())) } }
            }
        }
    }
}

/// An execution, folded: its steps, each folded.
fn execution_view<S>(console: &ConsoleState<S>, id: &str, turn: &Turn, number: usize) -> Markup {
    let state = &turn.state;
    let Some(execution) = state.execution() else {
        return html! {};
    };
    let usage = state.execution_usage();
    let trace = trace_id(execution.id());
    let trace_link = trace.as_ref().and_then(|trace| {
        console
            .trace_url
            .as_ref()
            .map(|template| template.replace("{trace_id}", trace))
    });
    let steps = state.step_executions();
    html! {
        details.execution data-execution=(execution.id()) {
            summary {
                "turn " (number) " · execution: " (steps.len()) " steps · "
                (duration(steps.total_duration())) " · "
                (count(usage.input_tokens)) " in / " (count(usage.cache_read_tokens)) " cached / "
                (count(usage.output_tokens)) " out · " (usd(state.execution_cost().usd()))
                @if let Some(reason) = state.stop_reason() { " · stop: " (format!("{reason:?}")) }
            }
            p.meta {
                "execution " code { (execution.id()) }
                @if let Some(trace) = &trace {
                    " · trace "
                    @if let Some(link) = &trace_link { a.trace href=(link) { code { (trace) } } }
                    @else { code.trace { (trace) } }
                }
                " · started " (time(execution.started_at()))
            }
            ol.steps {
                @for (index, step) in steps.iter().enumerate() {
                    li { (step_view(id, turn.version, index, step)) }
                }
            }
        }
    }
}

fn step_view(id: &str, version: u64, index: usize, record: &StepExecution) -> Markup {
    let step = record.step();
    let usage = step.usage();
    let context = session_path(id, &format!("/context?version={version}&step={index}"));
    html! {
        details.step {
            summary {
                "step " (record.step_number()) " · " (format!("{:?}", step.step_type())) " · "
                (duration(record.duration())) " · " (count(usage.input_tokens)) " in / "
                (count(usage.cache_read_tokens)) " cached / " (count(usage.output_tokens)) " out · "
                (usd(step.cost().usd()))
                @if let Some(reason) = step.finish_reason() { " · finish: " (format!("{reason:?}")) }
                @if let Some(stop) = record.outcome().stop_reason() { " · stop: " (format!("{stop:?}")) }
                @if step.has_errors() { " · " span.error { "error" } }
            }
            div.step-body {
                p { a.context href=(context) { "what the model saw" } " · " small { "model " (step.inference_response().and_then(|r| r.model()).unwrap_or("unknown")) } }
                @if let Some(response) = step.inference_response() {
                    @if let Some(reasoning) = response.reasoning() {
                        details.reasoning { summary { "reasoning" } pre { (reasoning) } }
                    }
                    @if !response.content().is_empty() {
                        h4 { "model reply" }
                        pre.reply { (response.content()) }
                    }
                }
                @for call in step.tool_executions().iter() { (tool_view(call)) }
                @for message in step.error_messages() { p.error { (message) } }
            }
        }
    }
}

fn tool_view(call: &ToolExecution) -> Markup {
    html! {
        div.tool {
            h4 {
                "tool " code { (call.name()) } " · " (duration(call.duration()))
                " · " small { (call.id()) }
                @if let Some(kind) = call.failure_kind() { " · " span.error { (format!("{kind:?}")) } }
            }
            pre.arguments { (json(call.arguments())) }
            @if let Some(message) = call.error_message() {
                pre.error { (message) }
            } @else {
                pre.result { (call.result_text()) }
            }
        }
    }
}

fn chat_section<S>(console: &ConsoleState<S>, id: &str, running: bool) -> Markup {
    let Some(_) = &console.agent else {
        return html! {};
    };
    html! {
        section.chat-box
            data-events=(session_path(id, "/events"))
            data-running=(if running { "true" } else { "false" }) {
            h2 { "Chat" }
            div #live .live aria-live="polite" {}
            form #chat-form .chat method="post" action=(session_path(id, "/messages")) {
                input type="hidden" name="csrf" value=(console.csrf.value());
                textarea #chat-text name="text" rows="3" placeholder="your message" required {}
                button #send type="submit" { "Send" }
            }
            form #cancel-form .cancel method="post" action=(session_path(id, "/cancel")) {
                input type="hidden" name="csrf" value=(console.csrf.value());
                button #cancel type="submit" { "Cancel the running turn" }
            }
        }
    }
}
