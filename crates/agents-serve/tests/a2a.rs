//! The A2A endpoint through its router: the card, each JSON-RPC method, a task as a
//! conversation, input-required and decisions (forged fingerprints refused), and every
//! malformed request answered with a JSON-RPC error, never a panic.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::Duration;

use agents_serve::a2a::A2aServer;
use agents_serve::testing;
use agents_serve::ServedAgent;
use agents_sessions::MemorySessionStore;
use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use axum::Router;
use inference::InferenceResponse;
use serde_json::{json, Value};
use tower::ServiceExt;

fn server(responses: Vec<InferenceResponse>, dir: &std::path::Path) -> Router {
    let agent = testing::scripted_agent(responses, dir, Duration::ZERO);
    let served = ServedAgent::new(agent, MemorySessionStore::new());
    A2aServer::new(served, "http://127.0.0.1:9/").router()
}

async fn rpc_raw(app: &Router, body: &str) -> (StatusCode, String) {
    let response = app
        .clone()
        .oneshot(
            Request::post("/")
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(body.to_owned()))
                .unwrap(),
        )
        .await
        .unwrap();
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    (status, String::from_utf8(bytes.to_vec()).unwrap())
}

async fn rpc(app: &Router, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    let (status, text) = rpc_raw(app, &body.to_string()).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let reply: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(reply["id"], 7, "{reply}");
    reply
}

fn send(text: &str, task: Option<&str>) -> Value {
    let mut message = json!({"messageId": "m", "role": "ROLE_USER", "parts": [{"text": text}]});
    if let Some(task) = task {
        message["taskId"] = json!(task);
    }
    json!({ "message": message })
}

#[tokio::test]
async fn a_task_is_a_conversation_that_get_task_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let app = server(
        vec![
            InferenceResponse::text("First answer."),
            InferenceResponse::text("Second answer."),
        ],
        dir.path(),
    );
    let card = app
        .clone()
        .oneshot(
            Request::get("/.well-known/agent-card.json")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    let card: Value = serde_json::from_slice(
        &axum::body::to_bytes(card.into_body(), 1 << 20)
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(card["name"], "console-test");
    assert_eq!(
        card["supportedInterfaces"][0],
        json!({"url": "http://127.0.0.1:9/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"})
    );
    assert_eq!(card["capabilities"]["streaming"], true);

    let first = rpc(&app, "SendMessage", send("hello", None)).await;
    let task = &first["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{first}");
    assert_eq!(task["artifacts"][0]["parts"][0]["text"], "First answer.");
    let id = task["id"].as_str().unwrap().to_owned();
    assert_eq!(task["contextId"], id.as_str());

    let second = rpc(&app, "SendMessage", send("again", Some(&id))).await;
    assert_eq!(second["result"]["task"]["id"], id.as_str());
    assert_eq!(
        second["result"]["task"]["artifacts"][0]["parts"][0]["text"],
        "Second answer."
    );
    let got = rpc(&app, "GetTask", json!({"id": id})).await;
    assert_eq!(got["result"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(
        got["result"]["status"]["message"]["parts"][0]["text"],
        "Second answer."
    );
    let not_running = rpc(&app, "CancelTask", json!({"id": id})).await;
    assert_eq!(not_running["error"]["code"], -32002, "{not_running}");
}

#[tokio::test]
async fn a_waiting_call_leaves_the_task_input_required_until_a_decision_with_its_fingerprint() {
    let dir = tempfile::tempdir().unwrap();
    let app = server(
        vec![
            InferenceResponse::with_tool_calls([testing::write_call(
                "call_1",
                "a2a.txt",
                "approved over A2A",
            )]),
            InferenceResponse::text("Written."),
        ],
        dir.path(),
    );
    let waiting = rpc(&app, "SendMessage", send("write it", None)).await;
    let task = &waiting["result"]["task"];
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{waiting}"
    );
    let id = task["id"].as_str().unwrap().to_owned();
    let calls = &task["status"]["message"]["parts"][1]["data"]["pendingCalls"];
    assert_eq!(calls[0]["call_id"], "call_1");
    assert_eq!(calls[0]["tool"], "write_note");
    let print = calls[0]["fingerprint"].as_str().unwrap().to_owned();
    assert_eq!(print.len(), 12);
    assert!(!dir.path().join("a2a.txt").exists());

    // A new prompt does not start while the task waits: the task comes back as it stands.
    let still = rpc(&app, "SendMessage", send("hello?", Some(&id))).await;
    assert_eq!(
        still["result"]["task"]["status"]["state"],
        "TASK_STATE_INPUT_REQUIRED"
    );
    // A forged fingerprint is refused; nothing runs.
    let forged = rpc(
        &app,
        "SendMessage",
        send("approve call_1@000000000000", Some(&id)),
    )
    .await;
    assert_eq!(forged["error"]["code"], -32602, "{forged}");
    assert!(forged["error"]["message"]
        .as_str()
        .unwrap()
        .contains("changed"));
    assert!(!dir.path().join("a2a.txt").exists());

    let decided = rpc(
        &app,
        "SendMessage",
        json!({"message": {"messageId": "d", "role": "ROLE_USER", "taskId": id,
            "parts": [{"data": {"decision": "approve", "call_id": "call_1", "fingerprint": print}}]}}),
    )
    .await;
    assert_eq!(
        decided["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{decided}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a2a.txt")).unwrap(),
        "approved over A2A"
    );
}

#[tokio::test]
async fn malformed_requests_get_json_rpc_errors() {
    let dir = tempfile::tempdir().unwrap();
    let app = server(vec![InferenceResponse::text("unused")], dir.path());
    let (status, text) = rpc_raw(&app, "{not json").await;
    assert_eq!(status, StatusCode::OK);
    assert!(text.contains("-32700"), "{text}");
    for (body, code) in [
        (json!({"id": 1, "method": "GetTask"}), -32600),
        (json!({"jsonrpc": "2.0", "id": 1}), -32600),
        (json!({"jsonrpc": "2.0", "id": 1, "method": "Nope"}), -32601),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "message/send"}),
            -32602,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/resubscribe"}),
            -32004,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks"}),
            -32004,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {}}),
            -32602,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "missing"}}),
            -32001,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "CancelTask", "params": {"id": "missing"}}),
            -32001,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {}}),
            -32602,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {"parts": []}}}),
            -32602,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {"parts": [{"text": "x"}], "taskId": "../etc"}}}),
            -32602,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {"message": 3}}),
            -32602,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {"parts": [{"text": "x"}], "contextId": "a/b"}}}),
            -32602,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "../etc"}}),
            -32602,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "CancelTask", "params": {"id": "<b>x</b>"}}),
            -32602,
        ),
    ] {
        let (_, text) = rpc_raw(&app, &body.to_string()).await;
        let reply: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(reply["error"]["code"], code, "{body} -> {reply}");
    }
}

#[tokio::test]
async fn a_streamed_message_sends_the_task_the_text_and_the_final_state() {
    let dir = tempfile::tempdir().unwrap();
    let app = server(
        vec![InferenceResponse::text("Streamed in words")],
        dir.path(),
    );
    let body = json!({"jsonrpc": "2.0", "id": "s", "method": "SendStreamingMessage",
        "params": send("stream", None)});
    let (status, text) = rpc_raw(&app, &body.to_string()).await;
    assert_eq!(status, StatusCode::OK);
    let events: Vec<Value> = text
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| serde_json::from_str(data).unwrap())
        .collect();
    assert!(events.iter().all(|e| e["id"] == "s"));
    assert_eq!(
        events[0]["result"]["task"]["status"]["state"],
        "TASK_STATE_WORKING"
    );
    let streamed: String = events
        .iter()
        .filter_map(|e| e["result"]["artifactUpdate"]["artifact"]["parts"][0]["text"].as_str())
        .collect();
    assert_eq!(streamed, "Streamed in words");
    let last = events.last().unwrap();
    assert_eq!(
        last["result"]["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{last}"
    );
}

/// A reply the driver sets aside (a guess about a file, no tool run) is not the answer: the
/// text that follows it replaces the streamed artifact (`append: false`). Here the reply to
/// the nudge makes no call and is dropped, so the client ends holding the guess, which is the
/// step's answer after all.
#[tokio::test]
async fn a_streamed_reply_set_aside_is_replaced_and_the_client_holds_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let app = server(
        vec![
            InferenceResponse::text("A guess"),
            InferenceResponse::text("The notes say hello"),
        ],
        dir.path(),
    );
    let body = json!({"jsonrpc": "2.0", "id": "s", "method": "SendStreamingMessage",
        "params": send("What does notes.txt say?", None)});
    let (status, text) = rpc_raw(&app, &body.to_string()).await;
    assert_eq!(status, StatusCode::OK);
    let updates: Vec<Value> = text
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| serde_json::from_str::<Value>(data).unwrap())
        .filter_map(|e| e["result"].get("artifactUpdate").cloned())
        .collect();
    // What a client holds after applying the updates in order.
    let mut artifact = String::new();
    let mut replaced = false;
    for update in &updates {
        let part = update["artifact"]["parts"][0]["text"]
            .as_str()
            .unwrap_or_default();
        if update["append"] == true {
            artifact.push_str(part);
        } else {
            replaced |= !artifact.is_empty();
            artifact = part.to_owned();
        }
    }
    assert!(replaced, "{updates:?}");
    assert!(
        updates.iter().any(|u| u["artifact"]["parts"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("hello"))),
        "the reply to the nudge streamed: {updates:?}"
    );
    assert_eq!(artifact, "A guess", "{updates:?}");
}

#[tokio::test]
async fn the_0_3_method_names_answer_in_0_3_shapes() {
    let dir = tempfile::tempdir().unwrap();
    let app = server(
        vec![InferenceResponse::text("Old client, new server.")],
        dir.path(),
    );
    let sent = rpc(
        &app,
        "message/send",
        json!({"message": {"kind": "message", "messageId": "m", "role": "user",
            "parts": [{"kind": "text", "text": "hello"}]}}),
    )
    .await;
    let task = &sent["result"];
    assert_eq!(task["kind"], "task", "{sent}");
    assert_eq!(task["status"]["state"], "completed");
    assert_eq!(
        task["artifacts"][0]["parts"][0],
        json!({"kind": "text", "text": "Old client, new server."})
    );
    let got = rpc(&app, "tasks/get", json!({"id": task["id"]})).await;
    assert_eq!(got["result"]["status"]["state"], "completed");
    assert_eq!(got["result"]["status"]["message"]["role"], "agent");
}
