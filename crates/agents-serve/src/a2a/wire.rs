//! A2A 1.0's JSON shapes (the protobuf JSON mapping: camelCase fields, enum names such as
//! `TASK_STATE_COMPLETED` and `ROLE_AGENT`), and reading what a client sends.

use serde_json::{json, Value};

use crate::served::{Outcome, Turn, WaitingCall};

/// JSON-RPC error codes A2A uses.
pub(crate) mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    pub const TASK_NOT_FOUND: i64 = -32001;
    pub const TASK_NOT_CANCELABLE: i64 = -32002;
    pub const UNSUPPORTED_OPERATION: i64 = -32004;
}

/// A task's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    Working,
    Completed,
    Failed,
    Canceled,
    InputRequired,
}

impl State {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Working => "TASK_STATE_WORKING",
            Self::Completed => "TASK_STATE_COMPLETED",
            Self::Failed => "TASK_STATE_FAILED",
            Self::Canceled => "TASK_STATE_CANCELED",
            Self::InputRequired => "TASK_STATE_INPUT_REQUIRED",
        }
    }
}

/// A message from the agent.
pub(crate) fn agent_message(task: &str, parts: Vec<Value>) -> Value {
    json!({
        "messageId": uuid::Uuid::new_v4().to_string(),
        "contextId": task,
        "taskId": task,
        "role": "ROLE_AGENT",
        "parts": parts,
    })
}

pub(crate) fn text_part(text: &str) -> Value {
    json!({ "text": text })
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

pub(crate) fn status(state: State, message: Option<Value>) -> Value {
    let mut status = json!({ "state": state.name(), "timestamp": now() });
    if let Some(message) = message {
        status["message"] = message;
    }
    status
}

/// The state, status message and artifacts of a finished turn.
pub(crate) fn turn_state(turn: &Turn) -> (State, Option<Value>, Vec<Value>) {
    let task = turn.session.as_str();
    match &turn.outcome {
        Outcome::Answered { text } => (
            State::Completed,
            Some(agent_message(task, vec![text_part(text)])),
            vec![json!({
                "artifactId": "answer",
                "name": "answer",
                "parts": [text_part(text)],
            })],
        ),
        Outcome::Waiting { calls } => (
            State::InputRequired,
            Some(agent_message(task, waiting_parts(calls))),
            Vec::new(),
        ),
        Outcome::Stopped { reason, text } => {
            let state = if reason == "user_requested" {
                State::Canceled
            } else {
                State::Failed
            };
            let mut said = format!("The run stopped before answering ({reason}).");
            if let Some(text) = text {
                said.push_str(&format!(" Its last text: {text}"));
            }
            (
                state,
                Some(agent_message(task, vec![text_part(&said)])),
                Vec::new(),
            )
        }
        Outcome::Failed { message } => (
            State::Failed,
            Some(agent_message(
                task,
                vec![text_part(&format!("The run failed: {message}"))],
            )),
            Vec::new(),
        ),
    }
}

/// What a task waiting for approval says: a text for people and a data part for programs.
pub(crate) fn waiting_parts(calls: &[WaitingCall]) -> Vec<Value> {
    let mut text = format!(
        "The agent waits for approval of {} call(s). Reply on this task with \
         `approve CALL_ID@FINGERPRINT` or `reject CALL_ID@FINGERPRINT reason`, or a data part \
         {{\"decision\": \"approve\", \"call_id\": ..., \"fingerprint\": ...}}:",
        calls.len()
    );
    for call in calls {
        text.push_str(&format!(
            "\n- {}@{}: {} {}",
            call.call_id, call.fingerprint, call.tool, call.arguments
        ));
    }
    vec![
        text_part(&text),
        json!({ "data": { "pendingCalls": calls }, "mediaType": "application/json" }),
    ]
}

/// A task as `GetTask` and `SendMessage` return it.
pub(crate) fn task(
    id: &str,
    state: State,
    message: Option<Value>,
    artifacts: Vec<Value>,
    cost_usd: Option<f64>,
) -> Value {
    let mut task = json!({
        "id": id,
        "contextId": id,
        "status": status(state, message),
    });
    if !artifacts.is_empty() {
        task["artifacts"] = Value::Array(artifacts);
    }
    if let Some(cost) = cost_usd {
        task["metadata"] = json!({ "costUsd": cost });
    }
    task
}

/// The task of a finished turn.
pub(crate) fn turn_task(turn: &Turn) -> Value {
    let (state, message, artifacts) = turn_state(turn);
    task(
        &turn.session,
        state,
        message,
        artifacts,
        Some(turn.cost_usd),
    )
}

/// A decision a client sent on a waiting task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Decision {
    pub call_id: String,
    pub fingerprint: String,
    pub approve: bool,
    pub reason: Option<String>,
}

/// What a client's message holds.
#[derive(Debug, Default)]
pub(crate) struct Incoming {
    pub task_id: Option<String>,
    pub context_id: Option<String>,
    pub text: String,
    pub decisions: Vec<Decision>,
}

/// Reads `params.message` of `SendMessage`.
pub(crate) fn incoming(params: &Value) -> Result<Incoming, String> {
    let message = params
        .get("message")
        .filter(|m| m.is_object())
        .ok_or("params.message is missing")?;
    let string = |key: &str| {
        message
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let parts = message
        .get("parts")
        .and_then(Value::as_array)
        .ok_or("params.message.parts is missing")?;
    let mut texts = Vec::new();
    let mut decisions = Vec::new();
    for part in parts {
        if let Some(text) = part.get("text").and_then(Value::as_str) {
            texts.push(text.to_owned());
        } else if let Some(data) = part.get("data") {
            if let Some(decision) = data_decision(data)? {
                decisions.push(decision);
            }
        } else if part.get("url").is_some() || part.get("raw").is_some() {
            return Err("file parts are not supported: send text".to_owned());
        }
    }
    let text = texts.join("\n");
    if decisions.is_empty() {
        decisions = text_decisions(&text);
    }
    Ok(Incoming {
        task_id: string("taskId"),
        context_id: string("contextId"),
        text,
        decisions,
    })
}

fn data_decision(data: &Value) -> Result<Option<Decision>, String> {
    let Some(verdict) = data.get("decision").and_then(Value::as_str) else {
        return Ok(None);
    };
    let field = |key: &str| {
        data.get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| format!("a decision needs `{key}`"))
    };
    let approve = match verdict {
        "approve" => true,
        "reject" => false,
        other => return Err(format!("decision {other:?}: say approve or reject")),
    };
    Ok(Some(Decision {
        call_id: field("call_id")?,
        fingerprint: field("fingerprint")?,
        approve,
        reason: data
            .get("reason")
            .and_then(Value::as_str)
            .map(str::to_owned),
    }))
}

/// `approve ID@FP` / `reject ID@FP reason`, one per line.
fn text_decisions(text: &str) -> Vec<Decision> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            let (verdict, rest) = line.split_once(char::is_whitespace)?;
            let approve = match verdict.to_ascii_lowercase().as_str() {
                "approve" => true,
                "reject" => false,
                _ => return None,
            };
            let rest = rest.trim();
            let (target, reason) = match rest.split_once(char::is_whitespace) {
                Some((target, reason)) => (target, Some(reason.trim().to_owned())),
                None => (rest, None),
            };
            let (call_id, fingerprint) = target.split_once('@')?;
            Some(Decision {
                call_id: call_id.to_owned(),
                fingerprint: fingerprint.to_owned(),
                approve,
                reason: reason.filter(|r| !r.is_empty()),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_gives_its_text_ids_and_decisions() {
        let params = json!({"message": {
            "messageId": "m1", "role": "ROLE_USER", "taskId": "t1",
            "parts": [{"text": "approve call_1@0123456789ab"}, {"text": "reject call_2@ba9876543210 too risky"}]
        }});
        let first = incoming(&params).unwrap();
        assert_eq!(first.task_id.as_deref(), Some("t1"));
        assert_eq!(first.context_id, None);
        assert_eq!(first.decisions.len(), 2);
        assert!(first.decisions[0].approve);
        assert_eq!(first.decisions[1].reason.as_deref(), Some("too risky"));

        let params = json!({"message": {"parts": [{"data": {"decision": "approve", "call_id": "c", "fingerprint": "f"}}]}});
        let decisions = incoming(&params).unwrap().decisions;
        assert_eq!(decisions[0].call_id, "c");

        let plain = incoming(&json!({"message": {"parts": [{"text": "approve the plan please"}]}}))
            .unwrap();
        assert!(plain.decisions.is_empty(), "{:?}", plain.decisions);
    }

    #[test]
    fn malformed_messages_are_refused_with_a_reason() {
        assert!(incoming(&json!({})).unwrap_err().contains("message"));
        assert!(incoming(&json!({"message": {}}))
            .unwrap_err()
            .contains("parts"));
        let bad = json!({"message": {"parts": [{"data": {"decision": "maybe", "call_id": "c", "fingerprint": "f"}}]}});
        assert!(incoming(&bad).unwrap_err().contains("maybe"));
        let file = json!({"message": {"parts": [{"url": "http://x/y"}]}});
        assert!(incoming(&file).is_err());
    }
}
