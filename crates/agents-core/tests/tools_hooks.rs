#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
// The deprecated `DefaultToolExecutor::with_hook` path still works: these tests keep it honest.
#![allow(deprecated)]
//! Tool hooks: blocking, rewriting calls and results, chaining, events.

use std::sync::{Arc, Mutex};

use agents_core::tools::{
    AfterToolHook, BeforeToolHook, DefaultToolExecutor, FunctionTool, ToolContext, ToolError,
    ToolEvent, ToolExecution, ToolExecutor, ToolFailureKind, ToolHook, ToolHookDecision,
    ToolOutcome, Tools,
};
use async_trait::async_trait;
use messages::ToolCall;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct CommandArgs {
    command: String,
}

fn tools(invocations: Arc<Mutex<Vec<String>>>) -> Tools {
    let log = invocations.clone();
    let bash = FunctionTool::new("bash", "Runs a command", move |args: CommandArgs| {
        log.lock().unwrap().push(format!("bash {}", args.command));
        async move { Ok::<_, ToolError>(format!("ran {}", args.command)) }
    });
    let log = invocations;
    let safe = FunctionTool::new(
        "safe_bash",
        "Runs a vetted command",
        move |args: CommandArgs| {
            log.lock()
                .unwrap()
                .push(format!("safe_bash {}", args.command));
            async move { Ok::<_, ToolError>(format!("safely ran {}", args.command)) }
        },
    );
    Tools::new().with(bash).with(safe)
}

fn bash(id: &str, command: &str) -> ToolCall {
    ToolCall::new(id, "bash", json!({"command": command}))
}

fn deny_rm() -> BeforeToolHook {
    BeforeToolHook::new(|call, _| {
        let command = call.arguments()["command"].as_str().unwrap_or_default();
        if command.contains("rm ") {
            ToolHookDecision::block("deleting files is not allowed")
        } else {
            ToolHookDecision::proceed(call)
        }
    })
}

#[tokio::test]
async fn a_blocked_call_is_not_run_and_the_model_is_told_why() {
    let invocations = Arc::new(Mutex::new(Vec::new()));
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let executor = DefaultToolExecutor::new()
        .with_hook(deny_rm())
        .on_event(move |event| sink.lock().unwrap().push(event.clone()));
    let executions = executor
        .execute(
            &[bash("c1", "rm -rf build"), bash("c2", "ls")],
            &tools(invocations.clone()),
            &ToolContext::default(),
            false,
        )
        .await;

    let blocked = executions.iter().next().unwrap();
    assert_eq!(blocked.failure_kind(), Some(ToolFailureKind::Blocked));
    assert_eq!(
        blocked.to_message().text(),
        "Error: the call to `bash` was blocked: deleting files is not allowed"
    );
    assert_eq!(executions.iter().nth(1).unwrap().result_text(), "ran ls");
    assert_eq!(*invocations.lock().unwrap(), ["bash ls"]);

    let events = events.lock().unwrap();
    assert_eq!(
        events[0],
        ToolEvent::Blocked {
            call: bash("c1", "rm -rf build"),
            reason: "deleting files is not allowed".to_owned()
        }
    );
    assert!(matches!(&events[1], ToolEvent::Started { call } if call.id() == "c2"));
    assert_eq!(events.len(), 3);
}

#[tokio::test]
async fn a_before_hook_can_rewrite_the_call() {
    let invocations = Arc::new(Mutex::new(Vec::new()));
    let reroute = BeforeToolHook::new(|call, _| {
        if call.name() == "bash" {
            ToolHookDecision::Proceed(ToolCall::new(
                call.id(),
                "safe_bash",
                call.arguments().clone(),
            ))
        } else {
            ToolHookDecision::proceed(call)
        }
    });
    let executions = DefaultToolExecutor::new()
        .with_hook(reroute)
        .execute(
            &[bash("c1", "ls")],
            &tools(invocations.clone()),
            &ToolContext::default(),
            false,
        )
        .await;
    let execution = executions.iter().next().unwrap();
    assert_eq!(execution.name(), "safe_bash");
    assert_eq!(execution.result_text(), "safely ran ls");
    assert_eq!(*invocations.lock().unwrap(), ["safe_bash ls"]);
}

#[tokio::test]
async fn an_after_hook_can_rewrite_the_result() {
    let redact = AfterToolHook::new(|execution: ToolExecution, _| {
        let content = execution.result_text().replace("secret", "[redacted]");
        ToolExecution::new(
            execution.call().clone(),
            ToolOutcome::Success {
                content,
                value: None,
                parts: Vec::new(),
            },
            execution.started_at(),
            execution.completed_at(),
        )
    });
    let executions = DefaultToolExecutor::new()
        .with_hook(redact)
        .execute(
            &[bash("c1", "cat secret")],
            &tools(Arc::default()),
            &ToolContext::default(),
            false,
        )
        .await;
    assert_eq!(
        executions.iter().next().unwrap().result_text(),
        "ran cat [redacted]"
    );
}

/// Records the order hooks run in and appends its tag to the command.
struct Tagging(&'static str, Arc<Mutex<Vec<String>>>);

#[async_trait]
impl ToolHook for Tagging {
    async fn before(&self, call: &ToolCall, _context: &ToolContext) -> ToolHookDecision {
        self.1.lock().unwrap().push(format!("before {}", self.0));
        let command = call.arguments()["command"].as_str().unwrap_or_default();
        ToolHookDecision::Proceed(
            call.clone()
                .with_arguments(json!({"command": format!("{command}+{}", self.0)})),
        )
    }

    async fn after(&self, execution: ToolExecution, _context: &ToolContext) -> ToolExecution {
        self.1.lock().unwrap().push(format!("after {}", self.0));
        let content = format!("{} <{}>", execution.result_text(), self.0);
        ToolExecution::new(
            execution.call().clone(),
            ToolOutcome::Success {
                content,
                value: None,
                parts: Vec::new(),
            },
            execution.started_at(),
            execution.completed_at(),
        )
    }
}

#[tokio::test]
async fn hooks_chain_in_registration_order() {
    let order = Arc::new(Mutex::new(Vec::new()));
    let executor = DefaultToolExecutor::new()
        .with_hook(Tagging("a", order.clone()))
        .with_hook(Tagging("b", order.clone()));
    let executions = executor
        .execute(
            &[bash("c1", "ls")],
            &tools(Arc::default()),
            &ToolContext::default(),
            false,
        )
        .await;
    assert_eq!(
        executions.iter().next().unwrap().result_text(),
        "ran ls+a+b <a> <b>"
    );
    assert_eq!(
        *order.lock().unwrap(),
        ["before a", "before b", "after a", "after b"]
    );
}

#[tokio::test]
async fn a_block_stops_the_chain() {
    let order = Arc::new(Mutex::new(Vec::new()));
    let executor = DefaultToolExecutor::new()
        .with_hook(deny_rm())
        .with_hook(Tagging("late", order.clone()));
    let executions = executor
        .execute(
            &[bash("c1", "rm x")],
            &tools(Arc::default()),
            &ToolContext::default(),
            false,
        )
        .await;
    assert!(executions.has_errors());
    assert!(order.lock().unwrap().is_empty());
}

#[tokio::test]
async fn after_hooks_see_failures_too() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let executor = DefaultToolExecutor::new().with_hook(AfterToolHook::new(move |execution, _| {
        sink.lock().unwrap().push(execution.failure_kind());
        execution
    }));
    executor
        .execute(
            &[
                ToolCall::new("c1", "nope", json!({})),
                ToolCall::new("c2", "bash", json!({})),
            ],
            &tools(Arc::default()),
            &ToolContext::default(),
            false,
        )
        .await;
    assert_eq!(
        *seen.lock().unwrap(),
        [
            Some(ToolFailureKind::UnknownTool),
            Some(ToolFailureKind::InvalidArguments)
        ]
    );
}

#[tokio::test]
async fn a_panicking_hook_fails_only_its_call() {
    let executor = DefaultToolExecutor::new().with_hook(BeforeToolHook::new(|call, _| {
        if call.id() == "c1" {
            panic!("hook bug");
        }
        ToolHookDecision::proceed(call)
    }));
    let executions = executor
        .execute(
            &[bash("c1", "ls"), bash("c2", "pwd")],
            &tools(Arc::default()),
            &ToolContext::default(),
            true,
        )
        .await;
    let first = executions.iter().next().unwrap();
    assert_eq!(first.failure_kind(), Some(ToolFailureKind::Panicked));
    assert_eq!(
        first.error_message(),
        Some("a before-tool hook panicked on the call to `bash`: hook bug")
    );
    assert_eq!(executions.iter().nth(1).unwrap().result_text(), "ran pwd");
}

#[tokio::test]
async fn hooks_receive_the_context() {
    let executor = DefaultToolExecutor::new().with_hook(BeforeToolHook::new(|call, context| {
        if context.parent_agent_id.is_some() {
            ToolHookDecision::block("subagents may not run shell commands")
        } else {
            ToolHookDecision::proceed(call)
        }
    }));
    let mut context = ToolContext::new("child");
    context.parent_agent_id = Some("parent".into());
    let executions = executor
        .execute(&[bash("c1", "ls")], &tools(Arc::default()), &context, false)
        .await;
    assert_eq!(
        executions.iter().next().unwrap().error_message(),
        Some("the call to `bash` was blocked: subagents may not run shell commands")
    );
}
