#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! `DefaultToolExecutor`: failures become executions, timeouts, panics, concurrency, events.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agents_core::tools::{
    DefaultToolExecutor, FunctionTool, ToolContext, ToolError, ToolEvent, ToolExecutor,
    ToolFailureKind, Tools,
};
use messages::ToolCall;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::time::Instant;

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct SleepArgs {
    millis: u64,
}

fn echo() -> FunctionTool {
    FunctionTool::new("echo", "Echoes text", |args: EchoArgs| async move {
        Ok::<_, ToolError>(args.text)
    })
}

fn sleeper() -> FunctionTool {
    FunctionTool::new("sleep", "Sleeps", |args: SleepArgs| async move {
        tokio::time::sleep(Duration::from_millis(args.millis)).await;
        Ok::<_, ToolError>(format!("slept {}ms", args.millis))
    })
}

fn failing() -> FunctionTool {
    FunctionTool::new("fail", "Always fails", |_args: EmptyArgs| async move {
        Err::<String, _>(ToolError::failed("the disk is full"))
    })
}

fn panicking() -> FunctionTool {
    FunctionTool::new("explode", "Panics", |_args: EmptyArgs| async move {
        if true {
            panic!("boom");
        }
        Ok::<_, ToolError>("unreachable")
    })
}

#[derive(Deserialize, JsonSchema)]
struct EmptyArgs {}

fn tools() -> Tools {
    Tools::new()
        .with(echo())
        .with(sleeper())
        .with(failing())
        .with(panicking())
}

fn call(id: &str, name: &str, arguments: Value) -> ToolCall {
    ToolCall::new(id, name, arguments)
}

async fn run_one(executor: &DefaultToolExecutor, call: ToolCall) -> agents_core::ToolExecution {
    let executions = executor
        .execute(&[call], &tools(), &ToolContext::new("agent"), false)
        .await;
    assert_eq!(executions.len(), 1);
    executions.iter().next().unwrap().clone()
}

#[tokio::test]
async fn a_successful_call_becomes_a_tool_result_message() {
    let execution = run_one(
        &DefaultToolExecutor::new(),
        call("c1", "echo", json!({"text": "hi"})),
    )
    .await;
    assert!(!execution.has_error());
    assert_eq!(execution.result_text(), "hi");
    let message = execution.to_message();
    assert_eq!(message.tool_call_id(), Some("c1"));
    assert_eq!(message.text(), "hi");
}

#[tokio::test]
async fn an_unknown_tool_lists_the_available_tools() {
    let execution = run_one(
        &DefaultToolExecutor::new(),
        call("c1", "get_wether", json!({})),
    )
    .await;
    assert_eq!(execution.failure_kind(), Some(ToolFailureKind::UnknownTool));
    assert_eq!(
        execution.result_text(),
        "Error: unknown tool `get_wether`; available tools: `echo`, `sleep`, `fail`, `explode`"
    );
}

#[tokio::test]
async fn a_tool_called_by_a_name_from_another_toolset_is_not_run_and_points_to_the_one_that_does_its_job(
) {
    let ran = Arc::new(Mutex::new(0));
    let counter = Arc::clone(&ran);
    let write = FunctionTool::new("write_file", "Writes a file", move |args: EchoArgs| {
        *counter.lock().unwrap() += 1;
        async move { Ok::<_, ToolError>(args.text) }
    })
    .with_other_names(&["create_file", "create_folder"]);
    let tools = Tools::new().with(echo()).with(write);
    for name in ["create_folder", "createFolder", "CREATE-FILE"] {
        let executions = DefaultToolExecutor::new()
            .execute(
                &[call("c1", name, json!({"text": "reports/summary.txt"}))],
                &tools,
                &ToolContext::new("agent"),
                false,
            )
            .await;
        let execution = executions.iter().next().unwrap();
        assert_eq!(execution.failure_kind(), Some(ToolFailureKind::UnknownTool));
        assert_eq!(
            execution.result_text(),
            format!(
                "Error: unknown tool `{name}`; for what `{name}` does, use `write_file`; \
                 available tools: `echo`, `write_file`"
            )
        );
    }
    assert_eq!(*ran.lock().unwrap(), 0, "a call by another name never runs");
}

#[tokio::test]
async fn an_unknown_tool_with_no_tools_says_so() {
    let executions = DefaultToolExecutor::new()
        .execute(
            &[call("c1", "echo", json!({}))],
            &Tools::new(),
            &ToolContext::default(),
            false,
        )
        .await;
    assert_eq!(
        executions.iter().next().unwrap().error_message(),
        Some("unknown tool `echo`: no tools are available")
    );
}

#[tokio::test]
async fn a_tool_error_is_a_failed_execution_with_its_message() {
    let execution = run_one(&DefaultToolExecutor::new(), call("c1", "fail", json!({}))).await;
    assert_eq!(execution.failure_kind(), Some(ToolFailureKind::Failed));
    assert_eq!(execution.result_text(), "Error: the disk is full");
}

#[tokio::test]
async fn a_tool_panic_is_caught_and_reported() {
    let execution = run_one(
        &DefaultToolExecutor::new(),
        call("c1", "explode", json!({})),
    )
    .await;
    assert_eq!(execution.failure_kind(), Some(ToolFailureKind::Panicked));
    assert_eq!(
        execution.error_message(),
        Some("`explode` crashed (panic: boom)")
    );
}

#[tokio::test]
async fn invalid_arguments_do_not_reach_the_tool() {
    let called = Arc::new(Mutex::new(0));
    let counter = called.clone();
    let counted = FunctionTool::new("echo", "Echoes", move |args: EchoArgs| {
        *counter.lock().unwrap() += 1;
        async move { Ok::<_, ToolError>(args.text) }
    });
    let executions = DefaultToolExecutor::new()
        .execute(
            &[call("c1", "echo", json!({"text": 42}))],
            &Tools::new().with(counted),
            &ToolContext::default(),
            false,
        )
        .await;
    let execution = executions.iter().next().unwrap();
    assert_eq!(
        execution.failure_kind(),
        Some(ToolFailureKind::InvalidArguments)
    );
    assert_eq!(
        execution.error_message(),
        Some("invalid arguments for `echo`: parameter `text` must be a string, got 42")
    );
    assert_eq!(*called.lock().unwrap(), 0);
}

#[tokio::test]
async fn without_validation_deserialization_still_reports_invalid_arguments() {
    let executor = DefaultToolExecutor::new().with_argument_validation(false);
    let execution = run_one(&executor, call("c1", "echo", json!({"text": 42}))).await;
    assert_eq!(
        execution.failure_kind(),
        Some(ToolFailureKind::InvalidArguments)
    );
    assert_eq!(
        execution.error_message(),
        Some("invalid arguments for `echo`: invalid type: integer `42`, expected a string")
    );
}

#[tokio::test(start_paused = true)]
async fn a_slow_tool_times_out() {
    let executor = DefaultToolExecutor::new().with_timeout(Duration::from_secs(1));
    let start = Instant::now();
    let execution = run_one(&executor, call("c1", "sleep", json!({"millis": 5_000}))).await;
    assert_eq!(execution.failure_kind(), Some(ToolFailureKind::TimedOut));
    assert_eq!(
        execution.error_message(),
        Some("`sleep` did not finish within 1s and was stopped")
    );
    assert_eq!(start.elapsed(), Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn a_per_tool_timeout_overrides_the_default() {
    let executor = DefaultToolExecutor::new()
        .with_timeout(Duration::from_millis(10))
        .with_tool_timeout("sleep", Duration::from_secs(10));
    let execution = run_one(&executor, call("c1", "sleep", json!({"millis": 5_000}))).await;
    assert_eq!(execution.result_text(), "slept 5000ms");
}

#[tokio::test(start_paused = true)]
async fn the_default_timeout_is_two_minutes() {
    let executor = DefaultToolExecutor::new();
    let ok = run_one(&executor, call("c1", "sleep", json!({"millis": 119_000}))).await;
    assert!(!ok.has_error());
    let slow = run_one(&executor, call("c2", "sleep", json!({"millis": 121_000}))).await;
    assert_eq!(slow.failure_kind(), Some(ToolFailureKind::TimedOut));
}

fn eight_sleeps() -> Vec<ToolCall> {
    (0..8)
        .map(|i| call(&format!("c{i}"), "sleep", json!({"millis": 100 + i})))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn parallel_calls_run_concurrently_and_keep_call_order() {
    let start = Instant::now();
    let executions = DefaultToolExecutor::new()
        .execute(&eight_sleeps(), &tools(), &ToolContext::default(), true)
        .await;
    assert_eq!(start.elapsed(), Duration::from_millis(107));
    let ids: Vec<&str> = executions.iter().map(|e| e.id()).collect();
    assert_eq!(ids, ["c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7"]);
    assert_eq!(
        executions.iter().next().unwrap().result_text(),
        "slept 100ms"
    );
}

#[tokio::test(start_paused = true)]
async fn sequential_calls_run_one_after_another() {
    let start = Instant::now();
    let executions = DefaultToolExecutor::new()
        .execute(&eight_sleeps(), &tools(), &ToolContext::default(), false)
        .await;
    assert_eq!(start.elapsed(), Duration::from_millis(828));
    assert_eq!(executions.len(), 8);
}

#[tokio::test(start_paused = true)]
async fn max_concurrency_limits_parallel_calls() {
    let calls: Vec<ToolCall> = (0..4)
        .map(|i| call(&format!("c{i}"), "sleep", json!({"millis": 100})))
        .collect();
    let start = Instant::now();
    let executions = DefaultToolExecutor::new()
        .with_max_concurrency(2)
        .execute(&calls, &tools(), &ToolContext::default(), true)
        .await;
    assert_eq!(start.elapsed(), Duration::from_millis(200));
    let ids: Vec<&str> = executions.iter().map(|e| e.id()).collect();
    assert_eq!(ids, ["c0", "c1", "c2", "c3"]);
}

#[tokio::test(start_paused = true)]
async fn a_failing_call_does_not_stop_the_others() {
    let calls = [
        call("c1", "explode", json!({})),
        call("c2", "nope", json!({})),
        call("c3", "echo", json!({"text": "still here"})),
        call("c4", "fail", json!({})),
    ];
    let executions = DefaultToolExecutor::new()
        .execute(&calls, &tools(), &ToolContext::default(), true)
        .await;
    let kinds: Vec<Option<ToolFailureKind>> = executions.iter().map(|e| e.failure_kind()).collect();
    assert_eq!(
        kinds,
        [
            Some(ToolFailureKind::Panicked),
            Some(ToolFailureKind::UnknownTool),
            None,
            Some(ToolFailureKind::Failed)
        ]
    );
    assert_eq!(executions.errors().count(), 3);
}

#[tokio::test(start_paused = true)]
async fn cancellation_stops_a_running_tool() {
    let context = ToolContext::default();
    let token = context.cancellation.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        token.cancel();
    });
    let start = Instant::now();
    let executions = DefaultToolExecutor::new()
        .execute(
            &[call("c1", "sleep", json!({"millis": 10_000}))],
            &tools(),
            &context,
            false,
        )
        .await;
    assert_eq!(start.elapsed(), Duration::from_millis(50));
    let execution = executions.iter().next().unwrap();
    assert_eq!(execution.failure_kind(), Some(ToolFailureKind::Cancelled));
    assert_eq!(
        execution.error_message(),
        Some("cancelled: `sleep` was stopped because the agent run was cancelled")
    );
}

#[tokio::test]
async fn a_cancelled_run_does_not_start_tools() {
    let context = ToolContext::default();
    context.cancellation.cancel();
    let executions = DefaultToolExecutor::new()
        .execute(
            &[call("c1", "echo", json!({"text": "x"}))],
            &tools(),
            &context,
            false,
        )
        .await;
    let execution = executions.iter().next().unwrap();
    assert_eq!(
        execution.error_message(),
        Some("cancelled: `echo` was not run because the agent run was cancelled")
    );
    assert_eq!(
        execution.failure_kind(),
        Some(agents_core::ToolFailureKind::Cancelled)
    );
}

#[tokio::test]
async fn events_report_start_and_completion_of_each_call() {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let executor = DefaultToolExecutor::new().on_event(move |event: &ToolEvent| {
        let line = match event {
            ToolEvent::Started { call } => format!("started {}", call.id()),
            ToolEvent::Completed { execution } => {
                format!(
                    "completed {} error={}",
                    execution.id(),
                    execution.has_error()
                )
            }
            ToolEvent::Blocked { call, reason } => format!("blocked {} {reason}", call.id()),
            ToolEvent::Interrupted { call, rerun } => format!("interrupted {} {rerun}", call.id()),
        };
        sink.lock().unwrap().push(line);
    });
    executor
        .execute(
            &[
                call("c1", "echo", json!({"text": "a"})),
                call("c2", "missing", json!({})),
            ],
            &tools(),
            &ToolContext::default(),
            false,
        )
        .await;
    assert_eq!(
        *events.lock().unwrap(),
        [
            "started c1",
            "completed c1 error=false",
            "started c2",
            "completed c2 error=true"
        ]
    );
}

#[tokio::test]
async fn clones_share_listeners_and_an_arc_is_an_executor() {
    let count = Arc::new(Mutex::new(0));
    let sink = count.clone();
    let executor = DefaultToolExecutor::new().on_event(move |_| *sink.lock().unwrap() += 1);
    let shared: Arc<dyn ToolExecutor> = Arc::new(executor.clone());
    shared
        .execute(
            &[call("c1", "echo", json!({"text": "a"}))],
            &tools(),
            &ToolContext::default(),
            false,
        )
        .await;
    executor
        .execute(
            &[call("c2", "echo", json!({"text": "b"}))],
            &tools(),
            &ToolContext::default(),
            false,
        )
        .await;
    assert_eq!(*count.lock().unwrap(), 4);
}

#[tokio::test]
async fn no_calls_give_no_executions() {
    let executions = DefaultToolExecutor::new()
        .execute(&[], &tools(), &ToolContext::default(), true)
        .await;
    assert!(executions.is_empty());
}
