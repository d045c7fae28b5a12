#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! The agent loop: steps, limits, error policies, iterate, hooks, cancellation.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agents_core::testing::ScriptedDriver;
use agents_core::{
    Agent, AgentError, AgentEvent, AgentState, AgentStatus, AgentStepType, ContinuationCriteria,
    ErrorHandlingDecision, ErrorPolicy, ErrorType, ExecutionTimeLimit, FunctionTool, Next,
    StateProcessor, StateProcessors, StepOptions, StepsLimit, StopDecision, StopReason,
    TokenUsageLimit, TokioClock, ToolCallPresenceCheck, ToolError, EXECUTION_BUFFER_SECTION,
};
use async_trait::async_trait;
use futures::StreamExt;
use inference::{InferenceError, InferenceResponse, Usage};
use messages::{Message, ToolCall};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

#[derive(Deserialize, JsonSchema)]
struct CityArgs {
    city: String,
}

fn weather() -> FunctionTool {
    FunctionTool::new(
        "get_weather",
        "Current weather",
        |args: CityArgs| async move { Ok::<_, ToolError>(format!("22°C and sunny in {}", args.city)) },
    )
}

fn broken() -> FunctionTool {
    FunctionTool::new(
        "get_weather",
        "Current weather",
        |_args: CityArgs| async move {
            Err::<String, _>(ToolError::failed("weather service unavailable"))
        },
    )
}

fn call(id: &str) -> InferenceResponse {
    InferenceResponse::with_tool_calls([ToolCall::new(id, "get_weather", json!({"city": "Paris"}))])
}

fn criteria() -> ContinuationCriteria {
    ContinuationCriteria::new()
        .with(ToolCallPresenceCheck::new())
        .with(StepsLimit::new(10))
}

fn user(text: &str) -> AgentState {
    AgentState::new().with_user_message(text)
}

/// What agents-processing does in separated-trace mode, in miniature: the step's trace goes to
/// `execution_buffer`, a final answer to `messages`, and the buffer is cleared on stop.
struct SeparatedTrace;

#[async_trait]
impl StateProcessor for SeparatedTrace {
    async fn process(&self, state: AgentState, next: Next<'_>) -> Result<AgentState, AgentError> {
        let state = next.run(state).await?;
        let Some(step) = state.current_step().cloned() else {
            return Ok(state);
        };
        let mut store = state
            .store()
            .section(EXECUTION_BUFFER_SECTION)
            .append(step.trace_messages().clone());
        if let Some(answer) = step.final_response() {
            store = store.section("messages").append(answer.clone());
        }
        if state
            .continuation_outcome()
            .is_some_and(|o| !o.should_continue())
        {
            store = store.section(EXECUTION_BUFFER_SECTION).clear();
        }
        Ok(state.with_store(store))
    }
}

fn recorder() -> (
    Arc<Mutex<Vec<AgentEvent>>>,
    impl Fn(&AgentEvent) + Send + Sync,
) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    (events, move |e: &AgentEvent| {
        sink.lock().unwrap().push(e.clone())
    })
}

#[tokio::test]
async fn one_step_answer() {
    let driver = ScriptedDriver::new([InferenceResponse::text("Hello!")]);
    let agent = Agent::new(driver.clone()).with_criteria(criteria());
    let done = agent.execute(user("Hi")).await.unwrap();
    assert_eq!(done.status(), AgentStatus::Completed);
    assert_eq!(done.stop_reason(), Some(StopReason::Completed));
    assert_eq!(done.step_count(), 1);
    assert_eq!(done.final_response().unwrap().text(), "Hello!");
    assert_eq!(driver.inputs()[0].to_transcript(), "user: Hi\n");
}

#[tokio::test]
async fn tool_call_then_answer_keeps_the_trace_out_of_messages() {
    let driver = ScriptedDriver::new([
        call("call_1").with_usage(Usage::new(10, 5)),
        InferenceResponse::text("It is 22°C and sunny in Paris.").with_usage(Usage::new(20, 8)),
    ]);
    let (events, listener) = recorder();
    let agent = Agent::new(driver.clone())
        .with_tool(weather())
        .with_criteria(criteria())
        .with_processors(agents_core::StateProcessors::new([
            std::sync::Arc::new(SeparatedTrace) as std::sync::Arc<dyn agents_core::StateProcessor>,
        ]))
        .on_event(listener);
    let done = agent.execute(user("Weather in Paris?")).await.unwrap();

    assert_eq!(done.status(), AgentStatus::Completed);
    assert_eq!(done.step_count(), 2);
    let steps: Vec<_> = done.steps().collect();
    assert_eq!(steps[0].step_type(), AgentStepType::ToolExecution);
    assert_eq!(
        steps[0].trace_messages().to_transcript(),
        "assistant -> get_weather {\"city\":\"Paris\"} [call_1]\n\
         tool get_weather [call_1]: 22°C and sunny in Paris\n"
    );
    assert!(steps[0].response_messages().is_empty());
    assert_eq!(steps[1].step_type(), AgentStepType::FinalResponse);
    // The second inference saw the tool trace through the execution buffer.
    assert_eq!(driver.inputs()[1].len(), 3);
    // Only the user message and the final answer persist.
    assert_eq!(
        done.messages().to_transcript(),
        "user: Weather in Paris?\nassistant: It is 22°C and sunny in Paris.\n"
    );
    assert!(done.store().section(EXECUTION_BUFFER_SECTION).is_empty());
    assert_eq!(done.usage().total(), 43);
    assert_eq!(done.execution_usage().total(), 43);

    let names: Vec<&str> = events
        .lock()
        .unwrap()
        .iter()
        .map(AgentEvent::name)
        .collect();
    assert_eq!(
        names,
        [
            "execution_started",
            "continuation_evaluated",
            "step_started",
            "inference_requested",
            "inference_responded",
            "tool_call_started",
            "tool_call_completed",
            "continuation_evaluated",
            "step_completed",
            "token_usage",
            "step_started",
            "inference_requested",
            "inference_responded",
            "continuation_evaluated",
            "step_completed",
            "token_usage",
            "execution_completed",
        ]
    );
    let events = events.lock().unwrap();
    assert!(events.iter().all(|e| e.agent_id() == done.agent_id()));
    let step_numbers: Vec<usize> = events
        .iter()
        .filter(|e| e.name() == "step_completed")
        .map(AgentEvent::step_number)
        .collect();
    assert_eq!(step_numbers, [1, 2]);
}

#[tokio::test]
async fn steps_limit_stops_a_tool_loop() {
    let driver = ScriptedDriver::new((1..=5).map(|i| call(&format!("c{i}"))));
    let agent = Agent::new(driver.clone())
        .with_tool(weather())
        .with_criteria(
            ContinuationCriteria::new()
                .with(ToolCallPresenceCheck::new())
                .with(StepsLimit::new(2)),
        );
    let done = agent.execute(user("loop")).await.unwrap();
    assert_eq!(done.step_count(), 2);
    assert_eq!(done.stop_reason(), Some(StopReason::StepsLimit));
    assert_eq!(done.status(), AgentStatus::Completed);
    assert_eq!(driver.remaining(), 3);
}

#[tokio::test]
async fn token_limit_stops_with_token_limit() {
    let driver =
        ScriptedDriver::new((1..=5).map(|i| call(&format!("c{i}")).with_usage(Usage::new(40, 20))));
    let agent = Agent::new(driver)
        .with_tool(weather())
        .with_criteria(criteria().with(TokenUsageLimit::new(100)));
    let done = agent.execute(user("loop")).await.unwrap();
    assert_eq!(done.step_count(), 2);
    assert_eq!(done.stop_reason(), Some(StopReason::TokenLimit));
    assert_eq!(done.execution_usage().total(), 120);
}

#[tokio::test(start_paused = true)]
async fn time_limit_stops_with_time_limit() {
    let driver = ScriptedDriver::new((1..=5).map(|i| call(&format!("c{i}"))))
        .with_delay(Duration::from_secs(40));
    let agent = Agent::new(driver)
        .with_tool(weather())
        .with_criteria(criteria().with(ExecutionTimeLimit::new(Duration::from_secs(60))))
        .with_clock(TokioClock::new());
    let done = agent.execute(user("slow")).await.unwrap();
    assert_eq!(done.step_count(), 2);
    assert_eq!(done.stop_reason(), Some(StopReason::TimeLimit));
    // A second execution starts a new time budget.
    let again = agent
        .execute(done.with_user_message("again"))
        .await
        .unwrap();
    assert_eq!(again.step_count(), 2);
}

#[tokio::test]
async fn tool_errors_stop_under_stop_on_any_error() {
    let driver = ScriptedDriver::new([call("c1"), InferenceResponse::text("sorry")]);
    let agent = Agent::new(driver)
        .with_error_policy(ErrorPolicy::stop_on_any_error())
        .with_tool(broken())
        .with_criteria(criteria());
    let done = agent.execute(user("weather")).await.unwrap();
    assert_eq!(done.status(), AgentStatus::Failed);
    assert_eq!(done.stop_reason(), Some(StopReason::Error));
    assert_eq!(done.step_count(), 1);
    let step = done.current_step().unwrap();
    assert_eq!(step.step_type(), AgentStepType::Error);
    assert_eq!(
        step.trace_messages().last().unwrap().text(),
        "Error: weather service unavailable"
    );
    let reason = done
        .continuation_outcome()
        .unwrap()
        .evaluation_for("ErrorPolicyCriterion")
        .unwrap()
        .reason()
        .into_owned();
    assert!(
        reason.contains("tool error in tool `get_weather`"),
        "{reason}"
    );
}

#[tokio::test]
async fn tool_errors_are_retried_within_the_budget() {
    let driver = ScriptedDriver::new([
        call("c1"),
        call("c2"),
        call("c3"),
        InferenceResponse::text("x"),
    ]);
    let agent = Agent::new(driver)
        .with_tool(broken())
        .with_criteria(criteria())
        .with_error_policy(ErrorPolicy::retry_tool_errors(2));
    let done = agent.execute(user("weather")).await.unwrap();
    // Two failures are retried; the third in a row stops.
    assert_eq!(done.step_count(), 3);
    assert_eq!(done.status(), AgentStatus::Failed);

    let recovering =
        ScriptedDriver::new([call("c1"), InferenceResponse::text("The service is down.")]);
    let agent = Agent::new(recovering)
        .with_tool(broken())
        .with_criteria(criteria())
        .with_error_policy(ErrorPolicy::retry_tool_errors(2));
    let done = agent.execute(user("weather")).await.unwrap();
    assert_eq!(done.status(), AgentStatus::Completed);
    assert_eq!(
        done.final_response().unwrap().text(),
        "The service is down."
    );
}

#[tokio::test]
async fn ignored_tool_errors_do_not_fail_the_run() {
    let driver = ScriptedDriver::new([call("c1"), InferenceResponse::text("The service is down.")]);
    let agent = Agent::new(driver)
        .with_tool(broken())
        .with_criteria(criteria())
        .with_error_policy(ErrorPolicy::ignore_tool_errors());
    let done = agent.execute(user("weather")).await.unwrap();
    assert_eq!(done.status(), AgentStatus::Completed);
    assert_eq!(done.step_count(), 2);
}

fn rate_limited() -> AgentError {
    AgentError::from(InferenceError::RateLimited {
        retry_after: Some(Duration::from_secs(1)),
        message: "too many requests".into(),
    })
    .context("calling the model")
}

#[tokio::test]
async fn a_rate_limited_driver_error_is_retried_as_a_rate_limit() {
    let driver =
        ScriptedDriver::from_results([Err(rate_limited()), Ok(InferenceResponse::text("Hi!"))]);
    let agent = Agent::new(driver)
        .with_criteria(criteria())
        .with_error_policy(ErrorPolicy::retry_tool_errors(2));
    let done = agent.execute(user("hello")).await.unwrap();
    assert_eq!(done.status(), AgentStatus::Completed);
    assert_eq!(done.step_count(), 2);
    let first = done.steps().next().unwrap();
    assert_eq!(first.step_type(), AgentStepType::Error);
    assert_eq!(first.errors()[0].error_type, ErrorType::RateLimit);
    assert!(first.errors()[0].message.contains("too many requests"));
    assert_eq!(done.final_response().unwrap().text(), "Hi!");
}

#[tokio::test]
async fn driver_errors_stop_by_default_without_panicking() {
    let driver = ScriptedDriver::from_results([Err(AgentError::driver("no model configured"))]);
    let (events, listener) = recorder();
    let agent = Agent::new(driver)
        .with_criteria(criteria())
        .on_event(listener);
    let done = agent.execute(user("hello")).await.unwrap();
    assert_eq!(done.status(), AgentStatus::Failed);
    assert_eq!(done.stop_reason(), Some(StopReason::Error));
    assert_eq!(done.step_count(), 1);
    assert_eq!(
        done.current_step().unwrap().errors()[0].error_type,
        ErrorType::Model
    );
    let last = events.lock().unwrap().last().cloned().unwrap();
    let AgentEvent::ExecutionFailed { errors, steps, .. } = last else {
        panic!("expected ExecutionFailed, got {last:?}");
    };
    assert_eq!(steps, 1);
    assert_eq!(errors, ["driver error: no model configured"]);
}

#[tokio::test]
async fn driver_errors_retry_all_is_bounded() {
    let driver = ScriptedDriver::from_results((0..5).map(|_| Err(rate_limited())));
    let agent = Agent::new(driver.clone())
        .with_criteria(criteria())
        .with_error_policy(ErrorPolicy::retry_all(2));
    let done = agent.execute(user("hello")).await.unwrap();
    assert_eq!(done.step_count(), 3);
    assert_eq!(done.status(), AgentStatus::Failed);
    assert_eq!(driver.remaining(), 2);
}

#[tokio::test]
async fn ignored_driver_errors_complete_instead_of_failing() {
    let policy = ErrorPolicy::stop_on_any_error()
        .with_decision(ErrorType::Model, ErrorHandlingDecision::Ignore);
    let driver = ScriptedDriver::from_results([Err(AgentError::driver("hiccup"))]);
    let agent = Agent::new(driver)
        .with_criteria(criteria())
        .with_error_policy(policy);
    let done = agent.execute(user("hello")).await.unwrap();
    assert_eq!(done.status(), AgentStatus::Completed);
    assert_eq!(done.step_count(), 1);
}

#[tokio::test]
async fn an_exhausted_script_is_a_clear_error() {
    let agent = Agent::new(ScriptedDriver::new([])).with_criteria(criteria());
    let done = agent.execute(user("hello")).await.unwrap();
    assert_eq!(done.status(), AgentStatus::Failed);
    assert_eq!(
        done.current_step().unwrap().errors()[0].message,
        "driver error: scripted driver has no step left: it was scripted with 0 step(s)"
    );
}

#[tokio::test]
async fn iterate_yields_the_state_after_each_step() {
    let driver = ScriptedDriver::new([call("c1"), InferenceResponse::text("done")]);
    let agent = Agent::new(driver)
        .with_tool(weather())
        .with_criteria(criteria());
    let items: Vec<AgentState> = agent
        .iterate(user("go"))
        .map(|item| item.unwrap())
        .collect()
        .await;
    // One item per step; the last step finishes the execution.
    assert_eq!(items.len(), 2);
    let counts: Vec<usize> = items.iter().map(AgentState::step_count).collect();
    assert_eq!(counts, [1, 2]);
    assert_eq!(items[0].status(), AgentStatus::InProgress);
    assert_eq!(items[1].status(), AgentStatus::Completed);

    let executed = agent.execute(user("go")).await;
    // The scripted driver is exhausted now: execute reports it in the final state.
    assert_eq!(executed.unwrap().status(), AgentStatus::Failed);
}

#[tokio::test]
async fn execute_returns_after_execution_hook_changes() {
    let driver = ScriptedDriver::new([InferenceResponse::text("done")]);
    let agent = Agent::new(driver)
        .with_criteria(criteria())
        .before_execution(|s| s.with_metadata("started", true))
        .before_step(|s| {
            let seen = s.step_count() + 1;
            s.with_metadata("steps_seen", seen)
        })
        .after_execution(|s| s.with_metadata("finished", true));
    let done = agent.execute(user("go")).await.unwrap();
    assert_eq!(done.metadata().get("started"), Some(&json!(true)));
    assert_eq!(done.metadata().get("steps_seen"), Some(&json!(1)));
    assert_eq!(done.metadata().get("finished"), Some(&json!(true)));
}

#[tokio::test]
async fn stop_hook_vetoes_are_bounded() {
    let driver =
        ScriptedDriver::new((0..10).map(|i| InferenceResponse::text(format!("answer {i}"))));
    let agent = Agent::new(driver.clone())
        .with_criteria(criteria())
        .with_stop_hook(|_| StopDecision::Prevent("not good enough".into()));
    let done = agent.execute(user("go")).await.unwrap();
    assert_eq!(done.step_count(), 4, "one step plus three vetoes");
    assert_eq!(done.status(), AgentStatus::Completed);
    assert_eq!(done.final_response().unwrap().text(), "answer 3");

    let once = Agent::new(ScriptedDriver::new(
        (0..10).map(|i| InferenceResponse::text(format!("a{i}"))),
    ))
    .with_criteria(criteria())
    .with_stop_hook(|s| {
        if s.step_count() < 2 {
            StopDecision::Prevent("one more".into())
        } else {
            StopDecision::Allow
        }
    });
    assert_eq!(once.execute(user("go")).await.unwrap().step_count(), 2);
}

#[tokio::test]
async fn cancellation_stops_at_the_next_step_boundary() {
    let token = CancellationToken::new();
    let canceller = token.clone();
    let driver = ScriptedDriver::new((1..=5).map(|i| call(&format!("c{i}"))));
    let agent = Agent::new(driver.clone())
        .with_tool(weather())
        .with_criteria(criteria())
        .on_event(move |e| {
            if e.name() == "step_completed" {
                canceller.cancel();
            }
        });
    let done = agent
        .execute_with(user("go"), &StepOptions::new().with_cancellation(token))
        .await
        .unwrap();
    assert_eq!(done.step_count(), 1);
    assert_eq!(done.stop_reason(), Some(StopReason::UserRequested));
    assert_eq!(done.status(), AgentStatus::Failed);
    assert_eq!(driver.remaining(), 4);
    // A new execution forgets the interruption.
    assert_eq!(done.with_user_message("go on").stop_reason(), None);
}

#[tokio::test(start_paused = true)]
async fn dropping_the_stream_stops_the_run() {
    let driver = ScriptedDriver::new((1..=5).map(|i| call(&format!("c{i}"))))
        .with_delay(Duration::from_secs(1));
    let agent = Agent::new(driver.clone())
        .with_tool(weather())
        .with_criteria(criteria());
    {
        let stream = agent.iterate(user("go"));
        futures::pin_mut!(stream);
        let first = stream.next().await.unwrap().unwrap();
        assert_eq!(first.step_count(), 1);
    }
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert_eq!(
        driver.remaining(),
        4,
        "no step ran after the stream was dropped"
    );
}

struct Failing;

#[async_trait]
impl StateProcessor for Failing {
    async fn process(&self, _state: AgentState, _next: Next<'_>) -> Result<AgentState, AgentError> {
        Err(AgentError::Hook {
            hook: "Failing".into(),
            message: "disk full".into(),
        })
    }
}

#[tokio::test]
async fn a_failing_processor_is_handled_like_a_driver_error() {
    let agent = Agent::new(ScriptedDriver::new([InferenceResponse::text("x")]))
        .with_criteria(criteria())
        .with_processor(Failing);
    let done = agent.execute(user("go")).await.unwrap();
    assert_eq!(done.status(), AgentStatus::Failed);
    assert_eq!(
        done.current_step().unwrap().errors()[0].message,
        "hook `Failing` failed: disk full"
    );
}

/// `Agent::new` has the builder's defaults: the run goes on while the model calls tools (up
/// to 20 steps), a failed tool call is retried, and every step's messages persist.
#[tokio::test]
async fn an_agent_with_the_defaults_runs_until_the_model_answers_and_keeps_every_message() {
    let driver = ScriptedDriver::new([
        call("c1"),
        call("c2"),
        InferenceResponse::text("It is sunny."),
    ]);
    let agent = Agent::new(driver.clone()).with_tool(weather());
    let done = agent.execute(user("go")).await.unwrap();
    assert_eq!(done.step_count(), 3);
    assert_eq!(done.status(), AgentStatus::Completed);
    assert_eq!(driver.remaining(), 0);
    assert_eq!(
        agent.processors().names(),
        ["AppendStepMessages", "AppendContextMetadata"]
    );
    let roles: Vec<_> = done.messages().iter().map(|m| m.role()).collect();
    assert_eq!(roles.len(), 6, "{}", done.messages().to_transcript());
    assert_eq!(done.final_response().unwrap().text(), "It is sunny.");

    let failing = Agent::new(ScriptedDriver::new([
        call("c1"),
        InferenceResponse::text("sorry"),
    ]))
    .with_tool(broken());
    let done = failing.execute(user("weather")).await.unwrap();
    assert_eq!(
        done.status(),
        AgentStatus::Completed,
        "a tool error is retried"
    );
    assert_eq!(done.step_count(), 2);
}

#[tokio::test]
async fn a_finished_state_continues_after_a_new_user_message() {
    let driver = ScriptedDriver::new([
        InferenceResponse::text("one"),
        InferenceResponse::text("two"),
    ]);
    let agent = Agent::new(driver.clone())
        .with_criteria(criteria())
        .with_processors(agents_core::StateProcessors::new([
            std::sync::Arc::new(SeparatedTrace) as std::sync::Arc<dyn agents_core::StateProcessor>,
        ]));
    let first = agent.execute(user("first")).await.unwrap();
    let second = agent
        .execute(first.clone().with_user_message(Message::user("second")))
        .await
        .unwrap();
    assert_eq!(second.step_count(), 1);
    assert_eq!(
        second.messages().to_transcript(),
        "user: first\nassistant: one\nuser: second\nassistant: two\n"
    );
    assert_eq!(second.agent_id(), first.agent_id());
}

/// A processor layer that fails after the step ran (`after_step`) or cuts the step off.
struct FailingLayer {
    cut_off: bool,
}

#[async_trait]
impl StateProcessor for FailingLayer {
    async fn process(&self, state: AgentState, next: Next<'_>) -> Result<AgentState, AgentError> {
        if self.cut_off {
            return Ok(state.with_metadata("guarded", true));
        }
        next.run(state).await?;
        Err(AgentError::InvalidState(
            "the layer failed on purpose".into(),
        ))
    }
}

#[tokio::test]
async fn a_failing_processor_is_recorded_as_a_failed_step_on_the_state_the_step_began_with() {
    for with_hook in [false, true] {
        let mut agent = Agent::new(ScriptedDriver::new([InferenceResponse::text("never kept")]))
            .with_criteria(criteria())
            .with_processor(FailingLayer { cut_off: false });
        if with_hook {
            agent = agent.before_step(|s| {
                let step = s.step_count() + 1;
                s.with_metadata("hooked", step)
            });
        }
        let before = user("go");
        let done = agent.execute(before.clone()).await.unwrap();
        let case = format!("with_hook={with_hook}");
        assert_eq!(done.status(), AgentStatus::Failed, "{case}");
        assert_eq!(done.stop_reason(), Some(StopReason::Error), "{case}");
        assert_eq!(done.step_count(), 1, "{case}");
        let execution = done.step_executions().last().unwrap();
        assert_eq!(execution.step_number(), 1, "{case}");
        assert!(execution.started_at() >= before.updated_at(), "{case}");
        assert!(execution.completed_at() >= execution.started_at(), "{case}");
        let step = execution.step();
        assert_eq!(step.step_type(), AgentStepType::Error, "{case}");
        assert!(
            step.errors()[0]
                .message
                .contains("the layer failed on purpose"),
            "{case}: {:?}",
            step.errors()
        );
        // The failure is recorded on the state the step began with: the scripted answer of
        // the discarded step is not in it, a before-step hook's change is.
        assert_eq!(step.input_messages().len(), 1, "{case}");
        assert_eq!(done.messages().len(), 1, "{case}");
        assert_eq!(
            done.metadata().get("hooked"),
            with_hook.then(|| json!(1)).as_ref(),
            "{case}"
        );
    }
}

/// Step hooks are one processor, `StepHooks`, the outermost layer of the onion: replacing
/// the processors keeps them, and the after-step hooks see every recorded step, the failure
/// recorded after an inner layer's error and a guard's stop included.
#[tokio::test]
async fn step_hooks_are_the_outermost_processor_and_see_failed_and_guarded_steps() {
    for cut_off in [false, true] {
        let agent = Agent::new(ScriptedDriver::new([InferenceResponse::text("never kept")]))
            .with_criteria(criteria())
            .before_step(|s| s.with_metadata("before", true))
            .after_step(|s| {
                let seen = format!("{:?}", s.current_step().map(|step| step.step_type()));
                s.with_metadata("after_saw", seen)
            })
            .with_processors(StateProcessors::new([
                Arc::new(FailingLayer { cut_off }) as Arc<dyn StateProcessor>
            ]));
        assert_eq!(agent.onion().names(), ["StepHooks", "FailingLayer"]);
        assert_eq!(agent.processors().names(), ["FailingLayer"]);
        let done = agent.execute(user("go")).await.unwrap();
        let case = format!("cut_off={cut_off}");
        let (reason, step_type) = if cut_off {
            (StopReason::Guard, done.current_step().unwrap().step_type())
        } else {
            (StopReason::Error, AgentStepType::Error)
        };
        assert_eq!(done.stop_reason(), Some(reason), "{case}");
        assert_eq!(done.step_count(), 1, "{case}");
        assert_eq!(done.metadata().get("before"), Some(&json!(true)), "{case}");
        assert_eq!(
            done.metadata().get("after_saw"),
            Some(&json!(format!("{:?}", Some(step_type)))),
            "{case}"
        );
    }
}

#[tokio::test]
async fn a_processor_that_does_not_run_the_step_stops_the_execution_as_a_guard() {
    let driver = ScriptedDriver::new([InferenceResponse::text("never asked")]);
    let agent = Agent::new(driver.clone())
        .with_criteria(criteria())
        .with_processor(FailingLayer { cut_off: true });
    let done = agent.execute(user("go")).await.unwrap();
    assert_eq!(done.status(), AgentStatus::Completed);
    assert_eq!(done.stop_reason(), Some(StopReason::Guard));
    assert_eq!(driver.remaining(), 1, "the model was not asked");
    assert_eq!(done.step_count(), 1, "the guard's decision is recorded");
    let execution = done.step_executions().last().unwrap();
    assert!(!execution.step().has_errors());
    assert!(execution.step().inference_response().is_none());
    assert_eq!(execution.outcome().stop_reason(), Some(StopReason::Guard));
    assert_eq!(execution.outcome().resolved_by(), Some("StateProcessor"));
    // The guard's own change to the state is kept.
    assert_eq!(done.metadata().get("guarded"), Some(&json!(true)));
}

#[tokio::test]
async fn each_recorded_step_shares_its_execution_id_and_ids_do_not_repeat() {
    let driver = ScriptedDriver::new([call("c1"), call("c2"), InferenceResponse::text("done")]);
    let agent = Agent::new(driver)
        .with_tool(weather())
        .with_criteria(criteria());
    let done = agent.execute(user("go")).await.unwrap();
    assert_eq!(done.step_count(), 3);
    let mut seen = std::collections::HashSet::new();
    for execution in done.step_executions().iter() {
        assert_eq!(execution.id(), execution.step().id());
        assert_eq!(
            uuid::Uuid::parse_str(execution.id())
                .unwrap()
                .get_version_num(),
            7
        );
        assert!(seen.insert(execution.id().to_owned()), "ids repeat");
    }
    // A step given its own id keeps it when recorded.
    let given = agents_core::AgentStep::new(vec![]).with_id("my-step");
    let recorded = agents_core::testing::with_recorded_step(AgentState::new(), given);
    assert_eq!(recorded.current_step().unwrap().id(), "my-step");
}

#[tokio::test(start_paused = true)]
async fn concurrent_executions_of_one_agent_each_get_their_own_time_budget() {
    // Every step takes 40 s; the budget is 60 s, so each execution runs exactly two steps
    // (40 s: go on; 80 s: stop), however the executions overlap.
    let driver = ScriptedDriver::new((1..=20).map(|i| call(&format!("c{i}"))))
        .with_delay(Duration::from_secs(40));
    let agent = Agent::new(driver)
        .with_tool(weather())
        .with_criteria(criteria().with(ExecutionTimeLimit::new(Duration::from_secs(60))))
        .with_clock(TokioClock::new());
    let first = tokio::spawn({
        let agent = agent.clone();
        async move { agent.execute(user("first")).await.unwrap() }
    });
    let second = tokio::spawn({
        let agent = agent.clone();
        async move {
            // Starts while the first is in its second step.
            tokio::time::sleep(Duration::from_secs(50)).await;
            agent.execute(user("second")).await.unwrap()
        }
    });
    let (first, second) = (first.await.unwrap(), second.await.unwrap());
    for done in [first, second] {
        assert_eq!(done.step_count(), 2);
        assert_eq!(done.stop_reason(), Some(StopReason::TimeLimit));
    }
}

#[tokio::test]
async fn a_failed_step_whose_retry_a_limit_refuses_fails_the_run() {
    // The policy retries the model error; the step limit of one leaves no room for it.
    let driver = ScriptedDriver::from_results([Err(rate_limited())]);
    let (events, listener) = recorder();
    let agent = Agent::new(driver)
        .with_criteria(ContinuationCriteria::new().with(StepsLimit::new(1)))
        .with_error_policy(ErrorPolicy::retry_all(3))
        .on_event(listener);
    let done = agent.execute(user("hello")).await.unwrap();
    assert_eq!(done.step_count(), 1);
    assert_eq!(done.stop_reason(), Some(StopReason::StepsLimit));
    assert_eq!(done.status(), AgentStatus::Failed);
    let last = events.lock().unwrap().last().cloned().unwrap();
    let AgentEvent::ExecutionFailed { errors, .. } = last else {
        panic!("expected ExecutionFailed, got {last:?}");
    };
    assert!(errors[0].contains("too many requests"), "{errors:?}");

    // A failed tool call is no failed step (the model is told, and answers on the stop):
    // the step limit ends that run as a completion, as before.
    let driver = ScriptedDriver::new([call("c1"), InferenceResponse::text("done")]);
    let agent = Agent::new(driver)
        .with_tool(broken())
        .with_criteria(ContinuationCriteria::new().with(StepsLimit::new(1)))
        .with_error_policy(ErrorPolicy::retry_all(3));
    let done = agent.execute(user("hello")).await.unwrap();
    assert_eq!(done.stop_reason(), Some(StopReason::StepsLimit));
    assert_eq!(done.status(), AgentStatus::Completed);
}
