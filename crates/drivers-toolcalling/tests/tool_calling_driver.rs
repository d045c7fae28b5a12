//! `ToolCallingDriver` against a scripted model: requests sent, steps produced, events.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::{Arc, Mutex};

use agents_core::{
    Agent, AgentDriver, AgentError, AgentEvent, AgentEvents, AgentState, AgentStep, AgentStepType,
    CachedContext, DefaultToolExecutor, FunctionTool, Next, StateProcessor, StepContext,
    StepsLimit, ToolCallPresenceCheck, Tools, DEFAULT_SECTION, EXECUTION_BUFFER_SECTION,
};
use async_trait::async_trait;
use drivers_toolcalling::ToolCallingDriver;
use inference::{
    FinishReason, InferenceError, InferenceRequest, InferenceResponse, LanguageModel,
    ResponseFormat, ScriptedModel, ToolChoice, Usage,
};
use messages::{Message, ToolCall};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct City {
    /// The city's name.
    city: String,
}

fn tools() -> Tools {
    Tools::new().with(FunctionTool::new(
        "get_weather",
        "Current weather for a city.",
        |args: City| async move {
            if args.city == "Atlantis" {
                return Err(format!("no weather station in {}", args.city));
            }
            Ok(format!("Sunny, 22°C in {}", args.city))
        },
    ))
}

fn call(id: &str, city: &str) -> ToolCall {
    ToolCall::new(id, "get_weather", json!({ "city": city }))
}

/// Separated-trace persistence, as the processors do it: the step's trace goes to the
/// execution buffer, its answer to the conversation.
struct SeparatedTrace;

#[async_trait]
impl StateProcessor for SeparatedTrace {
    async fn process(&self, state: AgentState, next: Next<'_>) -> Result<AgentState, AgentError> {
        let state = next.run(state).await?;
        let Some(step) = state.current_step().cloned() else {
            return Ok(state);
        };
        let store = state
            .store()
            .section(EXECUTION_BUFFER_SECTION)
            .append(step.trace_messages().clone());
        let store = store
            .section(DEFAULT_SECTION)
            .append(step.response_messages().clone());
        Ok(state.with_store(store))
    }
}

fn agent(driver: ToolCallingDriver) -> Agent {
    Agent::new(driver)
        .with_tools(tools())
        // The test's own stack and criteria, in place of the defaults.
        .with_processors(agents_core::StateProcessors::new([
            std::sync::Arc::new(SeparatedTrace) as std::sync::Arc<dyn agents_core::StateProcessor>,
        ]))
        .with_criteria(agents_core::ContinuationCriteria::new())
        .with_criterion(ToolCallPresenceCheck::new())
        .with_criterion(StepsLimit::new(6))
}

fn step_transcripts(state: &AgentState) -> String {
    state
        .steps()
        .enumerate()
        .map(|(i, step)| {
            format!(
                "## step {} ({:?})\n### trace\n{}### response\n{}",
                i + 1,
                step.step_type(),
                step.trace_messages().to_transcript(),
                step.response_messages().to_transcript()
            )
        })
        .collect()
}

async fn one_step(
    driver: &ToolCallingDriver,
    state: &AgentState,
    context: &StepContext<'_>,
) -> AgentStep {
    driver
        .next_step(state, &tools(), &DefaultToolExecutor::new(), context)
        .await
        .unwrap()
}

#[tokio::test]
async fn multi_step_tool_use_keeps_trace_and_answer_apart() {
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([call("call_1", "Paris")])
            .with_usage(Usage::new(50, 10)),
        InferenceResponse::text("It is sunny and 22°C in Paris.").with_usage(Usage::new(80, 12)),
    ]);
    let driver = ToolCallingDriver::new(model.clone()).with_model_name("test-model");
    let state = AgentState::new().with_user_message("What's the weather in Paris?");

    let done = agent(driver).execute(state).await.unwrap();

    assert_eq!(done.step_count(), 2);
    assert_eq!(
        done.final_response().map(|m| m.text()).as_deref(),
        Some("It is sunny and 22°C in Paris.")
    );
    assert_eq!(done.usage(), Usage::new(130, 22));
    let steps: Vec<&AgentStep> = done.steps().collect();
    assert_eq!(steps[0].step_type(), AgentStepType::ToolExecution);
    assert_eq!(steps[0].tool_executions().len(), 1);
    assert_eq!(
        steps[1].input_messages().len(),
        3,
        "user + tool call + tool result"
    );
    insta::assert_snapshot!("multi_step_messages", step_transcripts(&done));
    insta::assert_json_snapshot!("multi_step_requests", model.requests());
}

#[tokio::test]
async fn parallel_calls_share_one_assistant_message() {
    let model = ScriptedModel::new([InferenceResponse::with_tool_calls([
        call("call_a", "Paris"),
        call("call_b", "Atlantis"),
        call("call_c", "Rome"),
    ])]);
    let driver = ToolCallingDriver::new(model.clone()).with_parallel_tool_calls(true);
    let state = AgentState::new().with_user_message("Weather in three cities?");

    let step = one_step(&driver, &state, &StepContext::default()).await;

    assert_eq!(model.requests()[0].parallel_tool_calls, Some(true));
    insta::assert_snapshot!(
        "parallel_calls_trace",
        step.trace_messages().to_transcript()
    );
    assert!(step.response_messages().is_empty());
    assert_eq!(step.tool_executions().len(), 3);
    // A failed tool execution makes the step an error step for the error policy.
    assert_eq!(step.step_type(), AgentStepType::Error);
}

#[tokio::test]
async fn sequential_by_default_and_no_tool_fields_without_tools() {
    let model = ScriptedModel::new([InferenceResponse::text("Hi!")]);
    let driver = ToolCallingDriver::new(model.clone()).with_tool_choice(ToolChoice::Required);
    let state = AgentState::new().with_user_message("Hello");
    driver
        .next_step(
            &state,
            &Tools::new(),
            &DefaultToolExecutor::new(),
            &StepContext::default(),
        )
        .await
        .unwrap();
    let request = model.last_request().unwrap();
    assert!(request.tools.is_empty());
    assert_eq!(request.tool_choice, None, "no tool choice without tools");
    assert_eq!(request.parallel_tool_calls, None);

    let model = ScriptedModel::new([InferenceResponse::text("Hi!")]);
    let driver = ToolCallingDriver::new(model.clone());
    one_step(&driver, &state, &StepContext::default()).await;
    assert_eq!(
        model.last_request().unwrap().parallel_tool_calls,
        Some(false)
    );
}

#[tokio::test]
async fn request_uses_cached_context_and_driver_options() {
    let model = ScriptedModel::new([InferenceResponse::text("ok")]);
    let driver = ToolCallingDriver::new(model.clone())
        .with_model_name("small")
        .with_temperature(0.2)
        .with_max_tokens(256)
        .with_response_format(ResponseFormat::JsonObject);
    let state = AgentState::new().with_user_message("Weather?");
    let context = StepContext::default().with_cached_context(
        CachedContext::new()
            .with_messages(vec![Message::system("You are terse.")])
            .with_tool_choice(ToolChoice::Tool("get_weather".into()))
            .with_response_format(ResponseFormat::Text),
    );

    let step = one_step(&driver, &state, &context).await;

    let request = model.last_request().unwrap();
    assert_eq!(
        request.messages.to_transcript(),
        "system: You are terse.\nuser: Weather?\n"
    );
    assert_eq!(
        step.input_messages().to_transcript(),
        "user: Weather?\n",
        "no cached prefix"
    );
    assert_eq!(request.model.as_deref(), Some("small"));
    assert_eq!(request.temperature, Some(0.2));
    assert_eq!(request.max_tokens, Some(256));
    assert_eq!(
        request.tool_choice,
        Some(ToolChoice::Tool("get_weather".into()))
    );
    assert_eq!(
        request.response_format,
        Some(ResponseFormat::JsonObject),
        "driver wins"
    );
    assert_eq!(request.tools.len(), 1);
    assert_eq!(request.tools[0].name, "get_weather");
}

#[tokio::test]
async fn truncated_or_filtered_answers_become_step_errors() {
    for (reason, needle) in [
        (FinishReason::Length, "token limit"),
        (FinishReason::ContentFilter, "content filter"),
        (FinishReason::Error, "reported an error"),
    ] {
        let model =
            ScriptedModel::new([InferenceResponse::text("It is sun").with_finish_reason(reason)]);
        let driver = ToolCallingDriver::new(model);
        let state = AgentState::new().with_user_message("Weather?");
        let step = one_step(&driver, &state, &StepContext::default()).await;
        assert_eq!(step.step_type(), AgentStepType::Error, "{reason:?}");
        assert!(
            step.error_messages()[0].contains(needle),
            "{:?}",
            step.error_messages()
        );
    }
}

#[tokio::test]
async fn inference_failures_are_returned_as_agent_errors() {
    let model = ScriptedModel::from_results([Err(InferenceError::Timeout {
        after: std::time::Duration::from_secs(30),
    })]);
    let driver = ToolCallingDriver::new(model);
    let state = AgentState::new().with_user_message("Weather?");
    let error = driver
        .next_step(
            &state,
            &tools(),
            &DefaultToolExecutor::new(),
            &StepContext::default(),
        )
        .await
        .unwrap_err();
    assert!(matches!(error, AgentError::Inference(_)), "{error:?}");
    assert!(error.is_retryable());
}

fn recording_context() -> (StepContext<'static>, Arc<Mutex<Vec<AgentEvent>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let events = AgentEvents::new().with_listener(move |e| sink.lock().unwrap().push(e.clone()));
    (StepContext::new(events), seen)
}

#[tokio::test]
async fn emits_inference_and_tool_events_in_order() {
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([call("call_1", "Paris")]).with_usage(Usage::new(5, 2)),
    ]);
    let driver = ToolCallingDriver::new(model).with_model_name("m");
    let (context, seen) = recording_context();
    let state = AgentState::new().with_user_message("Weather?");
    one_step(&driver, &state, &context).await;

    let seen = seen.lock().unwrap();
    let names: Vec<&str> = seen.iter().map(AgentEvent::name).collect();
    assert_eq!(
        names,
        vec![
            "inference_requested",
            "inference_responded",
            "tool_call_started",
            "tool_call_completed"
        ]
    );
    match &seen[1] {
        AgentEvent::InferenceResponded {
            usage, tool_calls, ..
        } => {
            assert_eq!((*usage, *tool_calls), (Usage::new(5, 2), 1));
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn streaming_forwards_text_deltas_and_assembles_the_answer() {
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([call("call_1", "Paris")])
            .with_content("Checking.")
            .with_usage(Usage::new(7, 3)),
    ]);
    let driver = ToolCallingDriver::new(model).with_streaming(true);
    let (context, seen) = recording_context();
    let state = AgentState::new().with_user_message("Weather?");
    let step = one_step(&driver, &state, &context).await;

    let deltas: String = seen
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            AgentEvent::TextDelta { delta, .. } => Some(delta.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, "Checking.");
    assert_eq!(step.usage(), Usage::new(7, 3));
    assert_eq!(
        step.trace_messages().to_transcript(),
        "assistant: Checking.\nassistant -> get_weather {\"city\":\"Paris\"} [call_1]\ntool get_weather [call_1]: Sunny, 22°C in Paris\n"
    );
}

#[tokio::test]
async fn calls_without_ids_get_generated_ones() {
    let model = ScriptedModel::new([InferenceResponse::with_tool_calls([call("", "Paris")])]);
    let driver = ToolCallingDriver::new(model);
    let state = AgentState::new().with_user_message("Weather?");
    let step = one_step(&driver, &state, &StepContext::default()).await;
    let ids: Vec<Option<&str>> = step
        .trace_messages()
        .iter()
        .map(|m| {
            m.tool_call_id()
                .or_else(|| m.tool_calls().first().map(ToolCall::id))
        })
        .collect();
    // `call_<execution>_<step>_<n>`: no execution was started here, so its tag is `0`.
    assert_eq!(ids, vec![Some("call_0_1_1"), Some("call_0_1_1")]);
}

const CALL_AS_TEXT: &str =
    "```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n```";

#[tokio::test]
async fn content_tool_call_recovery_runs_calls_written_as_text() {
    let model = ScriptedModel::new([
        InferenceResponse::text(CALL_AS_TEXT),
        InferenceResponse::text("Sunny in Paris."),
    ]);
    let driver = ToolCallingDriver::new(model.clone()).with_content_tool_call_recovery(true);
    let state = AgentState::new().with_user_message("Weather in Paris?");

    let done = agent(driver).execute(state).await.unwrap();

    assert_eq!(done.step_count(), 2);
    assert_eq!(
        done.final_response().map(|m| m.text()).as_deref(),
        Some("Sunny in Paris.")
    );
    let first = done.steps().next().unwrap();
    assert_eq!(
        first.inference_response().unwrap().finish_reason(),
        FinishReason::ToolCalls
    );
    // `recovered_<execution>_<step>_<n>`: the execution's part differs every run.
    let id = first
        .tool_executions()
        .iter()
        .next()
        .unwrap()
        .id()
        .to_owned();
    let tag = id.split('_').nth(1).unwrap();
    assert_eq!(tag.len(), 12, "{id}");
    let stable =
        |text: String| text.replace(&format!("recovered_{tag}_"), "recovered_<execution>_");
    insta::assert_snapshot!("recovered_call_messages", stable(step_transcripts(&done)));
    // The second request shows the model a proper tool call and result, not its JSON text.
    insta::assert_snapshot!(
        "recovered_call_second_request",
        stable(model.requests()[1].messages.to_transcript())
    );
}

#[tokio::test]
async fn without_recovery_a_call_written_as_text_is_the_answer() {
    let model = ScriptedModel::new([InferenceResponse::text(CALL_AS_TEXT)]);
    let driver = ToolCallingDriver::new(model).with_content_tool_call_recovery(false);
    let state = AgentState::new().with_user_message("Weather in Paris?");
    let done = agent(driver).execute(state).await.unwrap();
    assert_eq!(done.step_count(), 1);
    assert_eq!(
        done.final_response().map(|m| m.text()).as_deref(),
        Some(CALL_AS_TEXT)
    );
}

/// The request marks where the persistent conversation ends (cached prefix + summary +
/// buffer + messages), so that prompt caching can cache it; the execution buffer follows.
#[tokio::test]
async fn requests_mark_the_end_of_the_persistent_conversation() {
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([call("call_1", "Paris")]),
        InferenceResponse::text("Sunny in Paris."),
    ]);
    let driver = ToolCallingDriver::new(model.clone());
    let earlier = AgentState::new().with_user_message("Hi").with_store(
        AgentState::new()
            .store()
            .section(DEFAULT_SECTION)
            .append(vec![Message::user("Hi"), Message::assistant("Hello!")]),
    );
    let state = earlier.with_user_message("What's the weather in Paris?");

    agent(driver)
        .with_cached_context(CachedContext::new().with_messages(vec![Message::system("Be brief.")]))
        .execute(state)
        .await
        .unwrap();

    let requests = model.requests();
    // system + Hi + Hello! + question: the stable prefix ends at index 3 in both requests;
    // the second one adds the tool round after it.
    assert_eq!(requests[0].messages.len(), 4);
    assert_eq!(requests[0].cache_breakpoint, Some(3));
    assert_eq!(requests[1].messages.len(), 6);
    assert_eq!(requests[1].cache_breakpoint, Some(3));
}

/// A scripted model named like a provider's (`openai-compatible/gpt-4o-mini`).
struct Named(ScriptedModel);

#[async_trait]
impl LanguageModel for Named {
    async fn complete(
        &self,
        request: InferenceRequest,
    ) -> Result<InferenceResponse, InferenceError> {
        self.0.complete(request).await
    }

    fn name(&self) -> String {
        "openai-compatible/gpt-4o-mini".to_owned()
    }
}

#[tokio::test]
async fn a_streamed_reply_names_its_model_so_the_step_can_be_priced() {
    // A stream's events carry no model name: the reply gets the configured one.
    let driver = ToolCallingDriver::new(Named(ScriptedModel::new([InferenceResponse::text("Hi")])))
        .with_streaming(true);
    let state = AgentState::new().with_user_message("Hello");
    let step = one_step(&driver, &state, &StepContext::default()).await;
    assert_eq!(
        step.inference_response().unwrap().model(),
        Some("gpt-4o-mini")
    );
    // The model asked for wins over the provider's default.
    let driver = ToolCallingDriver::new(Named(ScriptedModel::new([InferenceResponse::text("Hi")])))
        .with_streaming(true)
        .with_model_name("gpt-4.1");
    let step = one_step(&driver, &state, &StepContext::default()).await;
    assert_eq!(step.inference_response().unwrap().model(), Some("gpt-4.1"));
    // A model the stream itself named is kept; a test model without a provider stays unnamed.
    let driver = ToolCallingDriver::new(ScriptedModel::new([InferenceResponse::text("Hi")]))
        .with_streaming(true);
    let step = one_step(&driver, &state, &StepContext::default()).await;
    assert_eq!(step.inference_response().unwrap().model(), None);
}

#[tokio::test]
async fn a_call_with_a_name_no_tool_can_have_is_refused_under_its_id() {
    // A pure-ASCII JSON reply whose tool name is a terminal escape sequence.
    let hostile = "\u{1b}]0;owned\u{7}\u{1b}[2J";
    let model = ScriptedModel::new([InferenceResponse::with_tool_calls([
        ToolCall::new("call_x", hostile, json!({})),
        call("call_ok", "Paris"),
    ])]);
    let driver = ToolCallingDriver::new(model);
    let state = AgentState::new().with_user_message("Weather?");
    let step = one_step(&driver, &state, &StepContext::default()).await;
    let executions: Vec<_> = step.tool_executions().iter().cloned().collect();
    assert_eq!(executions.len(), 2);
    assert_eq!(executions[0].id(), "call_x");
    let error = executions[0].error_message().unwrap();
    assert!(error.contains("1 to 64 characters"), "{error}");
    // The name is quoted escaped in what the model reads.
    assert!(
        error.contains("\\u{1b}") && !error.contains('\u{1b}'),
        "{error}"
    );
    assert_eq!(executions[1].result_text(), "Sunny, 22°C in Paris");
    // The history stays valid: one result per call, under its id.
    let ids: Vec<_> = step
        .trace_messages()
        .iter()
        .filter_map(|m| m.tool_call_id().map(str::to_owned))
        .collect();
    assert_eq!(ids, ["call_x", "call_ok"]);
}

#[tokio::test]
async fn calls_past_the_cap_of_one_reply_do_not_run() {
    let calls: Vec<ToolCall> = (0..5).map(|i| call(&format!("c{i}"), "Oslo")).collect();
    let model = ScriptedModel::new([InferenceResponse::with_tool_calls(calls)]);
    let driver = ToolCallingDriver::new(model).with_max_calls_per_step(3);
    let state = AgentState::new().with_user_message("Weather?");
    let step = one_step(&driver, &state, &StepContext::default()).await;
    let executions: Vec<_> = step.tool_executions().iter().cloned().collect();
    assert_eq!(executions.len(), 5);
    assert!(executions[..3].iter().all(|e| !e.has_error()));
    for refused in &executions[3..] {
        assert!(refused.error_message().unwrap().contains("at most 3 calls"));
    }
    assert_eq!(drivers_toolcalling::DEFAULT_MAX_CALLS_PER_STEP, 32);
}
