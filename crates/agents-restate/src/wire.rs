//! What the session object's handlers take and give, as JSON over Restate's ingress.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use agents_core::{AgentState, AgentStatus, StopReason};

/// The input of `send`: a user message for the session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct SendRequest {
    /// The user's message.
    pub message: String,
}

/// What `send` answers once the execution stopped (or was cancelled).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct SendReply {
    /// Where the execution stands: `completed`, `failed` (`in_progress` and `suspended` only
    /// when the state could not be run further).
    pub status: AgentStatus,
    /// Why it stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<StopReason>,
    /// The final answer's text, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// Steps recorded in the session so far.
    pub steps: usize,
}

impl SendReply {
    /// The reply describing `state`.
    pub fn of(state: &AgentState) -> Self {
        Self {
            status: state.status(),
            stop_reason: state.stop_reason(),
            answer: state.final_response().map(|m| m.text()),
            steps: state.step_count(),
        }
    }
}

/// A call the session waits on, as `pending_approvals` lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct WaitingCall {
    /// The call's id (what `approve`/`reject` name).
    pub call_id: String,
    /// The tool it calls.
    pub tool_name: String,
    /// The arguments the person is shown.
    pub arguments: Value,
    /// The hash of those arguments (see `PendingApproval::arguments_hash`).
    pub arguments_hash: String,
    /// The fingerprint to show with the call (`PendingApproval::fingerprint`: 12 hex digits
    /// over the execution id, the call, the tool and its arguments); a decision that carries
    /// it is refused when the waiting call is no longer the one shown.
    #[serde(default)]
    pub fingerprint: String,
}

/// The input of `approve`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct ApproveRequest {
    /// The waiting call.
    pub call_id: String,
    /// Arguments to run the call with instead of the ones shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// The fingerprint the person was shown ([`WaitingCall::fingerprint`]): with it, a call that
    /// changed since is refused instead of approved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
}

/// The input of `reject`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct RejectRequest {
    /// The waiting call.
    pub call_id: String,
    /// Why; the model reads it.
    pub reason: String,
    /// The fingerprint the person was shown ([`WaitingCall::fingerprint`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
}

/// A decision on one waiting call, as it travels through the call's awakeable.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "verdict")]
pub(crate) enum Decision {
    Approve {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arguments: Option<Value>,
    },
    Reject {
        reason: String,
    },
}

/// The input of `expire_approvals`, the delayed message a suspension sends itself so that
/// no decision within the approval timeout means "rejected".
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct ExpireRequest {
    /// The awakeables of the suspension that set the timer (a later suspension's are not
    /// touched).
    pub awakeables: Vec<String>,
    /// What the model reads for each call still undecided.
    pub reason: String,
}
