//! Shared pieces of the benchmarks: zero-latency models that answer from pre-built responses
//! without recording requests, tools, histories and the agent set-ups measured.
//!
//! Used by the criterion benches in `benches/`, the report binary `bench-report` and the
//! side-by-side comparison with rig in `benches/rig-compare`.

pub mod features;
pub mod mock_openai;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use agents_core::{
    Agent, AgentState, ContinuationCriteria, FunctionTool, StepsLimit, ToolCallPresenceCheck,
    ToolError, Tools,
};
use agents_processing::{standard_processors, TraceRetention};
use async_trait::async_trait;
use drivers_toolcalling::ToolCallingDriver;
use inference::{InferenceError, InferenceRequest, InferenceResponse, LanguageModel};
use messages::{Message, Messages, Role, ToolCall};
use serde_json::{json, Value};

/// A model that answers with pre-built responses in a cycle, recording nothing.
///
/// Every call clones the next response; after the last one it starts again at the first.
/// Used where runs are sequential, so each run consumes the same part of the cycle.
#[derive(Clone)]
pub struct CycleModel {
    responses: Arc<[InferenceResponse]>,
    next: Arc<AtomicUsize>,
}

impl CycleModel {
    /// A model cycling through `responses` (at least one).
    pub fn new(responses: impl IntoIterator<Item = InferenceResponse>) -> Self {
        let mut responses: Vec<InferenceResponse> = responses.into_iter().collect();
        if responses.is_empty() {
            responses.push(InferenceResponse::text(""));
        }
        Self {
            responses: responses.into(),
            next: Arc::new(AtomicUsize::new(0)),
        }
    }
}

#[async_trait]
impl LanguageModel for CycleModel {
    async fn complete(
        &self,
        _request: InferenceRequest,
    ) -> Result<InferenceResponse, InferenceError> {
        let index = self.next.fetch_add(1, Ordering::Relaxed) % self.responses.len();
        Ok(self.responses[index].clone())
    }

    fn name(&self) -> String {
        "cycle".to_owned()
    }
}

/// A model for concurrent runs: it asks for `calls` when the request ends with anything but
/// tool results, and gives `answer` once the tool results are in. Records nothing.
///
/// Every reply is built anew, as a provider parses each response from its own bytes: a clone
/// of one stored reply would share its calls' reference counts between every run on every
/// core, which no real model's replies do.
#[derive(Clone)]
pub struct ReplyModel {
    calls: InferenceResponse,
    answer: InferenceResponse,
}

impl ReplyModel {
    /// Asks for `calls`, then answers `answer`.
    pub fn new(calls: Vec<ToolCall>, answer: &str) -> Self {
        Self {
            calls: InferenceResponse::with_tool_calls(calls),
            answer: InferenceResponse::text(answer),
        }
    }
}

#[async_trait]
impl LanguageModel for ReplyModel {
    async fn complete(
        &self,
        request: InferenceRequest,
    ) -> Result<InferenceResponse, InferenceError> {
        let after_tools = request
            .messages
            .last()
            .is_some_and(|message| message.role() == Role::Tool);
        Ok(if after_tools {
            InferenceResponse::text(self.answer.content())
        } else {
            InferenceResponse::with_tool_calls(
                self.calls
                    .tool_calls()
                    .iter()
                    .map(|call| ToolCall::new(call.id(), call.name(), call.arguments().clone())),
            )
        })
    }

    fn name(&self) -> String {
        "reply".to_owned()
    }
}

/// The final answer of the two-step conversation.
pub const ANSWER: &str = "The tool said ok.";

/// That a run of the two-step conversation ended with [`ANSWER`]: the measuring binaries
/// check the runs they time, so that a broken run is an error and never a fast number.
///
/// # Errors
/// The run's error, or the answer it ended with instead.
pub fn answered(done: Result<AgentState, agents_core::AgentError>) -> Result<(), String> {
    let done = done.map_err(|e| e.to_string())?;
    match done.final_response() {
        Some(answer) if answer.text() == ANSWER => Ok(()),
        other => Err(format!(
            "the run did not end with the scripted answer: {other:?}"
        )),
    }
}

/// The two-step script: one `noop` tool call, then [`ANSWER`].
pub fn two_step_script() -> Vec<InferenceResponse> {
    vec![
        InferenceResponse::with_tool_calls([ToolCall::new("call_1", "noop", json!({}))]),
        InferenceResponse::text(ANSWER),
    ]
}

fn empty_object_schema() -> Value {
    json!({"type": "object", "properties": {}})
}

/// A tool that does nothing and answers `ok`.
pub fn noop_tool() -> FunctionTool {
    FunctionTool::untyped(
        "noop",
        "Does nothing and answers ok",
        empty_object_schema(),
        |_args: Value, _context| async { Ok::<_, ToolError>("ok".to_owned()) },
    )
}

/// A tool named `name` that sleeps `delay` (tokio time) and answers `done`.
pub fn sleep_tool(name: &str, delay: Duration) -> FunctionTool {
    FunctionTool::untyped(
        name,
        "Waits, then answers done",
        empty_object_schema(),
        move |_args: Value, _context| async move {
            tokio::time::sleep(delay).await;
            Ok::<_, ToolError>("done".to_owned())
        },
    )
}

/// A conversation history of `len` messages: alternating user questions and assistant answers
/// of a sentence or two each.
pub fn history(len: usize) -> Messages {
    (0..len)
        .map(|i| {
            if i % 2 == 0 {
                Message::user(format!(
                    "Question {i}: what is the status of ticket #{i} and who owns it?"
                ))
            } else {
                Message::assistant(format!(
                    "Ticket #{} is in review; it is owned by the platform team and due on Friday.",
                    i - 1
                ))
            }
        })
        .collect()
}

/// The criteria the facade uses for tool calling: a step limit and "continue while the model
/// calls tools".
pub fn criteria(max_steps: usize) -> ContinuationCriteria {
    ContinuationCriteria::new()
        .with(StepsLimit::new(max_steps))
        .with(ToolCallPresenceCheck::new())
}

/// The agent measured for framework overhead: `ToolCallingDriver` over `model`, the `noop`
/// tool, the standard processors for `retention`, no hooks, no listeners.
pub fn tool_calling_agent(model: impl LanguageModel + 'static, retention: TraceRetention) -> Agent {
    agent_with_driver(ToolCallingDriver::new(model), retention)
}

/// [`tool_calling_agent`] around `driver`: the `noop` tool, the criteria, the standard
/// processors for `retention` (the feature variants change the driver's settings).
pub fn agent_with_driver(driver: ToolCallingDriver, retention: TraceRetention) -> Agent {
    Agent::new(driver)
        .with_tool(noop_tool())
        .with_criteria(criteria(10))
        .with_processors(standard_processors(retention))
}

/// The two requests a [`tool_calling_agent`] run from `start` sends its model (with the
/// `noop` tool's definition): the conversation, then the same with the model's `noop` call and
/// its result. The raw transfers (`http_step/transfer`, `loop-profile transfer`) POST these,
/// encoded by the provider: as many bytes as the run sends (a test counts them at the mock
/// server).
pub fn two_step_requests(start: &AgentState) -> [InferenceRequest; 2] {
    let first = InferenceRequest::new(start.messages_for_inference())
        .with_shared_tools(Tools::new().with(noop_tool()).schemas())
        .with_parallel_tool_calls(false);
    let mut second = first.clone();
    second.messages = second.messages.extended([
        Message::assistant_tool_calls([ToolCall::new("call_1", "noop", json!({}))]),
        Message::tool_result("call_1", "noop", "ok"),
    ]);
    [first, second]
}

/// A state holding `history` messages, ready for a new question.
pub fn state_with_history(len: usize) -> AgentState {
    AgentState::new().with_messages(history(len))
}

/// A state with 1,000 messages and 100 step executions: one execution of 100 steps (99 tool
/// calls, then [`ANSWER`]) in legacy mode on top of 800 messages of history.
///
/// # Errors
/// An [`AgentError`](agents_core::AgentError) if the scripted run fails.
pub async fn big_state() -> Result<AgentState, agents_core::AgentError> {
    let mut script: Vec<InferenceResponse> = (0..99)
        .map(|i| {
            InferenceResponse::with_tool_calls([ToolCall::new(
                format!("call_{i}"),
                "noop",
                json!({"attempt": i}),
            )])
        })
        .collect();
    script.push(InferenceResponse::text(ANSWER));
    let agent = Agent::new(ToolCallingDriver::new(CycleModel::new(script)))
        .with_tool(noop_tool())
        .with_criteria(criteria(200))
        .with_processors(standard_processors(TraceRetention::Full));
    let state = state_with_history(800).with_user_message("Keep calling the tool.");
    agent.execute(state).await
}

/// Peak resident memory of this process (`VmHWM`), in KiB; `None` where `/proc` is missing.
pub fn peak_rss_kib() -> Option<u64> {
    proc_status_kib("VmHWM:")
}

/// Current resident memory of this process (`VmRSS`), in KiB; `None` where `/proc` is missing.
pub fn rss_kib() -> Option<u64> {
    proc_status_kib("VmRSS:")
}

fn proc_status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find(|line| line.starts_with(field))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_two_step_conversation_ends_with_the_answer_in_both_modes() {
        for (retention, expected) in [(TraceRetention::Full, 14), (TraceRetention::Ephemeral, 12)] {
            let agent = tool_calling_agent(CycleModel::new(two_step_script()), retention);
            let done = agent
                .execute(state_with_history(10).with_user_message("go"))
                .await
                .unwrap();
            assert_eq!(done.final_response().unwrap().text(), ANSWER);
            assert_eq!(done.step_executions().len(), 2);
            assert_eq!(done.messages().len(), expected);
        }
    }

    #[tokio::test]
    async fn the_reply_model_answers_after_tool_results() {
        let agent = tool_calling_agent(
            ReplyModel::new(vec![ToolCall::new("c", "noop", json!({}))], "fine"),
            TraceRetention::Ephemeral,
        );
        let done = agent
            .execute(AgentState::new().with_user_message("go"))
            .await
            .unwrap();
        assert_eq!(done.final_response().unwrap().text(), "fine");
        assert_eq!(done.step_executions().len(), 2);
    }

    #[tokio::test]
    async fn the_big_state_has_1000_messages_and_100_step_executions_and_round_trips() {
        let state = big_state().await.unwrap();
        assert_eq!(state.messages().len(), 1_000);
        assert_eq!(state.step_executions().len(), 100);
        let restored = AgentState::from_json(&state.to_json().unwrap()).unwrap();
        assert_eq!(restored.messages().len(), 1_000);
        assert_eq!(restored.step_executions().len(), 100);
    }

    #[test]
    fn the_raw_transfer_sends_as_many_bytes_as_the_run() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let server = mock_openai::MockOpenAi::start().unwrap();
        let model = inference::OpenAiCompatible::new(server.base_url(), None, "mock").unwrap();
        let agent = tool_calling_agent(model.clone(), TraceRetention::Ephemeral);
        let start = state_with_history(10).with_user_message("Run the tool, please.");
        let done = rt.block_on(agent.execute(start.clone())).unwrap();
        assert_eq!(done.final_response().unwrap().text(), ANSWER);
        let run = server.bytes_received();
        let client = reqwest::Client::new();
        for request in two_step_requests(&start) {
            let body = model.encode_request(&request, false).unwrap();
            assert!(
                rt.block_on(server.post_chat(&client, body.for_attempt()))
                    .unwrap()
                    > 0
            );
        }
        assert_eq!(server.bytes_received() - run, run);
    }

    #[test]
    fn history_alternates_roles() {
        let h = history(4);
        let roles: Vec<Role> = h.iter().map(Message::role).collect();
        assert_eq!(
            roles,
            [Role::User, Role::Assistant, Role::User, Role::Assistant]
        );
    }
}
