//! A waiting call's fingerprint (API.md section 8): 12 hex digits of SHA-256 over the
//! execution id, the call's key, the tool name and the canonical arguments. A decision made on
//! a page carries the fingerprint the page showed; a call whose fingerprint changed since
//! (another run, edited arguments) is refused as stale.
//!
//! The one definition is `agents_core::PendingApproval::fingerprint` (the CLI's `--expect`,
//! `AgentState::approve_checked` and these servers agree by construction).

use agents_core::PendingApproval;

/// The fingerprint of `pending` in the execution `execution_id`.
pub fn fingerprint(execution_id: &str, pending: &PendingApproval) -> String {
    pending.fingerprint(execution_id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use messages::ToolCall;
    use serde_json::json;

    #[test]
    fn the_console_shows_the_fingerprint_approve_checked_accepts() {
        let pending = PendingApproval::new(ToolCall::new("c1", "write", json!({"a": 1})), None);
        let print = fingerprint("e1", &pending);
        assert_eq!(print.len(), 12);
        assert_eq!(print, pending.fingerprint("e1"));
        assert_ne!(print, fingerprint("e2", &pending));
    }
}
