//! An agent on Restate against llmock: the OpenAI-compatible provider's model call and the
//! tool call are journaled actions of a `send` through Restate's ingress (needs
//! `cargo xtask e2e`'s llmock and `cargo xtask restate start`'s server).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::Arc;

use agents::prelude::*;
use agents::restate::{register_deployment, serve, AgentSession, SessionClient};
use agents_e2e::{report, server};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct CityArgs {
    /// The city.
    city: String,
}

/// The Restate server, or `None` off CI (with a line saying so); in CI it must be there.
fn restate() -> Option<(String, String)> {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        let ingress = std::env::var("AGENTS_TEST_RESTATE_INGRESS")
            .expect("in CI the Restate server runs (.ci/run: cargo xtask restate start)");
        let admin = std::env::var("AGENTS_TEST_RESTATE_ADMIN").expect("the admin URL");
        return Some((ingress, admin));
    }
    Some((
        server("AGENTS_TEST_RESTATE_INGRESS")?,
        server("AGENTS_TEST_RESTATE_ADMIN")?,
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_calling_run_on_restate_against_llmock() {
    let Some(url) = server("E2E_LLMOCK_URL") else {
        return;
    };
    let Some((ingress, admin)) = restate() else {
        return;
    };
    let model = OpenAiCompatible::builder()
        .base_url(format!("{url}/v1"))
        .model("gpt-4o-mini")
        .build()
        .unwrap();
    let weather = FunctionTool::new(
        "get_weather",
        "Get the current weather for a city",
        |args: CityArgs| async move { Ok::<_, ToolError>(format!("22°C and sunny in {}", args.city)) },
    );
    let agent = AgentBuilder::new()
        .with_model(model)
        .with_tool(weather)
        .with_system_prompt("Use the tools.")
        .build()
        .unwrap();
    let name = format!("e2e_llmock_{}", std::process::id());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let service = tokio::spawn(serve(
        AgentSession::new(Arc::new(agent)).with_name(&name),
        listener,
        stopped,
    ));
    register_deployment(&admin, &endpoint).await.unwrap();
    let client = SessionClient::new(&ingress)
        .unwrap()
        .with_object_name(&name);

    let started = std::time::Instant::now();
    let reply = client
        .send("weather", "What is the weather in Paris?")
        .await
        .unwrap();
    let elapsed = started.elapsed();

    assert_eq!(reply.status, AgentStatus::Completed, "{reply:?}");
    assert!(!reply.answer.unwrap_or_default().is_empty());
    let state = client.state("weather").await.unwrap().unwrap();
    let tool_ran = state
        .step_executions()
        .steps()
        .flat_map(|s| s.tool_executions().iter())
        .any(|e| e.name() == "get_weather" && !e.has_error());
    assert!(tool_ran, "llmock should call the offered tool");
    report(&format!(
        "llmock agent run on Restate: {} steps in {:.0} ms through the ingress",
        state.step_count(),
        elapsed.as_secs_f64() * 1e3
    ));
    let _ = stop.send(());
    service.await.unwrap().unwrap();
}
