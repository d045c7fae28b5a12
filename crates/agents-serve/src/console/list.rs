//! `GET /`: the sessions, newest first, searchable by title, a page at a time.

use std::fmt::Debug;
use std::sync::Arc;

use agents_sessions::{ListPage, SessionStore, SessionSummary};
use axum::extract::{Query, State};
use axum::response::Response;
use maud::{html, Markup};
use serde::Deserialize;

use crate::console::format::{count, session_path, time, url_escape, usd};
use crate::console::layout::{page as layout_page, store_error};
use crate::console::state::ConsoleState;

/// Sessions per page.
pub(crate) const PAGE_SIZE: u64 = 50;

#[derive(Debug, Default, Deserialize)]
pub(crate) struct ListQuery {
    #[serde(default)]
    q: Option<String>,
    #[serde(default)]
    page: Option<u64>,
}

pub(crate) async fn page<S: SessionStore + Clone + Debug + 'static>(
    State(console): State<Arc<ConsoleState<S>>>,
    Query(query): Query<ListQuery>,
) -> Response {
    let search = query.q.unwrap_or_default().trim().to_owned();
    let number = query.page.unwrap_or(0).min(1_000_000);
    // One more than a page, to know whether there is a next one.
    let mut list = ListPage::new(number * PAGE_SIZE, PAGE_SIZE + 1);
    if !search.is_empty() {
        list = list.matching(search.clone());
    }
    let mut sessions = match console.store.list(list).await {
        Ok(sessions) => sessions,
        Err(error) => return store_error(&error),
    };
    let more = sessions.len() as u64 > PAGE_SIZE;
    sessions.truncate(PAGE_SIZE as usize);
    let link = |page: u64| {
        let mut href = format!("/?page={page}");
        if !search.is_empty() {
            href.push_str(&format!("&q={}", url_escape(&search)));
        }
        href
    };
    layout_page(
        "Sessions",
        html! {
            h1 { "Sessions" }
            form.search method="get" action="/" {
                input type="search" name="q" value=(search) placeholder="search titles" aria-label="search titles";
                button type="submit" { "Search" }
            }
            @if console.agent.is_some() {
                (new_session_form(console.csrf.value()))
            }
            @if sessions.is_empty() {
                p.empty { @if search.is_empty() { "No sessions yet." } @else { "No session title contains that." } }
            } @else {
                table.sessions {
                    thead { tr {
                        th { "title" } th { "last activity" } th { "status" } th.num { "steps" }
                        th.num { "input" } th.num { "cached" } th.num { "output" } th.num { "cost" }
                    } }
                    tbody {
                        @for session in &sessions { (row(session)) }
                    }
                }
            }
            nav.pages {
                @if number > 0 { a.prev href=(link(number - 1)) { "← newer" } }
                span { "page " (number + 1) }
                @if more { a.next href=(link(number + 1)) { "older →" } }
            }
        },
    )
}

fn row(session: &SessionSummary) -> Markup {
    let title = if session.title.is_empty() {
        session.id.as_str()
    } else {
        session.title.as_str()
    };
    let status = session
        .status
        .map_or("unknown".to_owned(), |status| format!("{status:?}"));
    html! {
        tr {
            td { a href=(session_path(&session.id, "")) { (title) } br; small.id { (session.id) } }
            td { (time(session.updated_at)) }
            td { span class=(format!("status {}", status.to_ascii_lowercase())) { (status) } }
            td.num { (count(session.step_count)) }
            td.num { (count(session.usage.input_tokens)) }
            td.num { (count(session.usage.cache_read_tokens)) }
            td.num { (count(session.usage.output_tokens)) }
            td.num { (usd(session.cost_usd)) }
        }
    }
}

fn new_session_form(csrf: &str) -> Markup {
    html! {
        form.chat method="post" action="/sessions" {
            input type="hidden" name="csrf" value=(csrf);
            textarea name="text" rows="2" placeholder="start a new session: your message" required {}
            button type="submit" { "Start" }
        }
    }
}
