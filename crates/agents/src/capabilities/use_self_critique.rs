//! `UseSelfCritique`: a critic model reviews each final answer and may send it back.

use std::sync::Arc;

use agents_core::{
    AgentDriver, AgentError, AgentState, AgentStep, AgentStepType, ContinuationCriterion,
    ContinuationEvaluation, Next, StepContext, ToolExecutor, Tools, DEFAULT_SECTION,
    EXECUTION_BUFFER_SECTION,
};
use agents_processing::StateProcessor;
use async_trait::async_trait;
use inference::{InferenceRequest, LanguageModel};
use messages::{Message, Messages, Role};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::{AgentBuilder, AgentCapability};

/// The metadata key of the critic's verdict on a final answer message.
pub const CRITIQUE_METADATA_KEY: &str = "self_critique";

const CRITERION_NAME: &str = "SelfCritique";

const CRITIC_PROMPT: &str = "You review an assistant's answer to a task. Judge whether the answer \
is correct, complete and supported by the tool results shown. Reply with JSON only: \
{\"approved\": true|false, \"feedback\": \"what must change (empty when approved)\"}.";

/// After a step that gives a final answer, asks `critic` whether the answer is good enough.
/// A rejection forces another step (the critique is fed back to the model as a user message
/// starting `[Critique]`), at most `max_iterations` times per execution; then the answer
/// stands. A failing or unparseable critic approves. The verdict is kept on the answer's
/// metadata under [`CRITIQUE_METADATA_KEY`].
#[derive(Clone)]
pub struct UseSelfCritique {
    critic: Arc<dyn LanguageModel>,
    max_iterations: usize,
}

impl UseSelfCritique {
    /// Critique by `critic`, at most 2 revisions per execution.
    pub fn new(critic: impl LanguageModel + 'static) -> Self {
        Self {
            critic: Arc::new(critic),
            max_iterations: 2,
        }
    }

    /// A copy allowing at most `max` forced revisions per execution.
    pub fn with_max_iterations(mut self, max: usize) -> Self {
        self.max_iterations = max;
        self
    }
}

impl std::fmt::Debug for UseSelfCritique {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UseSelfCritique")
            .field("critic", &self.critic.name())
            .field("max_iterations", &self.max_iterations)
            .finish()
    }
}

impl AgentCapability for UseSelfCritique {
    fn name(&self) -> &str {
        "self_critique"
    }

    fn install(&self, builder: AgentBuilder) -> AgentBuilder {
        let critic = Arc::clone(&self.critic);
        let max = self.max_iterations;
        builder
            .with_driver_layer(move |inner| {
                Arc::new(CritiquedDriver {
                    inner,
                    critic: Arc::clone(&critic),
                    max_iterations: max,
                })
            })
            .with_criterion(SelfCritiqueCheck {
                max_iterations: max,
            })
            // The feedback processor needs the final trace mode, known only at build time.
            .on_build(|builder| {
                let separated = builder.retention().is_separated();
                builder.with_processor(CritiqueFeedback { separated })
            })
    }
}

/// The critic's verdict.
#[derive(Clone, Debug, Deserialize)]
struct Verdict {
    approved: bool,
    #[serde(default)]
    feedback: String,
}

fn verdict_of(step: &AgentStep) -> Option<Verdict> {
    if step.step_type() != AgentStepType::FinalResponse {
        return None;
    }
    let value = step
        .final_response()?
        .metadata()
        .get(CRITIQUE_METADATA_KEY)?;
    serde_json::from_value(value.clone()).ok()
}

fn rejections(state: &AgentState) -> usize {
    state
        .steps()
        .filter_map(verdict_of)
        .filter(|v| !v.approved)
        .count()
}

/// Wraps the driver: a final answer is sent to the critic before the loop decides whether to
/// stop, so the criterion sees the verdict.
struct CritiquedDriver {
    inner: Arc<dyn AgentDriver>,
    critic: Arc<dyn LanguageModel>,
    max_iterations: usize,
}

#[async_trait]
impl AgentDriver for CritiquedDriver {
    async fn next_step(
        &self,
        state: &AgentState,
        tools: &Tools,
        executor: &dyn ToolExecutor,
        context: &StepContext<'_>,
    ) -> Result<AgentStep, AgentError> {
        let step = self
            .inner
            .next_step(state, tools, executor, context)
            .await?;
        if step.step_type() != AgentStepType::FinalResponse
            || rejections(state) >= self.max_iterations
        {
            return Ok(step);
        }
        let Some(answer) = step.final_response().cloned() else {
            return Ok(step);
        };
        let (verdict, usage) = self.critique(state, &answer).await;
        tracing::info!(
            target: "agents::self_critique",
            agent_id = %state.agent_id(),
            approved = verdict.approved,
            feedback = %verdict.feedback,
            "critic verdict"
        );
        let marked = answer.clone().with_metadata(
            CRITIQUE_METADATA_KEY,
            json!({"approved": verdict.approved, "feedback": verdict.feedback}),
        );
        let responses: Messages = step
            .response_messages()
            .iter()
            .map(|m| {
                if *m == answer {
                    marked.clone()
                } else {
                    m.clone()
                }
            })
            .collect();
        let total = step.usage() + usage;
        Ok(step.with_response_messages(responses).with_usage(total))
    }
}

impl CritiquedDriver {
    async fn critique(&self, state: &AgentState, answer: &Message) -> (Verdict, inference::Usage) {
        let approve = |why: &str| Verdict {
            approved: true,
            feedback: why.to_owned(),
        };
        let request = InferenceRequest {
            messages: Messages::from(vec![
                Message::system(CRITIC_PROMPT),
                Message::user(review_text(state, answer)),
            ]),
            ..InferenceRequest::default()
        };
        match self.critic.complete(request).await {
            Ok(response) => {
                let verdict = parse_verdict(response.content())
                    .unwrap_or_else(|| approve("(critic reply was not a verdict)"));
                (verdict, response.usage())
            }
            Err(error) => {
                tracing::warn!(target: "agents::self_critique", %error, "critic failed; approving");
                (approve("(critic unavailable)"), inference::Usage::default())
            }
        }
    }
}

fn review_text(state: &AgentState, answer: &Message) -> String {
    let task = state
        .messages()
        .for_roles(&[Role::User])
        .iter()
        .rev()
        .find(|m| !m.text().starts_with("[Critique]"))
        .map(|m| m.text())
        .unwrap_or_default();
    let mut evidence = String::new();
    for step in state.steps() {
        for execution in step.tool_executions().iter() {
            evidence.push_str(&format!(
                "- {}({}) -> {}\n",
                execution.name(),
                execution.arguments(),
                execution.result_text()
            ));
        }
    }
    if evidence.is_empty() {
        evidence.push_str("(no tools were used)\n");
    }
    format!(
        "Task:\n{task}\n\nTool calls and results:\n{evidence}\nAnswer to review:\n{}",
        answer.text()
    )
}

fn parse_verdict(text: &str) -> Option<Verdict> {
    let start = text.find('{')?;
    let end = text.rfind('}')?;
    let value: Value = serde_json::from_str(text.get(start..=end)?).ok()?;
    serde_json::from_value(value).ok()
}

/// Requests another step after a rejected answer while revisions remain.
struct SelfCritiqueCheck {
    max_iterations: usize,
}

impl ContinuationCriterion for SelfCritiqueCheck {
    fn evaluate(&self, state: &AgentState) -> ContinuationEvaluation {
        let rejected = state
            .current_step()
            .and_then(verdict_of)
            .is_some_and(|v| !v.approved);
        if rejected && rejections(state) <= self.max_iterations {
            ContinuationEvaluation::request(CRITERION_NAME)
                .with_reason("the critic asked for a revision")
        } else {
            ContinuationEvaluation::allow(CRITERION_NAME)
        }
    }

    fn name(&self) -> &str {
        CRITERION_NAME
    }
}

/// Feeds a rejection back: the rejected answer and a `[Critique] ...` user message go to the
/// execution buffer (separated modes; the rejected answer leaves `messages`) or to `messages`
/// (legacy mode).
struct CritiqueFeedback {
    separated: bool,
}

#[async_trait]
impl StateProcessor for CritiqueFeedback {
    fn name(&self) -> &str {
        "CritiqueFeedback"
    }

    async fn process(&self, state: AgentState, next: Next<'_>) -> Result<AgentState, AgentError> {
        let persisted_before = state.messages().len();
        let state = next.run(state).await?;
        let Some(verdict) = state.current_step().and_then(verdict_of) else {
            return Ok(state);
        };
        let continuing = state
            .continuation_outcome()
            .is_some_and(|o| o.should_continue());
        if verdict.approved || !continuing {
            return Ok(state);
        }
        let critique = Message::user(format!(
            "[Critique] Your previous answer was not accepted. {} Revise your answer.",
            verdict.feedback.trim()
        ));
        if !self.separated {
            let store = state.store().section(DEFAULT_SECTION).append([critique]);
            return Ok(state.with_store(store));
        }
        // Move what this step persisted (the rejected answer) into the execution buffer.
        let messages = state.messages();
        let (kept, moved) = if messages.len() > persisted_before {
            (
                messages.head(persisted_before),
                messages.tail(messages.len() - persisted_before),
            )
        } else {
            (messages, Messages::new())
        };
        let store = state
            .store()
            .section(DEFAULT_SECTION)
            .set(kept)
            .section(EXECUTION_BUFFER_SECTION)
            .append(moved.appended(critique));
        Ok(state.with_store(store))
    }
}

#[cfg(test)]
mod tests {
    use super::parse_verdict;

    #[test]
    fn verdicts_are_found_inside_chatter() {
        let v = parse_verdict("Sure: {\"approved\": false, \"feedback\": \"cite\"} ok").unwrap();
        assert!(!v.approved);
        assert_eq!(v.feedback, "cite");
        assert!(parse_verdict("looks fine").is_none());
        assert!(parse_verdict("{\"feedback\": \"x\"}").is_none());
    }
}
