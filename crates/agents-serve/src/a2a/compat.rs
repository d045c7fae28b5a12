//! A2A 0.3's method names and shapes on the same endpoint: `message/send`, `message/stream`,
//! `tasks/get` and `tasks/cancel`, translated to and from 1.0's (parts with a `kind`, states
//! such as `input-required`, roles `user`/`agent`, results without the 1.0 wrappers).

use serde_json::{json, Map, Value};

/// The 1.0 method a 0.3 method name stands for.
pub(crate) fn method(name: &str) -> Option<&'static str> {
    Some(match name {
        "message/send" => "SendMessage",
        "message/stream" => "SendStreamingMessage",
        "tasks/get" => "GetTask",
        "tasks/cancel" => "CancelTask",
        _ => return None,
    })
}

/// 0.3 `params` as 1.0 reads them: parts without `kind`, `blocking: false` as
/// `returnImmediately`.
pub(crate) fn params_in(mut params: Value) -> Value {
    if let Some(parts) = params
        .pointer_mut("/message/parts")
        .and_then(Value::as_array_mut)
    {
        for part in parts {
            if let Some(part) = part.as_object_mut() {
                part.remove("kind");
            }
        }
    }
    if params.pointer("/configuration/blocking") == Some(&Value::Bool(false)) {
        params["configuration"]["returnImmediately"] = Value::Bool(true);
    }
    params
}

/// A 1.0 result (of `method`, a 1.0 name) in 0.3's shape.
pub(crate) fn result_out(method: &str, result: Value) -> Value {
    match method {
        "SendMessage" => match result {
            Value::Object(mut map) if map.contains_key("task") => {
                task(map.remove("task").unwrap_or_default())
            }
            other => other,
        },
        "GetTask" | "CancelTask" => task(result),
        "SendStreamingMessage" => stream_event(result),
        _ => result,
    }
}

fn stream_event(event: Value) -> Value {
    let Value::Object(mut map) = event else {
        return event;
    };
    if let Some(t) = map.remove("task") {
        return task(t);
    }
    if let Some(mut update) = map.remove("statusUpdate") {
        let state = update
            .pointer("/status/state")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        update["kind"] = json!("status-update");
        update["final"] = json!(state != "TASK_STATE_WORKING");
        if let Some(status) = update.get_mut("status") {
            *status = status_out(status.take());
        }
        return update;
    }
    if let Some(mut update) = map.remove("artifactUpdate") {
        update["kind"] = json!("artifact-update");
        if let Some(artifact) = update.get_mut("artifact") {
            parts_out(artifact);
        }
        return update;
    }
    Value::Object(map)
}

fn task(mut task: Value) -> Value {
    if !task.is_object() {
        return task;
    }
    task["kind"] = json!("task");
    if let Some(status) = task.get_mut("status") {
        *status = status_out(status.take());
    }
    if let Some(artifacts) = task.get_mut("artifacts").and_then(Value::as_array_mut) {
        for artifact in artifacts {
            parts_out(artifact);
        }
    }
    task
}

fn status_out(mut status: Value) -> Value {
    if let Some(state) = status.get("state").and_then(Value::as_str) {
        let state = state
            .strip_prefix("TASK_STATE_")
            .unwrap_or(state)
            .to_ascii_lowercase()
            .replace('_', "-");
        status["state"] = json!(state);
    }
    if let Some(message) = status.get_mut("message") {
        message["kind"] = json!("message");
        let role = match message.get("role").and_then(Value::as_str) {
            Some("ROLE_USER") => "user",
            _ => "agent",
        };
        message["role"] = json!(role);
        parts_out(message);
    }
    status
}

/// `holder.parts` with 0.3's `kind` on each part.
fn parts_out(holder: &mut Value) {
    let Some(parts) = holder.get_mut("parts").and_then(Value::as_array_mut) else {
        return;
    };
    for part in parts {
        let Some(map) = part.as_object_mut() else {
            continue;
        };
        let kind = if map.contains_key("text") {
            "text"
        } else if map.contains_key("data") {
            map.remove("mediaType");
            "data"
        } else {
            "file"
        };
        let mut out = Map::new();
        out.insert("kind".to_owned(), json!(kind));
        out.append(map);
        *map = out;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_comes_out_in_0_3_shape() {
        let out = result_out(
            "SendMessage",
            json!({"task": {"id": "t", "contextId": "t",
                "status": {"state": "TASK_STATE_INPUT_REQUIRED", "message": {"role": "ROLE_AGENT",
                    "parts": [{"text": "waits"}, {"data": {"pendingCalls": []}, "mediaType": "application/json"}]}},
                "artifacts": [{"artifactId": "answer", "parts": [{"text": "x"}]}]}}),
        );
        assert_eq!(out["kind"], "task");
        assert_eq!(out["status"]["state"], "input-required");
        assert_eq!(out["status"]["message"]["role"], "agent");
        assert_eq!(
            out["status"]["message"]["parts"][0],
            json!({"kind": "text", "text": "waits"})
        );
        assert_eq!(
            out["status"]["message"]["parts"][1],
            json!({"kind": "data", "data": {"pendingCalls": []}})
        );
        assert_eq!(out["artifacts"][0]["parts"][0]["kind"], "text");
    }

    #[test]
    fn stream_events_and_params_translate() {
        let update = result_out(
            "SendStreamingMessage",
            json!({"statusUpdate": {"taskId": "t", "status": {"state": "TASK_STATE_COMPLETED"}}}),
        );
        assert_eq!(update["kind"], "status-update");
        assert_eq!(update["final"], true);
        assert_eq!(update["status"]["state"], "completed");
        let params = params_in(json!({"message": {"kind": "message", "role": "user",
            "parts": [{"kind": "text", "text": "hi"}]}, "configuration": {"blocking": false}}));
        assert_eq!(params["message"]["parts"][0], json!({"text": "hi"}));
        assert_eq!(params["configuration"]["returnImmediately"], true);
        assert_eq!(method("tasks/get"), Some("GetTask"));
        assert_eq!(method("tasks/resubscribe"), None);
    }
}
