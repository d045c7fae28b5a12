//! Human approval: the calls a suspended run waits on ([`PendingApproval`]), the decisions a
//! person makes on them ([`ApprovalDecision`]), and the state's side of it
//! ([`AgentState::approve`], [`AgentState::reject`], [`AgentState::cancel_pending`], ...).
//!
//! Which calls need approval is configuration and lives in the [`Agent`](crate::Agent)
//! ([`ApprovalPolicy`](crate::ApprovalPolicy)); the state holds only data: the waiting calls,
//! each with a hash of the arguments it was shown with, and the decisions bound to that hash.
//!
//! While a run is suspended every waiting call already has a placeholder tool result (the
//! history is valid for every provider at every point); resuming replaces each placeholder
//! with the real result (or the rejection), cancelling with a "not approved" result.

use std::collections::HashMap;
use std::sync::Arc;

use messages::{Message, Messages, ToolCall};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::AgentStatus;
use crate::continuation::StopReason;
use crate::tools::{ToolExecution, ToolExecutions, ToolFailureKind};
use crate::AgentState;

/// The tool result a call has while it waits for a person's decision.
pub const AWAITING_APPROVAL_MESSAGE: &str =
    "This call is waiting for a person's approval; it has not run yet.";

/// A subagent's run, suspended on calls that need approval: what a subagent tool returns
/// ([`ToolError::AwaitingApproval`](crate::ToolError::AwaitingApproval)) so that the calling
/// agent suspends too and shows the subagent's waiting calls as its own.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SuspendedRun {
    subagent: String,
    state: AgentState,
}

impl SuspendedRun {
    /// The suspended `state` of the subagent named `subagent`.
    pub fn new(subagent: impl Into<String>, state: AgentState) -> Self {
        Self {
            subagent: subagent.into(),
            state,
        }
    }

    /// The subagent's name.
    pub fn subagent(&self) -> &str {
        &self.subagent
    }

    /// Its suspended state.
    pub fn state(&self) -> &AgentState {
        &self.state
    }
}

/// Where a subagent's waiting call came from: the calling agent's call that ran the subagent,
/// and the subagent's saved state (decisions are routed into it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Via {
    subagent: String,
    parent_call: ToolCall,
    child: AgentState,
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

    /// The waiting calls of a suspended subagent run that `parent_call` started.
    pub(crate) fn of_subagent(parent_call: &ToolCall, run: &SuspendedRun) -> Vec<Self> {
        run.state
            .data()
            .approvals
            .iter()
            .filter(|p| !p.is_decided())
            .map(|p| Self {
                via: Some(Via {
                    subagent: run.subagent.clone(),
                    parent_call: parent_call.clone(),
                    child: run.state.clone(),
                }),
                decision: None,
                ..p.clone()
            })
            .collect()
    }

    /// The subagent whose call this is (`None` for the agent's own calls).
    pub fn subagent(&self) -> Option<&str> {
        self.via.as_ref().map(|via| via.subagent.as_str())
    }

    /// For a subagent's call: the calling agent's call that runs the subagent again, and the
    /// subagent's state with the decisions routed into it.
    pub(crate) fn subagent_resume(&self) -> Option<(&ToolCall, &AgentState)> {
        self.via.as_ref().map(|via| (&via.parent_call, &via.child))
    }

    /// The id of the waiting call.
    pub fn call_id(&self) -> &str {
        self.call.id()
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
    fn check_decision(&self) -> Result<(), String> {
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
            call_id: self.call_id().to_owned(),
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
/// applied with [`AgentState::decide`]; a state whose call changed since refuses it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApprovalDecision {
    call_id: String,
    arguments_hash: String,
    verdict: ApprovalVerdict,
}

impl ApprovalDecision {
    /// The call it decides.
    pub fn call_id(&self) -> &str {
        &self.call_id
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
    /// Edited arguments that do not fit the tool's schema.
    #[error("the edited arguments for `{call_id}` do not fit the tool's schema ({message}); fix them and decide again")]
    InvalidArguments {
        /// The call.
        call_id: String,
        /// What does not fit.
        message: String,
    },
}

impl AgentState {
    /// The calls this run waits on (empty unless the status is
    /// [`Suspended`](AgentStatus::Suspended)), decided or not, in call order.
    pub fn pending_approvals(&self) -> Vec<PendingApproval> {
        self.data().approvals.to_vec()
    }

    /// Whether [`Agent::step`](crate::Agent::step) would advance this state: it is
    /// `InProgress`, or suspended with every waiting call decided.
    pub fn is_runnable(&self) -> bool {
        match self.status() {
            AgentStatus::InProgress => true,
            AgentStatus::Suspended => self.approvals_decided(),
            _ => false,
        }
    }

    /// Whether every waiting call is decided (true when none waits).
    pub fn approvals_decided(&self) -> bool {
        self.data()
            .approvals
            .iter()
            .all(PendingApproval::is_decided)
    }

    /// Approves the waiting call `call_id` as shown.
    ///
    /// # Errors
    /// [`ApprovalError::UnknownCall`] or [`ApprovalError::AlreadyDecided`].
    pub fn approve(self, call_id: &str) -> Result<AgentState, ApprovalError> {
        let decision = self.pending(call_id)?.approve();
        self.decide(decision)
    }

    /// Approves the waiting call `call_id` with other `arguments`, checked against the tool's
    /// schema (the one the tool had when the call was held).
    ///
    /// # Errors
    /// [`ApprovalError::UnknownCall`], [`ApprovalError::AlreadyDecided`] or
    /// [`ApprovalError::InvalidArguments`].
    pub fn approve_with(
        self,
        call_id: &str,
        arguments: Value,
    ) -> Result<AgentState, ApprovalError> {
        let decision = self.pending(call_id)?.approve_with(arguments);
        self.decide(decision)
    }

    /// Rejects the waiting call `call_id`; the model gets a tool error with `reason`.
    ///
    /// # Errors
    /// [`ApprovalError::UnknownCall`] or [`ApprovalError::AlreadyDecided`].
    pub fn reject(
        self,
        call_id: &str,
        reason: impl Into<String>,
    ) -> Result<AgentState, ApprovalError> {
        let decision = self.pending(call_id)?.reject(reason);
        self.decide(decision)
    }

    /// Applies `decision`, made on a [`PendingApproval`] possibly taken from another copy of
    /// this state (another process, a parent agent).
    ///
    /// # Errors
    /// [`ApprovalError::UnknownCall`], [`ApprovalError::AlreadyDecided`],
    /// [`ApprovalError::Stale`] when the call's arguments are not the ones the decision was
    /// made on, [`ApprovalError::InvalidArguments`] for edited arguments that do not fit.
    pub fn decide(self, decision: ApprovalDecision) -> Result<AgentState, ApprovalError> {
        let index = self
            .data()
            .approvals
            .iter()
            .position(|p| p.call_id() == decision.call_id)
            .ok_or_else(|| ApprovalError::UnknownCall {
                call_id: decision.call_id.clone(),
            })?;
        let pending = &self.data().approvals[index];
        if pending.is_decided() {
            return Err(ApprovalError::AlreadyDecided {
                call_id: decision.call_id,
            });
        }
        if *pending.arguments_hash != *decision.arguments_hash {
            return Err(ApprovalError::Stale {
                call_id: decision.call_id,
            });
        }
        if let ApprovalVerdict::Approved {
            arguments: Some(arguments),
        } = &decision.verdict
        {
            if let Some(schema) = &pending.parameters {
                crate::tools::validate_arguments(schema, arguments).map_err(|message| {
                    ApprovalError::InvalidArguments {
                        call_id: decision.call_id.clone(),
                        message,
                    }
                })?;
            }
        }
        // A subagent's call: the decision goes into the subagent's saved state (which checks
        // it again), shared by every waiting call of that subagent run.
        let routed = match &pending.via {
            Some(via) => Some((
                via.parent_call.id().to_owned(),
                via.child.clone().decide(decision.clone())?,
            )),
            None => None,
        };
        Ok(self.edit_approvals(|approvals| {
            approvals[index].decision = Some(decision.verdict);
            if let Some((parent, child)) = routed {
                for p in approvals.iter_mut() {
                    if let Some(via) = &mut p.via {
                        if via.parent_call.id() == parent {
                            via.child = child.clone();
                        }
                    }
                }
            }
        }))
    }

    /// Ends a suspended run without running its waiting calls: each gets a "not approved"
    /// tool result (so the history stays valid for every provider) and the execution
    /// finishes `Failed` with stop reason `user_requested`. A state that is not suspended
    /// comes back unchanged. A new user message on a suspended state does this first.
    pub fn cancel_pending(self) -> AgentState {
        if self.status() != AgentStatus::Suspended {
            return self;
        }
        let now = chrono::Utc::now();
        let executions: ToolExecutions = self
            .data()
            .approvals
            .iter()
            .map(|pending| {
                ToolExecution::failure(
                    pending.call.clone(),
                    ToolFailureKind::NotApproved,
                    "This call was not approved: the run was cancelled before a person \
                     decided, so it did not run.",
                    now,
                    now,
                )
            })
            .collect();
        self.resolved(&executions)
            .finished(AgentStatus::Failed, StopReason::UserRequested)
    }

    fn pending(&self, call_id: &str) -> Result<&PendingApproval, ApprovalError> {
        self.data()
            .approvals
            .iter()
            .find(|p| p.call_id() == call_id)
            .ok_or_else(|| ApprovalError::UnknownCall {
                call_id: call_id.to_owned(),
            })
    }

    // ----- the loop's side (see `agent/step.rs`) -----------------------------------------------

    /// Suspends the run on `pending` (the calls the last step held).
    pub(crate) fn suspended(self, pending: Vec<PendingApproval>) -> Self {
        self.edit_approvals(|approvals| *approvals = pending)
            .with_status(AgentStatus::Suspended)
    }

    /// The waiting calls closed by `executions` (one per waiting call): each placeholder
    /// result, in the store and in the last step, becomes the execution's result, the last
    /// step's held executions become these; nothing waits any more and the run is
    /// `InProgress`.
    pub(crate) fn resolved(self, executions: &ToolExecutions) -> Self {
        let held: HashMap<&str, String> = self
            .current_step()
            .map(|step| {
                step.tool_executions()
                    .iter()
                    .map(|e| (e.id(), e.result_text()))
                    .collect()
            })
            .unwrap_or_default();
        let results: HashMap<&str, Resolved> = executions
            .iter()
            .map(|execution| {
                let resolved = Resolved {
                    message: execution.to_message(),
                    placeholder: held.get(execution.id()).cloned().unwrap_or_default(),
                    text: execution.result_text(),
                };
                (execution.id(), resolved)
            })
            .collect();
        let mut store = self.store().clone();
        for section in self.store().sections() {
            if let Some(replaced) = replace_results(section.messages(), &results) {
                store = store.section(section.name()).set(replaced);
            }
        }
        let step = self.current_step().map(|step| {
            let trace = replace_results(step.trace_messages(), &results)
                .unwrap_or_else(|| step.trace_messages().clone());
            let by_id: HashMap<&str, &ToolExecution> =
                executions.iter().map(|e| (e.id(), e)).collect();
            let tool_executions: ToolExecutions = step
                .tool_executions()
                .iter()
                .map(|e| {
                    by_id
                        .get(e.id())
                        .map_or_else(|| e.clone(), |r| (*r).clone())
                })
                .collect();
            step.clone()
                .with_trace_messages(trace)
                .with_tool_executions(tool_executions)
        });
        let state = self.with_store(store);
        let state = match step {
            Some(step) => state.with_last_step(step),
            None => state,
        };
        state
            .edit_approvals(Vec::clear)
            .with_status(AgentStatus::InProgress)
    }
}

/// A decided call's result, and the placeholder text it replaces.
struct Resolved {
    /// The tool result message (for traces of tool messages).
    message: Message,
    /// The placeholder's result text.
    placeholder: String,
    /// The new result text.
    text: String,
}

/// Metadata key with which a driver whose trace is not tool messages (the ReAct driver's
/// `Observation:` user messages) names the call a message reports on.
const TOOL_CALL_ID_KEY: &str = "tool_call_id";

/// `messages` with each result of a call in `results` replaced by its new result; `None` when
/// none was there. A tool message is replaced whole; any other message that names the call in
/// its `tool_call_id` metadata and ends with the placeholder's text (a ReAct observation) gets
/// the new result text in its place, so the model never sees "awaiting approval" for a call
/// that ran (and calls it again).
fn replace_results(messages: &Messages, results: &HashMap<&str, Resolved>) -> Option<Messages> {
    let replacement = |m: &Message| -> Option<Message> {
        if let Some(id) = m.tool_call_id() {
            return results.get(id).map(|r| r.message.clone());
        }
        let id = m.metadata().get(TOOL_CALL_ID_KEY)?.as_str()?;
        let resolved = results.get(id)?;
        let text = m.text();
        let kept = text.strip_suffix(resolved.placeholder.as_str())?;
        (!resolved.placeholder.is_empty())
            .then(|| m.clone().with_content(format!("{kept}{}", resolved.text)))
    };
    if !messages.iter().any(|m| replacement(m).is_some()) {
        return None;
    }
    Some(
        messages
            .iter()
            .map(|m| replacement(m).unwrap_or_else(|| m.clone()))
            .collect(),
    )
}

/// `sha256:` and the hex digest of the tool name, a NUL, and the canonical JSON (keys sorted)
/// of the arguments.
/// Refuses loaded `approvals` (at `path`) holding a decision whose call changed since it was
/// made: a decision is authority to run a call.
///
/// # Errors
/// [`StateError::InvalidField`] naming the approval.
pub(crate) fn check_decisions(
    approvals: &[PendingApproval],
    path: &str,
) -> Result<(), super::StateError> {
    for (i, approval) in approvals.iter().enumerate() {
        approval
            .check_decision()
            .map_err(|message| super::StateError::InvalidField {
                path: format!("{path}[{i}]"),
                message,
            })?;
    }
    Ok(())
}

pub(crate) fn arguments_hash(call: &ToolCall) -> String {
    let mut hasher = Sha256::new();
    // The name, a NUL, the canonical arguments: the call's signature.
    hasher.update(crate::tools::signature(call).as_bytes());
    let digest = hasher.finalize();
    let mut hex = String::with_capacity(7 + digest.len() * 2);
    hex.push_str("sha256:");
    for byte in digest {
        hex.push_str(&format!("{byte:02x}"));
    }
    hex
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

    /// A decision is authority to run a call: a document whose decided call was changed
    /// afterwards (arguments edited, hash left as it was) is refused on load, naming the
    /// approval, as a whole document and as session rows; undecided and untouched ones load.
    #[test]
    fn a_decided_call_edited_after_the_decision_is_refused_on_load() {
        let call = ToolCall::new("c1", "bash", json!({"command": "ls build"}));
        let waiting = AgentState::new()
            .with_user_message("clean up")
            .suspended(vec![PendingApproval::new(call, None)]);
        let decided = waiting.clone().approve("c1").unwrap();
        let json = decided.to_json().unwrap();
        assert_eq!(AgentState::from_json(&json).unwrap(), decided);

        let tampered = json.replace("ls build", "rm -rf ~");
        assert_ne!(tampered, json);
        let error = AgentState::from_json(&tampered).unwrap_err();
        let text = error.to_string();
        assert!(text.contains("approvals[0]"), "{text}");
        assert!(
            text.contains("does not match the arguments its decision was made on"),
            "{text}"
        );
        // The same edit on an undecided call is just another call to decide on.
        let undecided = waiting.to_json().unwrap().replace("ls build", "rm -rf ~");
        let loaded = AgentState::from_json(&undecided).unwrap();
        assert!(!loaded.approvals_decided());

        // Session rows: the head carries the approvals.
        let mut encoder = crate::incremental::StateEncoder::new();
        let delta = encoder.encode(&decided).unwrap();
        let messages: Vec<&str> = delta.messages.iter().map(String::as_str).collect();
        let steps: Vec<&str> = delta.steps.iter().map(|(_, s)| s.as_str()).collect();
        assert!(crate::incremental::decode(&messages, &steps, &delta.head).is_ok());
        let head = delta.head.replace("ls build", "rm -rf ~");
        let error = crate::incremental::decode(&messages, &steps, &head).unwrap_err();
        assert!(error.to_string().contains("head.approvals[0]"), "{error}");
    }
}
