//! The rig side of the comparison: a scripted `CompletionModel` that clones pre-built
//! responses in a cycle (recording nothing) and a no-op tool, mirroring `agents_bench`'s
//! `CycleModel` and `noop_tool`.

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use rig_agent::core::completion::{
    AssistantContent, CompletionError, CompletionModel, CompletionRequest, CompletionResponse,
    Usage,
};
use rig_agent::core::message::{ToolCall, ToolFunction};
use rig_agent::core::streaming::StreamingCompletionResponse;
use rig_agent::tool::{Tool, ToolContext};
use serde_json::json;

/// The final answer of the two-step conversation (same as ours).
pub const ANSWER: &str = agents_bench::ANSWER;

/// The question both sides answer.
pub const PROMPT: &str = "Run the tool, please.";

/// One run of the two-step conversation through a rig agent over `history`: as ours, two
/// model calls and one tool call at a time; the history is handed over as an owned copy, as
/// rig takes it.
pub async fn run_rig(
    agent: &rig_agent::agent::Agent,
    history: &[rig_agent::core::message::Message],
) -> Result<String, rig_agent::completion::PromptError> {
    use rig_agent::completion::Prompt;
    agent
        .prompt(PROMPT)
        .history(history.to_vec())
        .max_turns(2)
        .tool_concurrency(1)
        .await
}

/// A rig model answering with pre-built responses in a cycle.
#[derive(Clone)]
pub struct RigCycleModel {
    responses: Arc<[CompletionResponse]>,
    next: Arc<AtomicUsize>,
}

impl RigCycleModel {
    /// The two-step script: one `noop` tool call, then [`ANSWER`].
    pub fn two_step() -> Self {
        let call = AssistantContent::ToolCall(ToolCall::from_wire(
            "call_1",
            ToolFunction::new("noop".to_owned(), json!({})),
        ));
        let responses = vec![
            CompletionResponse::new(vec![call], Usage::new(), "scripted"),
            CompletionResponse::new(
                vec![AssistantContent::text(ANSWER)],
                Usage::new(),
                "scripted",
            ),
        ];
        Self {
            responses: responses.into(),
            next: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Model calls so far.
    pub fn calls(&self) -> usize {
        self.next.load(Ordering::Relaxed)
    }
}

impl CompletionModel for RigCycleModel {
    async fn completion(
        &self,
        _request: CompletionRequest,
    ) -> Result<CompletionResponse, CompletionError> {
        let index = self.next.fetch_add(1, Ordering::Relaxed) % self.responses.len();
        Ok(self.responses[index].clone())
    }

    async fn stream(
        &self,
        _request: CompletionRequest,
    ) -> Result<StreamingCompletionResponse, CompletionError> {
        Err(CompletionError::ProviderError(
            "the benchmark model does not stream".to_owned(),
        ))
    }
}

/// A rig tool that does nothing and answers `ok`.
#[derive(Clone, Copy)]
pub struct RigNoop;

/// No arguments.
#[derive(serde::Deserialize)]
pub struct NoArgs {}

impl Tool for RigNoop {
    const NAME: &'static str = "noop";
    type Args = NoArgs;
    type Output = String;
    type Error = Infallible;

    fn description(&self) -> String {
        "Does nothing and answers ok".to_owned()
    }

    fn parameters(&self) -> serde_json::Value {
        json!({"type": "object", "properties": {}})
    }

    async fn call(&self, _context: &mut ToolContext, _args: NoArgs) -> Result<String, Infallible> {
        Ok("ok".to_owned())
    }
}

/// A rig history of `len` messages with the same texts as `agents_bench::history`.
pub fn rig_history(len: usize) -> Vec<rig_agent::core::message::Message> {
    agents_bench::history(len)
        .iter()
        .map(|m| {
            if m.role() == messages::Role::User {
                rig_agent::core::message::Message::user(m.text())
            } else {
                rig_agent::core::message::Message::assistant(m.text())
            }
        })
        .collect()
}
