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
use serde_json::Value;

use crate::records::agent_status::AgentStatus;
use crate::records::decision::StopReason;
use crate::records::tool_execution::{ToolExecution, ToolExecutions, ToolFailureKind};
use crate::state::agent_state::AgentState;
use crate::state::pending_approval::{
    ApprovalDecision, ApprovalError, ApprovalVerdict, PendingApproval,
};
use crate::state::suspended_run::SuspendedRun;

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

    /// The fingerprint of the waiting call `call_id` (a [key](PendingApproval::key)), as
    /// [`PendingApproval::fingerprint`] in this state's execution. Show it with the call;
    /// [`approve_checked`](Self::approve_checked) refuses a call whose fingerprint is not the
    /// one shown.
    pub fn approval_fingerprint(&self, call_id: &str) -> Option<String> {
        let pending = self.pending(call_id).ok()?;
        Some(pending.fingerprint(self.execution().map(|e| e.id()).unwrap_or_default()))
    }

    /// Checks that the call waiting as `call_id` has `fingerprint` (the one the person was
    /// shown; case and surrounding spaces do not matter).
    ///
    /// # Errors
    /// [`ApprovalError::UnknownCall`] or [`ApprovalError::Changed`].
    pub fn check_fingerprint(&self, call_id: &str, fingerprint: &str) -> Result<(), ApprovalError> {
        let actual =
            self.approval_fingerprint(call_id)
                .ok_or_else(|| ApprovalError::UnknownCall {
                    call_id: call_id.to_owned(),
                })?;
        if actual.eq_ignore_ascii_case(fingerprint.trim()) {
            Ok(())
        } else {
            Err(ApprovalError::Changed {
                call_id: call_id.to_owned(),
                expected: fingerprint.trim().to_owned(),
                actual,
            })
        }
    }

    /// [`approve`](Self::approve), only when the call waiting as `call_id` is the one whose
    /// `fingerprint` the person was shown.
    ///
    /// # Errors
    /// [`ApprovalError::Changed`], and as [`approve`](Self::approve).
    pub fn approve_checked(
        self,
        call_id: &str,
        fingerprint: &str,
    ) -> Result<AgentState, ApprovalError> {
        self.check_fingerprint(call_id, fingerprint)?;
        self.approve(call_id)
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
        let call_id = decision.call_id().to_owned();
        let index = self
            .data()
            .approvals
            .iter()
            .position(|p| p.key() == call_id)
            .ok_or_else(|| ApprovalError::UnknownCall {
                call_id: call_id.clone(),
            })?;
        let pending = &self.data().approvals[index];
        if pending.is_decided() {
            return Err(ApprovalError::AlreadyDecided { call_id });
        }
        if pending.arguments_hash() != decision.arguments_hash() {
            return Err(ApprovalError::Stale { call_id });
        }
        if let ApprovalVerdict::Approved {
            arguments: Some(arguments),
        } = decision.verdict()
        {
            if let Some(schema) = pending.parameters() {
                crate::schema::validate_arguments(schema, arguments).map_err(|message| {
                    ApprovalError::InvalidArguments {
                        call_id: call_id.clone(),
                        message,
                    }
                })?;
            }
        }
        // A subagent's call: the decision goes into the subagent's saved state (which checks
        // it again), shared by every waiting call of that subagent run.
        let routed = match (pending.parent_call_id(), pending.subagent_resume()) {
            (Some(parent), Some((_, child))) => {
                // In the subagent's state the call goes by its key there.
                let inner = decision.for_key(pending.key_in_subagent());
                let child = child_state(&call_id, child)?.decide(inner)?;
                let child = serde_json::to_value(&child).map_err(|error| {
                    ApprovalError::CorruptSubagentState {
                        call_id: call_id.clone(),
                        message: error.to_string(),
                    }
                })?;
                Some((parent.to_owned(), child))
            }
            _ => None,
        };
        let verdict = decision.verdict().clone();
        Ok(self.edit_approvals(|approvals| {
            approvals[index].set_decision(verdict);
            if let Some((parent, child)) = routed {
                for p in approvals.iter_mut() {
                    if p.parent_call_id() == Some(parent.as_str()) {
                        p.set_child(child.clone());
                    }
                }
            }
        }))
    }

    /// Ends a suspended run without running its waiting calls: each gets a "not approved"
    /// tool result (so the history stays valid for every provider) and the execution
    /// finishes `Failed` with stop reason `user_requested`. A state that is not suspended
    /// comes back unchanged. A new user message on a suspended state does this first.
    ///
    /// The "not approved" results are stamped with the time the suspended step completed (by
    /// the agent's clock), not the system clock: a state holds no clock, and the calls ended
    /// without running.
    pub fn cancel_pending(self) -> AgentState {
        if self.status() != AgentStatus::Suspended {
            return self;
        }
        let now = self
            .step_executions()
            .last()
            .map(|step| step.completed_at())
            .or_else(|| self.execution().map(|execution| execution.started_at()))
            .unwrap_or(chrono::DateTime::<chrono::Utc>::UNIX_EPOCH);
        let executions: ToolExecutions = self
            .data()
            .approvals
            .iter()
            .map(|pending| {
                ToolExecution::failure(
                    pending.call().clone(),
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
            .find(|p| p.key() == call_id)
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
        // One replacement per placeholder message, shared by every list that holds it (the
        // step's trace and the section it was appended to), so a processor can still tell
        // that the step's messages are in place (`Messages::ends_with_same`).
        let mut replaced = Replacements::default();
        let mut store = self.store().clone();
        for section in self.store().sections() {
            if let Some(messages) = replace_results(section.messages(), &results, &mut replaced) {
                store = store.section(section.name()).set(messages);
            }
        }
        let step = self.current_step().map(|step| {
            let trace = replace_results(step.trace_messages(), &results, &mut replaced)
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

/// The suspended state of a subagent whose call `call_id` waits, read from its document.
///
/// # Errors
/// [`ApprovalError::CorruptSubagentState`] when the document is not a valid state.
pub(crate) fn child_state(call_id: &str, child: &Value) -> Result<AgentState, ApprovalError> {
    crate::state::document::read(child).map_err(|error| ApprovalError::CorruptSubagentState {
        call_id: call_id.to_owned(),
        message: error.to_string(),
    })
}

/// The waiting calls of a suspended subagent run that `parent_call` started, as calls of the
/// calling agent.
pub(crate) fn of_subagent(parent_call: &ToolCall, run: &SuspendedRun) -> Vec<PendingApproval> {
    let child = match serde_json::to_value(run.state()) {
        Ok(child) => child,
        Err(error) => {
            tracing::error!(%error, "a subagent's suspended state could not be written");
            return Vec::new();
        }
    };
    run.state()
        .data()
        .approvals
        .iter()
        .filter(|p| !p.is_decided())
        .map(|p| PendingApproval::via_subagent(p, run.subagent(), parent_call, child.clone()))
        .collect()
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

/// The replacement made for each placeholder message, by the address of the shared message
/// it replaces (alive for as long as the state being resolved holds it).
type Replacements = HashMap<*const Message, Arc<Message>>;

/// `messages` with each result of a call in `results` replaced by its new result; `None` when
/// none was there. A tool message is replaced whole; any other message that names the call in
/// its `tool_call_id` metadata and ends with the placeholder's text (a ReAct observation) gets
/// the new result text in its place, so the model never sees "awaiting approval" for a call
/// that ran (and calls it again). Every other message stays the same shared object, and a
/// message replaced before (in another list) gets the same replacement.
fn replace_results(
    messages: &Messages,
    results: &HashMap<&str, Resolved>,
    replaced: &mut Replacements,
) -> Option<Messages> {
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
    // Most lists (the conversation) hold no placeholder: leave them without building a copy.
    if !messages
        .iter_shared()
        .any(|m| replaced.contains_key(&Arc::as_ptr(m)) || replacement(m).is_some())
    {
        return None;
    }
    Some(
        messages
            .iter_shared()
            .map(|shared| {
                let key = Arc::as_ptr(shared);
                if let Some(new) = replaced.get(&key) {
                    return Arc::clone(new);
                }
                match replacement(shared) {
                    Some(message) => {
                        let new = Arc::new(message);
                        replaced.insert(key, Arc::clone(&new));
                        new
                    }
                    None => Arc::clone(shared),
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::pending_approval::PendingApproval;
    use serde_json::json;

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
        let mut encoder = crate::state::incremental::StateEncoder::new();
        let delta = encoder.encode(&decided).unwrap();
        let messages: Vec<&str> = delta.messages.iter().map(String::as_str).collect();
        let steps: Vec<&str> = delta.steps.iter().map(|(_, s)| s.as_str()).collect();
        assert!(crate::state::incremental::decode(&messages, &steps, &delta.head).is_ok());
        let head = delta.head.replace("ls build", "rm -rf ~");
        let error = crate::state::incremental::decode(&messages, &steps, &head).unwrap_err();
        assert!(error.to_string().contains("head.approvals[0]"), "{error}");
    }
}
