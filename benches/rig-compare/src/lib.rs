//! The rig side of the comparison (rig-core and rig-agent 0.44): a scripted completion model
//! that clones pre-built responses in a cycle (recording nothing) and a no-op tool, mirroring
//! `agents_bench`'s `CycleModel` and `noop_tool`.
//!
//! Since 0.43 a rig model is a wire paired with a transport. The scripted model here is rig's
//! own scripted wire (`MockScript`, from the `test-utils` feature) over [`RigCycleRuntime`], a
//! transport that answers every call with the next pre-built response. Rig's `MockRuntime`
//! would record every request and consume its script, so it cannot serve a long benchmark.

pub mod peers;

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use rig_agent::completion::PromptError;
use rig_agent::core::completion::{AssistantContent, CompletionRequest, CompletionResponse, Usage};
use rig_agent::core::driver::{Exchange, Model, Opened, Opening, Transport};
use rig_agent::core::error::ProviderError;
use rig_agent::core::message::{Message, Origin, ToolCall, ToolFunction, ToolName};
use rig_agent::core::test_utils::{MockFrame, MockScript, MockTurn, MOCK_API, MOCK_PROVIDER};
use rig_agent::core::wire::Mode;
use rig_agent::tool::{Tool, ToolContext};
use rig_agent::Agent;
use serde_json::json;

/// The final answer of the two-step conversation (same as ours).
pub const ANSWER: &str = agents_bench::ANSWER;

/// The question both sides answer.
pub const PROMPT: &str = "Run the tool, please.";

/// The scripted rig model: rig's scripted wire over [`RigCycleRuntime`].
pub type RigCycleModel = Model<MockScript, RigCycleRuntime>;

/// rig refused a part of the script (a tool name or a scripted turn).
#[derive(Debug, thiserror::Error)]
#[error("rig refused the benchmark's script; the rig version pinned in benches/rig-compare/Cargo.toml may have changed what it accepts")]
pub struct ScriptError(#[source] Box<dyn std::error::Error + Send + Sync>);

/// The two-step script as a rig model: one `noop` tool call, then [`ANSWER`], in a cycle.
///
/// # Errors
/// A [`ScriptError`] if rig refuses a scripted turn.
pub fn rig_two_step_model() -> Result<RigCycleModel, ScriptError> {
    Ok(Model::new(
        MockScript::default(),
        RigCycleRuntime::two_step()?,
    ))
}

/// One run of the two-step conversation through a rig agent over `history`: as ours, two
/// model calls and one tool call at a time; the history is handed over as an owned copy, as
/// rig takes it. Returns the final answer.
///
/// # Errors
/// The [`PromptError`] of the run.
pub async fn run_rig(agent: &Agent, history: &[Message]) -> Result<String, PromptError> {
    let response = agent
        .prompt(PROMPT)
        .history(history.to_vec())
        .max_turns(2)
        .tool_concurrency(1)
        .await?;
    Ok(response.output())
}

/// A rig agent with the scripted two-step model and the [`RigNoop`] tool.
///
/// # Errors
/// A [`ScriptError`] if the scripted model cannot be built.
pub fn rig_agent() -> Result<(Agent, RigCycleModel), ScriptError> {
    let model = rig_two_step_model()?;
    let agent = rig_agent::AgentBuilder::new(model.clone())
        .tool(RigNoop)
        .build();
    Ok((agent, model))
}

/// A transport for rig's scripted wire answering with pre-built responses in a cycle,
/// recording nothing.
#[derive(Clone)]
pub struct RigCycleRuntime {
    responses: Arc<[CompletionResponse]>,
    next: Arc<AtomicUsize>,
}

impl RigCycleRuntime {
    /// The two-step script: one `noop` tool call, then [`ANSWER`].
    ///
    /// # Errors
    /// A [`ScriptError`] if rig refuses the tool name or a scripted turn.
    pub fn two_step() -> Result<Self, ScriptError> {
        let name = ToolName::new("noop").map_err(|e| ScriptError(Box::new(e)))?;
        let call = AssistantContent::ToolCall(ToolCall::from_wire(
            "call_1",
            ToolFunction::new(name, json!({})),
        ));
        let responses = vec![
            scripted_response(call, MockTurn::tool_call("call_1", "noop", json!({})))?,
            scripted_response(AssistantContent::text(ANSWER), MockTurn::text(ANSWER))?,
        ];
        Ok(Self {
            responses: responses.into(),
            next: Arc::new(AtomicUsize::new(0)),
        })
    }

    /// Model calls so far.
    pub fn calls(&self) -> usize {
        self.next.load(Ordering::Relaxed)
    }
}

/// A response as rig's own scripted runtime builds it from `turn`: its content, no usage,
/// the scripted origin and the turn's document as `raw`.
fn scripted_response(
    content: AssistantContent,
    turn: MockTurn,
) -> Result<CompletionResponse, ScriptError> {
    Ok(CompletionResponse::new(
        vec![content],
        Usage::new(),
        Origin::new(MOCK_API, MOCK_PROVIDER, ""),
        turn.raw().map_err(|e| ScriptError(Box::new(e)))?,
    ))
}

impl Transport<MockScript> for RigCycleRuntime {
    fn send(&self, _request: CompletionRequest, exchange: Exchange) -> Opening<MockFrame> {
        if matches!(exchange.mode, Mode::Streaming) {
            return Opening::failed(ProviderError::Provider(
                "the benchmark model does not stream".to_owned(),
            ));
        }
        let index = self.next.fetch_add(1, Ordering::Relaxed) % self.responses.len();
        let response = self.responses[index].clone();
        let document = response.raw.clone();
        Opening::ready(
            Opened::new(futures::stream::iter([Ok(MockFrame::Response(Box::new(
                response,
            )))]))
            .with_document(document),
        )
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
pub fn rig_history(len: usize) -> Vec<Message> {
    agents_bench::history(len)
        .iter()
        .map(|m| {
            if m.role() == messages::Role::User {
                Message::user(m.text())
            } else {
                Message::assistant(m.text())
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_rig_run_calls_the_model_twice_and_answers() {
        let (agent, model) = rig_agent().unwrap();
        for len in [0, 10] {
            let before = model.transport.calls();
            let answer = run_rig(&agent, &rig_history(len)).await.unwrap();
            assert_eq!(answer, ANSWER);
            assert_eq!(model.transport.calls() - before, 2);
        }
    }

    #[tokio::test]
    async fn the_rig_run_answers_the_tool_call_with_the_tools_ok() {
        use rig_agent::core::message::UserContent;
        let (agent, _model) = rig_agent().unwrap();
        let response = agent
            .prompt(PROMPT)
            .max_turns(2)
            .tool_concurrency(1)
            .await
            .unwrap();
        let results: Vec<_> = response
            .messages
            .iter()
            .filter_map(|m| match m {
                Message::User { content } => Some(content),
                _ => None,
            })
            .flatten()
            .filter_map(|c| match c {
                UserContent::ToolResult(result) => Some(result),
                _ => None,
            })
            .collect();
        assert_eq!(results.len(), 1, "{:?}", response.messages);
        assert!(!results[0].is_error);
        let text: Vec<_> = results[0]
            .content
            .iter()
            .filter_map(|c| c.as_text())
            .collect();
        assert_eq!(text, ["ok"]);
    }

    #[test]
    fn the_rig_history_alternates_user_and_assistant() {
        let history = rig_history(3);
        assert!(matches!(history[0], Message::User { .. }));
        assert!(matches!(history[1], Message::Assistant(_)));
        assert!(matches!(history[2], Message::User { .. }));
    }
}
