//! What the loop enforces on every tool call of a step, whatever the driver or the tool: a cap
//! on the output the model sees, and a limit on repeating the same call.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::signature::signature;

use messages::ToolCall;

use crate::records::step_execution::StepExecutions;
use crate::records::tool_execution::{ToolExecution, ToolFailureKind, ToolOutcome};
use crate::state::agent_state::AgentState;

/// The default cap on one tool result the model sees, in characters.
pub const DEFAULT_TOOL_OUTPUT_LIMIT: usize = 30_000;

/// The fewest characters [`tool_output_limit_for`] gives, whatever the context window.
const SMALLEST_WINDOW_OUTPUT_LIMIT: usize = 1_000;

/// The tool-output limit for a model whose context window holds `context_window` tokens: a
/// quarter of it in characters (a token holds about 2 to 4 characters, so one result takes
/// at most about an eighth of the window), at most [`DEFAULT_TOOL_OUTPUT_LIMIT`] and at least
/// 1,000. From about 120,000 tokens up it is the default; a local model served with 32,768
/// tokens gets 8,192 characters, so a log read whole cannot fill its context.
///
/// ```
/// use agents_core::tools::{tool_output_limit_for, DEFAULT_TOOL_OUTPUT_LIMIT};
///
/// assert_eq!(tool_output_limit_for(32_768), 8_192);
/// assert_eq!(tool_output_limit_for(200_000), DEFAULT_TOOL_OUTPUT_LIMIT);
/// assert_eq!(tool_output_limit_for(2_048), 1_000);
/// ```
pub fn tool_output_limit_for(context_window: u64) -> usize {
    usize::try_from(context_window / 4)
        .unwrap_or(usize::MAX)
        .clamp(SMALLEST_WINDOW_OUTPUT_LIMIT, DEFAULT_TOOL_OUTPUT_LIMIT)
}

/// The default number of times the same call (tool and arguments) may be made in one
/// execution: the third identical call is refused.
pub const DEFAULT_REPEATED_CALL_LIMIT: u32 = 3;

/// How much of an earlier result a refused repeated call quotes back.
const EARLIER_RESULT_EXCERPT: usize = 2_000;

/// The limits on the tool calls of every step (the agent's configuration; `None` = no limit).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ToolCallLimits {
    /// The most characters of one result the model sees; the rest is cut with a note.
    pub output_limit: Option<usize>,
    /// The n-th identical call (same tool, same arguments in canonical JSON) in one execution
    /// is not run; the model gets a tool error quoting the earlier result.
    pub repeated_call_limit: Option<u32>,
}

impl ToolCallLimits {
    /// The limits the facade uses: 30,000 characters, the third identical call refused.
    pub fn standard() -> Self {
        Self {
            output_limit: Some(DEFAULT_TOOL_OUTPUT_LIMIT),
            repeated_call_limit: Some(DEFAULT_REPEATED_CALL_LIMIT),
        }
    }
}

/// The calls made so far in an execution, by signature (tool name and canonical arguments).
///
/// Indexed on first use: a step whose model calls no tool (an answer) never hashes the
/// execution's earlier calls.
#[derive(Clone, Debug, Default)]
pub struct PreviousCalls {
    /// The execution's recorded steps (shared with the state, not copied).
    steps: StepExecutions,
    index: OnceLock<CallIndex>,
}

/// The calls of [`PreviousCalls`], by signature.
#[derive(Clone, Debug, Default)]
struct CallIndex {
    by_signature: HashMap<String, PreviousCall>,
    /// The signature of the execution's last call (the last one run or answered from an
    /// earlier result; refused and held calls aside).
    last: Option<String>,
}

#[derive(Clone, Debug)]
struct PreviousCall {
    count: u32,
    last_result: String,
}

impl PreviousCalls {
    /// The calls recorded in `state`'s execution.
    pub fn of(state: &AgentState) -> Self {
        Self {
            steps: state.step_executions().clone(),
            index: OnceLock::new(),
        }
    }

    /// True when the execution has made no call yet (nothing to repeat).
    pub(crate) fn is_empty(&self) -> bool {
        self.steps
            .steps()
            .all(|step| step.tool_executions().is_empty())
    }

    fn index(&self) -> &CallIndex {
        self.index.get_or_init(|| {
            let mut index = CallIndex::default();
            for step in self.steps.steps() {
                for execution in step.tool_executions() {
                    if matches!(
                        execution.failure_kind(),
                        Some(ToolFailureKind::Repeated | ToolFailureKind::AwaitingApproval)
                    ) {
                        continue;
                    }
                    index.add(execution);
                }
            }
            index
        })
    }

    /// The result of the execution's last call when `call` is that same call (tool and
    /// arguments), i.e. nothing else was called since; `None` otherwise.
    pub(crate) fn just_answered(&self, call: &ToolCall) -> Option<&str> {
        let index = self.index();
        let last = index.last.as_deref()?;
        let key = signature(call);
        if last != key {
            return None;
        }
        index.last_result_key(&key)
    }

    /// The result of the execution's last successful run of `call` (same tool, same
    /// arguments) when no other call was made since: only this same call again, refused
    /// without running (blocked or repeated) or answered from that result. `None` otherwise,
    /// or when that run failed.
    ///
    /// How a driver tells a model that writes again a call that already did its work that
    /// the work is done, instead of only why the new call did not run.
    pub fn succeeded_just_before(&self, call: &ToolCall) -> Option<String> {
        self.last_success(call, false)
    }

    /// [`PreviousCalls::succeeded_just_before`], with other calls allowed in between: the
    /// result of the execution's last run of `call` when it succeeded (later refusals of the
    /// same call aside). For a call that changed things, what it did is done whatever ran
    /// since; a read-only result may be stale once something else ran.
    pub fn succeeded_earlier(&self, call: &ToolCall) -> Option<String> {
        self.last_success(call, true)
    }

    fn last_success(&self, call: &ToolCall, others_since: bool) -> Option<String> {
        let key = signature(call);
        let executions = self
            .steps
            .steps()
            .rev()
            .flat_map(|step| step.tool_executions().iter().rev());
        for execution in executions {
            if signature(execution.call()) != key {
                if others_since {
                    continue;
                }
                return None;
            }
            match execution.failure_kind() {
                None => {
                    let result = execution.result_text();
                    // An answer from the earlier result quotes it: the original comes before.
                    if !result.starts_with(ALREADY_HAVE_IT) {
                        return Some(result);
                    }
                }
                Some(ToolFailureKind::Blocked | ToolFailureKind::Repeated) => continue,
                Some(_) => return None,
            }
        }
        None
    }

    /// The error texts of the execution's failed calls, in the order they ran (refused
    /// repeats and calls held for approval aside). A driver asked to answer on a stop
    /// compares the answer with them: the loop's last request then is a page of the
    /// results as text, where no failed result is a tool message.
    pub fn errors(&self) -> Vec<String> {
        self.steps
            .steps()
            .flat_map(|step| step.tool_executions().iter())
            .filter(|execution| {
                execution.has_error()
                    && !matches!(
                        execution.failure_kind(),
                        Some(ToolFailureKind::Repeated | ToolFailureKind::AwaitingApproval)
                    )
            })
            .map(ToolExecution::result_text)
            .collect()
    }

    /// How often `call` was made before.
    pub fn count(&self, call: &ToolCall) -> u32 {
        self.count_key(&signature(call))
    }

    /// How often the call with this [`signature`] was made before.
    pub(crate) fn count_key(&self, key: &str) -> u32 {
        self.index()
            .by_signature
            .get(key)
            .map_or(0, |previous| previous.count)
    }

    /// The result of the last call with this [`signature`], if one was made.
    pub(crate) fn last_result_key(&self, key: &str) -> Option<&str> {
        self.index().last_result_key(key)
    }
}

impl CallIndex {
    fn add(&mut self, execution: &ToolExecution) {
        let key = signature(execution.call());
        let entry = self
            .by_signature
            .entry(key.clone())
            .or_insert(PreviousCall {
                count: 0,
                last_result: String::new(),
            });
        entry.count += 1;
        let result = execution.result_text();
        // An answer from an earlier result quotes it: the result stays the original one.
        if !result.starts_with(ALREADY_HAVE_IT) {
            entry.last_result = result;
        }
        self.last = Some(key);
    }

    fn last_result_key(&self, key: &str) -> Option<&str> {
        self.by_signature
            .get(key)
            .map(|previous| previous.last_result.as_str())
    }
}

/// How an answer from an earlier result begins (and how [`PreviousCalls`] knows one).
pub(crate) const ALREADY_HAVE_IT: &str = "You already have this result:";

/// The answer to a read-only call identical to the one just answered: the earlier result,
/// and what to do with it.
pub(crate) fn already_have_it(earlier: &str) -> String {
    format!(
        "{ALREADY_HAVE_IT} the same call returned it just before, and nothing has run since, \
         so it was not run again. Answer the user's question from it now; only if it does \
         not hold the answer, make a different call for what is missing.\n\n{}",
        cut(earlier, EARLIER_RESULT_EXCERPT, None).0
    )
}

/// The refusal of the `count`+1-th identical call: a tool error quoting the earlier result
/// (`earlier`; `None` when the earlier call is in the same reply).
pub(crate) fn repeat_refusal(count: u32, earlier: Option<&str>) -> String {
    let earlier = earlier.unwrap_or("(made earlier in this same reply)");
    format!(
        "you already made this exact call {count} time(s) in this task, so it was not \
         run again. The earlier result was:\n{}\nUse that result, change your \
         approach (other arguments or another tool), or give your answer now.",
        cut(earlier, EARLIER_RESULT_EXCERPT, None).0
    )
}

/// `execution` with its result cut to `limit` characters and a note saying how much was left
/// out (and `hint`, the tool's own advice on reading the rest).
pub(crate) fn cap_output(
    execution: ToolExecution,
    limit: Option<usize>,
    hint: Option<String>,
) -> ToolExecution {
    let Some(limit) = limit else {
        return execution;
    };
    let too_long = |text: &str| text.len() > limit && text.chars().nth(limit).is_some();
    let outcome = match execution.outcome() {
        ToolOutcome::Success {
            content,
            value,
            parts,
        } if too_long(content) => ToolOutcome::Success {
            content: cut(content, limit, hint.as_deref()).0,
            value: value.clone(),
            parts: parts.clone(),
        },
        ToolOutcome::Failure { kind, message } if too_long(message) => ToolOutcome::Failure {
            kind: *kind,
            message: cut(message, limit, hint.as_deref()).0,
        },
        _ => return execution,
    };
    execution.with_outcome(outcome)
}

/// `text` cut to `limit` characters (on a character boundary) with a note, and whether it was
/// cut.
pub(crate) fn cut(text: &str, limit: usize, hint: Option<&str>) -> (String, bool) {
    let Some((end, _)) = text.char_indices().nth(limit) else {
        return (text.to_owned(), false);
    };
    let total = text.chars().count();
    let left_out = total - limit;
    let advice = hint.unwrap_or(
        "ask for a smaller part (a narrower query, or an offset/limit if the tool takes one)",
    );
    (
        format!(
            "{}\n[output cut: {left_out} of {total} characters left out; to see the rest, \
             {advice}]",
            &text[..end]
        ),
        true,
    )
}

/// The largest content part (an image as a `data:` URI, in bytes) a tool result carries to
/// the model: 5,000,000 (Anthropic's limit per image is 5 MB). A larger one is replaced by a
/// note in the text.
pub const MAX_TOOL_IMAGE_BYTES: usize = 5_000_000;

/// The most content parts one tool result carries to the model (they are sent again with
/// every later request of the conversation); the rest are left out with a note.
pub(crate) const MAX_TOOL_PARTS: usize = 8;

/// The most bytes all the content parts of one tool result carry together; the parts past it
/// are left out with a note.
pub(crate) const MAX_TOOL_PARTS_BYTES: usize = 10_000_000;

/// `content` and `parts` with every part over [`MAX_TOOL_IMAGE_BYTES`], past the
/// [`MAX_TOOL_PARTS`]-th, or past [`MAX_TOOL_PARTS_BYTES`] in all left out, and a note saying
/// so appended to the text: parts count against the tool-output bounds like text does.
pub(crate) fn bounded_parts(
    mut content: String,
    parts: Vec<messages::ContentPart>,
) -> (String, Vec<messages::ContentPart>) {
    let mut kept = Vec::with_capacity(parts.len().min(MAX_TOOL_PARTS));
    let mut total = 0usize;
    let mut dropped = 0usize;
    for part in parts {
        let size = match &part {
            messages::ContentPart::Text { text } => text.len(),
            messages::ContentPart::ImageUrl { url, .. } => url.len(),
            messages::ContentPart::File { file_data, .. } => {
                file_data.as_ref().map_or(0, String::len)
            }
            messages::ContentPart::Audio { data, .. } => data.len(),
        };
        if size > MAX_TOOL_IMAGE_BYTES {
            content.push_str(&format!(
                "\n[a content part of {size} bytes was left out: over the {MAX_TOOL_IMAGE_BYTES}-byte limit]"
            ));
        } else if kept.len() >= MAX_TOOL_PARTS || total + size > MAX_TOOL_PARTS_BYTES {
            dropped += 1;
        } else {
            total += size;
            kept.push(part);
        }
    }
    if dropped > 0 {
        content.push_str(&format!(
            "\n[{dropped} more content part(s) were left out: one result carries at most \
             {MAX_TOOL_PARTS} parts and {MAX_TOOL_PARTS_BYTES} bytes of them]"
        ));
    }
    (content, kept)
}

#[cfg(test)]
mod part_bounds {
    use super::*;
    use messages::ContentPart;

    fn image(bytes: usize) -> ContentPart {
        ContentPart::ImageUrl {
            url: format!("data:image/png;base64,{}", "A".repeat(bytes)),
            detail: None,
        }
    }

    #[test]
    fn parts_count_against_a_number_and_a_total_size() {
        let (text, kept) = bounded_parts("ok".into(), (0..20).map(|_| image(10)).collect());
        assert_eq!(kept.len(), MAX_TOOL_PARTS);
        assert!(
            text.contains("12 more content part(s) were left out"),
            "{text}"
        );
        // Three parts of 4 MB: the third passes the 10 MB total.
        let (text, kept) = bounded_parts("ok".into(), (0..3).map(|_| image(4_000_000)).collect());
        assert_eq!(kept.len(), 2);
        assert!(text.contains("1 more content part(s)"), "{text}");
        // Within both bounds nothing changes.
        let (text, kept) = bounded_parts("ok".into(), vec![image(10), image(10)]);
        assert_eq!((text.as_str(), kept.len()), ("ok", 2));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_same_call_with_its_arguments_in_another_order_has_one_signature() {
        let a = ToolCall::new(
            "1",
            "search",
            json!({"q": "x", "opts": {"b": 1, "a": [2, {"d": 1, "c": 0}]}}),
        );
        let b = ToolCall::new(
            "2",
            "search",
            json!({"opts": {"a": [2, {"c": 0, "d": 1}], "b": 1}, "q": "x"}),
        );
        assert_eq!(signature(&a), signature(&b));
        let other = ToolCall::new("3", "search", json!({"q": "y"}));
        assert_ne!(signature(&a), signature(&other));
        let renamed = ToolCall::new(
            "4",
            "find",
            json!({"q": "x", "opts": {"b": 1, "a": [2, {"d": 1, "c": 0}]}}),
        );
        assert_ne!(signature(&a), signature(&renamed));
    }

    fn state_with_calls(steps: Vec<Vec<ToolExecution>>) -> AgentState {
        let now = chrono::Utc::now();
        let state = AgentState::new().started(crate::state::agent_state::Execution::new(
            "execution".into(),
            now,
        ));
        steps.into_iter().fold(state, |state, executions| {
            let step = crate::records::agent_step::AgentStep::new(messages::Messages::new())
                .with_tool_executions(executions.into());
            let number = state.next_step_number();
            let pending =
                crate::records::outcome::ContinuationOutcome::from_evaluations(Vec::new());
            state.recorded(crate::records::step_execution::StepExecution::new(
                step, pending, now, now, number,
            ))
        })
    }

    #[test]
    fn a_call_succeeded_just_before_only_when_nothing_else_ran_since_and_earlier_otherwise() {
        let now = chrono::Utc::now();
        let call = |id: &str, path: &str| ToolCall::new(id, "write", json!({"path": path}));
        let ok = |c: ToolCall| ToolExecution::success(c, "wrote 3 bytes", now, now);
        let failed = |c: ToolCall, kind| ToolExecution::failure(c, kind, "no", now, now);
        let asked = call("9", "a");

        // Ran and succeeded; then the same call twice, refused for how it was written.
        let state = state_with_calls(vec![
            vec![ok(call("1", "a"))],
            vec![failed(call("2", "a"), ToolFailureKind::Blocked)],
            vec![failed(call("3", "a"), ToolFailureKind::Repeated)],
            vec![ToolExecution::success(
                call("4", "a"),
                already_have_it("wrote 3 bytes"),
                now,
                now,
            )],
        ]);
        assert_eq!(
            PreviousCalls::of(&state)
                .succeeded_just_before(&asked)
                .as_deref(),
            Some("wrote 3 bytes")
        );
        // Another call since: not "just before", but earlier.
        let state = state_with_calls(vec![
            vec![ok(call("1", "a"))],
            vec![ok(call("2", "b"))],
            vec![failed(call("3", "a"), ToolFailureKind::Blocked)],
        ]);
        let previous = PreviousCalls::of(&state);
        assert_eq!(previous.succeeded_just_before(&asked), None);
        assert_eq!(
            previous.succeeded_earlier(&asked).as_deref(),
            Some("wrote 3 bytes")
        );
        assert_eq!(previous.succeeded_earlier(&call("9", "c")), None);
        // Its last run failed for real: nothing was done.
        let state = state_with_calls(vec![vec![
            ok(call("1", "a")),
            failed(call("2", "a"), ToolFailureKind::Failed),
        ]]);
        assert_eq!(
            PreviousCalls::of(&state).succeeded_just_before(&asked),
            None
        );
        assert_eq!(PreviousCalls::of(&state).succeeded_earlier(&asked), None);
        // Never made.
        assert_eq!(
            PreviousCalls::of(&AgentState::new()).succeeded_just_before(&asked),
            None
        );
    }

    #[test]
    fn cutting_respects_exact_boundaries_and_multibyte_characters() {
        assert_eq!(cut("abc", 3, None), ("abc".to_owned(), false));
        let (text, was_cut) = cut("abcd", 3, None);
        assert!(was_cut);
        assert!(
            text.starts_with("abc\n[output cut: 1 of 4 characters left out"),
            "{text}"
        );
        // Multi-byte: 5 characters, 15 bytes; the cut never splits one.
        let (text, was_cut) = cut("ééééé", 2, Some("call again with offset=2"));
        assert!(was_cut);
        assert!(text.starts_with("éé\n[output cut: 3 of 5 characters left out; to see the rest, call again with offset=2]"), "{text}");
        let (text, _) = cut("日本語テキスト", 7, None);
        assert_eq!(text, "日本語テキスト");
    }
}
