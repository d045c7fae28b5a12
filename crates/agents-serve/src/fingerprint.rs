//! A waiting call's fingerprint (API.md section 8): 12 hex digits of SHA-256 over the
//! execution id, the call id, the tool name and the canonical arguments. A decision made on
//! a page carries the fingerprint the page showed; a call whose fingerprint changed since
//! (another run, edited arguments) is refused as stale.
//!
//! This is the one place the console computes it; when `agents-core` provides
//! `AgentState::approve_checked`, this function gives way to it.

use agents_core::PendingApproval;
use sha2::{Digest, Sha256};

/// The fingerprint of `pending` in the execution `execution_id`.
pub fn fingerprint(execution_id: &str, pending: &PendingApproval) -> String {
    let mut hasher = Sha256::new();
    hasher.update(execution_id.as_bytes());
    hasher.update([0]);
    hasher.update(pending.call_id().as_bytes());
    hasher.update([0]);
    // the tool name, a NUL, the arguments as canonical JSON (keys sorted at every depth)
    hasher.update(agents_core::signature(pending.call()).as_bytes());
    hasher
        .finalize()
        .iter()
        .take(6)
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use messages::ToolCall;
    use serde_json::json;

    fn pending(id: &str, name: &str, arguments: serde_json::Value) -> PendingApproval {
        PendingApproval::new(ToolCall::new(id, name, arguments), None)
    }

    #[test]
    fn twelve_hex_digits_that_change_with_every_part() {
        let base = fingerprint("e1", &pending("c1", "write", json!({"a": 1, "b": 2})));
        assert_eq!(base.len(), 12);
        assert!(base.chars().all(|c| c.is_ascii_hexdigit()));
        // key order does not matter: the arguments are canonical
        assert_eq!(
            base,
            fingerprint("e1", &pending("c1", "write", json!({"b": 2, "a": 1})))
        );
        for other in [
            fingerprint("e2", &pending("c1", "write", json!({"a": 1, "b": 2}))),
            fingerprint("e1", &pending("c2", "write", json!({"a": 1, "b": 2}))),
            fingerprint("e1", &pending("c1", "delete", json!({"a": 1, "b": 2}))),
            fingerprint("e1", &pending("c1", "write", json!({"a": 1, "b": 3}))),
            // no ambiguity between the parts
            fingerprint("e1\u{0}c1", &pending("", "write", json!({"a": 1, "b": 2}))),
        ] {
            assert_ne!(base, other);
        }
    }
}
