//! `AnswerOnStop`: every execution ends with an answer in the conversation.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use messages::{excerpt, Message, Messages, Role};

use crate::records::agent_step::tool_error_line;
use crate::records::answer_on_stop::{
    AnswerOnStop, ANSWERED_BY_KEY, INCOMPLETE_KEY, STOP_REASON_KEY,
};
use crate::records::decision::StopReason;
use crate::records::step_error::StepError;
use crate::records::tool_effects::ToolEffects;
use crate::records::tool_execution::ToolFailureKind;
use crate::state::agent_state::AgentState;
use crate::tools::limits::{PreviousCalls, ALREADY_HAVE_IT};
use crate::tools::registry::Tools;

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::agent::agent::Agent;
use crate::agent::step_options::StepOptions;
use crate::agent::terminal::Terminal;
use crate::events::agent_event::{AgentEvent, EventSource};
use crate::records::cost::RunCost;

impl AnswerOnStop {
    /// The snake_case name (as in YAML definitions and the CLI).
    pub fn as_str(self) -> &'static str {
        match self {
            AnswerOnStop::Synthesize => "synthesize",
            AnswerOnStop::Notice => "notice",
            AnswerOnStop::Nothing => "nothing",
        }
    }
}

impl std::str::FromStr for AnswerOnStop {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_ascii_lowercase().as_str() {
            "synthesize" => Ok(AnswerOnStop::Synthesize),
            "notice" => Ok(AnswerOnStop::Notice),
            "nothing" => Ok(AnswerOnStop::Nothing),
            other => Err(format!(
                "unknown answer-on-stop mode `{other}`: use synthesize, notice or nothing"
            )),
        }
    }
}

impl std::fmt::Display for AnswerOnStop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `message` marked as the answer appended on a stop for `reason`, made by `path`.
pub(crate) fn marked(message: Message, reason: StopReason, path: AnswerOnStop) -> Message {
    message
        .with_metadata(INCOMPLETE_KEY, true)
        .with_metadata(STOP_REASON_KEY, reason.as_str())
        .with_metadata(ANSWERED_BY_KEY, path.as_str())
}

/// The notice: not finished, why, what changed, what was done.
pub(crate) fn notice(state: &AgentState, tools: &Tools, reason: StopReason) -> Message {
    let mut text = format!("I could not finish this task: {}.", reason.describe());
    if let Some(error) = last_error(state) {
        let _ = write!(text, " The last error was: {}.", excerpt(&error, 300));
    }
    let changes = changes_made(state, tools);
    if !changes.is_empty() {
        let changed: Vec<String> = changes
            .iter()
            .map(|change| format!("{} ({})", change.result, change.name))
            .collect();
        let _ = write!(text, " What changed: {}.", changed.join("; "));
    }
    let mut calls: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for step in state.steps() {
        for execution in step.tool_executions() {
            let entry = calls.entry(execution.name()).or_insert((0, 0));
            entry.0 += 1;
            let failed = execution.has_error()
                && execution.failure_kind() != Some(ToolFailureKind::Repeated);
            entry.1 += usize::from(failed);
        }
    }
    if calls.is_empty() {
        text.push_str(" I did not call any tools.");
    } else {
        let done: Vec<String> = calls
            .iter()
            .map(|(name, (count, failed))| match (count, failed) {
                (1, 0) => (*name).to_owned(),
                (count, 0) => format!("{name} ({count} calls)"),
                (count, failed) => format!("{name} ({count} calls, {failed} failed)"),
            })
            .collect();
        let _ = write!(text, " What I did: {}.", done.join(", "));
    }
    text.push_str(" Ask me to continue, or rephrase the request.");
    marked(Message::assistant(text), reason, AnswerOnStop::Notice)
}

/// What the model is given to answer from on a stop: what it saw at the last step, that
/// step's tool calls and results, what the execution's calls changed, and an instruction.
pub(crate) fn synthesis_input(
    state: &AgentState,
    tools: &Tools,
    prompt: Messages,
    reason: StopReason,
) -> Messages {
    let seen = match state.current_step() {
        Some(step) if !step.input_messages().is_empty() => {
            step.input_messages().concat(step.trace_messages())
        }
        _ => prompt,
    };
    let mut instruction = format!("You have to stop now: {}.", stop_reason_told(state, reason));
    let changes = changes_made(state, tools);
    if !changes.is_empty() {
        let listed: Vec<String> = changes
            .iter()
            .map(|change| format!("- {}({}): {}", change.name, change.arguments, change.result))
            .collect();
        let _ = write!(
            instruction,
            " These calls of yours ran and succeeded, so their changes are made:\n{}",
            listed.join("\n")
        );
    }
    // The request is the last user message the execution's first step saw: later steps'
    // inputs may hold user messages of the trace (ReAct's observations).
    let first_input = state
        .steps()
        .next()
        .map(|step| step.input_messages())
        .filter(|input| !input.is_empty());
    match request_of(first_input.unwrap_or(&seen)) {
        Some(request) => {
            let _ = write!(
                instruction,
                " Do not call any tools. Using only what you found above, answer as well as \
                 you can, and say briefly what is still missing. My request was: {}",
                excerpt(&request, MAX_REQUEST_QUOTED)
            );
        }
        None => instruction.push_str(
            " Do not call any tools. Using only what you found above, answer my request as \
             well as you can, and say briefly what is still missing.",
        ),
    }
    seen.appended(Message::user(instruction))
}

/// Why the run stopped, as the model is told: [`StopReason::for_the_model`], except that a
/// stop on the error of a reply the driver did not take as the answer
/// ([`StepError::is_not_an_answer`]) says so. Told "an error stopped the run" after its
/// listing had come back, the 1.5B model answered that the directory did not exist (issue 36,
/// development task d6).
fn stop_reason_told(state: &AgentState, reason: StopReason) -> &'static str {
    let last_reply_refused = state
        .steps()
        .last()
        .is_some_and(|step| step.errors().iter().any(StepError::is_not_an_answer));
    if reason == StopReason::Error && last_reply_refused {
        "your last reply was not an answer"
    } else {
        reason.for_the_model()
    }
}

/// What the model is given on a stop when it did not answer [`synthesis_input`] (it wrote a
/// call, or nothing): a clean page. The conversation before the request, without calls and
/// their results, then one user message with the request and what the execution's calls
/// returned (each distinct call once, the latest [`MAX_RESULTS_ON_PAGE`], each cut to
/// [`MAX_RESULT_ON_PAGE`] characters). `None` when no call returned anything (the page would
/// add nothing) or there is no request.
///
/// The 0.5B model read `config.ini` to the step limit, and asked to answer with its calls in
/// view wrote the call again; given the request and the file's lines on a page, it answered
/// "The port configured in config.ini is 8472." (issue 36).
pub(crate) fn results_page(
    state: &AgentState,
    prompt: Messages,
    reason: StopReason,
) -> Option<ResultsPage> {
    let before = state
        .steps()
        .next()
        .map(|step| step.input_messages().clone())
        .filter(|input| !input.is_empty())
        .unwrap_or(prompt);
    let request = request_of(&before)?;
    let results = results_of(state);
    if results.is_empty() {
        return None;
    }
    // The conversation before the request: user messages and answers, no calls.
    let mut history: Vec<Message> = before
        .iter()
        .filter(|m| {
            m.role() == Role::User || (m.role() == Role::Assistant && m.tool_calls().is_empty())
        })
        .cloned()
        .collect();
    if let Some(at) = history.iter().rposition(|m| m.role() == Role::User) {
        history.truncate(at);
    }
    let mut page = format!(
        "You have to stop now: {}. {REQUEST_QUOTE} {}\n\nWhat your tool calls returned:",
        stop_reason_told(state, reason),
        excerpt(&request, MAX_REQUEST_QUOTED)
    );
    for (_, result) in &results {
        let _ = write!(page, "\n\n{result}");
    }
    page.push_str(
        "\n\nAnswer my request from these results, in plain text and briefly. Do not call \
         any tools. If the results do not hold the answer, say what is missing.",
    );
    history.push(Message::user(page));
    Some(ResultsPage {
        messages: Messages::from(history),
        calls: results.into_iter().map(|(call, _)| call).collect(),
    })
}

/// The clean page of [`results_page`], and the calls it lists as it lists them
/// (`edit_file {"path":"greeting.txt",...}`).
pub(crate) struct ResultsPage {
    /// What the model is sent (before the agent's cached context).
    pub(crate) messages: Messages,
    calls: Vec<String>,
}

impl ResultsPage {
    /// Whether `reply` copies the page instead of answering from it: it quotes a call as the
    /// page lists it. The 0.5B model answered "The tool call returned:" and the page's list,
    /// a failed call's error among it (development task d4).
    pub(crate) fn copied_by(&self, reply: &str) -> bool {
        self.calls.iter().any(|call| reply.contains(call.as_str()))
    }
}

/// How the synthesis instructions quote the request (both say "My request was:"); a reply
/// holding it copies them (the 0.5B model answered "The error stopped the run. My request
/// was: Delete the line ...").
const REQUEST_QUOTE: &str = "My request was:";

/// What the execution's calls returned, for [`results_page`]: each call as listed
/// (`name {arguments}`), and its entry: the call, `:` and the result (or `failed:` and the
/// error), each distinct call once, at its latest result, in the order the calls were first
/// made; refused repeats, calls waiting for approval and answers from an earlier result left
/// out.
fn results_of(state: &AgentState) -> Vec<(String, String)> {
    let mut seen: Vec<(String, String)> = Vec::new();
    let mut results: Vec<(String, String)> = Vec::new();
    for execution in state.steps().flat_map(|step| step.tool_executions().iter()) {
        if matches!(
            execution.failure_kind(),
            Some(ToolFailureKind::Repeated | ToolFailureKind::AwaitingApproval)
        ) {
            continue;
        }
        let text = execution.result_text();
        if text.starts_with(ALREADY_HAVE_IT) {
            continue;
        }
        let call = format!("{} {}", execution.name(), execution.arguments());
        let line = if execution.has_error() {
            format!("{call} failed:\n{}", excerpt(&text, MAX_RESULT_ON_PAGE))
        } else {
            format!("{call}:\n{}", excerpt(&text, MAX_RESULT_ON_PAGE))
        };
        let key = (
            execution.name().to_owned(),
            execution.arguments().to_string(),
        );
        match seen.iter().position(|k| *k == key) {
            Some(at) => results[at] = (call, line),
            None => {
                seen.push(key);
                results.push((call, line));
            }
        }
    }
    let skip = results.len().saturating_sub(MAX_RESULTS_ON_PAGE);
    results.split_off(skip)
}

/// The most call results [`results_page`] holds (the latest).
const MAX_RESULTS_ON_PAGE: usize = 6;

/// The most characters of one result on the [`results_page`].
const MAX_RESULT_ON_PAGE: usize = 1_500;

/// The request the stopped execution was answering: the last user message of `before`, what
/// the model saw before the execution's first step. The synthesis instruction ends with
/// it: told only to "answer my request", the 1.5B model answered an earlier request of the
/// conversation, or apologized that it had no information, with the answer in the tool result
/// it had read; quoting the request, it answered from that result (issue 32's 32-turn
/// conversation: four turns replayed as stops, three answered from the file read).
fn request_of(before: &Messages) -> Option<String> {
    before
        .iter()
        .rev()
        .find(|message| message.role() == Role::User)
        .map(Message::text)
        .filter(|text| !text.trim().is_empty())
}

/// The most characters of the request the synthesis instruction quotes.
const MAX_REQUEST_QUOTED: usize = 1_000;

/// The last error of the stopped step: the step's own, or a tool's, leaving out calls
/// refused as repeats (the stop reason says so when they stopped the run, and a repeat of a
/// call that did its work is no failure).
fn last_error(state: &AgentState) -> Option<String> {
    let step = state.current_step()?;
    if let Some(error) = step.errors().last() {
        return Some(error.message.clone());
    }
    step.tool_executions()
        .errors()
        .filter(|execution| execution.failure_kind() != Some(ToolFailureKind::Repeated))
        .last()
        .map(tool_error_line)
}

/// A successful call to a tool that can change things, as the answer on stop reports it.
#[derive(PartialEq)]
struct Change {
    name: String,
    /// Its arguments as JSON, cut to 200 characters.
    arguments: String,
    /// Its result's first line, cut to 200 characters.
    result: String,
}

/// The execution's successful calls to tools that are not read-only, in order, each once (at
/// most [`MAX_CHANGES_LISTED`]). A model stopped after a change often answers as if nothing
/// had happened ("tell me the file's name" after the file was renamed); the synthesis request
/// and the notice say what its calls did, from the run's records.
fn changes_made(state: &AgentState, tools: &Tools) -> Vec<Change> {
    let mut changes: Vec<Change> = Vec::new();
    for execution in state.steps().flat_map(|step| step.tool_executions().iter()) {
        if execution.has_error() || tools.effects(execution.name()) == ToolEffects::ReadOnly {
            continue;
        }
        let result = execution.result_text();
        let change = Change {
            name: execution.name().to_owned(),
            arguments: excerpt(&execution.arguments().to_string(), 200).into_owned(),
            result: excerpt(result.lines().next().unwrap_or_default(), 200).into_owned(),
        };
        if !changes.contains(&change) {
            changes.push(change);
        }
        if changes.len() == MAX_CHANGES_LISTED {
            break;
        }
    }
    changes
}

/// The most changes the answer on stop lists.
const MAX_CHANGES_LISTED: usize = 20;

impl Agent {
    /// Appends an answer when the execution stops without one: synthesized by the model
    /// without tools, or a notice (always a notice on cancellation).
    pub(super) async fn answer_on_stop(
        &self,
        state: AgentState,
        reason: StopReason,
        token: &CancellationToken,
    ) -> AgentState {
        let mode = if reason == StopReason::UserRequested {
            AnswerOnStop::Notice
        } else {
            self.answer_on_stop
        };
        let answered = state
            .current_step()
            .is_some_and(|step| step.final_response().is_some());
        if mode == AnswerOnStop::Nothing || answered {
            return state;
        }
        let mut path = AnswerOnStop::Notice;
        let mut answer = None;
        let mut usage = inference::Usage::default();
        let mut cost = RunCost::zero();
        if mode == AnswerOnStop::Synthesize {
            let options = StepOptions::new().with_cancellation(token.clone());
            // The driver is told the execution's calls (it compares the answer with their
            // errors, which the page of results holds only as text).
            let context = Terminal::new(self, &options).context_with(
                Arc::clone(&self.cached_context),
                Arc::new(PreviousCalls::of(&state)),
            );
            // First with what the model saw; if it does not answer, once more from a clean
            // page of its calls' results.
            let mut page: Option<ResultsPage> = None;
            for first in [true, false] {
                let input = if first {
                    synthesis_input(&state, &self.tools, context.prompt_messages(&state), reason)
                } else {
                    match results_page(&state, context.prompt_messages(&state), reason) {
                        Some(results) => page.insert(results).messages.clone(),
                        None => break,
                    }
                };
                let input = self.cached_context.messages.concat(&input);
                match self.driver.answer_without_tools(input, &context).await {
                    Ok(Some(response)) => {
                        // An empty reply is no answer (a notice follows), but its tokens count.
                        usage += response.usage();
                        cost += RunCost::of_response(&response, &self.telemetry.catalog);
                        let reply = response.content().trim();
                        // A reply that copies the instructions or the page answers nothing.
                        let copied = reply.contains(REQUEST_QUOTE)
                            || page.as_ref().is_some_and(|page| page.copied_by(reply));
                        if copied {
                            tracing::info!(
                                target: "agents_core::agent",
                                "asked to answer on stop, the model copied what it was given"
                            );
                        } else if !reply.is_empty() {
                            path = AnswerOnStop::Synthesize;
                            answer = Some(marked(
                                Message::assistant(reply),
                                reason,
                                AnswerOnStop::Synthesize,
                            ));
                            break;
                        }
                        if first {
                            tracing::info!(
                                target: "agents_core::agent",
                                "asked to answer on stop, the model did not; asking once more \
                                 from its calls' results alone"
                            );
                        }
                    }
                    Ok(None) => break,
                    Err(error) => {
                        tracing::warn!(
                            target: "agents_core::agent",
                            error = %crate::records::agent_error::error_chain(&error),
                            "synthesizing an answer on stop failed; appending a notice"
                        );
                        break;
                    }
                }
            }
        }
        let answer = answer.unwrap_or_else(|| notice(&state, &self.tools, reason));
        let store = state
            .store()
            .section(crate::state::sections::DEFAULT_SECTION)
            .append(answer);
        let state = state.with_store(store).with_added_usage(usage, cost);
        self.events.emit_with(|| AgentEvent::AnsweredOnStop {
            source: EventSource::execution(&state),
            stop_reason: reason,
            path,
        });
        state
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_and_print_in_snake_case() {
        for mode in [
            AnswerOnStop::Synthesize,
            AnswerOnStop::Notice,
            AnswerOnStop::Nothing,
        ] {
            assert_eq!(mode.as_str().parse::<AnswerOnStop>(), Ok(mode));
            assert_eq!(
                serde_json::to_value(mode).unwrap(),
                serde_json::json!(mode.as_str())
            );
        }
        assert!("always"
            .parse::<AnswerOnStop>()
            .unwrap_err()
            .contains("synthesize"));
    }
}
