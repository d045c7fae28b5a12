//! The calls a suspended run waits on ([`PendingApproval`]) and the decisions a person
//! makes on them ([`ApprovalDecision`], [`ApprovalVerdict`], [`ApprovalError`]). Plain data:
//! what the state does with them is in `approvals.rs`.

use std::sync::Arc;

use messages::ToolCall;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::signature::signature;
use crate::state::state_error::StateError;

/// The tool result a call has while it waits for a person's decision.
pub const AWAITING_APPROVAL_MESSAGE: &str =
    "This call is waiting for a person's approval; it has not run yet.";

/// Where a subagent's waiting call came from: the calling agent's call that ran the subagent,
/// and the subagent's saved state (decisions are routed into it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Via {
    subagent: String,
    parent_call: ToolCall,
    /// The subagent's suspended state, as its document (decisions are routed into it).
    child: Value,
    /// The call's key in the subagent's state (its id, or deeper down a key of its own);
    /// empty in states written before keys: the call's id.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    key: String,
}

/// A tool call a suspended run waits on: the call as the model made it, the hash of its
/// arguments, the tool's parameter schema when it was held (edited arguments are checked
/// against it), and the decision once a person made one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PendingApproval {
    call: ToolCall,
    arguments_hash: Arc<str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    parameters: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    decision: Option<ApprovalVerdict>,
    /// Set for a subagent's waiting call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    via: Option<Via>,
}

impl PendingApproval {
    /// A waiting call; `parameters` is the tool's parameter schema, when the tool is known.
    pub fn new(call: ToolCall, parameters: Option<Value>) -> Self {
        Self {
            arguments_hash: arguments_hash(&call).into(),
            call,
            parameters,
            decision: None,
            via: None,
        }
    }

    /// A subagent's waiting call `pending`, surfaced in the calling agent: `parent_call` ran
    /// the subagent `subagent`, whose suspended state (as its document) is `child`.
    pub(crate) fn via_subagent(
        pending: &PendingApproval,
        subagent: &str,
        parent_call: &ToolCall,
        child: Value,
    ) -> Self {
        Self {
            via: Some(Via {
                subagent: subagent.to_owned(),
                parent_call: parent_call.clone(),
                child,
                key: pending.key(),
            }),
            decision: None,
            ..pending.clone()
        }
    }

    /// The subagent whose call this is (`None` for the agent's own calls).
    pub fn subagent(&self) -> Option<&str> {
        self.via.as_ref().map(|via| via.subagent.as_str())
    }

    /// For a subagent's call: the calling agent's call that runs the subagent again, and the
    /// subagent's state (its document) with the decisions routed into it.
    pub(crate) fn subagent_resume(&self) -> Option<(&ToolCall, &Value)> {
        self.via.as_ref().map(|via| (&via.parent_call, &via.child))
    }

    /// The id of the calling agent's call that ran this call's subagent, if any.
    pub(crate) fn parent_call_id(&self) -> Option<&str> {
        self.via.as_ref().map(|via| via.parent_call.id())
    }

    /// Replaces the subagent's state document (after a decision was routed into it).
    pub(crate) fn set_child(&mut self, child: Value) {
        if let Some(via) = &mut self.via {
            via.child = child;
        }
    }

    /// Records the verdict on this call.
    pub(crate) fn set_decision(&mut self, verdict: ApprovalVerdict) {
        self.decision = Some(verdict);
    }

    /// The tool's parameter schema when the call was held.
    pub(crate) fn parameters(&self) -> Option<&Value> {
        self.parameters.as_ref()
    }

    /// The id of the waiting call.
    pub fn call_id(&self) -> &str {
        self.call.id()
    }

    /// The key decisions name this call by: its id for the agent's own calls; for a
    /// subagent's call, `<the calling agent's call id>/<its key in the subagent>`, so that a
    /// subagent's call can never be taken for one of the agent's own (or another subagent's)
    /// with the same id.
    pub fn key(&self) -> String {
        match &self.via {
            Some(via) => format!("{}/{}", via.parent_call.id(), self.key_in_subagent()),
            None => self.call.id().to_owned(),
        }
    }

    /// The call's key in the subagent's own state (its id for states written before keys).
    pub(crate) fn key_in_subagent(&self) -> &str {
        match &self.via {
            Some(via) if !via.key.is_empty() => via.key.as_str(),
            _ => self.call.id(),
        }
    }

    /// The fingerprint a person is shown with this call in the execution `execution_id`
    /// (API.md section 8): 12 hex digits of SHA-256 over the execution id, the call's
    /// [key](Self::key), its tool name and its canonical arguments, NUL-separated. A decision
    /// made on what a person saw carries it
    /// ([`AgentState::approve_checked`](crate::state::agent_state::AgentState::approve_checked)):
    /// another call under the same id, or changed arguments, give another fingerprint.
    pub fn fingerprint(&self, execution_id: &str) -> String {
        let mut hasher = Sha256::new();
        hasher.update(execution_id.as_bytes());
        hasher.update([0]);
        hasher.update(self.key().as_bytes());
        hasher.update([0]);
        // the tool name, a NUL, the arguments as canonical JSON (keys sorted at every depth)
        hasher.update(signature(&self.call).as_bytes());
        hasher
            .finalize()
            .iter()
            .take(6)
            .map(|byte| format!("{byte:02x}"))
            .collect()
    }

    /// The tool it calls.
    pub fn tool_name(&self) -> &str {
        self.call.name()
    }

    /// The arguments the model gave (the ones a person is shown).
    pub fn arguments(&self) -> &Value {
        self.call.arguments()
    }

    /// The call.
    pub fn call(&self) -> &ToolCall {
        &self.call
    }

    /// `sha256:` and the hex SHA-256 of the tool name and the canonical JSON of the arguments:
    /// what a decision is bound to.
    pub fn arguments_hash(&self) -> &str {
        &self.arguments_hash
    }

    /// `Err` with a reason when a decision was made but the call is not the one it was made
    /// on: the stored hash is not the hash of the stored arguments (a document edited or
    /// damaged after the decision). Checked when a state is loaded.
    pub(crate) fn check_decision(&self) -> Result<(), String> {
        if self.decision.is_some() && *self.arguments_hash != arguments_hash(&self.call) {
            return Err(format!(
                "the decided call `{}` does not match the arguments its decision was made on \
                 (the document was changed after the decision); it is refused",
                self.call.id()
            ));
        }
        Ok(())
    }

    /// The decision made on it, if any.
    pub fn decision(&self) -> Option<&ApprovalVerdict> {
        self.decision.as_ref()
    }

    /// Whether a decision was made.
    pub fn is_decided(&self) -> bool {
        self.decision.is_some()
    }

    /// A decision to run the call as shown.
    pub fn approve(&self) -> ApprovalDecision {
        self.decided(ApprovalVerdict::Approved { arguments: None })
    }

    /// A decision to run the call with `arguments` instead of the ones shown.
    pub fn approve_with(&self, arguments: Value) -> ApprovalDecision {
        self.decided(ApprovalVerdict::Approved {
            arguments: Some(arguments),
        })
    }

    /// A decision not to run the call; the model reads `reason`.
    pub fn reject(&self, reason: impl Into<String>) -> ApprovalDecision {
        self.decided(ApprovalVerdict::Rejected {
            reason: reason.into(),
        })
    }

    fn decided(&self, verdict: ApprovalVerdict) -> ApprovalDecision {
        ApprovalDecision {
            call_id: self.key(),
            arguments_hash: self.arguments_hash.to_string(),
            verdict,
        }
    }

    /// The call to run when approved (with the edited arguments, if any); `None` otherwise
    /// (and for a subagent's call, which its subagent runs).
    pub(crate) fn approved_call(&self) -> Option<ToolCall> {
        if self.via.is_some() {
            return None;
        }
        match &self.decision {
            Some(ApprovalVerdict::Approved { arguments: None }) => Some(self.call.clone()),
            Some(ApprovalVerdict::Approved {
                arguments: Some(arguments),
            }) => Some(self.call.clone().with_arguments(arguments.clone())),
            _ => None,
        }
    }
}

/// What a person decided about one call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "verdict")]
pub enum ApprovalVerdict {
    /// Run it; with `arguments`, run it with those instead.
    Approved {
        /// Edited arguments, when the person changed them.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arguments: Option<Value>,
    },
    /// Do not run it; the model is told why.
    Rejected {
        /// The person's reason.
        reason: String,
    },
}

/// A decision bound to the call it was made on: the call id and the hash of the arguments
/// the person was shown. Made with [`PendingApproval::approve`], `approve_with` or `reject`,
/// applied with [`AgentState::decide`](crate::state::agent_state::AgentState::decide); a state whose call changed since refuses it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApprovalDecision {
    call_id: String,
    arguments_hash: String,
    verdict: ApprovalVerdict,
}

impl ApprovalDecision {
    /// The key of the call it decides ([`PendingApproval::key`]: the call id for the agent's
    /// own calls).
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// This decision, naming its call by `key` (the key the call has in a subagent's state).
    pub(crate) fn for_key(&self, key: &str) -> Self {
        Self {
            call_id: key.to_owned(),
            ..self.clone()
        }
    }

    /// The hash of the arguments the person was shown.
    pub fn arguments_hash(&self) -> &str {
        &self.arguments_hash
    }

    /// What was decided.
    pub fn verdict(&self) -> &ApprovalVerdict {
        &self.verdict
    }
}

/// A decision a state refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ApprovalError {
    /// No waiting call has this id.
    #[error("no call waiting for approval has id `{call_id}`; list them with pending_approvals()")]
    UnknownCall {
        /// The id given.
        call_id: String,
    },
    /// The call was decided already.
    #[error("the call `{call_id}` was already decided; a decision is made once")]
    AlreadyDecided {
        /// The call.
        call_id: String,
    },
    /// The call changed since the decision was made (other arguments than those shown).
    #[error(
        "the call `{call_id}` is not the one the decision was made on (its arguments changed); \
         decide again on the call as it is now"
    )]
    Stale {
        /// The call.
        call_id: String,
    },
    /// The call waiting under this key is not the one the person was shown: its fingerprint
    /// differs (another call took the id, or its arguments changed).
    #[error(
        "the call waiting as `{call_id}` is not the one you were shown (its fingerprint is \
         {actual}, you expected {expected}): look at it again before deciding"
    )]
    Changed {
        /// The call's key.
        call_id: String,
        /// The fingerprint given.
        expected: String,
        /// The fingerprint of the call waiting now.
        actual: String,
    },
    /// The saved state of the subagent the call belongs to cannot be read or written.
    #[error(
        "the saved state of the subagent behind `{call_id}` is damaged ({message}); cancel the run"
    )]
    CorruptSubagentState {
        /// The call.
        call_id: String,
        /// What is wrong.
        message: String,
    },
    /// Edited arguments that do not fit the tool's schema.
    #[error("the edited arguments for `{call_id}` do not fit the tool's schema ({message}); fix them and decide again")]
    InvalidArguments {
        /// The call.
        call_id: String,
        /// What does not fit.
        message: String,
    },
}

/// `sha256:` and the hex digest of the tool name, a NUL, and the canonical JSON (keys sorted)
/// of the arguments.
pub(crate) fn arguments_hash(call: &ToolCall) -> String {
    let mut hasher = Sha256::new();
    // The name, a NUL, the canonical arguments: the call's signature.
    hasher.update(signature(call).as_bytes());
    let digest = hasher.finalize();
    let mut hex = String::with_capacity(7 + digest.len() * 2);
    hex.push_str("sha256:");
    for byte in digest {
        hex.push_str(&format!("{byte:02x}"));
    }
    hex
}

/// Refuses loaded `approvals` (at `path`) holding a decision whose call changed since it was
/// made: a decision is authority to run a call.
///
/// # Errors
/// [`StateError::InvalidField`] naming the approval.
pub(crate) fn check_decisions(approvals: &[PendingApproval], path: &str) -> Result<(), StateError> {
    for (i, approval) in approvals.iter().enumerate() {
        approval
            .check_decision()
            .map_err(|message| StateError::InvalidField {
                path: format!("{path}[{i}]"),
                message,
            })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_hash_ignores_key_order_and_sees_values_and_names() {
        let a = ToolCall::new("1", "bash", json!({"a": 1, "b": {"x": [1, 2], "y": "z"}}));
        let b = ToolCall::new("2", "bash", json!({"b": {"y": "z", "x": [1, 2]}, "a": 1}));
        assert_eq!(arguments_hash(&a), arguments_hash(&b));
        let c = ToolCall::new("1", "bash", json!({"a": 2, "b": {"x": [1, 2], "y": "z"}}));
        assert_ne!(arguments_hash(&a), arguments_hash(&c));
        let d = ToolCall::new("1", "sh", json!({"a": 1, "b": {"x": [1, 2], "y": "z"}}));
        assert_ne!(arguments_hash(&a), arguments_hash(&d));
        assert!(arguments_hash(&a).starts_with("sha256:"));
    }

    #[test]
    fn the_fingerprint_binds_execution_id_tool_and_canonical_arguments() {
        let pending = |id: &str, name: &str, arguments: Value| {
            PendingApproval::new(ToolCall::new(id, name, arguments), None)
        };
        let shown = pending("call_0", "bash", json!({"command": "ls", "cwd": "."}));
        let fingerprint = shown.fingerprint("exec-1");
        assert_eq!(fingerprint.len(), 12);
        assert!(fingerprint.chars().all(|c| c.is_ascii_hexdigit()));
        // the same call, its arguments in another order: the same fingerprint
        let reordered = pending("call_0", "bash", json!({"cwd": ".", "command": "ls"}));
        assert_eq!(reordered.fingerprint("exec-1"), fingerprint);
        // anything else differs: the execution, the id, the tool, the arguments
        for (execution, other) in [
            ("exec-2", shown.clone()),
            (
                "exec-1",
                pending("call_1", "bash", json!({"command": "ls", "cwd": "."})),
            ),
            (
                "exec-1",
                pending("call_0", "sh", json!({"command": "ls", "cwd": "."})),
            ),
            (
                "exec-1",
                pending("call_0", "bash", json!({"command": "rm -rf ~", "cwd": "."})),
            ),
            // no ambiguity between the parts
            (
                "exec-1\u{0}call_0",
                pending("", "bash", json!({"command": "ls", "cwd": "."})),
            ),
        ] {
            assert_ne!(other.fingerprint(execution), fingerprint);
        }
    }
}
