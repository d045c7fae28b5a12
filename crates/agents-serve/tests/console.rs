//! Every route of the console, through its router (axum's test utilities): what a person
//! sees, what a hostile model answer cannot do, and what a stale or forged request gets.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::Duration;

use agents_core::AgentStatus;
use agents_serve::testing::{self, Seeded};
use agents_serve::Console;
use agents_sessions::{MemorySessionStore, SessionStore};
use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use axum::response::Response;
use axum::Router;
use tower::ServiceExt;

struct Fixture {
    store: MemorySessionStore,
    seeded: Seeded,
    _dir: tempfile::TempDir,
}

async fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = MemorySessionStore::new();
    let seeded = testing::seed(&store, dir.path()).await.unwrap();
    Fixture {
        store,
        seeded,
        _dir: dir,
    }
}

fn read_only(store: &MemorySessionStore) -> Router {
    Console::new(store.clone()).build().0
}

async fn get(app: &Router, uri: &str) -> Response {
    app.clone()
        .oneshot(Request::get(uri).body(Body::empty()).unwrap())
        .await
        .unwrap()
}

async fn post(app: &Router, uri: &str, form: &[(&str, &str)], json: bool) -> Response {
    let body = form
        .iter()
        .map(|(k, v)| format!("{k}={}", escape(v)))
        .collect::<Vec<_>>()
        .join("&");
    let mut request =
        Request::post(uri).header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
    if json {
        request = request.header(header::ACCEPT, "application/json");
    }
    app.clone()
        .oneshot(request.body(Body::from(body)).unwrap())
        .await
        .unwrap()
}

fn escape(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

async fn text(response: Response) -> String {
    let bytes = axum::body::to_bytes(response.into_body(), 10 << 20)
        .await
        .unwrap();
    String::from_utf8(bytes.to_vec()).unwrap()
}

async fn page(app: &Router, uri: &str) -> String {
    let response = get(app, uri).await;
    assert_eq!(response.status(), StatusCode::OK, "{uri}");
    text(response).await
}

/// The value of the first hidden input `name` in `html`.
fn field(html: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = html
        .find(&marker)
        .unwrap_or_else(|| panic!("no {name} in page"))
        + marker.len();
    html[start..start + html[start..].find('"').unwrap()].to_owned()
}

#[tokio::test]
async fn the_list_shows_sessions_newest_first_with_status_tokens_and_cost() {
    let f = fixture().await;
    let app = read_only(&f.store);
    let response = get(&app, "/").await;
    assert_eq!(response.status(), StatusCode::OK);
    let csp = response.headers()[header::CONTENT_SECURITY_POLICY]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"),
        "{csp}"
    );
    let html = text(response).await;
    let waiting = html.find("Write a note, please").unwrap();
    let finished = html.find("What is the weather in Paris?").unwrap();
    assert!(waiting < finished, "newest first");
    assert!(html.contains("Suspended") && html.contains("Completed"));
    // gpt-4o-mini has a price: the cost is known
    assert!(!html.contains(">unknown<"), "{html}");
    assert!(html.contains("$0.0"), "{html}");
}

#[tokio::test]
async fn the_list_searches_titles_and_pages_through_thousands() {
    let f = fixture().await;
    let app = read_only(&f.store);
    let html = page(&app, "/?q=weather").await;
    assert!(html.contains("What is the weather in Paris?"));
    assert!(!html.contains("Write a note, please"));
    let html = page(&app, "/?q=nothing%20like%20this").await;
    assert!(html.contains("No session title contains that."));

    let store = MemorySessionStore::new();
    for i in 0..120 {
        let state = agents_core::AgentState::new().with_user_message(format!("question {i:03}"));
        let delta = agents_core::incremental::StateEncoder::new()
            .encode(&state)
            .unwrap();
        let mut commit = agents_sessions::Commit::new(&state, delta);
        commit.committed_at = chrono::Utc::now() + chrono::Duration::seconds(i);
        store.write(&format!("s{i:03}"), 0, &commit).await.unwrap();
    }
    let app = read_only(&store);
    let first = page(&app, "/").await;
    assert!(first.contains("question 119") && first.contains("question 070"));
    assert!(!first.contains("question 069"));
    assert!(
        first.contains("href=\"/?page=1\""),
        "a link to the next page"
    );
    let third = page(&app, "/?page=2").await;
    assert!(third.contains("question 019") && third.contains("question 000"));
    assert!(!third.contains("older →"), "the last page has no next");
    let searched = page(&app, "/?q=question%2011&page=0").await;
    assert!(searched.contains("question 119") && !searched.contains("question 099"));
}

#[tokio::test]
async fn a_session_page_unfolds_each_execution_step_by_step() {
    let f = fixture().await;
    let app = read_only(&f.store);
    let html = page(&app, &format!("/sessions/{}", f.seeded.finished)).await;
    // the conversation, in order
    let question = html.find("What is the weather in Paris?").unwrap();
    let answer = html.find("It is sunny in Paris.").unwrap();
    assert!(question < answer);
    // two turns, each an execution with its steps
    assert_eq!(html.matches("<details class=\"execution\"").count(), 2);
    assert!(html.contains("turn 1 · execution: 2 steps"), "{html}");
    // the tool call with its arguments and result, the model's reply beside it
    assert!(html.contains("tool <code>lookup</code>"));
    assert!(
        html.contains("&quot;city&quot;: &quot;Paris&quot;"),
        "{html}"
    );
    assert!(html.contains("sunny in Paris"));
    assert!(html.contains("Let me think."));
    assert!(html.contains("finish: ") && html.contains("stop: "));
    // executions link to their trace ids (32 hex digits of the execution id)
    let state = f.store.load(&f.seeded.finished).await.unwrap().unwrap();
    let trace = state.execution().unwrap().id().replace('-', "");
    assert!(html.contains(&trace), "trace id {trace}");
    // the chart
    assert!(html.contains("id=\"tokens-chart\"") && html.contains("<svg"));
    assert!(html.contains("turn 2: "));
    // no agent: no chat box
    assert!(!html.contains("chat-form"));
}

#[tokio::test]
async fn hostile_model_text_is_escaped_everywhere() {
    let f = fixture().await;
    let app = read_only(&f.store);
    let html = page(&app, &format!("/sessions/{}", f.seeded.finished)).await;
    assert!(!html.contains("<script>window"), "{html}");
    assert!(!html.contains("<img src=x"), "{html}");
    assert!(!html.contains("<b>bold</b>"));
    assert!(html.contains("&lt;script&gt;window.__pwned"));
    assert!(html.contains("&lt;img src=x onerror="));
    // the only scripts are the console's own
    assert_eq!(html.matches("<script").count(), 1);
    assert!(html.contains("<script src=\"/static/console.js\" defer>"));

    // a session whose very name is markup
    let store = MemorySessionStore::new();
    let state = agents_core::AgentState::new().with_user_message("<img src=x onerror=alert(1)>");
    let delta = agents_core::incremental::StateEncoder::new()
        .encode(&state)
        .unwrap();
    store
        .write(
            "<b>name</b>",
            0,
            &agents_sessions::Commit::new(&state, delta),
        )
        .await
        .unwrap();
    let app = read_only(&store);
    let list = page(&app, "/").await;
    assert!(!list.contains("<b>name</b>") && !list.contains("<img src=x"));
    assert!(
        list.contains("href=\"/sessions/%3Cb%3Ename%3C%2Fb%3E\""),
        "{list}"
    );
    let one = page(&app, "/sessions/%3Cb%3Ename%3C%2Fb%3E").await;
    assert!(one.contains("&lt;img src=x onerror=alert(1)&gt;"));
}

#[tokio::test]
async fn what_the_model_saw_marks_each_message_with_its_section() {
    let f = fixture().await;
    let app = read_only(&f.store);
    let executions = f.store.executions(&f.seeded.finished).await.unwrap();
    let version = executions[0].last_version;
    // step 2 saw the question (messages) and step 1's call and result (execution buffer)
    let html = page(
        &app,
        &format!(
            "/sessions/{}/context?version={version}&step=1",
            f.seeded.finished
        ),
    )
    .await;
    let sections: Vec<&str> = html
        .split("data-section=\"")
        .skip(1)
        .map(|rest| &rest[..rest.find('"').unwrap()])
        .collect();
    assert_eq!(
        sections,
        ["messages", "execution_buffer", "execution_buffer"],
        "{html}"
    );
    assert!(html.contains("What is the weather in Paris?"));
    // step 1 saw only the question
    let html = page(
        &app,
        &format!(
            "/sessions/{}/context?version={version}&step=0",
            f.seeded.finished
        ),
    )
    .await;
    assert_eq!(html.matches("data-section=").count(), 1);
    let missing = get(
        &app,
        &format!(
            "/sessions/{}/context?version={version}&step=9",
            f.seeded.finished
        ),
    )
    .await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    let bad = get(
        &app,
        &format!("/sessions/{}/context?version=x&step=0", f.seeded.finished),
    )
    .await;
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn unknown_sessions_and_bad_names_get_clear_pages() {
    let f = fixture().await;
    let app = read_only(&f.store);
    let missing = get(&app, "/sessions/nobody").await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    assert!(text(missing).await.contains("no session of that name"));
    let bad = get(&app, "/sessions/a%07b").await;
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
    assert!(text(bad).await.contains("control characters"));
    assert_eq!(
        get(&app, "/no/such/page").await.status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(text(get(&app, "/health").await).await, "ok\n");
    let css = get(&app, "/static/console.css").await;
    assert_eq!(
        css.headers()[header::CONTENT_TYPE],
        "text/css; charset=utf-8"
    );
    let js = get(&app, "/static/console.js").await;
    assert_eq!(
        js.headers()[header::CONTENT_TYPE],
        "text/javascript; charset=utf-8"
    );
    assert!(
        !text(js).await.contains("innerHTML"),
        "the script writes text only"
    );
}

/// The decision form fields of the waiting session's page.
async fn decision_fields(app: &Router, id: &str) -> (String, String, String) {
    let html = page(app, &format!("/sessions/{id}")).await;
    (
        field(&html, "csrf"),
        field(&html, "call_id"),
        field(&html, "fingerprint"),
    )
}

#[tokio::test]
async fn approvals_show_the_call_and_refuse_forged_or_stale_decisions() {
    let f = fixture().await;
    let app = read_only(&f.store);
    let id = f.seeded.waiting.clone();
    let html = page(&app, &format!("/sessions/{id}")).await;
    assert!(html.contains("Waiting for approval"));
    assert!(html.contains("&quot;name&quot;: &quot;approved.txt&quot;"));
    let (csrf, call, print) = decision_fields(&app, &id).await;
    assert_eq!(print.len(), 12);
    let uri = format!("/sessions/{id}/approvals");
    // no CSRF token, or a wrong one
    for token in ["", "0123456789abcdef0123456789abcdef"] {
        let response = post(
            &app,
            &uri,
            &[
                ("csrf", token),
                ("call_id", &call),
                ("fingerprint", &print),
                ("action", "approve"),
            ],
            false,
        )
        .await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN);
    }
    // a page showing another fingerprint is stale
    let response = post(
        &app,
        &uri,
        &[
            ("csrf", &csrf),
            ("call_id", &call),
            ("fingerprint", "000000000000"),
            ("action", "approve"),
        ],
        false,
    )
    .await;
    assert_eq!(response.status(), StatusCode::CONFLICT);
    assert!(text(response).await.contains("stale page"));
    // bad edited arguments
    let response = post(
        &app,
        &uri,
        &[
            ("csrf", &csrf),
            ("call_id", &call),
            ("fingerprint", &print),
            ("action", "edit"),
            ("arguments", "{not json"),
        ],
        false,
    )
    .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let state = f.store.load(&id).await.unwrap().unwrap();
    assert!(
        !state.pending_approvals()[0].is_decided(),
        "nothing was decided"
    );

    // the right decision is recorded; without an agent the page says how to resume
    let response = post(
        &app,
        &uri,
        &[
            ("csrf", &csrf),
            ("call_id", &call),
            ("fingerprint", &print),
            ("action", "approve"),
        ],
        false,
    )
    .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let state = f.store.load(&id).await.unwrap().unwrap();
    assert!(state.approvals_decided());
    let html = page(&app, &format!("/sessions/{id}")).await;
    assert!(html.contains("agents run --session notes-to-approve --resume"));
    // deciding again: the page is stale
    let again = post(
        &app,
        &uri,
        &[
            ("csrf", &csrf),
            ("call_id", &call),
            ("fingerprint", &print),
            ("action", "reject"),
        ],
        false,
    )
    .await;
    assert_eq!(again.status(), StatusCode::CONFLICT);
    assert!(
        !f.seeded.dir.join("approved.txt").exists(),
        "no agent: nothing ran"
    );
}

async fn wait_until_idle(console_runs: &agents_serve::RunningTurns) {
    for _ in 0..500 {
        if console_runs.count() == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the turn did not finish");
}

#[tokio::test]
async fn with_an_agent_an_approval_resumes_the_run_and_the_tool_writes() {
    let f = fixture().await;
    let agent = testing::scripted_agent(
        [inference::InferenceResponse::text("The note is written.")],
        &f.seeded.dir,
        Duration::ZERO,
    );
    let (app, turns) = Console::new(f.store.clone()).with_agent(agent).build();
    let id = f.seeded.waiting.clone();
    let (csrf, call, print) = decision_fields(&app, &id).await;
    let response = post(
        &app,
        &format!("/sessions/{id}/approvals"),
        &[
            ("csrf", &csrf),
            ("call_id", &call),
            ("fingerprint", &print),
            ("action", "edit"),
            (
                "arguments",
                "{\"name\": \"approved.txt\", \"text\": \"edited on the page\"}",
            ),
        ],
        false,
    )
    .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    wait_until_idle(&turns).await;
    let written = std::fs::read_to_string(f.seeded.dir.join("approved.txt")).unwrap();
    assert_eq!(written, "edited on the page");
    let state = f.store.load(&id).await.unwrap().unwrap();
    assert_eq!(state.status(), AgentStatus::Completed);
    assert_eq!(
        state.final_response().unwrap().text(),
        "The note is written."
    );
}

#[tokio::test]
async fn a_rejected_call_never_runs() {
    let f = fixture().await;
    let agent = testing::scripted_agent(
        [inference::InferenceResponse::text("Understood, no note.")],
        &f.seeded.dir,
        Duration::ZERO,
    );
    let (app, turns) = Console::new(f.store.clone()).with_agent(agent).build();
    let id = f.seeded.waiting.clone();
    let (csrf, call, print) = decision_fields(&app, &id).await;
    let response = post(
        &app,
        &format!("/sessions/{id}/approvals"),
        &[
            ("csrf", &csrf),
            ("call_id", &call),
            ("fingerprint", &print),
            ("action", "reject"),
            ("reason", "not today"),
        ],
        false,
    )
    .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    wait_until_idle(&turns).await;
    assert!(!f.seeded.dir.join("approved.txt").exists());
    let html = page(&app, &format!("/sessions/{id}")).await;
    assert!(html.contains("not today"), "the model was told why");
    assert!(html.contains("Understood, no note."), "{html}");
}

#[tokio::test]
async fn chat_streams_the_answer_and_needs_the_csrf_token() {
    let f = fixture().await;
    let agent = testing::chatty_agent(
        "Streaming words arrive one by one",
        2,
        &f.seeded.dir,
        Duration::from_millis(5),
    );
    let (app, turns) = Console::new(f.store.clone()).with_agent(agent).build();
    let html = page(&app, &format!("/sessions/{}", f.seeded.finished)).await;
    assert!(html.contains("chat-form"));
    let csrf = field(&html, "csrf");
    let uri = format!("/sessions/{}/messages", f.seeded.finished);
    let forged = post(&app, &uri, &[("text", "hi")], true).await;
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    let empty = post(&app, &uri, &[("csrf", &csrf), ("text", "  ")], true).await;
    assert_eq!(empty.status(), StatusCode::BAD_REQUEST);

    let started = post(
        &app,
        &uri,
        &[("csrf", &csrf), ("text", "tell me more")],
        true,
    )
    .await;
    assert_eq!(started.status(), StatusCode::ACCEPTED);
    let body: serde_json::Value = serde_json::from_str(&text(started).await).unwrap();
    // a second message while the turn runs is refused
    let busy = post(&app, &uri, &[("csrf", &csrf), ("text", "and more")], true).await;
    assert_eq!(busy.status(), StatusCode::CONFLICT);
    let events = get(&app, body["events"].as_str().unwrap()).await;
    assert_eq!(events.headers()[header::CONTENT_TYPE], "text/event-stream");
    let stream = text(events).await;
    let texts: Vec<&str> = stream
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter(|data| data.contains("\"type\":\"text\""))
        .collect();
    assert!(texts.len() >= 5, "a word at a time: {stream}");
    assert!(
        stream.contains("\"type\":\"done\",\"status\":\"Completed\""),
        "{stream}"
    );
    wait_until_idle(&turns).await;
    let state = f.store.load(&f.seeded.finished).await.unwrap().unwrap();
    assert_eq!(
        state.final_response().unwrap().text(),
        "Streaming words arrive one by one"
    );
    // when nothing runs the stream says so and ends
    let idle = text(get(&app, &format!("/sessions/{}/events", f.seeded.finished)).await).await;
    assert!(idle.contains("event: idle"));

    // a new session from the list page
    let response = post(
        &app,
        "/sessions",
        &[("csrf", &csrf), ("text", "a new one")],
        false,
    )
    .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let location = response.headers()[header::LOCATION]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(location.starts_with("/sessions/web-"), "{location}");
    wait_until_idle(&turns).await;
    assert!(page(&app, &location).await.contains("a new one"));
}

#[tokio::test]
async fn chat_needs_an_agent_and_cancel_stops_a_turn() {
    let f = fixture().await;
    let app = read_only(&f.store);
    let html = page(&app, "/").await;
    assert!(!html.contains("start a new session"));
    let csrf = "x".repeat(64);
    let response = post(
        &app,
        &format!("/sessions/{}/messages", f.seeded.finished),
        &[("csrf", &csrf), ("text", "hi")],
        true,
    )
    .await;
    assert_eq!(
        response.status(),
        StatusCode::FORBIDDEN,
        "CSRF is checked first"
    );

    let agent = testing::chatty_agent(
        &"word ".repeat(400),
        1,
        &f.seeded.dir,
        Duration::from_millis(20),
    );
    let (app, turns) = Console::new(f.store.clone()).with_agent(agent).build();
    let html = page(&app, "/").await;
    let csrf = field(&html, "csrf");
    let uri = format!("/sessions/{}/messages", f.seeded.finished);
    let started = post(&app, &uri, &[("csrf", &csrf), ("text", "talk a lot")], true).await;
    assert_eq!(started.status(), StatusCode::ACCEPTED);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let cancelled = post(
        &app,
        &format!("/sessions/{}/cancel", f.seeded.finished),
        &[("csrf", &csrf)],
        false,
    )
    .await;
    assert_eq!(cancelled.status(), StatusCode::SEE_OTHER);
    wait_until_idle(&turns).await;
    let state = f.store.load(&f.seeded.finished).await.unwrap().unwrap();
    assert_eq!(state.status(), AgentStatus::Failed);
    assert_eq!(
        state.stop_reason(),
        Some(agents_core::StopReason::UserRequested)
    );
    let nothing = post(
        &app,
        &format!("/sessions/{}/cancel", f.seeded.finished),
        &[("csrf", &csrf)],
        false,
    )
    .await;
    assert_eq!(nothing.status(), StatusCode::CONFLICT);
}

#[tokio::test]
async fn the_console_behind_its_access_rules_needs_the_token() {
    let f = fixture().await;
    let access = agents_serve::Access::new(
        "127.0.0.1:8123".parse().unwrap(),
        agents_serve::Auth::Token(agents_serve::AccessToken::random()),
    )
    .unwrap()
    .with_cookie_login();
    let app = access.protect(read_only(&f.store));
    let response = app
        .clone()
        .oneshot(
            Request::get("/")
                .header(header::HOST, "127.0.0.1:8123")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let url = access.url("/");
    let path = &url[url.find("/?").unwrap()..];
    let response = app
        .oneshot(
            Request::get(path)
                .header(header::HOST, "127.0.0.1:8123")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert!(response.headers()[header::SET_COOKIE]
        .to_str()
        .unwrap()
        .contains("HttpOnly; SameSite=Strict"));
}

/// Who holds `id`'s lease now, as `(pid, host)`.
async fn lease_holder(store: &MemorySessionStore, id: &str) -> Option<(u32, String)> {
    store
        .lease_holder(id, chrono::Utc::now())
        .await
        .unwrap()
        .map(|holder| (holder.pid, holder.host))
}

fn this_process() -> Option<(u32, String)> {
    Some((std::process::id(), agents_sessions::this_host()))
}

/// A message on a session another process runs is refused before anything runs, saying who
/// runs it (to the script as JSON, to a plain form as a page); the model is not asked, and
/// the console goes on serving other sessions.
#[tokio::test]
async fn chat_on_a_session_another_runner_holds_is_refused_naming_the_holder() {
    let f = fixture().await;
    let agent = testing::chatty_agent("from the console", 1, &f.seeded.dir, Duration::ZERO);
    let (app, turns) = Console::new(f.store.clone()).with_agent(agent).build();
    let id = f.seeded.finished.clone();
    let before = f.store.load(&id).await.unwrap().unwrap();
    testing::lease_elsewhere(&f.store, &id).await.unwrap();
    let csrf = field(&page(&app, &format!("/sessions/{id}")).await, "csrf");
    let uri = format!("/sessions/{id}/messages");

    let response = post(&app, &uri, &[("csrf", &csrf), ("text", "hello?")], true).await;
    assert_eq!(response.status(), StatusCode::CONFLICT);
    let body: serde_json::Value = serde_json::from_str(&text(response).await).unwrap();
    let message = body["error"].as_str().unwrap();
    assert!(
        message.contains("being run by another process")
            && message.contains("pid 4242 on elsewhere"),
        "{message}"
    );
    let response = post(&app, &uri, &[("csrf", &csrf), ("text", "hello?")], false).await;
    assert_eq!(response.status(), StatusCode::CONFLICT);
    assert!(text(response)
        .await
        .contains("being run by another process (pid 4242 on elsewhere"));

    assert_eq!(turns.count(), 0, "no turn started");
    assert_eq!(f.store.load(&id).await.unwrap().unwrap(), before);
    let idle = text(get(&app, &format!("/sessions/{id}/events")).await).await;
    assert!(idle.contains("event: idle"));
    // The scripted model still holds its one answer: a new session gets it.
    let response = post(
        &app,
        "/sessions",
        &[("csrf", &csrf), ("text", "a new one")],
        true,
    )
    .await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    let body: serde_json::Value = serde_json::from_str(&text(response).await).unwrap();
    wait_until_idle(&turns).await;
    let state = f
        .store
        .load(body["session"].as_str().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(state.final_response().unwrap().text(), "from the console");
}

/// A console whose agent makes one slow call of the tool `slow` (held at `gate`), then
/// answers `answer`; with `approval`, the call waits for a person's approval first.
struct SlowConsole {
    store: MemorySessionStore,
    gate: testing::Gate,
    shutdown: tokio_util::sync::CancellationToken,
    app: Router,
    turns: agents_serve::RunningTurns,
    csrf: String,
    _dir: tempfile::TempDir,
}

async fn slow_console(answer: &str, approval: bool) -> SlowConsole {
    let dir = tempfile::tempdir().unwrap();
    let store = MemorySessionStore::new();
    let gate = testing::Gate::new();
    let mut agent = testing::scripted_agent(
        [
            inference::InferenceResponse::with_tool_calls([messages::ToolCall::new(
                "call_slow",
                "slow",
                serde_json::json!({}),
            )]),
            inference::InferenceResponse::text(answer),
        ],
        dir.path(),
        Duration::ZERO,
    )
    .with_tool(gate.tool("slow"));
    if approval {
        agent = agent.with_approval_required(["slow"]);
    }
    let shutdown = tokio_util::sync::CancellationToken::new();
    let (app, turns) = Console::new(store.clone())
        .with_agent(agent)
        .with_shutdown(shutdown.clone())
        .build();
    let csrf = field(&page(&app, "/").await, "csrf");
    SlowConsole {
        store,
        gate,
        shutdown,
        app,
        turns,
        csrf,
        _dir: dir,
    }
}

impl SlowConsole {
    /// Sends `text` on session `id` as the page's script does.
    async fn send(&self, id: &str, text: &str) -> Response {
        post(
            &self.app,
            &format!("/sessions/{id}/messages"),
            &[("csrf", &self.csrf), ("text", text)],
            true,
        )
        .await
    }

    /// Waits until the tool's call has begun.
    async fn entered(&self) {
        tokio::time::timeout(Duration::from_secs(10), self.gate.entered())
            .await
            .expect("the slow tool was called");
    }
}

/// While a console turn is inside a slow tool call it holds the session's lease. A shutdown
/// refuses new turns at once but waits for the running one: it finishes, its answer is
/// committed, and then its lease is given back.
#[tokio::test]
async fn shutdown_waits_for_a_running_turn_which_finishes_under_its_lease_then_releases_it() {
    let c = slow_console("slow work done", false).await;
    assert_eq!(c.send("slow-1", "go").await.status(), StatusCode::ACCEPTED);
    c.entered().await;
    assert_eq!(lease_holder(&c.store, "slow-1").await, this_process());

    c.shutdown.cancel();
    for id in ["slow-1", "another"] {
        let response = c.send(id, "more").await;
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE, "{id}");
        let body: serde_json::Value = serde_json::from_str(&text(response).await).unwrap();
        assert!(
            body["error"].as_str().unwrap().contains("shutting down"),
            "{body}"
        );
    }
    let finishing = tokio::spawn({
        let turns = c.turns.clone();
        async move { turns.finish(Duration::from_secs(30)).await }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!finishing.is_finished(), "the shutdown waits for the turn");
    assert_eq!(lease_holder(&c.store, "slow-1").await, this_process());

    c.gate.open();
    tokio::time::timeout(Duration::from_secs(10), finishing)
        .await
        .expect("the shutdown finished once the turn did")
        .unwrap();
    assert_eq!(c.turns.count(), 0);
    let state = c.store.load("slow-1").await.unwrap().unwrap();
    assert_eq!(state.status(), AgentStatus::Completed);
    assert_eq!(state.final_response().unwrap().text(), "slow work done");
    assert_eq!(lease_holder(&c.store, "slow-1").await, None, "released");
    assert!(
        c.store.load("another").await.unwrap().is_none(),
        "never ran"
    );
}

/// A turn still running when the grace period ends is cancelled: its state is committed
/// (stopped on request, the conversation usable) and its lease given back, even though its
/// tool call never returns on its own.
#[tokio::test]
async fn a_turn_still_running_after_the_grace_is_cancelled_and_its_lease_released() {
    let c = slow_console("never said", false).await;
    assert_eq!(c.send("stuck", "go").await.status(), StatusCode::ACCEPTED);
    c.entered().await;
    c.shutdown.cancel();
    tokio::time::timeout(
        Duration::from_secs(10),
        c.turns.finish(Duration::from_millis(100)),
    )
    .await
    .expect("the cancelled turn stopped");
    let state = c.store.load("stuck").await.unwrap().unwrap();
    assert_eq!(
        state.stop_reason(),
        Some(agents_core::StopReason::UserRequested)
    );
    assert_eq!(lease_holder(&c.store, "stuck").await, None, "released");
}

/// Approving from the console takes the session's lease like any runner: refused (naming the
/// holder, nothing decided) while another process holds it; once free, the decision is
/// recorded and the resumed run holds the lease through its tool call, then gives it back.
#[tokio::test]
async fn approving_from_the_console_decides_and_resumes_under_the_lease() {
    let c = slow_console("approved work done", true).await;
    assert_eq!(c.send("gated", "go").await.status(), StatusCode::ACCEPTED);
    wait_until_idle(&c.turns).await;
    assert_eq!(
        c.store.load("gated").await.unwrap().unwrap().status(),
        AgentStatus::Suspended
    );
    assert_eq!(lease_holder(&c.store, "gated").await, None);
    let (csrf, call, print) = decision_fields(&c.app, "gated").await;
    let approve = [
        ("csrf", csrf.as_str()),
        ("call_id", call.as_str()),
        ("fingerprint", print.as_str()),
        ("action", "approve"),
    ];

    let other = testing::lease_elsewhere(&c.store, "gated").await.unwrap();
    let response = post(&c.app, "/sessions/gated/approvals", &approve, false).await;
    assert_eq!(response.status(), StatusCode::CONFLICT);
    assert!(text(response)
        .await
        .contains("being run by another process (pid 4242 on elsewhere"));
    let state = c.store.load("gated").await.unwrap().unwrap();
    assert!(
        !state.pending_approvals()[0].is_decided(),
        "nothing decided"
    );
    assert_eq!(c.turns.count(), 0);

    c.store.release_lease("gated", &other).await.unwrap();
    let response = post(&c.app, "/sessions/gated/approvals", &approve, false).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    c.entered().await;
    assert_eq!(lease_holder(&c.store, "gated").await, this_process());
    c.gate.open();
    wait_until_idle(&c.turns).await;
    let state = c.store.load("gated").await.unwrap().unwrap();
    assert_eq!(state.status(), AgentStatus::Completed);
    assert_eq!(state.final_response().unwrap().text(), "approved work done");
    assert_eq!(lease_holder(&c.store, "gated").await, None);
}

/// Once the server is shutting down, a decision that would resume the run is refused before
/// it is recorded: nothing is decided and the tool does not run.
#[tokio::test]
async fn a_decision_after_shutdown_began_is_refused_and_not_recorded() {
    let f = fixture().await;
    let agent = testing::scripted_agent(
        [inference::InferenceResponse::text("The note is written.")],
        &f.seeded.dir,
        Duration::ZERO,
    );
    let shutdown = tokio_util::sync::CancellationToken::new();
    let (app, turns) = Console::new(f.store.clone())
        .with_agent(agent)
        .with_shutdown(shutdown.clone())
        .build();
    let id = f.seeded.waiting.clone();
    let (csrf, call, print) = decision_fields(&app, &id).await;
    shutdown.cancel();
    let response = post(
        &app,
        &format!("/sessions/{id}/approvals"),
        &[
            ("csrf", &csrf),
            ("call_id", &call),
            ("fingerprint", &print),
            ("action", "approve"),
        ],
        false,
    )
    .await;
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(text(response).await.contains("shutting down"));
    assert_eq!(turns.count(), 0);
    let state = f.store.load(&id).await.unwrap().unwrap();
    assert!(
        !state.pending_approvals()[0].is_decided(),
        "nothing decided"
    );
    assert!(!f.seeded.dir.join("approved.txt").exists());
}
