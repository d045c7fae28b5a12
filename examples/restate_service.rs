//! An agent as a durable service on Restate: the agent is served as the virtual object
//! `AgentSession` (one object per session id), registered with a Restate server, and used
//! through Restate's HTTP ingress, from this process or any other. Every model and tool call
//! is journaled, so a crash or redeploy resumes the run instead of repeating it.
//!
//! Run with `cargo run --example restate_service`. Needs a Restate server on 127.0.0.1:
//! `cargo xtask restate start` starts one and prints `AGENTS_TEST_RESTATE_INGRESS=...` and
//! `AGENTS_TEST_RESTATE_ADMIN=...`; export both (or set `RESTATE_INGRESS` and
//! `RESTATE_ADMIN`). Without a server it says so and stops (and fails in CI, where `.ci/run`
//! starts one). The model is scripted (no network).
//!
//! `cargo run --example restate_service -- --serve 127.0.0.1:9081` only serves (until
//! Ctrl-C), for running several instances behind a load balancer (docs/distributed.md).

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::sync::Arc;

use agents::prelude::*;
use agents::restate::{register_deployment, serve, AgentSession, SessionClient};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

/// A model that decides from the conversation alone (any instance can take any step): it
/// looks the order up once, then answers with what the tool said.
struct OrderDesk;

#[async_trait]
impl LanguageModel for OrderDesk {
    async fn complete(
        &self,
        request: InferenceRequest,
    ) -> Result<InferenceResponse, inference::InferenceError> {
        let looked_up = request
            .messages
            .iter()
            .rev()
            .find(|m| m.role() == Role::Tool);
        Ok(match looked_up {
            Some(result) => InferenceResponse::text(format!("Your order: {}", result.text())),
            None => InferenceResponse::with_tool_calls([ToolCall::new(
                "lookup_1",
                "lookup_order",
                json!({ "order": "A-1042" }),
            )]),
        })
    }
}

#[derive(Deserialize, JsonSchema)]
struct OrderArgs {
    /// The order number.
    order: String,
}

fn agent() -> Result<Agent, agents::BuildError> {
    let lookup = FunctionTool::new(
        "lookup_order",
        "Looks an order up",
        |args: OrderArgs| async move {
            Ok::<_, ToolError>(format!("{} shipped on Tuesday", args.order))
        },
    );
    AgentBuilder::new()
        .with_model(OrderDesk)
        .with_tool(lookup)
        .build()
}

fn env(names: [&str; 2]) -> Option<String> {
    names.iter().find_map(|name| std::env::var(name).ok())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let session = AgentSession::new(Arc::new(agent()?));
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, addr] = args.as_slice() {
        if flag == "--serve" {
            let listener = tokio::net::TcpListener::bind(addr.as_str()).await?;
            println!("serving AgentSession on http://{addr}; register it with Restate's admin API");
            serve(session, listener, tokio::signal::ctrl_c()).await?;
            return Ok(());
        }
    }

    let (Some(ingress), Some(admin)) = (
        env(["RESTATE_INGRESS", "AGENTS_TEST_RESTATE_INGRESS"]),
        env(["RESTATE_ADMIN", "AGENTS_TEST_RESTATE_ADMIN"]),
    ) else {
        let message = "no Restate server: run `cargo xtask restate start` and export the \
                       AGENTS_TEST_RESTATE_INGRESS and AGENTS_TEST_RESTATE_ADMIN it prints";
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            return Err(message.into());
        }
        eprintln!("SKIPPED: {message}");
        return Ok(());
    };

    // The service: an HTTP/2 endpoint Restate sends invocations to, registered once.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let endpoint = format!("http://{}", listener.local_addr()?);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve(session, listener, stopped));
    register_deployment(&admin, &endpoint).await?;
    println!("service at {endpoint}, registered with {admin}");

    // A client: any process that reaches the ingress.
    let client = SessionClient::new(&ingress)?;
    let id = format!("example-{}", std::process::id());
    let reply = client.send(&id, "Where is my order?").await?;
    println!("session {id}: {:?}, {} steps", reply.status, reply.steps);
    println!("answer: {}", reply.answer.as_deref().unwrap_or("(none)"));
    let state = client.state(&id).await?.ok_or("the session has no state")?;
    println!(
        "the stored conversation has {} messages",
        state.messages().len()
    );

    let _ = stop.send(());
    server.await??;
    if reply.status != AgentStatus::Completed
        || reply.answer.as_deref() != Some("Your order: A-1042 shipped on Tuesday")
    {
        return Err("the session did not answer from the tool's result".into());
    }
    Ok(())
}
