//! A stdio server's stderr goes to `tracing`, never into results. Alone in its test binary:
//! tracing's callsite cache makes a thread-scoped subscriber unreliable while other tests emit
//! the same events on other threads.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use agents_core::ToolContext;
use agents_mcp::testing::TestServers;
use agents_mcp::McpClient;
use serde_json::json;

/// Records the messages of `agents_mcp::stderr` events.
#[derive(Clone, Default)]
struct StderrLines(Arc<std::sync::Mutex<Vec<String>>>);

impl tracing::Subscriber for StderrLines {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        struct Message<'a>(&'a mut String);
        impl tracing::field::Visit for Message<'_> {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                if field.name() == "message" {
                    *self.0 = format!("{value:?}");
                }
            }
        }
        if event.metadata().target() == "agents_mcp::stderr" {
            let mut message = String::new();
            event.record(&mut Message(&mut message));
            self.0.lock().unwrap().push(message);
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[tokio::test(flavor = "current_thread")]
async fn the_servers_stderr_goes_to_tracing_not_to_the_result() {
    let lines = StderrLines::default();
    let _guard = tracing::subscriber::set_default(lines.clone());
    let Some(servers) = TestServers::find() else {
        return;
    };
    let client = McpClient::connect(servers.quirky()).await.unwrap();
    let tools = client.tools().await.unwrap();
    let echo = tools.iter().find(|t| t.name() == "echo").unwrap();
    let out = echo
        .call(json!({"text": "clean"}), &ToolContext::default())
        .await
        .unwrap();
    assert_eq!(out.content(), "clean");
    let started = Instant::now();
    let seen = loop {
        let seen = lines
            .0
            .lock()
            .unwrap()
            .iter()
            .any(|l| l == "quirky server starting: this line goes to stderr");
        if seen || started.elapsed() > Duration::from_secs(5) {
            break seen;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(seen, "stderr lines: {:?}", lines.0.lock().unwrap());
}
