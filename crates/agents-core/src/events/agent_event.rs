//! `AgentEvent`: what the loop, drivers and tool executors report.

use std::sync::Arc;
use std::time::Duration;

use inference::{FinishReason, Usage};
use messages::ToolCall;

use crate::records::agent_status::AgentStatus;
use crate::records::agent_step::AgentStepType;
use crate::records::answer_on_stop::AnswerOnStop;
use crate::records::cost::RunCost;
use crate::records::decision::StopReason;
use crate::records::outcome::ContinuationOutcome;
use crate::records::tool_execution::ToolExecution;
use crate::state::agent_state::AgentState;
use crate::tools::executor::ToolEvent;
use crate::tools::tool::ToolContext;

/// Who emitted an event: the agent, its parent and the step (0 for execution-level events).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventSource {
    /// The agent's id.
    pub agent_id: Arc<str>,
    /// The parent agent's id, for subagents.
    pub parent_agent_id: Option<Arc<str>>,
    /// The 1-based step number; 0 for execution-level events.
    pub step_number: usize,
}

impl EventSource {
    /// The source for the step `state` is about to run (its number is one past the recorded
    /// steps).
    pub fn step(state: &AgentState) -> Self {
        Self {
            agent_id: Arc::clone(state.shared_agent_id()),
            parent_agent_id: state.shared_parent_agent_id().cloned(),
            step_number: state.next_step_number(),
        }
    }

    /// The source for `state`'s execution (step number 0).
    pub fn execution(state: &AgentState) -> Self {
        Self {
            step_number: 0,
            ..Self::step(state)
        }
    }

    /// The source of a tool call.
    pub fn tool(context: &ToolContext) -> Self {
        Self {
            agent_id: context.agent_id.clone(),
            parent_agent_id: context.parent_agent_id.clone(),
            step_number: context.step_number,
        }
    }
}

/// Something that happened while an agent ran. Every event names its [`EventSource`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum AgentEvent {
    /// `execute`/`iterate` started.
    ExecutionStarted {
        /// Who.
        source: EventSource,
        /// Messages in the `messages` section.
        message_count: usize,
        /// Tools available.
        tool_count: usize,
    },
    /// The execution ended without failing.
    ExecutionCompleted {
        /// Who.
        source: EventSource,
        /// The final status.
        status: AgentStatus,
        /// Why it stopped.
        stop_reason: Option<StopReason>,
        /// Steps run.
        steps: usize,
        /// Tokens used by the execution.
        usage: Usage,
        /// What the execution cost.
        cost: RunCost,
    },
    /// The execution ended in failure.
    ExecutionFailed {
        /// Who.
        source: EventSource,
        /// The errors of the last step.
        errors: Vec<String>,
        /// Steps run.
        steps: usize,
        /// Tokens used by the execution.
        usage: Usage,
        /// What the execution cost.
        cost: RunCost,
    },
    /// A step is about to run.
    StepStarted {
        /// Who.
        source: EventSource,
        /// Messages the model will see.
        message_count: usize,
    },
    /// A step finished.
    StepCompleted {
        /// Who.
        source: EventSource,
        /// The step's kind.
        step_type: AgentStepType,
        /// Whether the model asked for tools.
        has_tool_calls: bool,
        /// The step's errors.
        errors: Vec<String>,
        /// Tokens used by the step.
        usage: Usage,
        /// Why the model stopped.
        finish_reason: Option<FinishReason>,
        /// How long the step took.
        duration: Duration,
        /// What the step cost.
        cost: RunCost,
    },
    /// A driver is about to call the model.
    InferenceRequested {
        /// Who.
        source: EventSource,
        /// Messages sent.
        message_count: usize,
        /// Model name, when known.
        model: Option<String>,
    },
    /// The model answered.
    InferenceResponded {
        /// Who.
        source: EventSource,
        /// Tokens used.
        usage: Usage,
        /// Why the model stopped.
        finish_reason: FinishReason,
        /// Tool calls asked for.
        tool_calls: usize,
        /// Time from sending the request to having the whole answer.
        latency: std::time::Duration,
    },
    /// A streaming driver received text.
    TextDelta {
        /// Who.
        source: EventSource,
        /// The new text.
        delta: String,
    },
    /// A reply the driver did not take as the step's reply, with text-call recovery on: a
    /// plan to use a tool, a call or a change claimed that no tool made, or an answer about a
    /// file given without looking at it. The model is asked again in the same step; text it
    /// streamed for the set-aside reply is not the answer.
    ReplySetAside {
        /// Who.
        source: EventSource,
        /// Why, in a few words ("the model described a call instead of making it").
        reason: String,
        /// The set-aside reply was the model's reply to a nudge, dropped because it did not
        /// do what the nudge asked (or was empty): the reply set aside before it is the
        /// step's reply after all, and the model is not asked again.
        earlier_reply_stands: bool,
    },
    /// A tool call is about to run.
    ToolCallStarted {
        /// Who.
        source: EventSource,
        /// The call.
        call: ToolCall,
    },
    /// A tool call finished.
    ToolCallCompleted {
        /// Who.
        source: EventSource,
        /// The execution record.
        execution: ToolExecution,
    },
    /// A call that a crash interrupted after it started was found when its step ran again:
    /// it runs again (`rerun`, its tool being read-only or idempotent) or its result tells the
    /// model it may or may not have taken effect (a call that needed approval is asked for
    /// again).
    ToolCallInterrupted {
        /// Who.
        source: EventSource,
        /// The call.
        call: ToolCall,
        /// Whether it runs again.
        rerun: bool,
    },
    /// A before-tool hook refused a call.
    ToolCallBlocked {
        /// Who.
        source: EventSource,
        /// The refused call.
        call: ToolCall,
        /// Why.
        reason: String,
    },
    /// The continuation criteria were evaluated after a step (or before the first one).
    ContinuationEvaluated {
        /// Who (the step just run; 0 before the first step).
        source: EventSource,
        /// The verdict.
        outcome: ContinuationOutcome,
    },
    /// A step used tokens.
    TokenUsage {
        /// Who.
        source: EventSource,
        /// Tokens used by the step.
        usage: Usage,
    },
    /// An execution stopped without a final answer, and one was appended (marked
    /// `"incomplete": true`).
    AnsweredOnStop {
        /// Who.
        source: EventSource,
        /// Why the execution stopped.
        stop_reason: StopReason,
        /// The path taken: `Synthesize` (the model answered without tools) or `Notice` (a
        /// plain message; also when synthesizing failed).
        path: AnswerOnStop,
    },
    /// A step's request used more than [`CONTEXT_WINDOW_WARNING`](crate::CONTEXT_WINDOW_WARNING)
    /// of its model's context window (from the agent's model catalog): the next requests may
    /// not fit. Summarize, trim or start a new conversation.
    ContextWindowNearlyFull {
        /// Who.
        source: EventSource,
        /// The model the inference reported.
        model: String,
        /// Prompt tokens of the request (cache reads and writes included).
        input_tokens: u64,
        /// The model's context window.
        context_window: u64,
    },
    /// A tool call waits for a person's approval; the run is suspended.
    ApprovalRequested {
        /// Who (the step that made the call).
        source: EventSource,
        /// The waiting call.
        pending: crate::state::pending_approval::PendingApproval,
    },
    /// A waiting call was decided and its result (or the rejection) is in the history.
    ApprovalResolved {
        /// Who.
        source: EventSource,
        /// The call.
        call_id: String,
        /// What was decided.
        verdict: crate::state::pending_approval::ApprovalVerdict,
    },
}

impl AgentEvent {
    /// Who emitted the event.
    pub fn source(&self) -> &EventSource {
        match self {
            AgentEvent::ExecutionStarted { source, .. }
            | AgentEvent::ExecutionCompleted { source, .. }
            | AgentEvent::ExecutionFailed { source, .. }
            | AgentEvent::StepStarted { source, .. }
            | AgentEvent::StepCompleted { source, .. }
            | AgentEvent::InferenceRequested { source, .. }
            | AgentEvent::InferenceResponded { source, .. }
            | AgentEvent::TextDelta { source, .. }
            | AgentEvent::ReplySetAside { source, .. }
            | AgentEvent::ToolCallStarted { source, .. }
            | AgentEvent::ToolCallCompleted { source, .. }
            | AgentEvent::ToolCallBlocked { source, .. }
            | AgentEvent::ToolCallInterrupted { source, .. }
            | AgentEvent::ContinuationEvaluated { source, .. }
            | AgentEvent::TokenUsage { source, .. }
            | AgentEvent::AnsweredOnStop { source, .. }
            | AgentEvent::ContextWindowNearlyFull { source, .. }
            | AgentEvent::ApprovalRequested { source, .. }
            | AgentEvent::ApprovalResolved { source, .. } => source,
        }
    }

    /// The emitting agent's id.
    pub fn agent_id(&self) -> &str {
        &self.source().agent_id
    }

    /// The step number (0 for execution-level events).
    pub fn step_number(&self) -> usize {
        self.source().step_number
    }

    /// A short snake_case name of the event kind (for logs and filters).
    pub fn name(&self) -> &'static str {
        match self {
            AgentEvent::ExecutionStarted { .. } => "execution_started",
            AgentEvent::ExecutionCompleted { .. } => "execution_completed",
            AgentEvent::ExecutionFailed { .. } => "execution_failed",
            AgentEvent::StepStarted { .. } => "step_started",
            AgentEvent::StepCompleted { .. } => "step_completed",
            AgentEvent::InferenceRequested { .. } => "inference_requested",
            AgentEvent::InferenceResponded { .. } => "inference_responded",
            AgentEvent::TextDelta { .. } => "text_delta",
            AgentEvent::ReplySetAside { .. } => "reply_set_aside",
            AgentEvent::ToolCallStarted { .. } => "tool_call_started",
            AgentEvent::ToolCallCompleted { .. } => "tool_call_completed",
            AgentEvent::ToolCallBlocked { .. } => "tool_call_blocked",
            AgentEvent::ToolCallInterrupted { .. } => "tool_call_interrupted",
            AgentEvent::ContinuationEvaluated { .. } => "continuation_evaluated",
            AgentEvent::TokenUsage { .. } => "token_usage",
            AgentEvent::AnsweredOnStop { .. } => "answered_on_stop",
            AgentEvent::ContextWindowNearlyFull { .. } => "context_window_nearly_full",
            AgentEvent::ApprovalRequested { .. } => "approval_requested",
            AgentEvent::ApprovalResolved { .. } => "approval_resolved",
        }
    }

    /// The agent event for a tool executor's event.
    pub fn from_tool_event(context: &ToolContext, event: ToolEvent) -> Self {
        let source = EventSource::tool(context);
        match event {
            ToolEvent::Started { call } => AgentEvent::ToolCallStarted { source, call },
            ToolEvent::Completed { execution } => {
                AgentEvent::ToolCallCompleted { source, execution }
            }
            ToolEvent::Interrupted { call, rerun } => AgentEvent::ToolCallInterrupted {
                source,
                call,
                rerun,
            },
            ToolEvent::Blocked { call, reason } => AgentEvent::ToolCallBlocked {
                source,
                call,
                reason,
            },
        }
    }
}
