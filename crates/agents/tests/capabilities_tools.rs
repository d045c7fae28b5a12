#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! The file and bash tools as the model sees them: schemas, and calls through the executor.

use agents::capabilities::{BashTool, FileTools, Sandbox};
use agents_core::tools::{DefaultToolExecutor, ToolContext, ToolExecutor, ToolFailureKind};
use messages::ToolCall;
use serde_json::json;

#[test]
fn tool_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::new(dir.path()).unwrap();
    let mut tools = FileTools::new(sandbox.clone()).all();
    tools.insert(std::sync::Arc::new(BashTool::new(sandbox.root())));
    insta::assert_json_snapshot!("capability_tool_schemas", tools.schemas());
}

/// The built-in tools declare what they do to the world: the file readers are read-only,
/// writing a whole file is idempotent, editing and bash have side effects.
#[test]
fn the_built_in_tools_declare_their_effects() {
    use agents_core::ToolEffects;
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::new(dir.path()).unwrap();
    let mut tools = FileTools::new(sandbox.clone()).all();
    tools.insert(std::sync::Arc::new(BashTool::new(sandbox.root())));
    let effects: Vec<(String, ToolEffects)> = tools
        .names()
        .into_iter()
        .map(|name| (name.to_owned(), tools.effects(name)))
        .collect();
    let of = |name: &str| effects.iter().find(|(n, _)| n == name).map(|(_, e)| *e);
    assert_eq!(of("read_file"), Some(ToolEffects::ReadOnly));
    assert_eq!(of("list_dir"), Some(ToolEffects::ReadOnly));
    assert_eq!(of("search_files"), Some(ToolEffects::ReadOnly));
    assert_eq!(of("write_file"), Some(ToolEffects::Idempotent));
    assert_eq!(of("edit_file"), Some(ToolEffects::SideEffecting));
    assert_eq!(of("bash"), Some(ToolEffects::SideEffecting));
    assert_eq!(tools.effects("no_such_tool"), ToolEffects::SideEffecting);
}

#[tokio::test]
async fn a_model_session_through_the_executor() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::new(dir.path()).unwrap();
    let mut tools = FileTools::new(sandbox.clone()).all();
    tools.insert(std::sync::Arc::new(BashTool::new(sandbox.root())));
    let calls = [
        ToolCall::new(
            "1",
            "write_file",
            json!({"path": "notes/todo.md", "content": "- buy milk\n- call mom\n"}),
        ),
        ToolCall::new(
            "2",
            "edit_file",
            json!({"path": "notes/todo.md", "old_string": "milk", "new_string": "bread"}),
        ),
        ToolCall::new("3", "read_file", json!({"path": "notes/todo.md"})),
        ToolCall::new("4", "bash", json!({"command": "wc -l notes/todo.md"})),
        ToolCall::new("5", "search_files", json!({"pattern": "*.md"})),
        ToolCall::new("6", "list_dir", json!({"path": "notes"})),
        ToolCall::new("7", "read_file", json!({"path": "../../etc/passwd"})),
        ToolCall::new("8", "read_file", json!({"file": "notes/todo.md"})),
    ];
    let executions = DefaultToolExecutor::new()
        .execute(&calls, &tools, &ToolContext::new("agent"), false)
        .await;
    let transcript: Vec<String> = executions
        .iter()
        .map(|e| format!("{} -> {}", e.name(), e.result_text()))
        .collect();
    insta::assert_json_snapshot!("file_and_bash_session", transcript);
    let kinds: Vec<_> = executions.iter().map(|e| e.failure_kind()).collect();
    assert_eq!(kinds[6], Some(ToolFailureKind::InvalidArguments));
    assert_eq!(kinds[7], Some(ToolFailureKind::InvalidArguments));
    assert_eq!(executions.errors().count(), 2);
}
