//! Turning a model response and its tool executions into a step's messages.

use agents_core::ToolExecutions;
use inference::InferenceResponse;
use messages::{Message, Messages, ToolCall};

use crate::recover::call_shapes;
use inference::lenient_json::json_values;

/// The messages one tool-calling step produced, split the way `AgentStep` keeps them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepMessages {
    /// The tool traffic: one assistant message carrying all the calls (and any text the model
    /// wrote next to them), then one tool-result message per call, in call order.
    pub trace: Messages,
    /// The model's answer: one assistant text message when it called no tools.
    pub response: Messages,
}

/// Splits `response` (after its calls ran as `executions`) into trace and response messages.
///
/// - With tool calls: the trace is one assistant message with every call, followed by one
///   tool-result message per call in call order (paired by call id; a call that has no
///   execution gets an error result, so the conversation stays valid for providers that
///   require a result for every call). The text the model wrote next to the calls becomes the
///   assistant message's content, unless it only repeats a call as JSON (a call's arguments,
///   or the call itself, as small models do). The response part is empty.
/// - Without tool calls: the trace is empty and the response is the assistant's text (nothing
///   when the text is empty).
///
/// ```
/// use agents_core::{ToolExecution, ToolExecutions};
/// use drivers_toolcalling::format_step_messages;
/// use inference::InferenceResponse;
/// use messages::ToolCall;
/// use serde_json::json;
///
/// let call = ToolCall::new("call_1", "get_weather", json!({"city": "Paris"}));
/// let response = InferenceResponse::with_tool_calls([call.clone()]);
/// let now = chrono::Utc::now();
/// let executions = ToolExecutions::from(vec![ToolExecution::success(call, "Sunny", now, now)]);
///
/// let messages = format_step_messages(&response, &executions);
/// assert_eq!(
///     messages.trace.to_transcript(),
///     "assistant -> get_weather {\"city\":\"Paris\"} [call_1]\ntool get_weather [call_1]: Sunny\n"
/// );
/// assert!(messages.response.is_empty());
/// ```
pub fn format_step_messages(
    response: &InferenceResponse,
    executions: &ToolExecutions,
) -> StepMessages {
    let calls = response.tool_calls();
    if calls.is_empty() {
        let text = response.content();
        let response = if text.trim().is_empty() {
            Messages::new()
        } else {
            Messages::from(Message::assistant(text))
        };
        return StepMessages {
            trace: Messages::new(),
            response,
        };
    }
    let text = response.content();
    let mut invocation = Message::new(messages::Role::Assistant, messages::Content::empty())
        .with_shared_tool_calls(response.shared_tool_calls().clone());
    if !text.trim().is_empty() && !repeats_calls(text, calls) {
        invocation = invocation.with_content(text);
    }
    let mut used = Used::new(executions.len());
    let results = calls
        .iter()
        .map(|call| result_for(call, executions, &mut used));
    StepMessages {
        trace: std::iter::once(invocation).chain(results).collect(),
        response: Messages::new(),
    }
}

/// True when `text` is nothing but JSON repeating the calls: one call's arguments, or the
/// calls themselves in any of the shapes recovery accepts.
pub fn repeats_calls(text: &str, calls: &[ToolCall]) -> bool {
    // Checked first: prose (a megabyte of it, with thousands of JSON values inside) is never
    // only JSON, and collecting its values is the expensive part.
    if !is_only_json(text) {
        return false;
    }
    let values = json_values(text);
    let Some(value) = values.first() else {
        return false;
    };
    if calls.iter().any(|call| call.arguments() == value) {
        return true;
    }
    call_shapes(value).is_some_and(|shapes| {
        shapes.iter().all(|(name, arguments)| {
            calls
                .iter()
                .any(|call| call.name() == name && call.arguments() == arguments)
        })
    })
}

/// True when, apart from code fences, tags and whitespace, `text` holds only JSON.
fn is_only_json(text: &str) -> bool {
    let stripped = text
        .replace("<tool_call>", "")
        .replace("</tool_call>", "")
        .replace("```json", "")
        .replace("```", "");
    let stripped = stripped.trim();
    stripped.starts_with(['{', '[']) && stripped.ends_with(['}', ']'])
}

/// The result message for `call`: its execution's (paired by id, each execution used once),
/// or an error result when it has none.
fn result_for(call: &ToolCall, executions: &ToolExecutions, used: &mut Used) -> Message {
    let found = executions
        .iter()
        .enumerate()
        .find(|(i, e)| !used.contains(*i) && e.id() == call.id());
    match found {
        Some((i, execution)) => {
            used.insert(i);
            execution.to_message()
        }
        None => Message::tool_result(
            call.id(),
            call.name(),
            "Error: this tool call was not executed.",
        ),
    }
}

/// The executions already paired with a call (no allocation for up to 64).
enum Used {
    Few(u64),
    Many(Vec<bool>),
}

impl Used {
    fn new(len: usize) -> Self {
        if len <= 64 {
            Used::Few(0)
        } else {
            Used::Many(vec![false; len])
        }
    }

    fn contains(&self, index: usize) -> bool {
        match self {
            Used::Few(bits) => index < 64 && bits & (1 << index) != 0,
            Used::Many(flags) => flags.get(index).copied().unwrap_or(false),
        }
    }

    fn insert(&mut self, index: usize) {
        match self {
            Used::Few(bits) if index < 64 => *bits |= 1 << index,
            Used::Few(_) => {}
            Used::Many(flags) => {
                if let Some(flag) = flags.get_mut(index) {
                    *flag = true;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agents_core::{ToolExecution, ToolFailureKind};
    use chrono::Utc;
    use serde_json::json;

    fn call(id: &str, city: &str) -> ToolCall {
        ToolCall::new(id, "get_weather", json!({ "city": city }))
    }

    fn ok(call: &ToolCall, text: &str) -> ToolExecution {
        let now = Utc::now();
        ToolExecution::success(call.clone(), text, now, now)
    }

    #[test]
    fn text_answer_goes_to_response_only() {
        let messages =
            format_step_messages(&InferenceResponse::text("Hello"), &ToolExecutions::new());
        assert!(messages.trace.is_empty());
        assert_eq!(messages.response.to_transcript(), "assistant: Hello\n");
    }

    #[test]
    fn empty_text_answer_produces_no_message() {
        let messages = format_step_messages(&InferenceResponse::text("  "), &ToolExecutions::new());
        assert!(messages.trace.is_empty() && messages.response.is_empty());
    }

    #[test]
    fn several_calls_share_one_assistant_message_and_results_follow_call_order() {
        let (a, b) = (call("c1", "Paris"), call("c2", "Rome"));
        let response = InferenceResponse::with_tool_calls([a.clone(), b.clone()]);
        // Executions reported out of order are put back in call order.
        let executions = ToolExecutions::from(vec![ok(&b, "Rain"), ok(&a, "Sun")]);
        let messages = format_step_messages(&response, &executions);
        let expected = [
            "assistant -> get_weather {\"city\":\"Paris\"} [c1]",
            "assistant -> get_weather {\"city\":\"Rome\"} [c2]",
            "tool get_weather [c1]: Sun",
            "tool get_weather [c2]: Rain",
        ];
        assert_eq!(messages.trace.to_transcript(), expected.join("\n") + "\n");
        assert_eq!(messages.trace.len(), 3);
        assert_eq!(
            messages.trace.first().map(|m| m.tool_calls().len()),
            Some(2)
        );
        assert!(messages.response.is_empty());
    }

    #[test]
    fn text_next_to_calls_is_kept_on_the_assistant_message() {
        let a = call("c1", "Paris");
        let response = InferenceResponse::with_tool_calls([a.clone()])
            .with_content("Let me check the weather.");
        let messages = format_step_messages(&response, &ToolExecutions::from(vec![ok(&a, "Sun")]));
        let first = messages
            .trace
            .first()
            .cloned()
            .unwrap_or_else(|| Message::user(""));
        assert_eq!(first.text(), "Let me check the weather.");
        assert_eq!(first.tool_calls(), &[a]);
        assert!(messages.response.is_empty());
    }

    #[test]
    fn text_repeating_a_call_as_json_is_dropped() {
        let a = call("c1", "Paris");
        for echo in [
            r#"{"city": "Paris"}"#,
            "```json\n{\"city\": \"Paris\"}\n```",
            r#"{"name": "get_weather", "arguments": {"city": "Paris"}}"#,
            r#"<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>"#,
        ] {
            let response = InferenceResponse::with_tool_calls([a.clone()]).with_content(echo);
            let messages =
                format_step_messages(&response, &ToolExecutions::from(vec![ok(&a, "Sun")]));
            assert_eq!(
                messages.trace.first().map(Message::text),
                Some(String::new()),
                "{echo}"
            );
        }
    }

    #[test]
    fn json_that_differs_from_the_calls_is_kept() {
        let a = call("c1", "Paris");
        for text in [r#"{"city": "Rome"}"#, r#"Checking {"city": "Paris"} now"#] {
            let response = InferenceResponse::with_tool_calls([a.clone()]).with_content(text);
            let messages =
                format_step_messages(&response, &ToolExecutions::from(vec![ok(&a, "Sun")]));
            assert_eq!(
                messages.trace.first().map(Message::text),
                Some(text.to_owned())
            );
        }
    }

    #[test]
    fn failures_and_missing_executions_still_give_one_result_per_call() {
        let (a, b) = (call("c1", "Paris"), call("c2", "Rome"));
        let now = Utc::now();
        let failed =
            ToolExecution::failure(a.clone(), ToolFailureKind::Failed, "offline", now, now);
        let response = InferenceResponse::with_tool_calls([a, b]);
        let messages = format_step_messages(&response, &ToolExecutions::from(vec![failed]));
        let results: Vec<(Option<String>, String)> = messages
            .trace
            .iter()
            .skip(1)
            .map(|m| (m.tool_call_id().map(str::to_owned), m.text()))
            .collect();
        assert_eq!(
            results,
            vec![
                (Some("c1".into()), "Error: offline".into()),
                (
                    Some("c2".into()),
                    "Error: this tool call was not executed.".into()
                ),
            ]
        );
    }
}
