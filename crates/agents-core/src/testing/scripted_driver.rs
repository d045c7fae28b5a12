//! `ScriptedDriver`: a driver that replays scripted model answers.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use inference::InferenceResponse;
use messages::Messages;

use crate::driver::{AgentDriver, StepContext};
use crate::events::agent_event::{AgentEvent, EventSource};
use crate::records::agent_error::AgentError;
use crate::records::agent_step::{AgentStep, StepParts};
use crate::state::agent_state::AgentState;
use crate::tools::executor::ToolExecutor;
use crate::tools::registry::Tools;

/// A driver for tests: each step takes the next scripted answer.
///
/// A text answer becomes a final-response step; an answer with tool calls runs them through
/// the executor and becomes a tool step whose trace is one assistant message with all calls
/// plus one tool-result message per call; a scripted error is returned as the driver's error.
/// It emits inference and tool events like a real driver. Clones share the script and the
/// record of inputs. When the script runs out it fails with a clear driver error.
#[derive(Clone, Debug, Default)]
pub struct ScriptedDriver {
    script: Arc<Mutex<VecDeque<Result<InferenceResponse, AgentError>>>>,
    inputs: Arc<Mutex<Vec<Messages>>>,
    scripted: usize,
    delay: Option<Duration>,
}

impl ScriptedDriver {
    /// A driver answering with `responses`, in order.
    pub fn new(responses: impl IntoIterator<Item = InferenceResponse>) -> Self {
        Self::from_results(responses.into_iter().map(Ok))
    }

    /// A driver answering with responses or failing with errors, in order.
    pub fn from_results(
        results: impl IntoIterator<Item = Result<InferenceResponse, AgentError>>,
    ) -> Self {
        let script: VecDeque<_> = results.into_iter().collect();
        Self {
            scripted: script.len(),
            script: Arc::new(Mutex::new(script)),
            inputs: Arc::default(),
            delay: None,
        }
    }

    /// A copy that waits `delay` (tokio time) before each answer, like a slow model.
    pub fn with_delay(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    /// The messages each step was given (system context + `messages_for_inference`).
    pub fn inputs(&self) -> Vec<Messages> {
        self.inputs.lock().map(|i| i.clone()).unwrap_or_default()
    }

    /// Answers not used yet.
    pub fn remaining(&self) -> usize {
        self.script.lock().map(|s| s.len()).unwrap_or_default()
    }

    fn next_answer(&self) -> Result<InferenceResponse, AgentError> {
        let next = self.script.lock().ok().and_then(|mut s| s.pop_front());
        next.unwrap_or_else(|| {
            Err(AgentError::driver(format!(
                "scripted driver has no step left: it was scripted with {} step(s)",
                self.scripted
            )))
        })
    }
}

#[async_trait]
impl AgentDriver for ScriptedDriver {
    async fn next_step(
        &self,
        state: &AgentState,
        tools: &Tools,
        executor: &dyn ToolExecutor,
        context: &StepContext<'_>,
    ) -> Result<AgentStep, AgentError> {
        let input = context.prompt_messages(state);
        if let Ok(mut inputs) = self.inputs.lock() {
            inputs.push(input.clone());
        }
        let source = EventSource::step(state);
        context.emit_with(|| AgentEvent::InferenceRequested {
            source: source.clone(),
            message_count: input.len(),
            model: Some("scripted".into()),
        });
        let started = tokio::time::Instant::now();
        if let Some(delay) = self.delay {
            tokio::time::sleep(delay).await;
        }
        let response = self.next_answer()?;
        context.emit_with(|| AgentEvent::InferenceResponded {
            source,
            usage: response.usage(),
            finish_reason: response.finish_reason(),
            tool_calls: response.tool_calls().len(),
            latency: started.elapsed(),
        });
        if !response.has_tool_calls() {
            return Ok(AgentStep::from_parts(StepParts {
                id: context.step_id.clone(),
                input_messages: input,
                response_messages: response.to_message().into(),
                inference_response: Some(response),
                ..StepParts::default()
            }));
        }
        let tool_context = context.tool_context(state);
        let executions = context
            .run_tool_calls(executor, response.tool_calls(), tools, &tool_context, false)
            .await?;
        let trace = Messages::from(vec![response.to_message()]).extended(executions.to_messages());
        Ok(AgentStep::from_parts(StepParts {
            id: context.step_id.clone(),
            input_messages: input,
            trace_messages: trace,
            tool_executions: executions,
            inference_response: Some(response),
            ..StepParts::default()
        }))
    }
}
