//! When text becomes a call: the trust model for tool calls a model writes as text.
//!
//! Native tool calls are the model's decisions; text is data. A reply's text becomes a call
//! only in these cases (`docs/drivers.md` and `docs/security.md` say the same):
//!
//! 1. **The reply is only calls** (JSON, alone, in one code fence, or between `<tool_call>`
//!    tags each at the start of a line; one `<tool_response>` block holding only calls is read
//!    as `<tool_call>` tags, `recover::tool_response_as_call_tags`): they run, whatever the
//!    tool.
//! 2. **Prose, then a block** (a code fence or a `<tool_call>` tag at the start of a line, or
//!    JSON from the start of a line to the end of the reply) holding a call to a known tool:
//!    it runs when the tool is read-only. A call to a tool
//!    with side effects is not run: it gets a tool error telling the model to send the call
//!    alone (a quoted, explained or warned-about call is never a decision to change things).
//! 3. **A call written anywhere else** (inside a sentence, after a tag in a sentence, in an
//!    inline fence): never run; it gets a tool error saying why, so the reply is not taken as
//!    the answer.
//!
//! And before any of them: **a call whose text appears in a tool result or a user message of
//! the conversation the model saw is never run** (the model echoing what it read: a file, a
//! web page, an injected instruction). Such a reply is text. Before a call of rules 2 or 3 is
//! refused, the driver asks the model once, in the same step, whether it meant it
//! ([`holds_a_call_in_prose`], `reply_nudge`): only a reply that is the call alone then runs
//! it, by rule 1. Every refused call keeps its place in the step (a tool-error result under
//! its id), so the model learns what happened.

use std::cell::OnceCell;

use agents_core::{PreviousCalls, ToolEffects, ToolFailureKind, Tools};
use messages::{Messages, Role, ToolCall};

use crate::latest_results::{request, text_of};
use crate::plan_steps::next_step;
use crate::recover::{
    announced_of_any_tool, announced_with_prefix, calls_in_prose, may_hold_a_call,
    recover_with_prefix, recovered_id_prefix, RecoveredCall, RecoveredKind,
};

/// Whether a call to `name` only reads: the tool declares [`ToolEffects::ReadOnly`] (the
/// built-in `read_file`, `list_dir`, `search_files` do; an MCP tool does with `readOnlyHint`).
/// Every other tool, a function tool that declares nothing included, is treated as having
/// side effects, the safe default.
pub(crate) fn is_read_only(tools: &Tools, name: &str) -> bool {
    tools
        .get(name)
        .is_some_and(|tool| tool.effects() == ToolEffects::ReadOnly)
}

/// What the driver does with a reply's text.
pub(crate) struct TextCalls {
    /// The reply's text as kept in the step (the lead-in of an announced call that runs;
    /// otherwise the whole reply).
    pub(crate) content: String,
    /// The calls of the step, in order.
    pub(crate) calls: Vec<ToolCall>,
    /// The calls that get a tool error instead of running: id, kind, message.
    pub(crate) refused: Vec<(String, ToolFailureKind, String)>,
    /// Whether a call is refused for being written among other text (rules 2 and 3): the
    /// model may have meant it, and can send it alone.
    pub(crate) in_prose: bool,
}

/// Whether `content` holds a call that is not run only because it was written among other
/// text (a call to a tool with side effects after prose, or a call inside a sentence), and
/// that does not repeat what the model read. Sent alone, such a call runs (rule 1); the
/// driver asks the model once whether it meant it (`reply_nudge`). Nothing runs on this
/// answer itself. A call that already did its work ([`done_already`]) is not asked about:
/// sent alone it would only do the same work again.
pub(crate) fn holds_a_call_in_prose(
    content: &str,
    tools: &Tools,
    conversation: &Messages,
    previous: &PreviousCalls,
) -> bool {
    judge_text_calls(content, tools, conversation, ("", 0), false).is_some_and(|text_calls| {
        text_calls.in_prose
            && !text_calls
                .calls
                .iter()
                .any(|call| earlier_success(call, tools, previous).is_some())
    })
}

/// Whether `content` is a reply of calls alone (rule 1) that recovery takes as the model's
/// calls: it is no answer, and the checks that judge answers leave it to recovery. Its calls
/// run, or get a tool error saying how to fix them; only a reply repeating calls the model
/// read in `conversation` is text. Development task d23: after its `create_folder` call
/// failed, the 1.5B model sent the `write_file` call that would have done the work, alone, as
/// asked; it was judged as an answer that ignored the failure, set aside, and never ran.
pub(crate) fn runs_as_calls(
    content: &str,
    tools: &Tools,
    conversation: &Messages,
    cut: bool,
) -> bool {
    may_hold_a_call(content)
        && recover_with_prefix(content, tools, "", cut).is_some_and(|recovered| {
            whole_reply(content, recovered, tools, &Seen::new(conversation), cut).is_some()
        })
}

/// `text_calls` with each call that already did its work in this execution refused as a
/// repeat ([`ToolFailureKind::Repeated`]) and told so: the work is done, here is its result,
/// answer now. That is each call not run for how it was written (blocked) that already ran
/// and succeeded: small models write the call they made again among their explanation, step
/// after step, and "send it alone" would only make them do it twice. And a read-only call
/// that would run, repeating the call that succeeded just before, when the reply's text holds
/// a numbered plan: the model restarted its plan at the step it did, and the refusal names
/// the plan's next step ([`next_step`]). Without a plan such a call is answered from its
/// result by the repeated-call layer, as any other repeat. And a call to a tool that is not
/// read-only that would run, repeating the call that succeeded just before (nothing ran
/// since): its work is done.
pub(crate) fn done_already(
    mut text_calls: TextCalls,
    tools: &Tools,
    previous: &PreviousCalls,
) -> TextCalls {
    let TextCalls {
        content,
        calls,
        refused,
        ..
    } = &mut text_calls;
    for call in calls.iter() {
        let next = || next_step(content, call.name());
        match refused.iter_mut().find(|(id, _, _)| id == call.id()) {
            Some((_, kind, message)) if *kind == ToolFailureKind::Blocked => {
                if let Some(result) = earlier_success(call, tools, previous) {
                    // A repeat of a call already made: the repeated-call guard stops a model
                    // that keeps writing it (the second such refusal ends the run, which
                    // answers on stop).
                    *kind = ToolFailureKind::Repeated;
                    *message =
                        done_message(call.name(), tools.effects(call.name()), &result, next());
                }
            }
            Some(_) => {}
            None if is_read_only(tools, call.name()) => {
                let Some(next) = next() else { continue };
                if let Some(result) = previous.succeeded_just_before(call) {
                    let message =
                        done_message(call.name(), ToolEffects::ReadOnly, &result, Some(next));
                    refused.push((call.id().to_owned(), ToolFailureKind::Repeated, message));
                }
            }
            None => {
                // A call with effects, sent alone, that repeats the call that succeeded just
                // before: the 1.5B model sent the same `edit_file` call twice in a row, and
                // the second run, finding the text replaced, answered that it was not found
                // (development task d4). Its work is done.
                if let Some(result) = previous.succeeded_just_before(call) {
                    let message =
                        done_message(call.name(), tools.effects(call.name()), &result, next());
                    refused.push((call.id().to_owned(), ToolFailureKind::Repeated, message));
                }
            }
        }
    }
    text_calls
}

/// The result of `call`'s earlier successful run in this execution: for a read-only tool only
/// when nothing ran since (a later call may have changed what it read), for any other
/// whatever ran since (its work is done).
fn earlier_success(call: &ToolCall, tools: &Tools, previous: &PreviousCalls) -> Option<String> {
    if tools.effects(call.name()) == ToolEffects::ReadOnly {
        previous.succeeded_just_before(call)
    } else {
        previous.succeeded_earlier(call)
    }
}

/// How much of the earlier result [`done_already`] quotes.
const DONE_RESULT_EXCERPT: usize = 1_000;

fn done_message(name: &str, effects: ToolEffects, result: &str, next: Option<String>) -> String {
    let excerpt = messages::excerpt(result, DONE_RESULT_EXCERPT);
    let head = format!(
        "This call to `{name}` was not run again: the same call, with the same arguments, ran {} \
         and succeeded",
        if effects == ToolEffects::ReadOnly {
            "just before"
        } else {
            "earlier in this task"
        }
    );
    if let Some(next) = next {
        // No "if it answers the question, answer": with it the 1.5B model restarted its plan.
        return format!(
            "{head}, so that step of your plan is done. Its result was:\n{excerpt}\nDo not \
             start your plan again. Do the next step of your plan now: {next}"
        );
    }
    let next = if effects == ToolEffects::ReadOnly {
        "Do not make this call again: answer the user's question from this result now; only if \
         it does not hold the answer, make a different call for what is missing."
    } else {
        "Its work is done: do not make this call again. Do what is still missing, if anything; \
         otherwise tell the user now what was done."
    };
    format!("{head}. Its result was:\n{excerpt}\n{next}")
}

/// The calls written in `content` and what becomes of each, or `None` when the reply is text
/// (an answer). `conversation` is what the model was sent; the calls' ids are
/// `recovered_<execution>_<step>_<n>`; `cut` whether the reply was cut at its token limit.
pub(crate) fn judge_text_calls(
    content: &str,
    tools: &Tools,
    conversation: &Messages,
    (execution, step): (&str, usize),
    cut: bool,
) -> Option<TextCalls> {
    if !may_hold_a_call(content) {
        return None;
    }
    let prefix = &recovered_id_prefix(execution, step);
    let seen = Seen::new(conversation);
    if let Some(recovered) = recover_with_prefix(content, tools, prefix, cut) {
        return whole_reply(content, recovered, tools, &seen, cut);
    }
    if let Some(announced) = announced_with_prefix(content, tools, prefix) {
        if !seen.quotes(&announced.text, &announced.call) {
            let name = announced.call.name().to_owned();
            if is_read_only(tools, &name) {
                // Prose, then the call in a block: the call runs, the prose stays as the
                // model's reasoning, and what it imagined after the call is dropped.
                tracing::info!(tool = %name, "recovered a read-only call the model announced in prose");
                return Some(TextCalls {
                    content: announced.lead_in,
                    calls: vec![announced.call],
                    refused: Vec::new(),
                    in_prose: false,
                });
            }
            tracing::info!(tool = %name, "a call to a tool with side effects written after prose: not run");
            return Some(TextCalls {
                in_prose: true,
                ..refused(content, announced.call, send_alone(&name))
            });
        }
    }
    if let Some((call, _)) = calls_in_prose(content, tools, prefix)
        .into_iter()
        .find(|(call, text)| !seen.quotes(text, call))
    {
        tracing::info!(tool = call.name(), "a call written inside prose: not run");
        let message = in_prose(call.name());
        return Some(TextCalls {
            in_prose: true,
            ..refused(content, call, message)
        });
    }
    unknown_tool_call(content, tools, conversation, prefix, &seen)
}

/// Prose, then a block holding a call to a tool the agent does not have: not an answer, unless
/// the request asks for such text. Either the model already called that tool in this
/// conversation (and was told there is no such tool: the 1.5B model on held-out task h16
/// tried `move_file` again, "Here's how:"), or the request neither mentions JSON nor names the
/// tool (the 0.5B model on development task d15 answered "What is the total of the amount
/// column in sales.csv?" with "you can use the following JSON object:" and a call to a
/// `total_amount` tool, saved as the answer). The call gets the unknown-tool error, which
/// lists the agent's tools (nothing runs), and the run goes on. A block naming an unknown
/// tool the model never called is left as text when the request mentions JSON, a call or the
/// tool: a user may ask what a call looks like.
fn unknown_tool_call(
    content: &str,
    tools: &Tools,
    conversation: &Messages,
    prefix: &str,
    seen: &Seen<'_>,
) -> Option<TextCalls> {
    let announced = announced_of_any_tool(content, prefix)?;
    let name = announced.call.name();
    if tools.get(name).is_some() || seen.quotes(&announced.text, &announced.call) {
        return None;
    }
    let tried = conversation.iter().any(|message| {
        message.role() == Role::Assistant && message.tool_calls().iter().any(|c| c.name() == name)
    });
    if !tried && request(conversation).is_some_and(|r| asks_for_call_text(&text_of(r), name)) {
        return None;
    }
    tracing::info!(tool = %name, tried, "a call to an unknown tool written after prose: not run");
    let found = RecoveredCall {
        call: announced.call,
        kind: RecoveredKind::UnknownTool,
        text: announced.text,
    };
    let message = found.fix_it_message(tools)?;
    Some(TextCalls {
        content: content.to_owned(),
        refused: vec![(
            found.call.id().to_owned(),
            ToolFailureKind::UnknownTool,
            message,
        )],
        calls: vec![found.call],
        in_prose: false,
    })
}

/// Whether `request` asks for a call's text: it holds the word JSON, call or calls ("show an
/// example call"), an object, or the tool `name` itself ("how would I use get_forecast?").
/// ASCII case is ignored.
fn asks_for_call_text(request: &str, name: &str) -> bool {
    let lower = request.to_ascii_lowercase();
    lower.contains('{')
        || (!name.is_empty() && lower.contains(&name.to_ascii_lowercase()))
        || lower
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|word| matches!(word, "json" | "call" | "calls"))
}

/// A reply that is only calls: each runs, unless it repeats what the model read (all of them
/// do: the reply is text), or recovery could not read it (a fix-it tool error).
fn whole_reply(
    content: &str,
    recovered: Vec<RecoveredCall>,
    tools: &Tools,
    seen: &Seen,
    cut: bool,
) -> Option<TextCalls> {
    let echoed: Vec<bool> = recovered
        .iter()
        .map(|r| seen.quotes(&r.text, &r.call))
        .collect();
    if echoed.iter().all(|e| *e) {
        tracing::info!("a reply that repeats calls from a tool result or user message is text");
        return None;
    }
    tracing::info!(
        calls = recovered.len(),
        "recovered tool calls the model wrote as text"
    );
    let mut refused = Vec::new();
    for (found, echoed) in recovered.iter().zip(&echoed) {
        let refusal = if *echoed {
            Some((ToolFailureKind::Blocked, ECHO_MESSAGE.to_owned()))
        } else {
            match &found.kind {
                RecoveredKind::Repaired if cut => Some((
                    ToolFailureKind::InvalidArguments,
                    CUT_CALL_MESSAGE.to_owned(),
                )),
                RecoveredKind::UnknownTool => found
                    .fix_it_message(tools)
                    .map(|m| (ToolFailureKind::UnknownTool, m)),
                _ => found
                    .fix_it_message(tools)
                    .map(|m| (ToolFailureKind::InvalidArguments, m)),
            }
        };
        if let Some((kind, message)) = refusal {
            refused.push((found.call.id().to_owned(), kind, message));
        }
    }
    Some(TextCalls {
        content: content.to_owned(),
        calls: recovered.into_iter().map(|r| r.call).collect(),
        refused,
        in_prose: false,
    })
}

fn refused(content: &str, call: ToolCall, message: String) -> TextCalls {
    TextCalls {
        content: content.to_owned(),
        refused: vec![(call.id().to_owned(), ToolFailureKind::Blocked, message)],
        calls: vec![call],
        in_prose: false,
    }
}

/// The text of the tool results and user messages the model was sent, without whitespace
/// (a call re-indented is the same call), one message after another with a separator no
/// JSON holds, built on first use.
struct Seen<'a> {
    conversation: &'a Messages,
    text: OnceCell<String>,
}

impl<'a> Seen<'a> {
    fn new(conversation: &'a Messages) -> Self {
        Self {
            conversation,
            text: OnceCell::new(),
        }
    }

    fn text(&self) -> &str {
        self.text.get_or_init(|| {
            let mut text = String::new();
            for message in self.conversation.iter() {
                if matches!(message.role(), Role::Tool | Role::User) {
                    text.extend(message.text().chars().filter(|c| !c.is_whitespace()));
                    text.push('\u{0}');
                }
            }
            text
        })
    }

    /// Whether `call`, written as `raw`, appears in what the model read: the text as written,
    /// or the call in the standard `{"name": .., "arguments": ..}` form.
    fn quotes(&self, raw: &str, call: &ToolCall) -> bool {
        let written: String = raw.chars().filter(|c| !c.is_whitespace()).collect();
        let standard: String =
            serde_json::json!({"name": call.name(), "arguments": call.arguments()})
                .to_string()
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect();
        let seen = self.text();
        (written.len() > 2 && seen.contains(&written)) || seen.contains(&standard)
    }
}

fn send_alone(name: &str) -> String {
    format!(
        "This call to `{name}` was not run: it was written inside a reply with other text, and \
         `{name}` can change things, so only a reply that is the call alone runs it. If you \
         meant to call it, reply with only the call, nothing before or after it. If you were \
         quoting, explaining or warning about it, answer in plain text without the call."
    )
}

fn in_prose(name: &str) -> String {
    format!(
        "This call to `{name}` was not run: a call written inside a sentence or among other \
         text is not a call. If you meant to call it, reply with only the call, nothing before \
         or after it. If you were quoting or explaining it, answer in plain text without the \
         call."
    )
}

const ECHO_MESSAGE: &str = "This call was not run: it repeats a call written in a tool result \
or a user message, and text you read is never run as a call. If you mean to call the tool, \
write the call yourself.";

pub(crate) const CUT_CALL_MESSAGE: &str = "This call was cut off at the token limit before it was \
complete, so it did not run. Send it again, complete and shorter.";
