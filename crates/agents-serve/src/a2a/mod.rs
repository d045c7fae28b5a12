//! Agent2Agent (A2A 1.0) over JSON-RPC, as the `a2a-sdk` 1.3 Python client speaks it.
//!
//! - [`A2aServer`] (`agents a2a serve`): the agent card at `/.well-known/agent-card.json`
//!   and the JSON-RPC methods `SendMessage`, `SendStreamingMessage` (server-sent events),
//!   `GetTask` and `CancelTask` at `/` (and A2A 0.3's `message/send`, `message/stream`,
//!   `tasks/get` and `tasks/cancel`, in 0.3's shapes). An A2A task is a session: its id is the session's
//!   name, and its `contextId` is the same, so a message that names either continues that
//!   conversation. A run that waits for approval leaves its task `TASK_STATE_INPUT_REQUIRED`,
//!   with the waiting calls and their fingerprints in the status message; a message on the
//!   task with a decision (a data part `{"decision": "approve"|"reject", "call_id": ..,
//!   "fingerprint": .., "reason": ..}`, or the text `approve CALL_ID@FINGERPRINT`) decides.
//! - [`A2aAgentTool`]: a remote A2A agent as a tool (`a2a_agents:` in a definition), with a
//!   timeout and a cap on the text it returns.

mod client;
mod compat;
mod server;
mod wire;

pub use client::{A2aAgentTool, A2aClientError, A2aRemote};
pub use server::A2aServer;
