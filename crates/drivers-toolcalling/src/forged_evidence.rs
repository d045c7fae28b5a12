//! Replies that write tool results themselves are never answers.
//!
//! Small models imitate what their context shows. Issue 32 found a 1.5B model copying the
//! digest note of earlier turns ("(Notes on the tool calls behind the next answer ...)" with
//! made-up calls and results) into its replies, and that forgery was saved as the answer, where
//! later turns read it as fact. [`forged_evidence`] recognises such a reply;
//! [`RefuseForgedEvidence`] (a driver layer) withholds it and asks the model to call the tool,
//! and [`ForgedEvidenceCheck`] (a continuation criterion) runs that next step, stopping the
//! execution when the model forges twice in a row (the answer-on-stop rules then apply, and a
//! forged synthesized answer becomes the loop's notice).

use std::sync::Arc;

use agents_core::{
    AgentDriver, AgentError, AgentState, AgentStep, ContinuationCriterion, ContinuationEvaluation,
    StepContext, StopReason, ToolExecutor, Tools,
};
use async_trait::async_trait;
use inference::InferenceResponse;
use messages::{Message, Messages};

use crate::latest_results::execution_messages;
use crate::plan_steps::next_step;

/// Metadata key on the message that tells the model its reply was withheld.
pub const FORGED_REPLY_KEY: &str = "forged_reply_refused";

/// The header of the assistant notes older digests persisted (a state saved before digests
/// became calls and results may still hold some, and a model may copy one).
const DIGEST_NOTE_HEADER: &str = "notes on the tool calls behind";

/// What the model is told when its reply was withheld.
const FORGED_REPLY_NUDGE: &str = "Your last reply was not shown to the user: it wrote tool \
calls or tool results as text, and results written that way are made up. Tools only run when \
you call them. Call the tool you need now, then answer from what it returns.";

/// How a reply forged evidence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForgedEvidence {
    /// It copies the digest note format (its header, or `tool({...}) -> result` lines).
    DigestNote,
    /// It writes a tool result the way a chat template shows one (`<tool_response>`).
    ToolResult,
}

/// Whether `text` forges evidence: a digest note (its header, or a line `- tool({...}) ->
/// result` where `tool` is one of `tool_names` or the arguments are a JSON object) or a tool
/// result in chat-template tags. Prose that mentions a tool, or a function signature
/// (`read_file(path) -> String`), is not forgery.
///
/// ```
/// use drivers_toolcalling::{forged_evidence, ForgedEvidence};
///
/// let note = "(Notes on the tool calls behind the next answer, kept for later turns.)\n\
///             - search_files({\"pattern\":\"ERROR\"}) -> 1 [ERROR] 2 This is an error message";
/// assert_eq!(forged_evidence(note, &[]), Some(ForgedEvidence::DigestNote));
/// assert_eq!(
///     forged_evidence("- read_file(config.ini) -> port = 80", &["read_file"]),
///     Some(ForgedEvidence::DigestNote)
/// );
/// assert_eq!(forged_evidence("The port is 8472 (from read_file).", &["read_file"]), None);
/// assert_eq!(forged_evidence("fn read_file(path: &Path) -> String", &["read_file"]), None);
/// ```
pub fn forged_evidence(text: &str, tool_names: &[&str]) -> Option<ForgedEvidence> {
    let lower = text.to_lowercase();
    if lower.contains(DIGEST_NOTE_HEADER) {
        return Some(ForgedEvidence::DigestNote);
    }
    if lower.contains("<tool_response>") || lower.contains("</tool_response>") {
        return Some(ForgedEvidence::ToolResult);
    }
    text.lines()
        .any(|line| is_note_line(line, tool_names))
        .then_some(ForgedEvidence::DigestNote)
}

/// `- name(args) -> result`: `name` an offered tool, or `args` a JSON object.
fn is_note_line(line: &str, tool_names: &[&str]) -> bool {
    let line = line.trim_start();
    let line = line
        .strip_prefix("- ")
        .or_else(|| line.strip_prefix("* "))
        .unwrap_or(line)
        .trim_start_matches('`');
    let Some((name, rest)) = line.split_once('(') else {
        return false;
    };
    let identifier = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.');
    if !identifier {
        return false;
    }
    let Some((arguments, _result)) = rest.split_once(") ->") else {
        return false;
    };
    // A signature's parameters have types (`path: &Path`); a note's are values.
    let json_arguments = arguments.trim_start().starts_with('{');
    let known_tool = tool_names.contains(&name) && !arguments.contains(": &");
    json_arguments || (known_tool && !looks_like_signature(arguments))
}

fn looks_like_signature(arguments: &str) -> bool {
    arguments.split(',').any(|parameter| {
        parameter
            .split_once(':')
            .is_some_and(|(name, ty)| !name.trim().contains('"') && !ty.trim().is_empty())
    }) && !arguments.contains('"')
}

/// Wraps a driver: a step whose reply has no tool calls and forges evidence
/// ([`forged_evidence`]) is returned without its answer, with a user message in its trace that
/// tells the model why and to call the tool (marked with [`FORGED_REPLY_KEY`]). Pair it with
/// [`ForgedEvidenceCheck`], which runs the next step. Usage, finish reason and the model's
/// reply stay on the step's record. A synthesized answer on stop that forges evidence is
/// returned empty, so the loop appends its notice instead.
pub struct RefuseForgedEvidence {
    inner: Arc<dyn AgentDriver>,
}

impl RefuseForgedEvidence {
    /// The layer around `inner`.
    pub fn new(inner: Arc<dyn AgentDriver>) -> Self {
        Self { inner }
    }
}

#[async_trait]
impl AgentDriver for RefuseForgedEvidence {
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
        if step.has_tool_calls() || !step.tool_executions().is_empty() {
            return Ok(step);
        }
        let Some(answer) = step.final_response() else {
            return Ok(step);
        };
        let names = tools.names();
        let Some(kind) = forged_evidence(&answer.text(), &names) else {
            return Ok(step);
        };
        tracing::info!(?kind, "the model wrote tool results itself; reply withheld");
        let nudge = match plan_step_after_last_call(&state.messages_for_inference()) {
            Some(next) => format!("{FORGED_REPLY_NUDGE} Do the next step of your plan now: {next}"),
            None => FORGED_REPLY_NUDGE.to_owned(),
        };
        let nudge = Message::user(nudge).with_metadata(FORGED_REPLY_KEY, true);
        let trace = step.trace_messages().appended(nudge);
        Ok(step
            .with_trace_messages(trace)
            .with_response_messages(Messages::new()))
    }

    async fn answer_without_tools(
        &self,
        input: Messages,
        context: &StepContext<'_>,
    ) -> Result<Option<InferenceResponse>, AgentError> {
        let response = self.inner.answer_without_tools(input, context).await?;
        Ok(response.map(|response| {
            if forged_evidence(response.content(), &[]).is_some() {
                tracing::info!("the synthesized answer wrote tool results itself; withheld");
                response.with_content("")
            } else {
                response
            }
        }))
    }
}

/// The next step of the numbered plan written before the execution's last call, when that
/// call did a step of it: after a plan's first step ran, the 1.5B model wrote the plan again
/// with a `<tool_response>` of its own, copying the result and the note naming the next step
/// (development task d11). The nudge then names that step too.
fn plan_step_after_last_call(conversation: &Messages) -> Option<String> {
    execution_messages(conversation)
        .find_map(|message| {
            let call = message.tool_calls().first()?;
            Some(next_step(&message.text(), call.name()))
        })
        .flatten()
}

/// The name this criterion reports in its evaluations.
const NAME: &str = "ForgedEvidenceCheck";

/// Requests another step after a step whose reply [`RefuseForgedEvidence`] withheld, so the
/// model can call the tool; forbids it with [`StopReason::Guard`] once `limit` steps in a row
/// were withheld (default 2). Otherwise it allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForgedEvidenceCheck {
    limit: usize,
}

impl Default for ForgedEvidenceCheck {
    fn default() -> Self {
        Self { limit: 2 }
    }
}

impl ForgedEvidenceCheck {
    /// Stops after two withheld replies in a row.
    pub fn new() -> Self {
        Self::default()
    }

    /// Stops after `limit` withheld replies in a row (at least 1).
    pub fn with_limit(limit: usize) -> Self {
        Self {
            limit: limit.max(1),
        }
    }
}

fn withheld(step: &AgentStep) -> bool {
    step.trace_messages()
        .iter()
        .any(|m| m.metadata().get(FORGED_REPLY_KEY).is_some())
}

impl ContinuationCriterion for ForgedEvidenceCheck {
    fn evaluate(&self, state: &AgentState) -> ContinuationEvaluation {
        let in_a_row = state
            .steps()
            .rev()
            .take_while(|step| withheld(step))
            .count();
        match in_a_row {
            0 => ContinuationEvaluation::allow(NAME),
            n if n >= self.limit => ContinuationEvaluation::forbid(NAME, StopReason::Guard)
                .with_reason(
                    "the model wrote tool results itself instead of calling a tool, again",
                ),
            _ => ContinuationEvaluation::request(NAME)
                .with_reason("the reply wrote tool results itself: ask for a real call"),
        }
    }

    fn name(&self) -> &str {
        NAME
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_32_forgeries_are_recognised() {
        let forged = "(Notes on the tool calls behind the next answer, kept for later turns.)\n\
                      - search_files({\"pattern\": \"ERROR\"}) -> 1 [ERROR] 2 This is an error";
        assert_eq!(
            forged_evidence(forged, &[]),
            Some(ForgedEvidence::DigestNote)
        );
        let lines_only = "- read_file({\"path\":\"app.log\"}) -> 10 lines\nThere are 10 errors.";
        assert_eq!(
            forged_evidence(lines_only, &[]),
            Some(ForgedEvidence::DigestNote)
        );
        let template = "<tool_response>\nport = 9000\n</tool_response>\nThe port is 9000.";
        assert_eq!(
            forged_evidence(template, &[]),
            Some(ForgedEvidence::ToolResult)
        );
    }

    #[test]
    fn ordinary_answers_are_not_forgery() {
        let tools = ["read_file", "search_files"];
        for answer in [
            "The port is 8472.",
            "I used read_file on config.ini: the port is 8472.",
            "`read_file(path: &str) -> String` reads a file.",
            "fn parse(input: &str) -> Result<Config, Error>",
            "The function `total(rows) -> f64` sums the amounts.",
            "- config.ini: port 8472\n- notes.md: release on Friday",
            "Use search_files with a pattern, e.g. search_files(\"ERROR\").",
        ] {
            assert_eq!(forged_evidence(answer, &tools), None, "{answer}");
        }
    }
}
