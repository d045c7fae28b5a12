#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! `Agent::step` is the one place a step happens: `execute` and `iterate` are `step` repeated,
//! and a state from `step` continues in another process exactly as in this one.

use std::process::Command;

use agents_core::{
    Agent, AgentDriver, AgentError, AgentState, AgentStatus, AgentStep, Clock,
    ContinuationCriteria, ErrorPolicy, FunctionTool, ManualClock, StepContext, StepParts,
    StepsLimit, StopReason, ToolCallPresenceCheck, ToolError, ToolExecutor, Tools,
};
use async_trait::async_trait;
use futures::StreamExt;
use inference::{InferenceResponse, Usage};
use messages::{Message, Role, ToolCall};
use proptest::prelude::*;
use serde_json::{json, Value};

/// What the scripted model does at one step.
#[derive(Clone, Debug)]
enum Move {
    /// Call `tool` (ok or broken).
    Call { broken: bool },
    /// Answer in text.
    Answer,
    /// The model fails.
    Fail,
}

/// A step of `input` that answers with `response`'s text.
fn answer_step(input: messages::Messages, response: InferenceResponse) -> AgentStep {
    AgentStep::from_parts(StepParts {
        input_messages: input,
        response_messages: response.to_message().into(),
        inference_response: Some(response),
        ..StepParts::default()
    })
}

/// A driver that plays its moves by the number of steps already in the execution, so an agent
/// built the same way in another process continues the same script.
struct MovesDriver {
    moves: Vec<Move>,
}

#[async_trait]
impl AgentDriver for MovesDriver {
    async fn next_step(
        &self,
        state: &AgentState,
        tools: &Tools,
        executor: &dyn ToolExecutor,
        context: &StepContext<'_>,
    ) -> Result<AgentStep, AgentError> {
        let index = state.step_count();
        let input = context.prompt_messages(state);
        let usage = Usage::new(10 + index as u64, 3);
        match self.moves.get(index).cloned().unwrap_or(Move::Answer) {
            Move::Fail => Err(AgentError::driver(format!("model down at step {index}"))),
            Move::Answer => Ok(answer_step(
                input,
                InferenceResponse::text(format!("answer {index}")).with_usage(usage),
            )),
            Move::Call { broken } => {
                let name = if broken { "broken" } else { "lookup" };
                let call = ToolCall::new(format!("call_{index}"), name, json!({"n": index}));
                let response = InferenceResponse::with_tool_calls([call]).with_usage(usage);
                let tool_context = context.tool_context(state);
                let executions = context
                    .run_tool_calls(executor, response.tool_calls(), tools, &tool_context, false)
                    .await?;
                let trace = messages::Messages::from(vec![response.to_message()])
                    .extended(executions.to_messages());
                Ok(AgentStep::from_parts(StepParts {
                    input_messages: input,
                    trace_messages: trace,
                    tool_executions: executions,
                    inference_response: Some(response),
                    ..StepParts::default()
                }))
            }
        }
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Args {
    n: u64,
}

/// The processor that keeps the trace in the execution buffer and answers in `messages`, plus
/// an optional guard.
struct Persist {
    guard_after: Option<usize>,
}

#[async_trait]
impl agents_core::StateProcessor for Persist {
    async fn process(
        &self,
        state: AgentState,
        next: agents_core::Next<'_>,
    ) -> Result<AgentState, AgentError> {
        if self
            .guard_after
            .is_some_and(|after| state.step_count() >= after)
        {
            return Ok(state);
        }
        let state = next.run(state).await?;
        let Some(step) = state.current_step().cloned() else {
            return Ok(state);
        };
        let mut store = state
            .store()
            .section(agents_core::EXECUTION_BUFFER_SECTION)
            .append(step.trace_messages().clone());
        if let Some(answer) = step.final_response() {
            store = store
                .section(agents_core::DEFAULT_SECTION)
                .append(answer.clone());
        }
        if state.is_stopping() {
            store = store.section(agents_core::EXECUTION_BUFFER_SECTION).clear();
        }
        Ok(state.with_store(store))
    }
}

fn agent(moves: Vec<Move>, max_steps: usize, guard_after: Option<usize>, retry: bool) -> Agent {
    let lookup = FunctionTool::new("lookup", "Looks up n", |args: Args| async move {
        Ok::<_, ToolError>(format!("value {}", args.n * 2))
    });
    let broken = FunctionTool::new("broken", "Always fails", |_: Args| async move {
        Err::<String, _>(ToolError::Failed("it broke".into()))
    });
    let policy = if retry {
        ErrorPolicy::retry_all(2)
    } else {
        ErrorPolicy::stop_on_any_error()
    };
    Agent::new(MovesDriver { moves })
        .with_tool(lookup)
        .with_tool(broken)
        .with_criteria(
            ContinuationCriteria::new()
                .with(StepsLimit::new(max_steps))
                .with(ToolCallPresenceCheck::new()),
        )
        .with_error_policy(policy)
        .with_processors(agents_core::StateProcessors::new([
            std::sync::Arc::new(Persist { guard_after })
                as std::sync::Arc<dyn agents_core::StateProcessor>,
        ]))
        .with_clock(ManualClock::default())
}

/// The state as JSON with the ids that are made fresh on every run (executions and steps,
/// uuid v7) blanked out.
fn comparable(state: &AgentState) -> Value {
    fn blank(value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (key, inner) in map.iter_mut() {
                    let fresh_id = key == "id"
                        && inner
                            .as_str()
                            .is_some_and(|id| uuid::Uuid::parse_str(id).is_ok());
                    if fresh_id {
                        *inner = Value::from("[id]");
                    } else {
                        blank(inner);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(blank),
            _ => {}
        }
    }
    let mut value = serde_json::to_value(state).unwrap();
    blank(&mut value);
    value
}

fn moves() -> impl Strategy<Value = Vec<Move>> {
    proptest::collection::vec(
        prop_oneof![
            3 => any::<bool>().prop_map(|broken| Move::Call { broken }),
            2 => Just(Move::Answer),
            1 => Just(Move::Fail),
        ],
        0..7,
    )
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// For random scripts (tool calls that work or fail, answers, model failures), step limits,
    /// guard stops and error policies: `execute`, the last item of `iterate` and `step`
    /// repeated by hand end in the same state.
    #[test]
    fn execute_iterate_and_step_repeated_agree(
        moves in moves(),
        max_steps in 1usize..6,
        guard_after in proptest::option::of(0usize..4),
        retry in any::<bool>(),
    ) {
        let agent = agent(moves, max_steps, guard_after, retry);
        let start = AgentState::new().with_user_message("go");
        let (executed, iterated, stepped, items, calls) = runtime().block_on(async {
            let executed = agent.execute(start.clone()).await.unwrap();
            let items: Vec<AgentState> = agent
                .iterate(start.clone())
                .map(|item| item.unwrap())
                .collect()
                .await;
            let mut stepped = start.clone();
            let mut calls = 0;
            while stepped.status() == AgentStatus::InProgress {
                stepped = agent.step(stepped).await.unwrap();
                calls += 1;
                assert!(calls < 50, "step never finished the execution");
            }
            let iterated = items.last().cloned().unwrap();
            (executed, iterated, stepped, items.len(), calls)
        });
        prop_assert_eq!(comparable(&executed), comparable(&stepped));
        prop_assert_eq!(comparable(&iterated), comparable(&stepped));
        prop_assert_eq!(items, calls, "one iterate item per step call");
        prop_assert!(executed.stop_reason().is_some());
        prop_assert!(executed.step_count() <= max_steps);
        // A stop the processors saw clears the buffer; a guard that refused the step keeps
        // the layers inside it (here: the clearing one) from running.
        if executed.stop_reason() != Some(StopReason::Guard) {
            prop_assert!(executed.store().section(agents_core::EXECUTION_BUFFER_SECTION).is_empty());
        }
        if executed.stop_reason() == Some(StopReason::Error) {
            prop_assert_eq!(executed.status(), AgentStatus::Failed);
        }
        // A finished state does not move.
        let again = runtime().block_on(agent.step(executed.clone())).unwrap();
        prop_assert_eq!(again, executed);
    }
}

const CHILD_ENV: &str = "AGENTS_CORE_STEP_CHILD";

fn cross_process_agent() -> Agent {
    agent(
        vec![
            Move::Call { broken: false },
            Move::Call { broken: true },
            Move::Call { broken: false },
            Move::Answer,
        ],
        8,
        None,
        true,
    )
}

#[test]
fn a_new_conversation_is_stamped_by_the_agents_clock() {
    let clock = ManualClock::default();
    let start = clock.now();
    let agent = agent(vec![Move::Answer], 3, None, false).with_clock(clock.clone());
    let state = agent.new_state();
    assert_eq!(state.created_at(), start);
    assert_eq!(state.updated_at(), start);
    clock.advance(std::time::Duration::from_secs(60));
    let done = runtime()
        .block_on(agent.execute(state.with_user_message("go")))
        .unwrap();
    assert_eq!(done.status(), AgentStatus::Completed);
    assert_eq!(done.created_at(), start);
    assert_eq!(done.updated_at(), clock.now());
}

/// Run by the parent test as a child process: reads a state, runs one step with an agent
/// built the same way, writes the state back. Does nothing when run on its own.
#[test]
#[ignore = "a child process of a_state_continues_in_another_process_exactly_as_in_this_one"]
fn child_runs_one_step() {
    let Ok(path) = std::env::var(CHILD_ENV) else {
        return;
    };
    let state = AgentState::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let next = runtime()
        .block_on(cross_process_agent().step(state))
        .unwrap();
    std::fs::write(&path, next.to_json().unwrap()).unwrap();
}

#[test]
fn a_state_continues_in_another_process_exactly_as_in_this_one() {
    let agent = cross_process_agent();
    let start = AgentState::new().with_user_message("go");
    let uninterrupted = runtime().block_on(agent.execute(start.clone())).unwrap();
    assert_eq!(uninterrupted.step_count(), 4);
    assert_eq!(uninterrupted.status(), AgentStatus::Completed);

    // Every step in a new process, the state handed over as a JSON file.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.json");
    std::fs::write(&path, start.to_json().unwrap()).unwrap();
    let mut processes = 0;
    loop {
        let status = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "child_runs_one_step", "--ignored", "--nocapture"])
            .env(CHILD_ENV, &path)
            .status()
            .unwrap();
        assert!(status.success(), "the child process failed: {status}");
        processes += 1;
        let state = AgentState::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap();
        if state.status() != AgentStatus::InProgress {
            assert_eq!(comparable(&state), comparable(&uninterrupted));
            assert_eq!(
                state
                    .messages()
                    .iter()
                    .map(Message::role)
                    .collect::<Vec<_>>(),
                [Role::User, Role::Assistant]
            );
            break;
        }
        assert!(processes < 10, "the run did not finish");
    }
    assert_eq!(processes, 4, "one process per step");
}

/// A driver that answers whether its step's context borrowed the agent's parts.
struct BorrowCheckDriver;

#[async_trait]
impl AgentDriver for BorrowCheckDriver {
    async fn next_step(
        &self,
        state: &AgentState,
        _tools: &Tools,
        _executor: &dyn ToolExecutor,
        context: &StepContext<'_>,
    ) -> Result<AgentStep, AgentError> {
        use std::borrow::Cow;
        let borrowed = matches!(context.events, Cow::Borrowed(_))
            && matches!(context.clock, Cow::Borrowed(_))
            && matches!(context.approval, Cow::Borrowed(_))
            && matches!(context.tool_layers, Cow::Borrowed(_));
        Ok(answer_step(
            context.prompt_messages(state),
            InferenceResponse::text(if borrowed { "borrowed" } else { "cloned" }),
        ))
    }
}

/// Many cores running steps of one shared agent must not all write to its reference counts:
/// the step's context borrows the agent's events, clock, approval policy and tool layers.
#[tokio::test]
async fn a_step_borrows_the_agents_parts_instead_of_cloning_them() {
    let agent = Agent::new(BorrowCheckDriver).with_clock(ManualClock::default());
    let done = agent
        .execute(AgentState::new().with_user_message("hi"))
        .await
        .unwrap();
    assert_eq!(done.final_response().unwrap().text(), "borrowed");
}

/// Answers with a step that does not pass its context's id on, and keeps that id.
struct StepIdDriver {
    seen: std::sync::Arc<std::sync::Mutex<Vec<Option<String>>>>,
}

#[async_trait]
impl AgentDriver for StepIdDriver {
    async fn next_step(
        &self,
        state: &AgentState,
        _tools: &Tools,
        _executor: &dyn ToolExecutor,
        context: &StepContext<'_>,
    ) -> Result<AgentStep, AgentError> {
        self.seen
            .lock()
            .unwrap()
            .push(context.step_id.as_deref().map(str::to_owned));
        Ok(answer_step(
            context.prompt_messages(state),
            InferenceResponse::text("done"),
        ))
    }
}

/// The id a step's context carries is the id the agent records the step with, made by the
/// agent's id source: a driver that passes it on makes no other id, and one that does not
/// gets it anyway.
#[tokio::test]
async fn a_step_is_recorded_with_the_id_its_context_carried() {
    let seen = std::sync::Arc::default();
    let driver = StepIdDriver {
        seen: std::sync::Arc::clone(&seen),
    };
    let agent = Agent::new(driver)
        .with_id_source(std::sync::Arc::new(agents_core::SequentialIds::new("id")));
    let done = agent
        .execute(AgentState::new().with_user_message("hi"))
        .await
        .unwrap();
    let recorded: Vec<Option<String>> = done
        .step_executions()
        .iter()
        .map(|execution| Some(execution.step().id().to_owned()))
        .collect();
    assert_eq!(recorded, vec![Some("id-2".to_owned())]);
    assert_eq!(*seen.lock().unwrap(), recorded);
    // Outside an agent there is none: the step gets a fresh uuid.
    assert_eq!(StepContext::default().step_id, None);
}
