//! HTTP plumbing shared by the providers: the client with timeouts and retries, the SSE
//! parser, error bodies and the secret wrapper for API keys.

pub(crate) mod builder_options;
pub(crate) mod client;
pub(crate) mod error_body;
pub(crate) mod event_stream;
pub(crate) mod replay;
pub(crate) mod retry;
pub(crate) mod secret;
pub(crate) mod sse;
