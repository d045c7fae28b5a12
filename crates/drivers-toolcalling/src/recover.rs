//! Recovering tool calls that a model wrote as JSON text instead of native tool calls.
//!
//! Small local models served by llama.cpp often pick the right tool and arguments but write the
//! call as text (`{"name": "get_weather", "arguments": {"city": "Paris"}}`, sometimes in a code
//! fence or between `<tool_call>` tags), so the response's `tool_calls` stays empty.
//! [`recover_tool_calls`] turns such text back into calls when the whole reply is calls;
//! [`recover_announced_call`] takes the first call from a reply that announces it in prose and
//! writes it in a code fence or between `<tool_call>` tags (as 1.5B models do). Ordinary
//! answers, even ones holding JSON inline or data in a fence, are left alone.

use agents_core::{misspelled_names, signature, Tools};
use messages::ToolCall;
use serde_json::{Map, Value};

use inference::lenient_json::parse_lenient;

use crate::backticks::in_backticks;
use crate::fenced::fenced_block;

/// Prefix of the ids given to recovered calls (`recovered_<step>_<n>`).
pub const RECOVERED_ID_PREFIX: &str = "recovered_";

/// Keys that name the tool in a call written as text.
const NAME_KEYS: [&str; 4] = ["name", "tool", "tool_name", "function"];
/// Keys that hold the arguments in a call written as text.
const ARGUMENT_KEYS: [&str; 4] = ["arguments", "args", "parameters", "input"];

/// One call found in a reply's text.
#[derive(Clone, Debug, PartialEq)]
pub struct RecoveredCall {
    /// The call, with the id `recovered_<step>_<n>` (its arguments are `{}` when they could
    /// not be read).
    pub call: ToolCall,
    /// Whether it can run.
    pub kind: RecoveredKind,
    /// The JSON text it was read from, as the model wrote it (a list of calls: the list).
    pub text: String,
}

/// What recovery made of one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecoveredKind {
    /// A known tool with an object of arguments, written out in full.
    Complete,
    /// A known tool with an object of arguments, once closing braces missing at the very end
    /// of the reply were added.
    Repaired,
    /// The name is not one of the tools.
    UnknownTool,
    /// The arguments are not a JSON object (the text says what they were).
    InvalidArguments(String),
}

impl RecoveredCall {
    /// True for a call to a known tool with object arguments (complete or repaired).
    pub fn is_runnable(&self) -> bool {
        matches!(self.kind, RecoveredKind::Complete | RecoveredKind::Repaired)
    }

    /// The tool error the model gets instead of running this call, telling it how to fix the
    /// call (closest tool names, the schema, an example call); `None` for a runnable call.
    pub fn fix_it_message(&self, tools: &Tools) -> Option<String> {
        let name = self.call.name();
        match &self.kind {
            RecoveredKind::Complete | RecoveredKind::Repaired => None,
            RecoveredKind::UnknownTool => {
                let meant = misspelled_names(name, tools.names(), 3);
                let mut message = format!("There is no tool named `{name}`.");
                if let Some(best) = meant.first() {
                    message.push_str(&format!(" Did you mean {}?", in_backticks(&meant, " or ")));
                    message.push_str(&usage_hint(best, tools));
                } else {
                    // A name from another toolset (`create_folder`): the tool doing its job.
                    let doing_its_job = tools.known_as(name);
                    if let Some(best) = doing_its_job.first() {
                        message.push_str(&format!(
                            " For what `{name}` would do, call {}.",
                            in_backticks(&doing_its_job, " or ")
                        ));
                        message.push_str(&usage_hint(best, tools));
                    }
                }
                message.push_str(&format!(" The tools are: {}.", tool_list(tools)));
                Some(message)
            }
            RecoveredKind::InvalidArguments(problem) => Some(format!(
                "The arguments of your call to `{name}` could not be read: {problem}. \
                 Arguments must be one JSON object.{}",
                usage_hint(name, tools)
            )),
        }
    }
}

/// The most tools [`tool_list`] describes; with more, it only names them.
const DESCRIBED_TOOLS: usize = 16;

/// The tools' names, each with the first sentence of its description (cut at 100
/// characters) when there are at most [`DESCRIBED_TOOLS`]: a model that called a tool it
/// does not have (`rename_file`) learns which one does the job (`bash`), not only which names
/// look alike.
fn tool_list(tools: &Tools) -> String {
    let names = tools.names();
    let described = names.len() <= DESCRIBED_TOOLS;
    names
        .iter()
        .map(|name| {
            let sentence = tools
                .get(name)
                .filter(|_| described)
                .map(|tool| first_sentence(tool.description(), 100))
                .unwrap_or_default();
            if sentence.is_empty() {
                format!("`{name}`")
            } else {
                format!("`{name}` ({sentence})")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The first sentence of `text` (to its first ". " or line end), at most `chars` characters.
fn first_sentence(text: &str, chars: usize) -> String {
    let line = text.trim().lines().next().unwrap_or_default();
    let sentence = line.split_once(". ").map_or(line, |(first, _)| first);
    let sentence = sentence.trim().trim_end_matches('.');
    messages::excerpt(sentence, chars).into_owned()
}

/// " Its arguments schema is ...; call it like this: ..." for a known tool.
fn usage_hint(name: &str, tools: &Tools) -> String {
    let Some(tool) = tools.get(name) else {
        return String::new();
    };
    let parameters = tool.parameters();
    let example = serde_json::json!({"name": name, "arguments": example_arguments(&parameters)});
    format!(" The arguments schema of `{name}` is {parameters}; a call looks like: {example}")
}

/// Arguments that fill every required parameter with a placeholder of its type.
fn example_arguments(parameters: &Value) -> Value {
    let properties = parameters.get("properties").and_then(Value::as_object);
    let required = parameters
        .get("required")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut arguments = Map::new();
    for key in required.iter().filter_map(Value::as_str) {
        let kind = properties
            .and_then(|p| p.get(key))
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str)
            .unwrap_or("string");
        let placeholder = match kind {
            "integer" | "number" => Value::from(1),
            "boolean" => Value::Bool(true),
            "array" => Value::Array(Vec::new()),
            "object" => Value::Object(Map::new()),
            _ => Value::String(format!("<{key}>")),
        };
        arguments.insert(key.to_owned(), placeholder);
    }
    Value::Object(arguments)
}

/// The calls that make up the whole of `content`, or `None` when the content is not only calls
/// (prose, data that is not a call, or nothing).
///
/// The content must be, apart from whitespace, one or more JSON values (objects, or lists of
/// them, side by side), alone, in a single code fence, or between `<tool_call>` tags. The
/// first value must be a call, and the calls run up to the first value that is not one (what
/// the model imagines a call returns, dropped). A call is `{"name", "arguments"}` (also
/// `tool`/`tool_name`/`function` for the name, `args`/`parameters`/`input` for the
/// arguments, `{"function": {..}}` and `{"tool_calls": [..]}` wrappers), or a known tool's
/// name alone. Arguments may be an object
/// or a JSON string holding one. Closing braces missing at the very end of the reply are
/// added ([`RecoveredKind::Repaired`]), and one or two closers too many after the last value
/// are dropped; nothing else is repaired. A call naming an unknown
/// tool or with unreadable arguments is still returned, marked, so that the model can be told
/// how to fix it. Ids are `recovered_<step>_<n>`, `n` counting from 1.
///
/// ```
/// use agents_core::{Tool, ToolContext, ToolError, ToolOutput, Tools};
/// use drivers_toolcalling::{recover_tool_calls, RecoveredKind};
/// use serde_json::{json, Value};
///
/// struct Weather;
/// #[async_trait::async_trait]
/// impl Tool for Weather {
///     fn name(&self) -> &str { "get_weather" }
///     fn description(&self) -> &str { "Weather for a city" }
///     fn parameters(&self) -> Value {
///         json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
///     }
///     async fn call(&self, _: Value, _: &ToolContext) -> Result<ToolOutput, ToolError> {
///         Ok(ToolOutput::text("sunny"))
///     }
/// }
///
/// let tools = Tools::new().with(Weather);
/// let text = "```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n```";
/// let calls = recover_tool_calls(text, &tools, 3).unwrap();
/// assert_eq!(calls[0].call.id(), "recovered_3_1");
/// assert_eq!(calls[0].call.arguments(), &json!({"city": "Paris"}));
/// assert_eq!(calls[0].kind, RecoveredKind::Complete);
///
/// // One closing brace short, as small models stop: repaired.
/// let short = r#"{"name": "get_weather", "arguments": {"city": "Oslo"}"#;
/// assert_eq!(recover_tool_calls(short, &tools, 1).unwrap()[0].kind, RecoveredKind::Repaired);
///
/// // Prose, even with JSON in it, is an answer.
/// assert!(recover_tool_calls("It is sunny in Paris.", &tools, 1).is_none());
/// assert!(recover_tool_calls(r#"Call {"name": "get_weather", "arguments": {"city": "X"}}"#, &tools, 1).is_none());
/// ```
pub fn recover_tool_calls(content: &str, tools: &Tools, step: usize) -> Option<Vec<RecoveredCall>> {
    recover(content, tools, &step_prefix(step), Reply::Whole)
}

/// `recovered_<step>_`: the id prefix of the public functions (the driver puts the execution
/// in its ids too, see [`recovered_id_prefix`]).
fn step_prefix(step: usize) -> String {
    format!("{RECOVERED_ID_PREFIX}{step}_")
}

/// `recovered_<execution>_<step>_`, where `<execution>` is the last 12 hex digits of the
/// execution id (the random part of a uuid v7): the ids the driver gives calls recovered from
/// text, unique across executions and marked as recovered by their prefix.
pub fn recovered_id_prefix(execution_id: &str, step: usize) -> String {
    format!(
        "{RECOVERED_ID_PREFIX}{}_{step}_",
        execution_tag(execution_id)
    )
}

/// The last 12 hex digits of an execution id (all of it, when shorter; `0` when empty).
pub(crate) fn execution_tag(execution_id: &str) -> String {
    let mut tag: Vec<u8> = execution_id
        .bytes()
        .rev()
        .filter(u8::is_ascii_hexdigit)
        .take(12)
        .collect();
    if tag.is_empty() {
        return "0".to_owned();
    }
    tag.reverse();
    // Only ASCII hex digits were kept.
    String::from_utf8(tag).unwrap_or_default()
}

/// Whether `call` was recovered from text rather than sent as a native call: its id has the
/// [`RECOVERED_ID_PREFIX`]. Events, the CLI's trace and the state show such calls as such.
pub fn is_recovered_call(call: &ToolCall) -> bool {
    call.id().starts_with(RECOVERED_ID_PREFIX)
}

/// [`recover_tool_calls`] (or, with `cut`, [`recover_tool_calls_from_cut_reply`]) with ids
/// `<prefix><n>`.
pub(crate) fn recover_with_prefix(
    content: &str,
    tools: &Tools,
    prefix: &str,
    cut: bool,
) -> Option<Vec<RecoveredCall>> {
    let reply = if cut { Reply::Cut } else { Reply::Whole };
    recover(content, tools, prefix, reply)
}

/// [`recover_announced_call`] with the id `<prefix>1`.
pub(crate) fn announced_with_prefix(
    content: &str,
    tools: &Tools,
    prefix: &str,
) -> Option<AnnouncedCall> {
    if tools.is_empty() {
        return None;
    }
    announced_of(content, Some(tools), prefix)
}

/// [`announced_with_prefix`] of any tool name: the first block after prose that is, whole, a
/// call (`name` and an object of arguments), whether or not the agent has the tool.
pub(crate) fn announced_of_any_tool(content: &str, prefix: &str) -> Option<AnnouncedCall> {
    announced_of(content, None, prefix)
}

/// The first block after prose that is a call (to one of `tools`, when given), id
/// `<prefix>1`; `None` past [`MAX_TEXT_CALL_BYTES`].
fn announced_of(content: &str, tools: Option<&Tools>, prefix: &str) -> Option<AnnouncedCall> {
    if content.len() > MAX_TEXT_CALL_BYTES {
        return None;
    }
    let (lead_in, block, name, arguments) = first_block_call(content, tools)?;
    Some(AnnouncedCall {
        lead_in: lead_in.trim().to_owned(),
        call: ToolCall::new(format!("{prefix}1"), name, arguments),
        text: block.to_owned(),
    })
}

/// Most places in a reply where a call written inside prose is looked for.
const MAX_PROSE_CANDIDATES: usize = 16;
/// Most bytes of one call written inside prose.
const MAX_PROSE_CALL_BYTES: usize = 64 << 10;

/// Calls to known tools with object arguments written anywhere in `content` (inside a
/// sentence, after a tag in a sentence, in an inline fence), each with the JSON text it was
/// read from, ids `<prefix><n>`. Only an object that opens with a key naming a tool is a
/// candidate; at most [`MAX_PROSE_CANDIDATES`] of them, each at most
/// [`MAX_PROSE_CALL_BYTES`] long, are read, so the search is linear and bounded.
pub(crate) fn calls_in_prose(
    content: &str,
    tools: &Tools,
    prefix: &str,
) -> Vec<(ToolCall, String)> {
    if tools.is_empty() {
        return Vec::new();
    }
    calls_in_prose_of(content, Some(tools), prefix)
}

/// [`calls_in_prose`], of any tool name when `tools` is `None`.
fn calls_in_prose_of(
    content: &str,
    tools: Option<&Tools>,
    prefix: &str,
) -> Vec<(ToolCall, String)> {
    let mut found = Vec::new();
    if content.len() > MAX_TEXT_CALL_BYTES {
        return found;
    }
    let mut candidates = 0;
    let mut at = 0;
    while let Some(offset) = content[at..].find('{') {
        let start = at + offset;
        at = start + 1;
        let after = content[start + 1..].trim_start_matches([' ', '\n', '\t', '\r']);
        let names_a_tool = after.strip_prefix('"').is_some_and(|key| {
            NAME_KEYS
                .iter()
                .chain(["type", "tool_calls"].iter())
                .any(|k| key.starts_with(k) && key[k.len()..].starts_with('"'))
        });
        if !names_a_tool {
            continue;
        }
        candidates += 1;
        if candidates > MAX_PROSE_CANDIDATES {
            break;
        }
        let mut window = (start + MAX_PROSE_CALL_BYTES).min(content.len());
        while !content.is_char_boundary(window) {
            window -= 1;
        }
        let Some(end) = scan_value(&content[start..window]).end else {
            continue;
        };
        let text = &content[start..start + end];
        let Some(value) = parse_lenient(text) else {
            continue;
        };
        let Some(shapes) = shapes(&value, tools) else {
            continue;
        };
        for (name, arguments) in shapes {
            let known = tools.is_none_or(|tools| tools.get(&name).is_some());
            if let (true, Ok(arguments)) = (known, arguments) {
                let id = format!("{prefix}{}", found.len() + 1);
                found.push((ToolCall::new(id, name, arguments), text.to_owned()));
            }
        }
        at = start + end;
    }
    found
}

/// [`recover_tool_calls`] for a reply the model was cut off in (finish reason `length`): the
/// calls written out in full before the cut are recovered even when the last one was cut
/// where no closing brace can repair it (inside a string, after a key). That last call is
/// dropped: it was never written, so it never runs. A small model that writes call after call
/// until the token cap hits one mid-string still gets the complete ones run, instead of the
/// whole reply being taken as its answer. Only for cut replies: in a reply the model finished,
/// anything but calls makes the reply an answer.
///
/// ```
/// use agents_core::Tools;
/// use drivers_toolcalling::recover_tool_calls_from_cut_reply;
///
/// # use agents_core::{Tool, ToolContext, ToolError, ToolOutput};
/// # use serde_json::{json, Value};
/// # struct Weather;
/// # #[async_trait::async_trait]
/// # impl Tool for Weather {
/// #     fn name(&self) -> &str { "get_weather" }
/// #     fn description(&self) -> &str { "Weather for a city" }
/// #     fn parameters(&self) -> Value { json!({"type": "object"}) }
/// #     async fn call(&self, _: Value, _: &ToolContext) -> Result<ToolOutput, ToolError> {
/// #         Ok(ToolOutput::text("sunny"))
/// #     }
/// # }
/// let tools = Tools::new().with(Weather);
/// let cut = r#"{"name": "get_weather", "arguments": {"city": "Oslo"}}
/// {"name": "get_weather", "arguments": {"city": "Ber"#;
/// let calls = recover_tool_calls_from_cut_reply(cut, &tools, 1).unwrap();
/// assert_eq!(calls.len(), 1);
/// assert_eq!(calls[0].call.arguments(), &json!({"city": "Oslo"}));
/// ```
pub fn recover_tool_calls_from_cut_reply(
    content: &str,
    tools: &Tools,
    step: usize,
) -> Option<Vec<RecoveredCall>> {
    recover(content, tools, &step_prefix(step), Reply::Cut)
}

/// A call the model wrote in a code fence (or between `<tool_call>` tags, or bare to the end
/// of the reply) after some prose, and the prose before it.
#[derive(Clone, Debug, PartialEq)]
pub struct AnnouncedCall {
    /// The text before the call's block, trimmed (the model's reasoning; empty when none).
    pub lead_in: String,
    /// The call, id `recovered_<step>_1`, to a known tool with object arguments.
    pub call: ToolCall,
    /// The inside of the block, as the model wrote it.
    pub text: String,
}

/// The first call a reply announces in prose and writes in a code fence or between
/// `<tool_call>` tags: "To count the lines I'll use `read_file`:" followed by a fenced
/// `{"name": "read_file", "arguments": {"path": "names.txt"}}`, as 1.5B models write calls.
/// Without such a block, a call written bare from the start of a line to the end of the
/// reply counts too ("Here's how you can do it:" and the JSON on its own lines).
///
/// Only a block that is, whole, a call to a **known** tool with an object of arguments counts
/// (JSON inline in a sentence, a fence holding data, or a call to an unknown tool never does),
/// and only the first such block: what follows it is what the model imagines will happen (later
/// calls that need this one's result, invented outputs), so it is dropped, as a ReAct driver
/// drops what follows its `Action`. The driver tries [`recover_tool_calls`] first; this is for
/// the reply that is not only calls.
///
/// ```
/// use agents_core::Tools;
/// use drivers_toolcalling::recover_announced_call;
/// # use agents_core::{Tool, ToolContext, ToolError, ToolOutput};
/// # use serde_json::{json, Value};
/// # struct ReadFile;
/// # #[async_trait::async_trait]
/// # impl Tool for ReadFile {
/// #     fn name(&self) -> &str { "read_file" }
/// #     fn description(&self) -> &str { "Reads a file" }
/// #     fn parameters(&self) -> Value { json!({"type": "object"}) }
/// #     async fn call(&self, _: Value, _: &ToolContext) -> Result<ToolOutput, ToolError> {
/// #         Ok(ToolOutput::text("a\nb"))
/// #     }
/// # }
/// let tools = Tools::new().with(ReadFile);
/// let reply = "To count the lines, I'll use the `read_file` function:\n\n```json\n\
///     {\"name\": \"read_file\", \"arguments\": {\"path\": \"names.txt\"}}\n```\n\n\
///     This will return the file's lines.";
/// let found = recover_announced_call(reply, &tools, 2).unwrap();
/// assert_eq!(found.lead_in, "To count the lines, I'll use the `read_file` function:");
/// assert_eq!(found.call.id(), "recovered_2_1");
/// assert_eq!(found.call.arguments(), &json!({"path": "names.txt"}));
///
/// // Bare, to the end of the reply.
/// let bare = "Here's how you can do it:\n\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n";
/// assert_eq!(recover_announced_call(bare, &tools, 1).unwrap().lead_in, "Here's how you can do it:");
///
/// // JSON in a sentence, or a fence of data, is part of an answer.
/// assert!(recover_announced_call(r#"I called {"name": "read_file"} before."#, &tools, 1).is_none());
/// assert!(recover_announced_call("The file holds:\n```json\n{\"port\": 8472}\n```", &tools, 1).is_none());
/// ```
pub fn recover_announced_call(content: &str, tools: &Tools, step: usize) -> Option<AnnouncedCall> {
    announced_with_prefix(content, tools, &step_prefix(step))
}

/// True when `content` is, or announces, a tool call of any name rather than an answer: only
/// calls (also cut off at the end), prose with a call in a code fence or `<tool_call>` tags,
/// or a call written inside prose. For a reply that must be an answer (one asked for without tools), where a call
/// means the model did not answer.
///
/// ```
/// use drivers_toolcalling::is_tool_call_text;
///
/// assert!(is_tool_call_text(r#"{"name": "read_file", "arguments": {"path": "a.txt"}}"#));
/// assert!(is_tool_call_text("I'll read it:\n```json\n{\"name\": \"read_file\", \"arguments\": {}}\n```"));
/// assert!(!is_tool_call_text("The port is 8472."));
/// assert!(!is_tool_call_text(r#"The config is {"port": 8472}."#));
/// assert!(is_tool_call_text(r#"Here's the result: {"name": "read_file", "arguments": {"path": "a"}}"#));
/// ```
pub fn is_tool_call_text(content: &str) -> bool {
    if content.len() > MAX_TEXT_CALL_BYTES || !may_hold_a_call(content) {
        return false;
    }
    let only_calls = call_body(content)
        .and_then(|body| {
            only_json_values(&body, Reply::Cut)
                .map(|(values, _)| values.iter().all(|(v, _)| call_shapes(v).is_some()))
        })
        .unwrap_or(false);
    only_calls
        || first_block_call(content, None).is_some()
        || !calls_in_prose_of(content, None, "").is_empty()
}

/// Whether a reply cut at its token limit stops inside a call it was writing as text: what
/// follows its last unclosed code fence or `<tool_call>` tag (or the whole reply, when none is
/// open) is a JSON object whose first key is `"name"`. Such a call was never written out, so
/// it never runs, and the reply is not an answer either.
pub(crate) fn cut_inside_a_call(content: &str) -> bool {
    let open_fence = content
        .match_indices("```")
        .count()
        .checked_rem(2)
        .is_some_and(|odd| odd == 1);
    let body = if open_fence {
        let after = content.rfind("```").map_or("", |at| &content[at + 3..]);
        // The fence's language tag (`json`) ends its first line.
        after.split_once('\n').map_or("", |(_, rest)| rest)
    } else {
        match (content.rfind("<tool_call>"), content.rfind("</tool_call>")) {
            (Some(open), close) if close.is_none_or(|close| close < open) => {
                &content[open + "<tool_call>".len()..]
            }
            _ => content,
        }
    };
    body.trim_start()
        .strip_prefix('{')
        .is_some_and(|rest| rest.trim_start().starts_with("\"name\""))
}

/// Whether a reply cut at its token limit was repeating itself: of its non-empty lines (at
/// least six), at most half are distinct, and one line of ten characters or more comes three
/// times or more. Small models at temperature 0 fall into such loops ("Here's the step-by-step
/// process: 1. **Read the content of `greeting.txt`** ..." over and over until the cap: the
/// 1.5B model on development task d4); the text is not an answer. A long list of different
/// lines, or a short line repeated in a table, is not a loop.
pub(crate) fn repeats_itself(content: &str) -> bool {
    let lines: Vec<&str> = content
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect();
    if lines.len() < 6 {
        return false;
    }
    let mut counts: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for line in &lines {
        *counts.entry(line).or_default() += 1;
    }
    counts.len() * 2 <= lines.len()
        && counts
            .iter()
            .any(|(line, count)| *count >= 3 && line.chars().count() >= 10)
}

/// Whether `content` can hold a call written as text at all: every form a call is read from
/// (a JSON object alone, in a fence or `<tool_call>` tags, or inside prose) has an object's
/// `{`. Most answers have none and skip the search.
pub(crate) fn may_hold_a_call(content: &str) -> bool {
    content.as_bytes().contains(&b'{')
}

/// The most bytes of a reply searched for calls written as text (1 MiB, the bound of the
/// lenient JSON parser): a longer reply is an answer. Recovery reads each byte of a reply a
/// bounded number of times (linear time), and never more than this many.
pub const MAX_TEXT_CALL_BYTES: usize = 1 << 20;

/// The text before the first code fence or `<tool_call>` block that is a call (to a known
/// tool, when `tools` are given), the block's inside, and that call; without such a block,
/// the same of a call that closes the reply bare ([`closing_call`]).
fn first_block_call<'a>(
    content: &'a str,
    tools: Option<&Tools>,
) -> Option<(&'a str, &'a str, String, Value)> {
    let mut blocks = Blocks::new(content);
    while let Some((start, block)) = blocks.next_block() {
        if let Some((name, arguments)) = only_call(block, tools) {
            return Some((&content[..start], block, name, arguments));
        }
    }
    closing_call(content, tools)
}

/// A call written bare after prose, to the end of the reply: the first line that starts with
/// `{` (after prose, give or take an indentation), from which the rest of the reply is
/// nothing but JSON whose first value is a call ("Here's how you can do it:\n\n{\"name\":
/// \"read_file\", ...}"), as the 1.5B model writes once its conversation shows calls in that
/// form. The text before it, and that JSON. One parse of one suffix: linear time. JSON inside
/// a sentence, or followed by more prose, is not such a call (`calls_in_prose` finds it).
fn closing_call<'a>(
    content: &'a str,
    tools: Option<&Tools>,
) -> Option<(&'a str, &'a str, String, Value)> {
    let start = content
        .match_indices('{')
        .map(|(i, _)| i)
        .find(|i| starts_a_line(&content[..*i]))?;
    let (lead_in, block) = (&content[..start], content[start..].trim_end());
    if lead_in.trim().is_empty() {
        // A reply that is only JSON is the first rule's (`recover`), not an announcement.
        return None;
    }
    let open_tag = lead_in.rfind("<tool_call>").is_some_and(|open| {
        lead_in
            .rfind("</tool_call>")
            .is_none_or(|close| close < open)
    });
    if lead_in.matches("```").count() % 2 == 1 || open_tag {
        // Inside a block that was never closed: not a block, and not bare either.
        return None;
    }
    let (name, arguments) = only_call(block, tools)?;
    Some((lead_in, block, name, arguments))
}

/// The code fences (at the start of a line, info string empty or a word) and `<tool_call>`
/// blocks (the tag at the start of a line) of a text, in order. The next fence and the next
/// tag are each searched for once and remembered until passed, so that the whole walk reads
/// each byte a bounded number of times (linear time; a reply of 2 MiB of `<tool_call>x`
/// blocks was quadratic).
struct Blocks<'a> {
    text: &'a str,
    /// Where the search goes on.
    at: usize,
    /// The next fence at the start of a line at or after `at`, once searched (`None` inside:
    /// there is none).
    fence: Option<Option<usize>>,
    /// The same for `<tool_call>`.
    tag: Option<Option<usize>>,
}

impl<'a> Blocks<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            at: 0,
            fence: None,
            tag: None,
        }
    }

    /// The next marker at the start of a line at or after `from`.
    fn find_at_line_start(text: &str, from: usize, marker: &str) -> Option<usize> {
        text[from..]
            .match_indices(marker)
            .map(|(i, _)| from + i)
            .find(|i| starts_a_line(&text[..*i]))
    }

    /// The next block: where it starts and its inside. Unclosed blocks are not blocks.
    fn next_block(&mut self) -> Option<(usize, &'a str)> {
        let (at, text) = (self.at, self.text);
        if at >= text.len() {
            return None;
        }
        if self.fence.is_some_and(|f| f.is_some_and(|f| f < at)) {
            self.fence = None;
        }
        if self.tag.is_some_and(|t| t.is_some_and(|t| t < at)) {
            self.tag = None;
        }
        let fence = *self
            .fence
            .get_or_insert_with(|| Self::find_at_line_start(text, at, "```"));
        let tag = *self
            .tag
            .get_or_insert_with(|| Self::find_at_line_start(text, at, "<tool_call>"));
        let (start, inner, end) = match (fence, tag) {
            (Some(f), Some(t)) if t < f => tagged_block(text, t),
            (None, Some(t)) => tagged_block(text, t),
            (Some(f), _) => fenced_call_block(text, f),
            (None, None) => None,
        }?;
        self.at = end;
        Some((start, inner))
    }
}

/// True when `before` ends at the start of a line, give or take an indentation (a fence in a
/// list item: "1. List the files:\n   ```json"). At most 12 characters are looked at.
fn starts_a_line(before: &str) -> bool {
    let width = before
        .bytes()
        .rev()
        .take_while(|b| *b == b' ' || *b == b'\t')
        .take(13)
        .count();
    width <= 12 && {
        let head = &before[..before.len() - width];
        head.is_empty() || head.ends_with('\n')
    }
}

/// The fenced block at `start`, its inside left empty when its info string is not one a call
/// would be written under (letters and digits: `json`, or nothing).
fn fenced_call_block(text: &str, start: usize) -> Option<(usize, &str, usize)> {
    let block = fenced_block(text, start)?;
    if !block.info.chars().all(|c| c.is_ascii_alphanumeric()) {
        // Not a block a call would be in; go on after it.
        return Some((start, "", block.end));
    }
    Some((start, block.body, block.end))
}

fn tagged_block(text: &str, start: usize) -> Option<(usize, &str, usize)> {
    let inner_start = start + "<tool_call>".len();
    let close = text[inner_start..].find("</tool_call>")?;
    let end = inner_start + close + "</tool_call>".len();
    Some((start, &text[inner_start..inner_start + close], end))
}

/// The first call of `block` when the block is nothing but JSON and its first value is calls,
/// the first with object arguments (and naming a known tool, when `tools` are given).
fn only_call(block: &str, tools: Option<&Tools>) -> Option<(String, Value)> {
    let (values, _) = only_json_values(block, Reply::Whole)?;
    let (name, arguments) = shapes(&values.first()?.0, tools)?.into_iter().next()?;
    if let Some(tools) = tools {
        tools.get(&name)?;
    }
    Some((name, arguments.ok()?))
}

/// Whether the model finished the reply or was cut off in it.
#[derive(Clone, Copy, PartialEq)]
enum Reply {
    Whole,
    Cut,
}

fn recover(content: &str, tools: &Tools, prefix: &str, reply: Reply) -> Option<Vec<RecoveredCall>> {
    if tools.is_empty() || content.len() > MAX_TEXT_CALL_BYTES {
        return None;
    }
    let body = call_body(content)?;
    let (values, mut repaired) = only_json_values(&body, reply)?;
    let mut found = Vec::new();
    for (value, text) in &values {
        let Some(calls) = call_shapes_for(value, tools) else {
            // JSON after the calls that is not a call: what the model imagines the calls
            // return (`{"response": ..}`), dropped as a ReAct driver drops what follows its
            // Action. JSON that is not a call from the start is data, an answer.
            repaired = false;
            break;
        };
        found.extend(
            calls
                .into_iter()
                .map(|(name, arguments)| (name, arguments, *text)),
        );
    }
    if found.is_empty() {
        return None;
    }
    // The same call written again in one reply (small models write it 10-30 times, which
    // floods the context with results) runs once.
    let mut seen = std::collections::HashSet::new();
    let mut kept = Vec::with_capacity(found.len());
    let mut last_kept = false;
    for (name, arguments, text) in found {
        last_kept = match &arguments {
            Ok(arguments) => seen.insert(signature(&ToolCall::new(
                "",
                name.as_str(),
                arguments.clone(),
            ))),
            Err(_) => true,
        };
        if last_kept {
            kept.push((name, arguments, text));
        }
    }
    // The repaired call is the reply's last; if it was a copy, nothing kept is repaired.
    repaired = repaired && last_kept;
    let found = kept;
    let count = found.len();
    Some(
        found
            .into_iter()
            .enumerate()
            .map(|(i, (name, arguments, text))| {
                let id = format!("{prefix}{}", i + 1);
                let (arguments, problem) = match arguments {
                    Ok(arguments) => (arguments, None),
                    Err(problem) => (Value::Object(Map::new()), Some(problem)),
                };
                let kind = if tools.get(&name).is_none() {
                    RecoveredKind::UnknownTool
                } else if let Some(problem) = problem {
                    RecoveredKind::InvalidArguments(problem)
                } else if repaired && i + 1 == count {
                    RecoveredKind::Repaired
                } else {
                    RecoveredKind::Complete
                };
                RecoveredCall {
                    call: ToolCall::new(id, name, arguments),
                    kind,
                    text: text.to_owned(),
                }
            })
            .collect(),
    )
}

/// The runnable calls written as JSON in `content`, or `None` when the content is not (only)
/// valid calls to the given tools. Ids are `recovered_1_<n>`; a driver uses
/// [`recover_tool_calls`], which numbers by step and also reports calls it cannot run.
///
/// ```
/// use agents_core::Tools;
/// use drivers_toolcalling::recover_tool_calls_from_content;
///
/// assert!(recover_tool_calls_from_content("It is sunny.", &Tools::new()).is_none());
/// ```
pub fn recover_tool_calls_from_content(content: &str, tools: &Tools) -> Option<Vec<ToolCall>> {
    let recovered = recover_tool_calls(content, tools, 1)?;
    recovered
        .into_iter()
        .map(|r| r.is_runnable().then_some(r.call))
        .collect()
}

/// The text that must be nothing but JSON: the inside of `<tool_call>` tags, of a single code
/// fence (which may be unclosed when the reply was cut), or the whole trimmed content.
fn call_body(content: &str) -> Option<String> {
    let text = content.trim();
    if text.is_empty() {
        return None;
    }
    if text.contains("<tool_call>") {
        // A tag counts only at the start of a line: one inside a sentence is text.
        if text
            .match_indices("<tool_call>")
            .any(|(i, _)| !starts_a_line(&text[..i]))
        {
            return None;
        }
        return Some(
            text.split("<tool_call>")
                .enumerate()
                .map(|(i, piece)| {
                    if i == 0 {
                        std::borrow::Cow::Borrowed(piece)
                    } else {
                        with_name_key(piece)
                    }
                })
                .collect::<Vec<_>>()
                .join("\n")
                .replace("</tool_call>", "\n"),
        );
    }
    if let Some(after) = text.strip_prefix("```") {
        // The info string (`json`) runs to the end of the first line.
        let newline = after.find('\n')?;
        let info = after[..newline].trim();
        if !info.chars().all(|c| c.is_ascii_alphanumeric()) {
            return None;
        }
        let inner = &after[newline + 1..];
        return Some(match inner.find("```") {
            Some(end) if inner[end + 3..].trim().is_empty() => inner[..end].to_owned(),
            Some(_) => return None,
            None => inner.to_owned(),
        });
    }
    Some(text.to_owned())
}

/// The inside of a `<tool_call>` tag with the start of its object put back when the model
/// left it out: `search_files", "arguments": {..}}` (the 1.5B model's reply to a nudge,
/// issue 36, development task d3) is `{"name": "search_files", "arguments": {..}}`. Anything
/// else is returned as it is.
fn with_name_key(tagged: &str) -> std::borrow::Cow<'_, str> {
    let body = tagged.trim_start();
    let name_end = body
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
        .unwrap_or(body.len());
    let headless = name_end > 0
        && body.as_bytes()[0].is_ascii_alphabetic()
        && body[name_end..]
            .strip_prefix('"')
            .map(|rest| rest.trim_start())
            .and_then(|rest| rest.strip_prefix(','))
            .is_some_and(|rest| rest.trim_start().starts_with("\"arguments\""));
    if headless {
        std::borrow::Cow::Owned(format!("{{\"name\": \"{body}"))
    } else {
        std::borrow::Cow::Borrowed(tagged)
    }
}

/// The JSON values that make up all of `body` (separated by whitespace or commas), and whether
/// the last one needed closing braces added at the very end; `None` when anything else is
/// there. In a [`Reply::Cut`], a last value cut beyond repair is left out.
fn only_json_values(body: &str, reply: Reply) -> Option<(Vec<(Value, &str)>, bool)> {
    let mut values = Vec::new();
    let mut rest = body;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == ',');
        if rest.is_empty() {
            return (!values.is_empty()).then_some((values, false));
        }
        if !rest.starts_with(['{', '[']) {
            // A closer or two too many after the last value (the 0.5B model ended a call
            // with `}}}}` where three close it, development task d29) end nothing: the
            // values before them are whole.
            return (!values.is_empty() && only_stray_closers(rest)).then_some((values, false));
        }
        let scan = scan_value(rest);
        match scan.end {
            Some(end) => {
                values.push((parse_lenient(&rest[..end])?, &rest[..end]));
                rest = &rest[end..];
            }
            None => {
                // The reply ends inside this value: add the closers it lacks, if only closers
                // are missing (not the end of a string, a value or a key).
                if scan.in_string || !ends_after_value(rest) {
                    return (reply == Reply::Cut && !values.is_empty()).then_some((values, false));
                }
                let mut repaired = rest.trim_end().to_owned();
                repaired.extend(scan.open.iter().rev());
                values.push((parse_lenient(&repaired)?, rest.trim_end()));
                return Some((values, true));
            }
        }
    }
}

/// The most closing brackets after a reply's last JSON value that are dropped as a slip.
const MAX_STRAY_CLOSERS: usize = 2;

/// Whether `text` is nothing but one or two closing brackets (`}` or `]`), give or take
/// whitespace.
fn only_stray_closers(text: &str) -> bool {
    let mut closers = 0;
    for c in text.chars() {
        match c {
            '}' | ']' => closers += 1,
            c if c.is_whitespace() => {}
            _ => return false,
        }
        if closers > MAX_STRAY_CLOSERS {
            return false;
        }
    }
    closers > 0
}

/// Where a JSON value starting at the beginning of `text` ends, by brackets outside strings.
struct Scan {
    /// The byte just after the value's closing bracket, when it closes.
    end: Option<usize>,
    /// The closers still missing at the end of the text, innermost last.
    open: Vec<char>,
    /// The text ends inside a string.
    in_string: bool,
}

fn scan_value(text: &str) -> Scan {
    let mut open = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => open.push('}'),
            '[' => open.push(']'),
            '}' | ']' => {
                if open.pop() != Some(c) {
                    // Mismatched: not JSON; let the parser say so.
                    return Scan {
                        end: Some(i + 1),
                        open,
                        in_string,
                    };
                }
                if open.is_empty() {
                    return Scan {
                        end: Some(i + 1),
                        open,
                        in_string,
                    };
                }
            }
            _ => {}
        }
    }
    Scan {
        end: None,
        open,
        in_string,
    }
}

/// True when the cut text ends right after a complete value (a string, number, literal or a
/// closing bracket), so that only closers are missing.
fn ends_after_value(text: &str) -> bool {
    let trimmed = text.trim_end();
    trimmed.ends_with(['"', '}', ']'])
        || trimmed.ends_with(|c: char| c.is_ascii_digit())
        || trimmed.ends_with("true")
        || trimmed.ends_with("false")
        || trimmed.ends_with("null")
}

/// `content` with its `<tool_response>` tags written as `<tool_call>` tags, when the reply is
/// one `<tool_response>` block and nothing else, and its inside is one JSON call (or a list of
/// calls) in an accepted shape: Qwen models mix the two tags up. Tried on new tasks of the
/// eval's kinds (issue 36, 2026-12-07), the 1.5B model, having read `old.txt`, replied
/// `<tool_response>\n{"name": "read_file", "arguments": {"path": "new.txt"}}\n</tool_response>`
/// three times; taken for a call among other text, it never ran, and the answer made up what
/// `new.txt` holds. A block that holds anything but a call (a result the model wrote itself)
/// is left as it is: that is forged evidence. Its JSON is read as leniently as a call's in
/// `<tool_call>` tags (a missing closer); a block holding another tag is no call, but a `<`
/// in the arguments (markup written to a file) is kept.
pub(crate) fn tool_response_as_call_tags(content: &str) -> Option<String> {
    let inside = content
        .trim()
        .strip_prefix("<tool_response>")?
        .strip_suffix("</tool_response>")?
        .trim();
    if [
        "<tool_call>",
        "</tool_call>",
        "<tool_response>",
        "</tool_response>",
    ]
    .iter()
    .any(|tag| inside.contains(tag))
    {
        return None;
    }
    let (values, _) = only_json_values(inside, Reply::Whole)?;
    for (value, _) in &values {
        call_shapes(value)?;
    }
    Some(format!("<tool_call>\n{inside}\n</tool_call>"))
}

/// The `(name, arguments)` pairs described by `value` when it is a call or a list of calls
/// in one of the accepted shapes, without checking them against any tools.
pub(crate) fn call_shapes(value: &Value) -> Option<Vec<(String, Value)>> {
    shapes(value, None)?
        .into_iter()
        .map(|(name, arguments)| arguments.ok().map(|a| (name, a)))
        .collect()
}

/// As [`call_shapes`], with arguments that could not be read kept as problems, and a known
/// tool's bare name (`{"name": "list_files"}`) accepted as a call without arguments.
fn call_shapes_for(value: &Value, tools: &Tools) -> Option<Vec<Shape>> {
    shapes(value, Some(tools))
}

type Shape = (String, Result<Value, String>);

fn shapes(value: &Value, tools: Option<&Tools>) -> Option<Vec<Shape>> {
    match value {
        Value::Array(items) if !items.is_empty() => items
            .iter()
            .map(|item| single_call_shape(item, tools))
            .collect(),
        Value::Object(object) => match object.get("tool_calls") {
            Some(inner @ Value::Array(_)) if object.len() == 1 => shapes(inner, tools),
            _ => single_call_shape(value, tools).map(|call| vec![call]),
        },
        _ => None,
    }
}

fn single_call_shape(value: &Value, tools: Option<&Tools>) -> Option<Shape> {
    let object = value.as_object()?;
    if let Some(function) = object.get("function").and_then(Value::as_object) {
        return name_and_arguments(function, tools);
    }
    name_and_arguments(object, tools)
}

fn name_and_arguments(object: &Map<String, Value>, tools: Option<&Tools>) -> Option<Shape> {
    let name = NAME_KEYS
        .iter()
        .find_map(|key| object.get(*key).and_then(Value::as_str))?;
    let arguments = match ARGUMENT_KEYS.iter().find_map(|key| object.get(*key)) {
        Some(arguments) => arguments.clone(),
        None => {
            // No arguments: a call only when it names a known tool and says nothing else.
            let known = tools.is_some_and(|tools| tools.get(name).is_some());
            let only_name = object
                .keys()
                .all(|k| NAME_KEYS.contains(&k.as_str()) || k == "type" || k == "id");
            if !(known && only_name) {
                return None;
            }
            Value::Object(Map::new())
        }
    };
    let arguments = match arguments {
        Value::Object(_) => Ok(arguments),
        Value::String(text) if text.trim().is_empty() => Ok(Value::Object(Map::new())),
        Value::String(text) => match parse_lenient(&text) {
            Some(value @ Value::Object(_)) => Ok(value),
            Some(other) => Err(format!("the string {text:?} holds {other}, not an object")),
            None => Err(format!("the string {text:?} is not JSON")),
        },
        other => Err(format!("{other} is not an object")),
    };
    Some((name.to_owned(), arguments))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tools::{echo_tool, weather_tool};
    use serde_json::json;

    fn tools() -> Tools {
        Tools::new().with(weather_tool()).with(echo_tool())
    }

    #[test]
    fn a_call_alone_in_tool_response_tags_is_written_in_tool_call_tags() {
        let call = r#"{"name": "read_file", "arguments": {"path": "new.txt"}}"#;
        assert_eq!(
            tool_response_as_call_tags(&format!("<tool_response>\n{call}\n</tool_response>\n")),
            Some(format!("<tool_call>\n{call}\n</tool_call>"))
        );
        // markup in the arguments, and a call whose last brace is missing
        let markup =
            r#"{"name": "write_file", "arguments": {"path": "a.html", "content": "<b>1 < 2</b>"}}"#;
        let unclosed = r#"{"name": "read_file", "arguments": {"path": "new.txt"}"#;
        for call in [markup, unclosed] {
            assert_eq!(
                tool_response_as_call_tags(&format!("<tool_response>{call}</tool_response>")),
                Some(format!("<tool_call>\n{call}\n</tool_call>")),
                "{call}"
            );
        }
        for not_a_call in [
            "<tool_response>\nport = 9000\n</tool_response>".to_owned(),
            "<tool_response>\n{\"port\": 9000}\n</tool_response>".to_owned(),
            format!("Here: <tool_response>{call}</tool_response>"),
            format!("<tool_response>{call}</tool_response> and then the answer"),
            format!("<tool_response><tool_call>{call}</tool_call></tool_response>"),
            format!("<tool_response>{call}<tool_response>{call}</tool_response>"),
            call.to_owned(),
        ] {
            assert_eq!(
                tool_response_as_call_tags(&not_a_call),
                None,
                "{not_a_call}"
            );
        }
    }

    fn recovered(text: &str) -> Option<Vec<(String, String, Value)>> {
        recover_tool_calls_from_content(text, &tools()).map(|calls| {
            calls
                .into_iter()
                .map(|c| {
                    (
                        c.id().to_owned(),
                        c.name().to_owned(),
                        c.arguments().clone(),
                    )
                })
                .collect()
        })
    }

    fn kinds(text: &str) -> Option<Vec<RecoveredKind>> {
        recover_tool_calls(text, &tools(), 2)
            .map(|calls| calls.into_iter().map(|c| c.kind).collect())
    }

    #[test]
    fn name_and_arguments_object() {
        assert_eq!(
            recovered(r#"{"name": "get_weather", "arguments": {"city": "Paris"}}"#),
            Some(vec![(
                "recovered_1_1".into(),
                "get_weather".into(),
                json!({"city": "Paris"})
            )])
        );
    }

    #[test]
    fn code_fence_and_tool_call_tags() {
        let fenced =
            "```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n```";
        assert_eq!(
            recovered(fenced).map(|c| c[0].2.clone()),
            Some(json!({"city": "Oslo"}))
        );
        let tagged =
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n</tool_call>";
        assert_eq!(
            recovered(tagged).map(|c| c[0].2.clone()),
            Some(json!({"city": "Rome"}))
        );
    }

    #[test]
    fn a_tagged_call_without_the_start_of_its_object_is_read_with_its_name() {
        // Development task d3 (2026-12-06): the 1.5B model's reply to a nudge.
        let headless = "<tool_call>get_weather\", \"arguments\": {\"city\": \"Rome\"}}</tool_call>";
        assert_eq!(
            recovered(headless).map(|c| (c[0].1.clone(), c[0].2.clone())),
            Some(("get_weather".to_owned(), json!({"city": "Rome"})))
        );
        // Not a call: a word and a quote in a tag, or the text before the first tag.
        assert_eq!(
            recovered("<tool_call>get_weather\" is a tool</tool_call>"),
            None
        );
        assert_eq!(
            with_name_key("get_weather\", \"arguments\": {}}"),
            "{\"name\": \"get_weather\", \"arguments\": {}}"
        );
        assert_eq!(
            with_name_key("\"x\", \"arguments\""),
            "\"x\", \"arguments\""
        );
    }

    #[test]
    fn tool_with_parameters_args_or_input_variants() {
        for key in ["parameters", "args", "input", "arguments"] {
            let text = format!(r#"{{"tool": "get_weather", "{key}": {{"city": "Paris"}}}}"#);
            assert_eq!(
                recovered(&text).map(|c| c[0].1.clone()),
                Some("get_weather".to_owned()),
                "key {key}"
            );
        }
        let named = r#"{"name": "get_weather", "parameters": {"city": "Paris"}}"#;
        assert_eq!(recovered(named).map(|c| c.len()), Some(1));
    }

    #[test]
    fn openai_function_shape_with_string_arguments() {
        let text = r#"{"type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}"#;
        assert_eq!(
            recovered(text).map(|c| c[0].2.clone()),
            Some(json!({"city": "Paris"}))
        );
    }

    #[test]
    fn calls_get_ids_numbered_by_step_and_position() {
        let text = r#"[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "echo", "arguments": {"text": "hi"}}]"#;
        let calls = recover_tool_calls(text, &tools(), 4).unwrap_or_default();
        assert_eq!(
            calls
                .iter()
                .map(|c| (c.call.id(), c.call.name()))
                .collect::<Vec<_>>(),
            vec![("recovered_4_1", "get_weather"), ("recovered_4_2", "echo")]
        );
    }

    #[test]
    fn tool_calls_wrapper_and_calls_on_separate_lines() {
        let wrapped = r#"{"tool_calls": [{"name": "echo", "arguments": {"text": "a"}}]}"#;
        assert_eq!(recovered(wrapped).map(|c| c.len()), Some(1));
        let lines = "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}";
        let calls = recovered(lines).unwrap_or_default();
        assert_eq!(
            calls.iter().map(|c| c.2.clone()).collect::<Vec<_>>(),
            vec![json!({"city": "Paris"}), json!({"city": "Rome"})]
        );
        assert_eq!(
            calls.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(),
            vec!["recovered_1_1", "recovered_1_2"]
        );
    }

    #[test]
    fn missing_closing_braces_at_the_end_are_repaired_and_nothing_else() {
        assert_eq!(
            kinds(r#"{"name": "get_weather", "arguments": {"city": "Paris"}"#),
            Some(vec![RecoveredKind::Repaired])
        );
        assert_eq!(
            kinds("```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\""),
            Some(vec![RecoveredKind::Repaired])
        );
        // Cut inside a string or after a key: not a call.
        assert_eq!(
            kinds(r#"{"name": "get_weather", "arguments": {"city": "Par"#),
            None
        );
        assert_eq!(
            kinds(r#"{"name": "get_weather", "arguments": {"city":"#),
            None
        );
        // A complete call followed by a cut one: the first complete, the second repaired.
        assert_eq!(
            kinds("{\"name\": \"echo\", \"arguments\": {\"text\": \"a\"}}\n{\"name\": \"echo\", \"arguments\": {\"text\": \"b\"}"),
            Some(vec![RecoveredKind::Complete, RecoveredKind::Repaired])
        );
    }

    #[test]
    fn one_or_two_closers_too_many_after_the_last_call_are_dropped_and_nothing_else() {
        let call = r#"{"name": "get_weather", "arguments": {"city": "Paris"}}"#;
        for text in [
            format!("{call}}}"),
            format!("{call} }}\n"),
            format!("{call}]}}"),
            format!("```json\n{call}}}\n```"),
        ] {
            assert_eq!(kinds(&text), Some(vec![RecoveredKind::Complete]), "{text}");
            assert!(is_tool_call_text(&text), "{text}");
        }
        // Three closers too many, a closer before more text, or closers with no value before
        // them: not calls.
        for text in [
            format!("{call}}}}}}}"),
            format!("{call}}} and more"),
            "}}".to_owned(),
        ] {
            assert_eq!(kinds(&text), None, "{text}");
        }
        // An unknown tool's call with a closer too many (development task d29): an unknown
        // tool, so the model is told which tools it has.
        let unknown = r#"{"name": "compare_scores", "arguments": {"a": {"score": 1}}}}"#;
        assert_eq!(kinds(unknown), Some(vec![RecoveredKind::UnknownTool]));
    }

    #[test]
    fn an_announced_call_is_the_first_block_that_is_a_call_to_a_known_tool() {
        let tools = tools();
        let call = r#"{"name": "get_weather", "arguments": {"city": "Paris"}}"#;
        let unknown = r#"{"name": "get_forecast", "arguments": {"city": "Oslo"}}"#;
        let found = |text: &str| recover_announced_call(text, &tools, 3);
        // Data, an unknown tool, a shell block: passed over; the call after them is found.
        let text = format!(
            "Plan:\n```json\n{{\"a\": 1}}\n```\n```json\n{unknown}\n```\n```sh\nls\n```\nNow:\n```\n{call}\n```\nDone."
        );
        let announced = found(&text).unwrap();
        assert_eq!(announced.call.arguments(), &json!({"city": "Paris"}));
        assert_eq!(announced.call.id(), "recovered_3_1");
        assert!(announced.lead_in.starts_with("Plan:") && announced.lead_in.ends_with("Now:"));
        // Not a block: a fence inside a line, an unclosed fence or tag, a fence with an info
        // string that is not a word, unreadable arguments.
        for text in [
            format!("See ```{call}``` above"),
            format!("I'll call:\n```json\n{call}"),
            format!("I'll call: <tool_call>{call}"),
            format!("x\n```json title=a\n{call}\n```"),
            "x\n```json\n{\"name\": \"get_weather\", \"arguments\": \"city=Paris\"}\n```"
                .to_owned(),
        ] {
            assert!(found(&text).is_none(), "{text}");
        }
        // Indented, in a list item, as the 1.5B model writes plans.
        let listed = format!("Steps:\n1. List the files:\n   ```json\n   {call}\n   ```\n2. Read.");
        assert_eq!(
            found(&listed).unwrap().lead_in,
            "Steps:\n1. List the files:"
        );
        // A block at the very start with nothing before it: no lead-in.
        assert_eq!(
            found(&format!("```json\n{call}\n```\nok")).unwrap().lead_in,
            ""
        );
        // Bare, from the start of a line to the end of the reply, as the 1.5B model writes
        // calls once its conversation shows them so (longrun, legacy mode).
        let bare = found(&format!("Here's how you can do it:\n\n{call}\n")).unwrap();
        assert_eq!(bare.lead_in, "Here's how you can do it:");
        assert_eq!(bare.call.arguments(), &json!({"city": "Paris"}));
        assert_eq!(bare.text, call);
        // Not bare calls: more prose after it, in a sentence, data before it, an unknown
        // tool, only JSON (the first rule's, not an announcement).
        for text in [
            format!("Call:\n{call}\nThis returns the weather."),
            format!("Call {call}"),
            format!("Data:\n{{\"a\": 1}}\nthen:\n{call}"),
            format!("Call:\n{unknown}"),
            format!("\n  {call}\n"),
        ] {
            assert!(found(&text).is_none(), "{text}");
        }
        // Many fences and tags: every byte is looked at a bounded number of times.
        let hostile = "```\nx\n```\n".repeat(20_000) + "<tool_call>";
        assert!(found(&hostile).is_none());
        let hostile = "x\n".to_owned() + &"{\n".repeat(100_000);
        assert!(found(&hostile).is_none());
        assert!(recover_announced_call(&text_with(call), &Tools::new(), 1).is_none());
    }

    fn text_with(call: &str) -> String {
        format!("I'll call:\n```json\n{call}\n```")
    }

    #[test]
    fn the_same_call_written_again_in_one_reply_runs_once() {
        let paris = r#"{"name": "get_weather", "arguments": {"city": "Paris"}}"#;
        let reordered = r#"{"arguments": {"city": "Paris"}, "name": "get_weather"}"#;
        let rome = r#"{"name": "get_weather", "arguments": {"city": "Rome"}}"#;
        let text = format!("{paris}\n{rome}\n{paris}\n{reordered}\n{paris}");
        let calls = recovered(&text).unwrap();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].0, "recovered_1_1");
        assert_eq!(calls[1].0, "recovered_1_2");
        assert_eq!(calls[1].2, json!({"city": "Rome"}));
        // A repaired copy at the end is dropped; the first, complete, stays complete.
        let short = format!("{paris}\n{}", &paris[..paris.len() - 1]);
        assert_eq!(kinds(&short), Some(vec![RecoveredKind::Complete]));
    }

    #[test]
    fn json_after_the_calls_that_is_not_a_call_is_dropped() {
        let call = r#"{"name": "get_weather", "arguments": {"city": "Paris"}}"#;
        // The 0.5B model's reply in eval task 6: a call, then the response it imagines.
        let text = format!("{call}\n{{\"response\": \"sunny\"}}\n{call}");
        let calls = recover_tool_calls(&text, &tools(), 1).unwrap();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].kind, RecoveredKind::Complete);
        // Data first is an answer, whatever follows.
        assert!(recover_tool_calls(&format!("{{\"port\": 8472}}\n{call}"), &tools(), 1).is_none());
    }

    #[test]
    fn a_cut_reply_keeps_the_calls_written_before_the_cut() {
        let call = r#"{"name": "get_weather", "arguments": {"city": "Paris"}}"#;
        let tools = tools();
        for tail in [
            r#"{"name": "get_weather", "arguments": {"city": "Ro"#,
            r#"{"name": "get_weather", "argu"#,
            r#"{"name": "get_weather", "arguments":"#,
            r#"{"#,
        ] {
            let oslo = call.replace("Paris", "Oslo");
            let text = format!("```json\n{call}\n{oslo}\n{tail}");
            let cut = recover_tool_calls_from_cut_reply(&text, &tools, 2).unwrap();
            assert_eq!(cut.len(), 2, "{tail}");
            assert!(cut.iter().all(|c| c.kind == RecoveredKind::Complete));
            assert_eq!(cut[1].call.id(), "recovered_2_2");
            // A reply the model finished is not only calls: left alone.
            assert!(recover_tool_calls(&text, &tools, 2).is_none(), "{tail}");
        }
        // A cut that closing braces repair is repaired, as in a whole reply.
        let short = format!(
            "{call}\n{}",
            r#"{"name": "get_weather", "arguments": {"city": "Rome""#
        );
        assert_eq!(
            recover_tool_calls_from_cut_reply(&short, &tools, 1)
                .unwrap()
                .iter()
                .map(|c| c.kind.clone())
                .collect::<Vec<_>>(),
            vec![RecoveredKind::Complete, RecoveredKind::Repaired]
        );
        // Nothing complete before the cut, or prose: no calls.
        assert!(recover_tool_calls_from_cut_reply(r#"{"name": "get_wea"#, &tools, 1).is_none());
        assert!(recover_tool_calls_from_cut_reply("It is sunny in Par", &tools, 1).is_none());
        assert!(recover_tool_calls_from_cut_reply(&format!("Sure! {call}"), &tools, 1).is_none());
    }

    #[test]
    fn unknown_tools_and_unreadable_arguments_are_marked_not_dropped() {
        assert_eq!(
            kinds(r#"{"name": "sum_numbers", "arguments": {"a": 1}}"#),
            Some(vec![RecoveredKind::UnknownTool])
        );
        assert!(matches!(
            kinds(r#"{"name": "get_weather", "arguments": ["Paris"]}"#).as_deref(),
            Some([RecoveredKind::InvalidArguments(_)])
        ));
        assert!(matches!(
            kinds(r#"{"name": "get_weather", "arguments": "city=Paris"}"#).as_deref(),
            Some([RecoveredKind::InvalidArguments(_)])
        ));
        // Missing required arguments are the executor's to report: the call is runnable.
        assert_eq!(
            kinds(r#"{"name": "get_weather", "arguments": {}}"#),
            Some(vec![RecoveredKind::Complete])
        );
        // So is a call cut off after the tool's name (found by fuzzing).
        assert_eq!(
            recovered("```json\n[{\"tool\": \"get_weather\""),
            Some(vec![(
                "recovered_1_1".to_owned(),
                "get_weather".to_owned(),
                json!({})
            )])
        );
        // ...and not returned by the strict wrapper when unknown.
        assert_eq!(
            recovered(r#"{"name": "launch_rocket", "arguments": {}}"#),
            None
        );
    }

    #[test]
    fn fix_it_message_names_the_closest_tool_its_schema_and_an_example() {
        let calls = recover_tool_calls(
            r#"{"name": "get_wether", "arguments": {"city": "X"}}"#,
            &tools(),
            1,
        )
        .unwrap_or_default();
        let message = calls[0].fix_it_message(&tools()).unwrap_or_default();
        assert!(message.contains("no tool named `get_wether`"), "{message}");
        assert!(message.contains("Did you mean `get_weather`"), "{message}");
        assert!(message.contains(r#""required":["city"]"#), "{message}");
        assert!(
            message.contains(r#"{"name":"get_weather","arguments":{"city":"<city>"}}"#),
            "{message}"
        );
        assert!(
            message.contains(
                "The tools are: `get_weather` (Current weather for a city), `echo` (Repeats \
                 the text)."
            ),
            "{message}"
        );
    }

    #[test]
    fn fix_it_message_for_a_tool_nobody_misspelled_lists_what_each_tool_does() {
        // Issue 36: the 1.5B model called `rename_file`, was told "Did you mean `read_file`"
        // with read_file's schema, and called `rename_file` again three times.
        let calls = recover_tool_calls(
            r#"{"name": "forecast_weather", "arguments": {"city": "X"}}"#,
            &tools(),
            1,
        )
        .unwrap_or_default();
        let message = calls[0].fix_it_message(&tools()).unwrap_or_default();
        assert!(!message.contains("Did you mean"), "{message}");
        assert!(!message.contains("schema"), "{message}");
        assert!(
            message.contains("`get_weather` (Current weather for a city)"),
            "{message}"
        );
    }

    #[test]
    fn fix_it_message_for_a_name_from_another_toolset_names_the_tool_doing_its_job() {
        // Issue 36, development task d23: asked for a folder holding a file, the 1.5B model
        // called `create_folder`; `write_file` creates the folders of the path it writes.
        let write = agents_core::FunctionTool::untyped(
            "write_file",
            "Write a file (parent directories are created).",
            json!({
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"]
            }),
            |_: Value, _: agents_core::ToolContext| async {
                Ok::<_, agents_core::ToolError>("written")
            },
        )
        .with_other_names(&["create_folder", "mkdir"]);
        let tools = tools().with(write);
        let calls = recover_tool_calls(
            r#"{"name": "create_folder", "arguments": {"name": "reports"}}"#,
            &tools,
            1,
        )
        .unwrap_or_default();
        assert_eq!(calls[0].kind, RecoveredKind::UnknownTool);
        let message = calls[0].fix_it_message(&tools).unwrap_or_default();
        assert!(
            message.starts_with(
                "There is no tool named `create_folder`. For what `create_folder` would do, \
                 call `write_file`. The arguments schema of `write_file` is"
            ),
            "{message}"
        );
        assert!(
            message.contains(
                r#"{"name":"write_file","arguments":{"path":"<path>","content":"<content>"}}"#
            ),
            "{message}"
        );
        // a misspelling of a tool's own name is still answered as one
        let calls = recover_tool_calls(r#"{"name": "writefile", "arguments": {}}"#, &tools, 1)
            .unwrap_or_default();
        let message = calls[0].fix_it_message(&tools).unwrap_or_default();
        assert!(message.contains("Did you mean `write_file`?"), "{message}");
        assert!(!message.contains("For what"), "{message}");
    }

    #[test]
    fn a_reply_cut_inside_a_call_is_told_from_one_cut_inside_an_answer() {
        for cut in [
            "```json\n{\n  \"name\": \"write_file\",\n  \"arguments\": {\"content\": \"\\n\\n",
            "I'll write it:\n```json\n{\"name\": \"write_file\", \"argu",
            "<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls",
            "{\"name\": \"read_file\"",
        ] {
            assert!(cut_inside_a_call(cut), "{cut}");
        }
        for cut in [
            "It is sunny in Par",
            "```json\n{\"name\": \"a\"}\n```\nThe weather today is sunny and the tempera",
            "```json\n{\"city\": \"Paris\", \"temp",
            "Here is the config:\n```yaml\nname: shop\nport: 80",
            "<tool_call>{\"name\": \"a\"}</tool_call> and then I rea",
            "",
            "```",
        ] {
            assert!(!cut_inside_a_call(cut), "{cut}");
        }
    }

    #[test]
    fn a_reply_in_a_loop_is_told_from_a_long_answer() {
        let looped = "To replace the word, do this:\n\n".to_owned()
            + &"Here's the step-by-step process:\n\n1. **Read the content of `greeting.txt`**:\n\
                2. **Replace the word**:\n"
                .repeat(8);
        assert!(repeats_itself(&looped));
        let list: String = (1..=40).map(|n| format!("- item number {n}\n")).collect();
        assert!(!repeats_itself(&list), "different lines");
        let table = "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n| 5 | 6 |\n| 7 | 8 |";
        assert!(!repeats_itself(table), "short lines");
        assert!(!repeats_itself(
            "same line here\nsame line here\nsame line here"
        ));
        assert!(!repeats_itself(""));
    }

    #[test]
    fn first_sentences_are_cut_on_a_char_boundary() {
        assert_eq!(
            first_sentence("Reads a file. Then more.", 100),
            "Reads a file"
        );
        assert_eq!(
            first_sentence("Runs a command\nsecond line", 100),
            "Runs a command"
        );
        assert_eq!(first_sentence("ééééé", 3), "ééé…");
        assert_eq!(first_sentence("", 10), "");
    }

    #[test]
    fn ordinary_answers_are_left_alone() {
        assert_eq!(kinds("It is 22°C and sunny in Paris."), None);
        assert_eq!(kinds(r#"The data is {"city": "Paris", "temp": 22}."#), None);
        assert_eq!(
            kinds(r#"I will call {"name": "get_weather", "arguments": {"city": "Paris"}} now."#),
            None
        );
        assert_eq!(
            kinds("Here:\n```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"P\"}}\n```"),
            None
        );
        // JSON data that is not a call, even with a `name`.
        assert_eq!(kinds(r#"{"name": "widget", "version": "3.14.2"}"#), None);
        assert_eq!(kinds(r#"[1, 2, 3]"#), None);
        assert_eq!(kinds(""), None);
        assert_eq!(
            recover_tool_calls(
                r#"{"name": "get_weather", "arguments": {"city": "Paris"}}"#,
                &Tools::new(),
                1
            ),
            None
        );
    }

    #[test]
    fn a_known_tool_named_alone_is_a_call_without_arguments() {
        assert_eq!(
            kinds(r#"{"name": "echo"}"#),
            Some(vec![RecoveredKind::Complete])
        );
        assert_eq!(kinds(r#"{"name": "echo", "colour": "red"}"#), None);
    }
}
