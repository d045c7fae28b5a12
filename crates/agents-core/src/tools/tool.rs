//! The `Tool` trait and what a tool receives and returns.

use std::sync::Arc;

use async_trait::async_trait;
use inference::ToolSchema;
use messages::{ContentPart, Metadata};
use serde_json::Value;
use thiserror::Error;
use tokio_util::sync::CancellationToken;

use crate::clock::{Clock, SystemClock};
use crate::records::step_execution::StepExecutions;
use crate::records::tool_effects::ToolEffects;
use crate::records::tool_execution::ToolExecution;
use crate::state::suspended_run::SuspendedRun;

/// What a tool returns: the text the model sees, optionally a structured value, and optionally
/// images (or other content parts) for models that take them in tool results.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolOutput {
    content: String,
    value: Option<Value>,
    parts: Vec<ContentPart>,
}

impl ToolOutput {
    /// A text result.
    pub fn text(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            value: None,
            parts: Vec::new(),
        }
    }

    /// A structured result; the model sees it as JSON (strings as they are).
    pub fn json(value: Value) -> Self {
        let content = match &value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        Self {
            content,
            value: Some(value),
            parts: Vec::new(),
        }
    }

    /// With a structured value beside the text: the model sees the text, and programs (and
    /// later calls, through the execution's record) read the value.
    ///
    /// ```
    /// use agents_core::ToolOutput;
    /// use serde_json::json;
    ///
    /// let read = ToolOutput::text("(read `a.txt` instead)\n     1\t12")
    ///     .with_value(json!({"read": ["a.txt"]}));
    /// assert_eq!(read.content(), "(read `a.txt` instead)\n     1\t12");
    /// assert_eq!(read.value(), Some(&json!({"read": ["a.txt"]})));
    /// ```
    pub fn with_value(mut self, value: Value) -> Self {
        self.value = Some(value);
        self
    }

    /// The text the model sees.
    pub fn content(&self) -> &str {
        &self.content
    }

    /// The structured value, if any.
    pub fn value(&self) -> Option<&Value> {
        self.value.as_ref()
    }

    /// With an image, base64-encoded `data` of type `media_type` (`image/png`, ..): the
    /// model sees it where its provider takes images in tool results (Anthropic; OpenAI
    /// chat completions with images enabled), and a short description elsewhere. Images over
    /// [`MAX_TOOL_IMAGE_BYTES`](crate::MAX_TOOL_IMAGE_BYTES) are replaced by a note.
    ///
    /// ```
    /// use agents_core::ToolOutput;
    ///
    /// let shot = ToolOutput::text("the login page").with_image("image/png", "iVBORw0KGgo=");
    /// assert_eq!(shot.content(), "the login page");
    /// assert_eq!(shot.parts().len(), 1);
    /// ```
    pub fn with_image(self, media_type: &str, data: &str) -> Self {
        self.with_part(ContentPart::image_url(format!(
            "data:{media_type};base64,{data}"
        )))
    }

    /// With a content part besides the text (an image, a file).
    pub fn with_part(mut self, part: ContentPart) -> Self {
        self.parts.push(part);
        self
    }

    /// The content parts besides the text.
    pub fn parts(&self) -> &[ContentPart] {
        &self.parts
    }

    /// Splits into text and value (the parts are dropped; see
    /// [`into_all`](Self::into_all)).
    pub fn into_parts(self) -> (String, Option<Value>) {
        (self.content, self.value)
    }

    /// Splits into text, value and content parts.
    pub fn into_all(self) -> (String, Option<Value>, Vec<ContentPart>) {
        (self.content, self.value, self.parts)
    }
}

impl From<String> for ToolOutput {
    fn from(content: String) -> Self {
        ToolOutput::text(content)
    }
}

impl From<&str> for ToolOutput {
    fn from(content: &str) -> Self {
        ToolOutput::text(content)
    }
}

impl From<Value> for ToolOutput {
    fn from(value: Value) -> Self {
        ToolOutput::json(value)
    }
}

/// A tool's failure. The message goes back to the model, so make it actionable.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum ToolError {
    /// The arguments are wrong (the model can fix them and call again).
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// The tool could not do its job.
    #[error("{0}")]
    Failed(String),
    /// A subagent the tool ran is suspended on calls that need a person's approval: the
    /// call waits too, and the subagent's waiting calls surface in the calling agent's
    /// [`pending_approvals`](crate::AgentState::pending_approvals).
    #[error("{}", crate::state::pending_approval::AWAITING_APPROVAL_MESSAGE)]
    AwaitingApproval(Box<SuspendedRun>),
}

impl ToolError {
    /// A failure with a message.
    pub fn failed(message: impl Into<String>) -> Self {
        ToolError::Failed(message.into())
    }

    /// An invalid-arguments failure with a message.
    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        ToolError::InvalidArguments(message.into())
    }

    /// The message without the kind prefix.
    pub fn message(&self) -> &str {
        match self {
            ToolError::InvalidArguments(message) | ToolError::Failed(message) => message,
            ToolError::AwaitingApproval(_) => {
                crate::state::pending_approval::AWAITING_APPROVAL_MESSAGE
            }
        }
    }
}

impl From<std::io::Error> for ToolError {
    fn from(error: std::io::Error) -> Self {
        ToolError::Failed(error.to_string())
    }
}

impl From<serde_json::Error> for ToolError {
    fn from(error: serde_json::Error) -> Self {
        ToolError::Failed(error.to_string())
    }
}

impl From<Box<dyn std::error::Error + Send + Sync>> for ToolError {
    fn from(error: Box<dyn std::error::Error + Send + Sync>) -> Self {
        ToolError::Failed(error.to_string())
    }
}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        ToolError::Failed(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        ToolError::Failed(message.to_owned())
    }
}

/// What a tool knows about the agent that called it.
#[derive(Clone, Debug)]
pub struct ToolContext {
    /// The calling agent's id.
    pub agent_id: Arc<str>,
    /// The calling agent's parent, for subagents.
    pub parent_agent_id: Option<Arc<str>>,
    /// The 1-based number of the step that runs the call.
    pub step_number: usize,
    /// The agent's metadata at the start of the step.
    pub metadata: Metadata,
    /// Cancelled when the agent run is cancelled; long tools should watch it.
    pub cancellation: CancellationToken,
    /// The agent's clock (tool executions are stamped with it).
    pub clock: Arc<dyn Clock>,
    /// Whether the agent records contents on its spans (tool arguments and results on the
    /// `execute_tool` span); off unless the agent was built with content capture.
    pub capture_content: bool,
    /// The decided state of the suspended subagent this call resumes (set by the loop when
    /// a call that waited on a subagent's approvals runs again; `None` otherwise).
    pub resumed: Option<Arc<crate::state::agent_state::AgentState>>,
    /// The id of the execution the call belongs to (set by the loop).
    pub execution_id: Option<Arc<str>>,
    /// The id of the call being run (set by the executor for each call).
    pub call_id: Option<Arc<str>>,
    /// The most characters of a result the model sees (the agent's tool-output limit, set by
    /// the loop; `None`: no limit). A longer result is cut at that character with a note; a
    /// tool that can cut at a better place (whole lines, saying where to read on) stays
    /// within it itself.
    pub output_limit: Option<usize>,
    /// The steps the execution recorded before the one that runs the call (set by the loop;
    /// shared with the state, not copied): see [`ToolContext::earlier_calls`].
    pub(crate) earlier_steps: StepExecutions,
    /// Where a call that waits on a subagent's approvals leaves the subagent's suspended run
    /// for the loop (which keeps it in the state's approvals, not in the tool execution).
    pub(crate) held: HeldRuns,
}

/// The suspended subagent runs of a step's calls, by call id: filled by the executor, read by
/// the loop when it records the step.
pub(crate) type HeldRuns = Arc<std::sync::Mutex<Vec<(String, SuspendedRun)>>>;

/// A step's [`HeldRuns`], made when the step makes its first tool context: a step that runs
/// no tool (an answer) allocates none. Copies of a step context share one list (`Clone`
/// makes it first), so what a call holds through any copy's tool context is read back.
#[derive(Debug, Default)]
pub(crate) struct StepHeldRuns(std::sync::OnceLock<HeldRuns>);

impl StepHeldRuns {
    /// The list, made now if no tool context was made before.
    pub(crate) fn shared(&self) -> HeldRuns {
        Arc::clone(self.0.get_or_init(HeldRuns::default))
    }

    /// The runs held, by call id (none when no tool context was made); `f` sees them locked.
    pub(crate) fn with<T>(&self, f: impl FnOnce(&[(String, SuspendedRun)]) -> T) -> T {
        match self.0.get() {
            Some(held) => f(&held
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)),
            None => f(&[]),
        }
    }
}

impl Clone for StepHeldRuns {
    fn clone(&self) -> Self {
        Self(std::sync::OnceLock::from(self.shared()))
    }
}

impl ToolContext {
    /// Leaves the suspended subagent `run` of the call `call_id` for the loop.
    pub(crate) fn hold(&self, call_id: &str, run: SuspendedRun) {
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((call_id.to_owned(), run));
    }
}

impl Default for ToolContext {
    fn default() -> Self {
        Self {
            agent_id: Arc::from(""),
            parent_agent_id: None,
            step_number: 0,
            metadata: Metadata::new(),
            cancellation: CancellationToken::new(),
            clock: Arc::new(SystemClock),
            capture_content: false,
            resumed: None,
            execution_id: None,
            call_id: None,
            output_limit: None,
            earlier_steps: StepExecutions::new(),
            held: HeldRuns::default(),
        }
    }
}

impl ToolContext {
    /// A context for the given agent id.
    pub fn new(agent_id: impl Into<Arc<str>>) -> Self {
        Self {
            agent_id: agent_id.into(),
            ..Self::default()
        }
    }

    /// This context with the cancellation token `cancellation` (a tool watches it to stop
    /// early). Build contexts with `new` and the `with_*` methods: the context has fields
    /// only the loop sets, so struct-update syntax does not compile outside this crate.
    pub fn with_cancellation(mut self, cancellation: CancellationToken) -> Self {
        self.cancellation = cancellation;
        self
    }

    /// This context with the tool-output limit `chars` (the loop sets the agent's; a tool run
    /// outside the loop, or a test, sets one here).
    pub fn with_output_limit(mut self, chars: Option<usize>) -> Self {
        self.output_limit = chars;
        self
    }

    /// This context for a call of an execution that recorded `steps` before the step that
    /// runs it (the loop sets them; a tool run outside the loop, or a test, sets them here).
    pub fn with_earlier_steps(mut self, steps: StepExecutions) -> Self {
        self.earlier_steps = steps;
        self
    }

    /// The calls the execution made in the steps before this one, in order, with what each
    /// returned: what the model has already seen. The file tools' `write_file` reads it to
    /// replace only a file the model has read or written in the execution. Empty outside
    /// the loop.
    pub fn earlier_calls(&self) -> impl Iterator<Item = &ToolExecution> {
        self.earlier_steps
            .steps()
            .flat_map(|step| step.tool_executions().iter())
    }

    /// This context for the call `call_id`.
    pub fn for_call(&self, call_id: &str) -> Self {
        self.for_call_id(Arc::from(call_id))
    }

    /// [`for_call`](Self::for_call) with the call's own shared id (no copy of it).
    pub(crate) fn for_call_id(&self, call_id: Arc<str>) -> Self {
        Self {
            call_id: Some(call_id),
            ..self.clone()
        }
    }

    /// A key unique to this call and stable when the call runs again after a crash (the
    /// execution id and the call id): a tool that calls an API passes it on (an
    /// `Idempotency-Key` header, say) so that a second run changes nothing, and can then
    /// declare itself [`Idempotent`](crate::ToolEffects::Idempotent). `None` outside a run.
    pub fn idempotency_key(&self) -> Option<String> {
        match (&self.execution_id, &self.call_id) {
            (Some(execution), Some(call)) => Some(format!("{execution}:{call}")),
            _ => None,
        }
    }
}

/// A tool the model can call.
#[async_trait]
pub trait Tool: Send + Sync {
    /// The name the model calls it by (unique within an agent).
    fn name(&self) -> &str;

    /// What the tool does, for the model.
    fn description(&self) -> &str;

    /// JSON Schema of the arguments object.
    fn parameters(&self) -> Value;

    /// Runs the tool.
    ///
    /// # Errors
    /// A [`ToolError`] whose message is sent back to the model.
    async fn call(&self, arguments: Value, context: &ToolContext) -> Result<ToolOutput, ToolError>;

    /// What running the tool does to the world: [`ToolEffects::SideEffecting`] unless the tool
    /// says otherwise. Declare it honestly: a read-only tool may run where a call was only
    /// written as text, or again after a crash, and its repeated calls are answered from the
    /// earlier result.
    fn effects(&self) -> ToolEffects {
        ToolEffects::SideEffecting
    }

    /// Advice on reading the rest of a result that was cut to the tool-output limit (e.g. "call
    /// read_file again with offset=2000"), given the arguments of the call and how many
    /// characters the model saw. `None`: a generic note. A tool that can stop at a boundary of
    /// its own (a whole line, a whole record) reads the limit before it runs out instead,
    /// from [`ToolContext::output_limit`], and says where to go on in its own result.
    fn truncation_hint(&self, _arguments: &Value, _shown_chars: usize) -> Option<String> {
        None
    }

    /// Names other toolsets give a tool that does this tool's job (`create_file` or `mkdir`
    /// for a tool that writes files and creates their folders), as a model may call them. A
    /// call by one of these names still fails as a call to an unknown tool (nothing runs that
    /// the model did not name), and the model is told which tool does that job. Compared
    /// ignoring ASCII case and every character but letters and digits (`createFolder` is
    /// `create_folder`). Default: none.
    fn other_names(&self) -> &[&str] {
        &[]
    }

    /// The schema sent to the model.
    fn schema(&self) -> ToolSchema {
        ToolSchema::new(self.name(), self.description(), self.parameters())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::agent_state::AgentState;

    fn hold(held: &HeldRuns, call_id: &str) {
        held.lock().unwrap().push((
            call_id.to_owned(),
            SuspendedRun::new("helper", AgentState::new()),
        ));
    }

    #[test]
    fn a_step_without_tool_contexts_makes_no_held_list() {
        let held = StepHeldRuns::default();
        assert_eq!(held.with(<[_]>::len), 0);
        assert!(held.0.get().is_none(), "reading made the list");
    }

    #[test]
    fn copies_of_a_step_context_share_one_held_list() {
        let original = StepHeldRuns::default();
        let copy = original.clone();
        hold(&copy.shared(), "call_1");
        hold(&original.shared(), "call_2");
        let ids = |held: &StepHeldRuns| {
            held.with(|runs| runs.iter().map(|(id, _)| id.clone()).collect::<Vec<_>>())
        };
        assert_eq!(ids(&original), ["call_1", "call_2"]);
        assert_eq!(ids(&copy), ["call_1", "call_2"]);
    }
}
