//! The console in a real headless Chromium (Debian's `chromium` and `chromium-driver`, which
//! `cargo xtask browser` installs), driven over WebDriver: open the list, open a session,
//! unfold a step, see the chart and what the model saw, approve a pending call and see the
//! file its tool writes, send a message and watch the answer stream in, and check in the page
//! that a model answer holding `<script>` and `<img onerror>` ran nothing. Screenshots go to
//! `target/browser/`. Off CI the test skips (loudly) without Chromium; with `CI=true` it fails.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    missing_docs
)]

mod webdriver;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use agents_serve::testing::{self, HOSTILE_ANSWER};
use agents_serve::{server, Access, AccessToken, Auth, Console};
use agents_sessions::MemorySessionStore;
use inference::InferenceResponse;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use webdriver::Browser;

/// A guess the driver sets aside in the last chat turn, and the reply to the nudge it drops.
const GUESS: &str = "The notes say nothing.";
const DROPPED: &str = "The file notes.txt contains the line: hello.";
/// The streamed answer the chat part watches arrive.
const STREAMED: &str =
    "Streaming words arrive in the page one at a time, as the model writes them.";

/// chromedriver, killed (by its pid, through the handle) when the test ends.
struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn program(env: &str, candidates: &[&str]) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(env) {
        return Some(PathBuf::from(path));
    }
    candidates.iter().map(PathBuf::from).find(|p| p.is_file())
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn screenshots_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"),
        PathBuf::from,
    );
    let dir = target.join("browser");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn save(browser: &Browser, name: &str) {
    let png = browser.screenshot().await.unwrap();
    assert!(png.starts_with(b"\x89PNG"), "a PNG screenshot");
    std::fs::write(screenshots_dir().join(format!("{name}.png")), png).unwrap();
}

/// Polls `check` every 25 ms for up to `limit`.
async fn eventually<F, Fut>(limit: Duration, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = Instant::now();
    while start.elapsed() < limit {
        if check().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    false
}

async fn pwned(browser: &Browser) -> serde_json::Value {
    browser
        .execute("return window.__pwned === undefined ? null : String(window.__pwned);")
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_in_headless_chromium() {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    let chromium = program(
        "AGENTS_CHROMIUM",
        &["/usr/bin/chromium", "/usr/bin/chromium-browser"],
    );
    let chromedriver = program("AGENTS_CHROMEDRIVER", &["/usr/bin/chromedriver"]);
    let (Some(chromium), Some(chromedriver)) = (chromium, chromedriver) else {
        assert!(
            !ci,
            "CI=true but Chromium is missing: .ci/run must run `cargo xtask browser`"
        );
        eprintln!(
            "SKIPPED: the browser test needs chromium and chromedriver \
             (`cargo xtask browser` installs them)"
        );
        return;
    };

    // The server: a seeded store, an agent whose replies come in order (the resumed run after
    // the approval, then the chat answer, streamed a word every 80 ms).
    let dir = tempfile::tempdir().unwrap();
    let store = MemorySessionStore::new();
    let seeded = testing::seed(&store, dir.path()).await.unwrap();
    let agent = testing::scripted_agent(
        [
            InferenceResponse::text("The note is written."),
            InferenceResponse::text(STREAMED),
            // A guess about a file (set aside by the driver: no tool ran), then a reply to the
            // nudge that makes no call (dropped: the guess stands).
            InferenceResponse::text(GUESS),
            InferenceResponse::text(DROPPED),
        ],
        dir.path(),
        Duration::from_millis(80),
    );
    let listener = server::bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = server::local_addr(&listener).unwrap();
    let access = Access::new(addr, Auth::Token(AccessToken::random()))
        .unwrap()
        .with_cookie_login();
    let shutdown = CancellationToken::new();
    let (router, turns) = Console::new(store.clone())
        .with_agent(agent)
        .with_shutdown(shutdown.clone())
        .build();
    let served = tokio::spawn(server::serve(
        listener,
        access.protect(router),
        shutdown.clone(),
        Duration::from_secs(5),
    ));

    // chromedriver on a free port, Chromium headless with a fresh profile.
    let port = free_port();
    let _driver = Driver(
        Command::new(&chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let driver_url = format!("http://127.0.0.1:{port}");
    let ready = eventually(Duration::from_secs(20), || async {
        reqwest::get(format!("{driver_url}/status")).await.is_ok()
    })
    .await;
    assert!(ready, "chromedriver did not start");
    let profile = tempfile::tempdir().unwrap();
    let browser = Browser::start(
        &driver_url,
        json!({
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    "--window-size=1280,1000",
                    format!("--user-data-dir={}", profile.path().display()),
                ]
            }
        }),
    )
    .await
    .unwrap();

    // 1. The list, reached through the address with the token (traded for a cookie).
    browser.goto(&access.url("/")).await.unwrap();
    assert!(
        !browser.url().await.unwrap().contains("token="),
        "the token left the address"
    );
    let list = browser
        .find("table.sessions")
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(list.contains("What is the weather in Paris?"), "{list}");
    assert!(list.contains("Write a note, please"));
    save(&browser, "sessions").await;

    // 2. A session whose last answer is hostile: nothing of it runs.
    browser
        .find(&format!("a[href='/sessions/{}']", seeded.finished))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let reply = browser
        .find("details.execution:last-of-type")
        .await
        .unwrap();
    reply.click().await.unwrap();
    assert_eq!(
        pwned(&browser).await,
        serde_json::Value::Null,
        "no script of the model ran"
    );
    assert_eq!(
        browser.count("main img").await.unwrap(),
        0,
        "no image element was made"
    );
    assert_eq!(browser.count("main script").await.unwrap(), 0);
    let conversation = browser
        .find("section.conversation")
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        conversation.contains("<script>window.__pwned = 'script'</script>"),
        "the payload shows as text: {conversation}"
    );
    assert!(HOSTILE_ANSWER.contains("onerror"));

    // 3. Unfold the first turn and its first step: the tool call and its result appear.
    let first_turn = browser.find("details.execution summary").await.unwrap();
    first_turn.click().await.unwrap();
    let step = browser
        .find("details.execution details.step summary")
        .await
        .unwrap();
    step.click().await.unwrap();
    let tool = browser
        .find("details.execution details.step .tool")
        .await
        .unwrap();
    assert!(tool.displayed().await.unwrap());
    assert!(tool.text().await.unwrap().contains("sunny in Paris"));

    // 4. The chart.
    assert!(browser.count("#tokens-chart svg rect").await.unwrap() >= 6);
    assert!(browser.count("#cost-chart svg rect").await.unwrap() >= 2);
    save(&browser, "session").await;

    // 5. What the model saw at the second step: the question (messages) and the first step's
    // call and result (the execution buffer), sections marked.
    browser
        .find("details.execution ol.steps li:nth-child(2) details.step summary")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    browser
        .find("details.execution ol.steps li:nth-child(2) a.context")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    assert_eq!(
        browser.count("li[data-section='messages']").await.unwrap(),
        1
    );
    assert_eq!(
        browser
            .count("li[data-section='execution_buffer']")
            .await
            .unwrap(),
        2
    );
    save(&browser, "context").await;

    // 6. Approve the waiting call: the run resumes in the server and the tool writes its file.
    browser
        .goto(&format!("http://{addr}/sessions/{}", seeded.waiting))
        .await
        .unwrap();
    let fingerprint = browser
        .find("code.fingerprint")
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(fingerprint.len(), 12);
    save(&browser, "approval").await;
    browser
        .find("button.approve")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let written = seeded.dir.join("approved.txt");
    // (a page's own form post carries its Origin: the Referrer-Policy must not make it "null")
    // (the click may return before the page the post answers with has loaded: wait for it)
    assert!(
        eventually(Duration::from_secs(15), || async {
            browser.count("main").await.is_ok_and(|count| count == 1)
        })
        .await,
        "the decision was accepted"
    );
    assert!(
        eventually(Duration::from_secs(15), || async { written.exists() }).await,
        "the approved call ran"
    );
    assert_eq!(
        std::fs::read_to_string(&written).unwrap(),
        "written after approval"
    );
    assert!(
        eventually(Duration::from_secs(15), || async { turns.count() == 0 }).await,
        "the resumed run finished"
    );
    browser
        .goto(&format!("http://{addr}/sessions/{}", seeded.waiting))
        .await
        .unwrap();
    let page = browser.find("main").await.unwrap().text().await.unwrap();
    assert!(page.contains("The note is written."), "{page}");
    assert_eq!(browser.count("section.approvals").await.unwrap(), 0);

    // 7. Chat: the answer streams into the page a few words at a time.
    browser
        .goto(&format!("http://{addr}/sessions/{}", seeded.finished))
        .await
        .unwrap();
    browser
        .find("#chat-text")
        .await
        .unwrap()
        .type_text("And tomorrow?")
        .await
        .unwrap();
    browser.find("#send").await.unwrap().click().await.unwrap();
    let mut seen: Vec<String> = Vec::new();
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        let text = browser
            .execute(
                "const a = document.querySelector('#live .answer'); return a ? a.textContent : '';",
            )
            .await
            .unwrap()
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if seen.last() != Some(&text) {
            seen.push(text.clone());
        }
        if text == STREAMED {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(seen.last().map(String::as_str), Some(STREAMED), "{seen:?}");
    let partial = seen
        .iter()
        .filter(|t| !t.is_empty() && t.as_str() != STREAMED && STREAMED.starts_with(t.as_str()))
        .count();
    assert!(partial >= 2, "the text arrived in pieces: {seen:?}");
    assert!(
        eventually(Duration::from_secs(10), || async {
            browser
                .execute("return document.querySelector('#live .done') !== null;")
                .await
                .unwrap()
                .as_bool()
                .unwrap_or(false)
        })
        .await,
        "the page says the turn finished"
    );
    save(&browser, "chat").await;
    assert_eq!(pwned(&browser).await, serde_json::Value::Null);

    // 8. A reply the driver sets aside (an answer about a file given without looking) is
    // struck through and marked; the reply to the nudge makes no call, so it is dropped in
    // turn and the first reply stands again, no longer struck.
    browser
        .find("#chat-text")
        .await
        .unwrap()
        .type_text("What does notes.txt say?")
        .await
        .unwrap();
    browser.find("#send").await.unwrap().click().await.unwrap();
    assert!(
        eventually(Duration::from_secs(20), || async {
            browser
                .execute("return document.querySelectorAll('#live .done').length >= 2;")
                .await
                .unwrap()
                .as_bool()
                .unwrap_or(false)
        })
        .await,
        "the second chat turn finished"
    );
    let struck = browser
        .execute("return Array.from(document.querySelectorAll('#live .answer.set-aside')).map(a => a.textContent);")
        .await
        .unwrap();
    assert_eq!(struck, json!([DROPPED]));
    let answers = browser
        .execute("return Array.from(document.querySelectorAll('#live .answer')).map(a => a.textContent);")
        .await
        .unwrap();
    assert!(
        answers
            .as_array()
            .is_some_and(|a| a.contains(&json!(GUESS))),
        "the first reply stands, not struck: {answers}"
    );
    let live = browser.find("#live").await.unwrap().text().await.unwrap();
    for line in [
        "not the answer (the model answered about a file without looking at it): asking again",
        "dropped (the reply to the nudge made no call): the reply before it stands",
    ] {
        assert!(live.contains(line), "{line}: {live}");
    }
    save(&browser, "set-aside").await;

    browser.quit().await.unwrap();
    shutdown.cancel();
    served.await.unwrap().unwrap();
}
