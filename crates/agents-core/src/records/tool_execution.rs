//! `ToolExecution` and `ToolExecutions`: what happened when a tool call ran.

use chrono::{DateTime, Utc};
use messages::{Content, ContentPart, Message, ToolCall};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Why a tool call failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolFailureKind {
    /// The model called a tool that is not registered.
    UnknownTool,
    /// The arguments did not match the tool's schema.
    InvalidArguments,
    /// The tool ran and returned an error.
    Failed,
    /// The tool panicked.
    Panicked,
    /// The tool did not finish within its timeout.
    TimedOut,
    /// A before-tool hook refused the call.
    Blocked,
    /// The same call (tool and arguments) was already made too often in this execution; it
    /// was not run again.
    Repeated,
    /// The run was cancelled before the call finished.
    Cancelled,
    /// The call needs a person's approval and waits for it (the run is suspended); it has
    /// not run.
    AwaitingApproval,
    /// A person rejected the call (or the run was cancelled while it waited); it did not run.
    NotApproved,
    /// A crash interrupted the call after it started: it may or may not have taken effect,
    /// and it was not run again (its tool is not read-only or idempotent).
    Interrupted,
}

/// The outcome of one tool call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum ToolOutcome {
    /// The tool returned a result.
    Success {
        /// The text the model sees.
        content: String,
        /// A structured value, when the tool returned one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        value: Option<Value>,
        /// Images (or other content parts) besides the text, for providers that take them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        parts: Vec<ContentPart>,
    },
    /// The call failed; the model sees the message.
    Failure {
        /// What kind of failure.
        kind: ToolFailureKind,
        /// A message the model can act on.
        message: String,
    },
}

/// One executed (or refused) tool call with its timing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolExecution {
    call: ToolCall,
    outcome: ToolOutcome,
    started_at: DateTime<Utc>,
    completed_at: DateTime<Utc>,
}

impl ToolExecution {
    /// This record with another outcome (the loop caps what the model sees).
    pub(crate) fn with_outcome(mut self, outcome: ToolOutcome) -> Self {
        self.outcome = outcome;
        self
    }

    /// An execution record.
    pub fn new(
        call: ToolCall,
        outcome: ToolOutcome,
        started_at: DateTime<Utc>,
        completed_at: DateTime<Utc>,
    ) -> Self {
        Self {
            call,
            outcome,
            started_at,
            completed_at,
        }
    }

    /// A successful execution.
    pub fn success(
        call: ToolCall,
        content: impl Into<String>,
        started_at: DateTime<Utc>,
        completed_at: DateTime<Utc>,
    ) -> Self {
        Self::new(
            call,
            ToolOutcome::Success {
                content: content.into(),
                value: None,
                parts: Vec::new(),
            },
            started_at,
            completed_at,
        )
    }

    /// A failed execution.
    pub fn failure(
        call: ToolCall,
        kind: ToolFailureKind,
        message: impl Into<String>,
        started_at: DateTime<Utc>,
        completed_at: DateTime<Utc>,
    ) -> Self {
        Self::new(
            call,
            ToolOutcome::Failure {
                kind,
                message: message.into(),
            },
            started_at,
            completed_at,
        )
    }

    /// The call that was executed.
    pub fn call(&self) -> &ToolCall {
        &self.call
    }

    /// The call id.
    pub fn id(&self) -> &str {
        self.call.id()
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        self.call.name()
    }

    /// The call's arguments.
    pub fn arguments(&self) -> &Value {
        self.call.arguments()
    }

    /// The outcome.
    pub fn outcome(&self) -> &ToolOutcome {
        &self.outcome
    }

    /// True when the call failed.
    pub fn has_error(&self) -> bool {
        matches!(self.outcome, ToolOutcome::Failure { .. })
    }

    /// The failure kind, when the call failed.
    pub fn failure_kind(&self) -> Option<ToolFailureKind> {
        match &self.outcome {
            ToolOutcome::Failure { kind, .. } => Some(*kind),
            ToolOutcome::Success { .. } => None,
        }
    }

    /// The failure message, when the call failed.
    pub fn error_message(&self) -> Option<&str> {
        match &self.outcome {
            ToolOutcome::Failure { message, .. } => Some(message),
            ToolOutcome::Success { .. } => None,
        }
    }

    /// The text the model sees as the tool's result (`Error: ...` for failures).
    pub fn result_text(&self) -> String {
        match &self.outcome {
            ToolOutcome::Success { content, .. } => content.clone(),
            ToolOutcome::Failure { message, .. } => format!("Error: {message}"),
        }
    }

    /// The structured value of a success, when the tool returned one.
    pub fn value(&self) -> Option<&Value> {
        match &self.outcome {
            ToolOutcome::Success { value, .. } => value.as_ref(),
            ToolOutcome::Failure { .. } => None,
        }
    }

    /// When the call started.
    pub fn started_at(&self) -> DateTime<Utc> {
        self.started_at
    }

    /// When the call finished.
    pub fn completed_at(&self) -> DateTime<Utc> {
        self.completed_at
    }

    /// How long the call took.
    pub fn duration(&self) -> std::time::Duration {
        (self.completed_at - self.started_at)
            .to_std()
            .unwrap_or_default()
    }

    /// The tool-result message for the model.
    pub fn to_message(&self) -> Message {
        match &self.outcome {
            ToolOutcome::Success { parts, .. } if !parts.is_empty() => {
                let content = Content::from_parts(
                    std::iter::once(ContentPart::text(self.result_text()))
                        .chain(parts.iter().cloned()),
                );
                Message::tool_result_for(&self.call, content)
            }
            _ => Message::tool_result_for(&self.call, self.result_text()),
        }
    }

    /// The content parts of a success besides its text (images), if any.
    pub fn parts(&self) -> &[ContentPart] {
        match &self.outcome {
            ToolOutcome::Success { parts, .. } => parts,
            ToolOutcome::Failure { .. } => &[],
        }
    }
}

/// The executions of one step, in call order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ToolExecutions(Vec<ToolExecution>);

impl ToolExecutions {
    /// No executions.
    pub fn new() -> Self {
        Self::default()
    }

    /// Executions in call order.
    pub fn iter(&self) -> std::slice::Iter<'_, ToolExecution> {
        self.0.iter()
    }

    /// Number of executions.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// True when any execution failed.
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(ToolExecution::has_error)
    }

    /// The failed executions.
    pub fn errors(&self) -> impl Iterator<Item = &ToolExecution> {
        self.0.iter().filter(|e| e.has_error())
    }

    /// The calls that were executed.
    pub fn calls(&self) -> Vec<ToolCall> {
        self.0.iter().map(|e| e.call.clone()).collect()
    }

    /// One tool-result message per execution, in call order.
    pub fn to_messages(&self) -> Vec<Message> {
        self.0.iter().map(ToolExecution::to_message).collect()
    }

    /// Adds an execution.
    pub fn push(&mut self, execution: ToolExecution) {
        self.0.push(execution);
    }
}

impl From<Vec<ToolExecution>> for ToolExecutions {
    fn from(executions: Vec<ToolExecution>) -> Self {
        Self(executions)
    }
}

impl FromIterator<ToolExecution> for ToolExecutions {
    fn from_iter<I: IntoIterator<Item = ToolExecution>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

impl IntoIterator for ToolExecutions {
    type Item = ToolExecution;
    type IntoIter = std::vec::IntoIter<ToolExecution>;

    /// The executions, taken out of the list (no copy).
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a ToolExecutions {
    type Item = &'a ToolExecution;
    type IntoIter = std::slice::Iter<'a, ToolExecution>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}
