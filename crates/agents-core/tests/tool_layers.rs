#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! The tool-call onion: the standard layers in their order, a user's layer around every call
//! that runs (and only those), a layer that answers without running, a layer that fails the
//! step, and the decided calls of a suspended run going through the same onion.

use std::sync::{Arc, Mutex};

use agents_core::testing::ScriptedDriver;
use agents_core::tools::{standard_tool_layers, NextTool, ToolLayer, ToolScope};
use agents_core::{
    Agent, AgentError, AgentState, AgentStatus, ApprovalPolicy, ContinuationCriteria, FunctionTool,
    StepsLimit, StopReason, ToolCallLimits, ToolCallPresenceCheck, ToolError, ToolExecution,
    ToolFailureKind,
};
use async_trait::async_trait;
use inference::InferenceResponse;
use messages::ToolCall;
use serde_json::json;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Args {
    n: u32,
}

/// Records the calls it sees and their outcomes.
struct Audit(Arc<Mutex<Vec<String>>>);

#[async_trait]
impl ToolLayer for Audit {
    async fn call(
        &self,
        call: ToolCall,
        scope: &ToolScope<'_>,
        next: NextTool<'_>,
    ) -> Result<ToolExecution, AgentError> {
        let name = format!("{}({})", call.name(), call.arguments()["n"]);
        self.0
            .lock()
            .unwrap()
            .push(format!("{name} {}", scope.effects(call.name())));
        let execution = next.run(call, scope).await?;
        self.0
            .lock()
            .unwrap()
            .push(format!("{name} -> {}", execution.result_text()));
        Ok(execution)
    }
}

/// Refuses every call past the first of a step: a rate limiter.
struct OnePerStep(Mutex<usize>);

#[async_trait]
impl ToolLayer for OnePerStep {
    async fn call(
        &self,
        call: ToolCall,
        scope: &ToolScope<'_>,
        next: NextTool<'_>,
    ) -> Result<ToolExecution, AgentError> {
        let seen = {
            let mut seen = self.0.lock().unwrap();
            *seen += 1;
            *seen
        };
        if seen > 1 {
            return Ok(scope.refusal(call, ToolFailureKind::Blocked, "rate limited: one call"));
        }
        next.run(call, scope).await
    }
}

/// Fails the step (as a journal that cannot be written would).
struct Broken;

#[async_trait]
impl ToolLayer for Broken {
    async fn call(
        &self,
        _call: ToolCall,
        _scope: &ToolScope<'_>,
        _next: NextTool<'_>,
    ) -> Result<ToolExecution, AgentError> {
        Err(AgentError::driver("the audit log is unreachable"))
    }
}

fn counter(ran: Arc<Mutex<Vec<u32>>>) -> FunctionTool {
    FunctionTool::new("count", "Counts", move |args: Args| {
        ran.lock().unwrap().push(args.n);
        async move { Ok::<_, ToolError>(format!("counted {}", args.n)) }
    })
    .with_effects(agents_core::ToolEffects::ReadOnly)
}

fn call(id: &str, n: u32) -> ToolCall {
    ToolCall::new(id, "count", json!({ "n": n }))
}

fn agent(driver: ScriptedDriver, ran: Arc<Mutex<Vec<u32>>>) -> Agent {
    Agent::new(driver).with_tool(counter(ran)).with_criteria(
        ContinuationCriteria::new()
            .with(ToolCallPresenceCheck::new())
            .with(StepsLimit::new(5)),
    )
}

#[test]
fn the_standard_layers_read_as_the_order_they_run_in() {
    let layers = standard_tool_layers();
    let names: Vec<&str> = layers.layers().iter().map(|layer| layer.name()).collect();
    assert_eq!(
        names,
        [
            "HoldForApproval",
            "CapOutput",
            "ReportCalls",
            "AnswerRepeats",
            "RefuseRepeats",
            "JournalCalls"
        ]
    );
}

#[tokio::test]
async fn a_users_layer_sees_the_calls_that_run_and_not_the_refused_repeats() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let driver = ScriptedDriver::new([
        InferenceResponse::with_tool_calls([call("a", 1), call("b", 1), call("c", 1)]),
        InferenceResponse::text("done"),
    ]);
    let done = agent(driver, ran.clone())
        .with_tool_limits(ToolCallLimits {
            repeated_call_limit: Some(3),
            ..ToolCallLimits::default()
        })
        .with_tool_layer(Audit(seen.clone()))
        .execute(AgentState::new().with_user_message("count"))
        .await
        .unwrap();
    // The third identical call was refused outside the user's layer: it never saw it.
    assert_eq!(*ran.lock().unwrap(), [1, 1]);
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "count(1) read-only",
            "count(1) -> counted 1",
            "count(1) read-only",
            "count(1) -> counted 1"
        ]
    );
    let kinds: Vec<_> = done
        .steps()
        .next()
        .unwrap()
        .tool_executions()
        .iter()
        .map(|e| e.failure_kind())
        .collect();
    assert_eq!(kinds, [None, None, Some(ToolFailureKind::Repeated)]);
}

/// Issue 36: a small model reads a file, then asks for it again instead of answering. A
/// read-only call identical to the one just answered is answered from that result, with the
/// advice to answer now; the tool does not run again.
#[tokio::test]
async fn a_read_only_call_repeated_right_after_its_result_is_answered_from_it() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let driver = ScriptedDriver::new([
        InferenceResponse::with_tool_calls([call("a", 1)]),
        InferenceResponse::with_tool_calls([call("b", 1)]),
        InferenceResponse::text("one"),
    ]);
    let done = agent(driver, ran.clone())
        .with_tool_limits(ToolCallLimits::standard())
        .execute(AgentState::new().with_user_message("count"))
        .await
        .unwrap();
    assert_eq!(*ran.lock().unwrap(), [1], "the second call did not run");
    let second = done.steps().nth(1).unwrap();
    let answered = second.tool_executions().iter().next().unwrap();
    assert_eq!(answered.failure_kind(), None);
    let text = answered.result_text();
    assert!(text.starts_with("You already have this result:"), "{text}");
    assert!(
        text.contains("Answer the user's question from it now; only if it does not hold the answer, make a different call for what is missing."),
        "{text}"
    );
    assert!(text.ends_with("counted 1"), "{text}");
    assert_eq!(done.final_response().unwrap().text(), "one");
}

/// The 0.5B model on the eval's development task d1 read `config.ini` eight times, each read
/// after the first answered from its result, to the step limit: every repeat was answered, so
/// none was refused. A repeat the refusal limit reaches is refused, quoting the result, and
/// the loop stops the model after two refusals.
#[tokio::test]
async fn a_read_only_call_repeated_after_its_answer_is_refused_and_the_run_stops() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let driver = ScriptedDriver::new(
        ["a", "b", "c", "d", "e", "f"]
            .map(|id| InferenceResponse::with_tool_calls([call(id, 1)]))
            .into_iter()
            .chain([InferenceResponse::text("one")]),
    );
    let done = agent(driver, ran.clone())
        .with_tool_limits(ToolCallLimits::standard())
        .execute(AgentState::new().with_user_message("count"))
        .await
        .unwrap();
    assert_eq!(*ran.lock().unwrap(), [1], "the tool ran once");
    let kinds: Vec<_> = done
        .steps()
        .flat_map(|step| step.tool_executions().iter().map(|e| e.failure_kind()))
        .collect();
    assert_eq!(
        kinds,
        [
            None,
            None,
            Some(ToolFailureKind::Repeated),
            Some(ToolFailureKind::Repeated)
        ]
    );
    let third = done.steps().nth(2).unwrap();
    let refusal = third.tool_executions().iter().next().unwrap().result_text();
    assert!(
        refusal.contains("counted 1"),
        "the refusal quotes the result: {refusal}"
    );
    assert_eq!(done.stop_reason(), Some(StopReason::RepeatedToolCalls));
}

/// Only right after its result, and only for a tool that only reads: a call that can change
/// things runs again (the world may have changed), and so does a read after another call.
#[tokio::test]
async fn a_repeated_call_runs_again_when_it_can_change_things_or_another_call_came_between() {
    // Another call between the two reads: the second read runs.
    let ran = Arc::new(Mutex::new(Vec::new()));
    let driver = ScriptedDriver::new([
        InferenceResponse::with_tool_calls([call("a", 1)]),
        InferenceResponse::with_tool_calls([call("b", 2)]),
        InferenceResponse::with_tool_calls([call("c", 1)]),
        InferenceResponse::text("done"),
    ]);
    agent(driver, ran.clone())
        .with_tool_limits(ToolCallLimits::standard())
        .execute(AgentState::new().with_user_message("count"))
        .await
        .unwrap();
    assert_eq!(*ran.lock().unwrap(), [1, 2, 1]);

    // A tool with side effects (the default): runs again, right after its result.
    let wrote = Arc::new(Mutex::new(Vec::new()));
    let log = wrote.clone();
    let writer = FunctionTool::new("count", "Counts and writes", move |args: Args| {
        log.lock().unwrap().push(args.n);
        async move { Ok::<_, ToolError>(format!("wrote {}", args.n)) }
    });
    let driver = ScriptedDriver::new([
        InferenceResponse::with_tool_calls([call("a", 1)]),
        InferenceResponse::with_tool_calls([call("b", 1)]),
        InferenceResponse::text("done"),
    ]);
    Agent::new(driver)
        .with_tool(writer)
        .with_criteria(
            ContinuationCriteria::new()
                .with(ToolCallPresenceCheck::new())
                .with(StepsLimit::new(5)),
        )
        .with_tool_limits(ToolCallLimits::standard())
        .execute(AgentState::new().with_user_message("count"))
        .await
        .unwrap();
    assert_eq!(*wrote.lock().unwrap(), [1, 1]);
}

#[tokio::test]
async fn a_layer_may_answer_a_call_without_running_it() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let driver = ScriptedDriver::new([
        InferenceResponse::with_tool_calls([call("a", 1), call("b", 2)]),
        InferenceResponse::text("done"),
    ]);
    let done = agent(driver, ran.clone())
        .with_tool_layer(OnePerStep(Mutex::new(0)))
        .execute(AgentState::new().with_user_message("count"))
        .await
        .unwrap();
    assert_eq!(*ran.lock().unwrap(), [1]);
    let step = done.steps().next().unwrap();
    let results: Vec<String> = step
        .tool_executions()
        .iter()
        .map(|e| e.result_text())
        .collect();
    assert_eq!(results, ["counted 1", "Error: rate limited: one call"]);
}

#[tokio::test]
async fn a_layer_that_fails_fails_the_step_not_the_process() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let driver = ScriptedDriver::new([InferenceResponse::with_tool_calls([call("a", 1)])]);
    let done = agent(driver, ran.clone())
        .with_tool_layer(Broken)
        .execute(AgentState::new().with_user_message("count"))
        .await
        .unwrap();
    assert_eq!(done.status(), AgentStatus::Failed);
    assert!(ran.lock().unwrap().is_empty());
    let errors = done.current_step().unwrap().error_messages();
    assert!(
        errors
            .iter()
            .any(|e| e.contains("the audit log is unreachable")),
        "{errors:?}"
    );
}

#[tokio::test]
async fn a_decided_call_runs_through_the_same_layers_when_the_run_resumes() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let driver = ScriptedDriver::new([
        InferenceResponse::with_tool_calls([call("a", 7)]),
        InferenceResponse::text("done"),
    ]);
    let agent = agent(driver, ran.clone())
        .with_approvals(ApprovalPolicy::new().with_tools(["count"]))
        .with_tool_layer(Audit(seen.clone()));
    let waiting = agent
        .execute(AgentState::new().with_user_message("count"))
        .await
        .unwrap();
    assert_eq!(waiting.status(), AgentStatus::Suspended);
    assert!(
        seen.lock().unwrap().is_empty(),
        "a held call reaches no layer inside the hold"
    );
    let done = agent.execute(waiting.approve("a").unwrap()).await.unwrap();
    assert_eq!(done.status(), AgentStatus::Completed);
    assert_eq!(*ran.lock().unwrap(), [7]);
    assert_eq!(
        *seen.lock().unwrap(),
        ["count(7) read-only", "count(7) -> counted 7"]
    );
}

/// Audits only calls with an even `n`: it says it passes the others over, and its `call` never
/// sees them; the inner layers and the tool still run every call.
struct EvenAudit(Arc<Mutex<Vec<u32>>>);

#[async_trait]
impl ToolLayer for EvenAudit {
    async fn call(
        &self,
        call: ToolCall,
        scope: &ToolScope<'_>,
        next: NextTool<'_>,
    ) -> Result<ToolExecution, AgentError> {
        let n = call.arguments()["n"].as_u64().unwrap_or_default() as u32;
        self.0.lock().unwrap().push(n);
        next.run(call, scope).await
    }

    fn passes(&self, call: &ToolCall, _scope: &ToolScope<'_>) -> bool {
        call.arguments()["n"].as_u64().unwrap_or_default() % 2 == 1
    }
}

#[tokio::test]
async fn a_layer_that_passes_a_call_over_is_not_called_for_it_and_the_call_still_runs() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let audited = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let driver = ScriptedDriver::new([
        InferenceResponse::with_tool_calls([call("a", 1), call("b", 2), call("c", 3)]),
        InferenceResponse::text("done"),
    ]);
    let done = agent(driver, ran.clone())
        .with_tool_layer(EvenAudit(audited.clone()))
        .with_tool_layer(Audit(seen.clone()))
        .execute(AgentState::new().with_user_message("count"))
        .await
        .unwrap();
    assert_eq!(done.status(), AgentStatus::Completed);
    assert_eq!(*ran.lock().unwrap(), [1, 2, 3]);
    assert_eq!(*audited.lock().unwrap(), [2]);
    // The layer inside the one that passed still saw every call.
    assert_eq!(seen.lock().unwrap().len(), 6);
}

/// Every standard layer that passes calls over (no approval needed, no journal, nobody
/// listening, nothing to repeat) still holds, caps, reports and refuses when its work is due:
/// here a call held for approval and an output capped, with the other layers passed over.
#[tokio::test]
async fn the_standard_layers_that_pass_calls_over_still_hold_and_cap_when_due() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let driver = ScriptedDriver::new([
        InferenceResponse::with_tool_calls([call("a", 1)]),
        InferenceResponse::text("done"),
    ]);
    let held = agent(driver, ran.clone())
        .with_approvals(ApprovalPolicy::new().with_tools(["count"]))
        .execute(AgentState::new().with_user_message("count"))
        .await
        .unwrap();
    assert_eq!(held.status(), AgentStatus::Suspended);
    assert!(ran.lock().unwrap().is_empty(), "the held call did not run");

    let long = FunctionTool::new("long", "Says a lot", |_: serde_json::Value| async move {
        Ok::<_, ToolError>("x".repeat(5_000))
    });
    let driver = ScriptedDriver::new([
        InferenceResponse::with_tool_calls([ToolCall::new("l", "long", json!({}))]),
        InferenceResponse::text("done"),
    ]);
    let capped = Agent::new(driver)
        .with_tool(long)
        .with_tool_limits(ToolCallLimits {
            output_limit: Some(100),
            ..ToolCallLimits::default()
        })
        .execute(AgentState::new().with_user_message("talk"))
        .await
        .unwrap();
    let result = capped
        .steps()
        .next()
        .unwrap()
        .tool_executions()
        .iter()
        .next()
        .unwrap()
        .result_text();
    assert!(
        result.len() < 1_000,
        "the output was capped: {} bytes",
        result.len()
    );
}
