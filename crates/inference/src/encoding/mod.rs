//! Request bodies as bytes: the `messages` array written one message at a time, a per-model
//! cache of what was already written, and the body sent as a chain of shared chunks.
//!
//! The providers' public body functions (`request_body`) build a `serde_json::Value`; a
//! provider's own calls write the same JSON straight to bytes, reusing the bytes of the
//! messages it already wrote for an earlier request of the same history (see
//! [`history::EncodeCache`]). Both go through one writer per provider ([`history::MessageWriter`])
//! over an [`array_out::ArrayOut`], so the two cannot drift; a property test checks that the
//! bytes equal a fresh `serde_json` encoding.

pub(crate) mod array_out;
pub(crate) mod body;
pub(crate) mod history;
pub(crate) mod object;
