//! Agents as durable services on [Restate](https://restate.dev): a session is a Restate
//! virtual object keyed by session id, every model call and tool call of a step is a
//! journaled action, and an approval is an awakeable that any machine can resolve.
//!
//! - **One invocation at a time per session**, across any number of service instances:
//!   Restate guarantees it for a virtual object's exclusive handler (`send`). The read and
//!   decide handlers (`state`, `pending_approvals`, `approve`, `reject`, `cancel`) are shared,
//!   so they never queue behind a `send` that waits for a person.
//! - **Built on [`Agent::step`](agents_core::Agent::step)**: `send` steps the state while it
//!   can run, with a [`StepJournal`](agents_core::StepJournal) whose entries are Restate
//!   journal entries (`ctx.run`). A crash or redeploy mid-execution replays the journal: model
//!   replies are not paid for twice, a completed tool result is never recomputed, and a call
//!   interrupted in flight runs again only if its tool is retry-safe; any other gets a tool
//!   result saying it may or may not have taken effect.
//! - **Approvals suspend without holding a worker**: each waiting call is an awakeable;
//!   `approve`/`reject` through the ingress, from any process, resolve it; no decision within
//!   the approval timeout counts as a rejection.
//! - **Cancellation** (`cancel`, or cancelling the invocation through Restate) drops the step
//!   in flight and leaves a valid conversation: status `failed`, stop reason `user_requested`.
//!
//! See `docs/distributed.md` for running it, scaling it out, and when to choose it over the
//! Postgres session store.
//!
//! ```no_run
//! use std::sync::Arc;
//!
//! use agents_core::Agent;
//! use agents_restate::{register_deployment, serve, AgentSession, SessionClient};
//! use drivers_toolcalling::ToolCallingDriver;
//! use inference::{InferenceResponse, ScriptedModel};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let model = ScriptedModel::new([InferenceResponse::text("Hello from Restate")]);
//! let agent = Arc::new(Agent::new(ToolCallingDriver::new(model)));
//!
//! // The service: an HTTP/2 endpoint Restate sends invocations to.
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:9080").await?;
//! tokio::spawn(serve(AgentSession::new(agent), listener, std::future::pending::<()>()));
//! register_deployment("http://127.0.0.1:9070", "http://127.0.0.1:9080").await?;
//!
//! // Any process: a message to session "s1" through the ingress.
//! let client = SessionClient::new("http://127.0.0.1:8080")?;
//! let reply = client.send("s1", "hi").await?;
//! assert_eq!(reply.answer.as_deref(), Some("Hello from Restate"));
//! # Ok(())
//! # }
//! ```

mod client;
mod dispatch;
mod error;
mod journal;
mod object;
mod serve;
#[cfg(feature = "testing")]
pub mod testing;
mod wire;

pub use agents_core::INTERRUPTED_MESSAGE;
pub use client::{register_deployment, SessionClient, OBJECT_NAME};
pub use error::RestateError;
pub use object::AgentSession;
pub use restate_sdk::context::RunRetryPolicy;
pub use serve::{endpoint, serve};
pub use wire::{ApproveRequest, ExpireRequest, RejectRequest, SendReply, SendRequest, WaitingCall};
