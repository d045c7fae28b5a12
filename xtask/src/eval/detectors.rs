//! What is wrong with an answer, beyond being wrong: the detectors the eval reports per
//! configuration. Pure functions of the saved texts, so each has unit tests with real answers
//! (the ones quoted in issues 28 and 36) and near misses.
//!
//! - [`plan_or_announcement`]: a saved answer that holds a call written as text (call-shaped
//!   JSON anywhere, `<tool_call>` tags), that ends announcing a call ("Here's the JSON call:"),
//!   or that is a plan to use a tool ("you can use the `read_file` function ...").
//! - [`copies_tool_error`]: a saved answer that starts with `Error:` (how a failed tool result
//!   reads to the model) or quotes a tool error's text (twelve words in a row, or the fix-it
//!   phrases only tool errors use).
//! - [`repeated_after_result`]: calls made again, with the same tool and arguments, after a
//!   result for that call came back in the same execution.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::longrun::check::normalize;

/// Why an answer counts as a plan or an announcement instead of an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotAnAnswer {
    /// It holds a JSON object naming a tool with arguments.
    CallJson,
    /// It holds `<tool_call>` tags.
    ToolCallTag,
    /// It ends announcing a call (a last sentence ending in `:` about a call, a tool, a
    /// function, JSON or a command; or such a sentence and a code block that ends the answer).
    AnnouncesCall,
    /// It says a tool is to be used ("you can use the `read_file` function", "I will call").
    Plan,
}

impl NotAnAnswer {
    pub fn as_str(self) -> &'static str {
        match self {
            NotAnAnswer::CallJson => "call_json",
            NotAnAnswer::ToolCallTag => "tool_call_tag",
            NotAnAnswer::AnnouncesCall => "announces_call",
            NotAnAnswer::Plan => "plan",
        }
    }
}

/// The default tools of `agents run` (file tools and bash).
const TOOL_NAMES: &[&str] = &[
    "read_file",
    "write_file",
    "edit_file",
    "append_file",
    "move_file",
    "list_dir",
    "search_files",
    "bash",
];

/// Words that make a sentence about a call.
const CALL_WORDS: &[&str] = &[
    "call", "tool", "function", "json", "command", "invoke", "execute", "run ", "running",
    "request",
];

/// Openings of a sentence that says a tool is about to be (or could be) used.
const PLAN_OPENINGS: &[&str] = &[
    "you can use",
    "you could use",
    "you should use",
    "you need to use",
    "you would use",
    "you can call",
    "you can make a tool call",
    "you can run",
    "i will use",
    "i'll use",
    "i will now use",
    "i'm going to use",
    "i am going to use",
    "i would use",
    "i need to use",
    "i can use",
    "i will call",
    "i'll call",
    "i will run",
    "i'll run",
    "let me use",
    "let me call",
    "let me run",
    "let's use",
    "let's call",
    "let's run",
    "we can use",
    "we need to use",
    "we will use",
    "we'll use",
    "we should use",
    "we can call",
];

/// The saved answer the detectors judge: the model's (its reply, or what it wrote when asked
/// to answer on a stop), not the loop's notice (`answered_by` `notice`), which says the task
/// was not finished and quotes the last error by design. Counted, a notice that quotes a tool
/// error was a "copied tool error", though no model wrote it and nobody reads it as an answer
/// (the checks never pass one either).
pub fn judged_answer<'a>(answer: Option<&'a str>, answered_by: Option<&str>) -> Option<&'a str> {
    answer.filter(|_| answered_by != Some("notice"))
}

/// Whether (and why) `answer` is a plan or an announcement of a call rather than an answer.
pub fn plan_or_announcement(answer: &str) -> Option<NotAnAnswer> {
    if answer.contains("<tool_call>") || answer.contains("</tool_call>") {
        return Some(NotAnAnswer::ToolCallTag);
    }
    if !calls_in_text(answer).is_empty() {
        return Some(NotAnAnswer::CallJson);
    }
    if announces_call(answer) {
        return Some(NotAnAnswer::AnnouncesCall);
    }
    if plans_tool_use(answer) {
        return Some(NotAnAnswer::Plan);
    }
    None
}

/// The calls written as JSON in `text`: objects naming a tool (`name`, `tool`, `tool_name`,
/// `function`, or an OpenAI-style `{"function": {...}}`) with arguments (`arguments`, `args`,
/// `parameters`, `input`: an object, or a string holding one). Each as (name, arguments).
pub fn calls_in_text(text: &str) -> Vec<(String, Value)> {
    let mut calls = Vec::new();
    let mut skip_to = 0;
    for (at, _) in text.match_indices('{') {
        if at < skip_to {
            continue;
        }
        let mut values = serde_json::Deserializer::from_str(&text[at..]).into_iter::<Value>();
        let Some(Ok(value)) = values.next() else {
            continue;
        };
        let end = at + values.byte_offset();
        let mut found = Vec::new();
        collect_calls(&value, &mut found);
        if !found.is_empty() {
            calls.extend(found);
            skip_to = end;
        }
    }
    calls
}

fn collect_calls(value: &Value, found: &mut Vec<(String, Value)>) {
    match value {
        Value::Array(items) => items.iter().for_each(|v| collect_calls(v, found)),
        Value::Object(object) => {
            if let Some(Value::Array(items)) = object.get("tool_calls") {
                items.iter().for_each(|v| collect_calls(v, found));
                return;
            }
            let object = match object.get("function") {
                Some(Value::Object(inner)) => inner,
                _ => object,
            };
            let name = ["name", "tool", "tool_name", "function"]
                .iter()
                .find_map(|k| object.get(*k).and_then(Value::as_str));
            let arguments = ["arguments", "args", "parameters", "input"]
                .iter()
                .find_map(|k| object.get(*k))
                .and_then(|v| match v {
                    Value::Object(_) => Some(v.clone()),
                    Value::String(s) => serde_json::from_str::<Value>(s)
                        .ok()
                        .filter(Value::is_object),
                    _ => None,
                });
            if let (Some(name), Some(arguments)) = (name, arguments) {
                found.push((name.to_owned(), arguments));
            }
        }
        _ => {}
    }
}

/// The answer's last sentence ends with `:` and is about a call; or such a sentence is
/// followed only by a code block.
fn announces_call(answer: &str) -> bool {
    let mut text = answer.trim_end();
    // A code block that ends the answer: judge the sentence before it.
    if let Some(body) = text.strip_suffix("```") {
        if let Some(open) = body.rfind("```") {
            text = body[..open].trim_end();
        }
    }
    let text = normalize(text);
    let text = text.trim_end_matches(|c: char| c.is_whitespace());
    let ends_open = text.ends_with(':')
        || text.ends_with("like this")
        || text.ends_with("as follows")
        || text.ends_with("like so");
    if !ends_open {
        return false;
    }
    let body = text.trim_end_matches(':');
    let start = body.rfind(['.', '!', '?', '\n']).map_or(0, |i| i + 1);
    let sentence = format!("{} ", &body[start..]);
    // "Here is the output of the command:" introduces a result, not a call.
    let reports = REPORT_WORDS.iter().any(|w| sentence.contains(w));
    !reports
        && (CALL_WORDS.iter().any(|w| sentence.contains(w))
            || TOOL_NAMES.iter().any(|t| sentence.contains(t)))
}

/// Words of a sentence that introduces what a call returned.
const REPORT_WORDS: &[&str] = &[
    "output", "result", "returned", "returns", "prints", "printed", "shows", "showed", "content",
];

/// A sentence saying a tool is to be used: a plan opening followed closely by a tool name, a
/// backquoted name, "tool", "function" or "command".
fn plans_tool_use(answer: &str) -> bool {
    let lower = answer.to_lowercase().replace(['’', '‘'], "'");
    PLAN_OPENINGS.iter().any(|opening| {
        lower.match_indices(opening).any(|(at, _)| {
            let after: String = lower[at + opening.len()..].chars().take(48).collect();
            after.contains('`')
                || ["tool", "function", "command"]
                    .iter()
                    .any(|w| after.contains(w))
                || TOOL_NAMES.iter().any(|t| after.contains(t))
        })
    })
}

/// Phrases that only the fix-it texts of tool errors use.
const FIX_IT_PHRASES: &[&str] = &[
    "there is no tool named",
    "the tools are:",
    "a call looks like:",
    "arguments schema of",
    "this tool call was not executed",
    "could not be read: ",
    "arguments must be one json object",
    "send the call alone",
];

/// Words in a row an answer must share with a tool error to count as copying it.
const COPIED_WORDS: usize = 12;

/// Whether `answer` copies a tool error: it starts with `Error:`, holds a fix-it phrase, or
/// repeats [`COPIED_WORDS`] words in a row of one of `tool_errors` (the execution's failed tool
/// results). A short error relayed in the answer's own words ("report.txt does not exist") is
/// an answer, not a copy.
pub fn copies_tool_error(answer: &str, tool_errors: &[String]) -> bool {
    let text = normalize(answer);
    if text.starts_with("error:") || text.starts_with("error ") {
        return true;
    }
    if FIX_IT_PHRASES.iter().any(|p| text.contains(p)) {
        return true;
    }
    let answer_words = words(&text);
    let windows: BTreeSet<&[String]> = answer_words.windows(COPIED_WORDS).collect();
    tool_errors.iter().any(|error| {
        let error_words = words(&normalize(error));
        error_words
            .windows(COPIED_WORDS)
            .any(|w| windows.contains(w))
    })
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '\''))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The calls of one step: those the model asked for (natively, recovered, or written as
/// text), and those that got a result, as `name` + canonical arguments.
#[derive(Debug, Default)]
pub struct StepCalls {
    pub requested: Vec<String>,
    pub answered: Vec<String>,
}

/// How many calls of an execution repeat a call (same tool, same arguments) whose result came
/// back in an earlier step. A call written twice in one reply counts once.
pub fn repeated_after_result(steps: &[StepCalls]) -> usize {
    let mut answered: BTreeSet<&str> = BTreeSet::new();
    let mut repeated = 0;
    for step in steps {
        let requested: BTreeSet<&str> = step.requested.iter().map(String::as_str).collect();
        repeated += requested.iter().filter(|k| answered.contains(*k)).count();
        answered.extend(step.answered.iter().map(String::as_str));
    }
    repeated
}

/// A call's identity: its name and its arguments as JSON with sorted keys.
pub fn call_key(name: &str, arguments: &Value) -> String {
    let arguments = match arguments {
        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| arguments.clone()),
        other => other.clone(),
    };
    format!("{name}{}", canonical(&arguments))
}

/// JSON with object keys sorted, so that the same call with keys in another order matches.
pub fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let sorted: BTreeMap<&String, String> =
                map.iter().map(|(k, v)| (k, canonical(v))).collect();
            let inner: Vec<String> = sorted.iter().map(|(k, v)| format!("{k:?}:{v}")).collect();
            format!("{{{}}}", inner.join(","))
        }
        Value::Array(items) => {
            format!(
                "[{}]",
                items.iter().map(canonical).collect::<Vec<_>>().join(",")
            )
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loops_notice_is_not_judged_as_the_models_answer() {
        let notice = "I could not finish this task: an error stopped me. The last error was: \
                      tool `delete_file`: There is no tool named `delete_file`. The tools are: \
                      `read_file`.";
        let errors =
            ["There is no tool named `delete_file`. The tools are: `read_file`.".to_owned()];
        assert!(copies_tool_error(notice, &errors));
        assert_eq!(judged_answer(Some(notice), Some("notice")), None);
        // What the model wrote is judged, on a stop too.
        assert_eq!(judged_answer(Some(notice), None), Some(notice));
        assert_eq!(
            judged_answer(Some(notice), Some("synthesize")),
            Some(notice)
        );
    }
    use serde_json::json;

    fn flagged(answer: &str) -> Option<&'static str> {
        plan_or_announcement(answer).map(NotAnAnswer::as_str)
    }

    #[test]
    fn the_plans_and_announcements_quoted_in_the_issues_are_flagged() {
        // Issue 36: the plan saved as the answer (the call in a fence after it).
        let plan = "To find the total of the amount column in sales.csv, you can use the \
                    `read_file` function to read the file and then sum the values. Here's the \
                    JSON call:\n\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \
                    \"sales.csv\"}}\n```";
        assert_eq!(flagged(plan), Some("call_json"));
        // The same plan without its fence: it ends announcing the call.
        let cut = "To find the total of the amount column in sales.csv, you can use the \
                   `read_file` function. Here's the JSON call:";
        assert_eq!(flagged(cut), Some("announces_call"));
        // Issue 28: three saved announcements of calls that never ran.
        assert_eq!(
            flagged("To use the `list_dir` function, you can make a tool call like this:"),
            Some("announces_call")
        );
        assert_eq!(
            flagged(
                "Here's the result: {\"name\": \"read_file\", \"arguments\": {\"path\": \"todo.txt\"}}"
            ),
            Some("call_json")
        );
        assert_eq!(
            flagged("To search for the word, I'll call the tool:\n```\nsearch_files error\n```"),
            Some("announces_call")
        );
    }

    #[test]
    fn every_call_form_counts_as_call_json() {
        for answer in [
            "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n```",
            "{\"thought\": \"x\", \"type\": \"call_tool\", \"tool\": \"list_files\", \"args\": {}}",
            "{\"function\": {\"name\": \"bash\", \"arguments\": \"{\\\"command\\\": \\\"ls\\\"}\"}}",
            "{\"tool_calls\": [{\"name\": \"list_dir\", \"parameters\": {\"path\": \".\"}}]}",
            "First {\"name\": \"list_dir\", \"input\": {}} then done.",
        ] {
            assert_eq!(flagged(answer), Some("call_json"), "{answer}");
        }
        assert_eq!(
            flagged("<tool_call>\n{\"name\": \"list_dir\"}\n</tool_call>"),
            Some("tool_call_tag")
        );
    }

    #[test]
    fn plans_in_prose_are_flagged() {
        assert_eq!(
            flagged("To find the email, I will use the read_file tool on contact.txt."),
            Some("plan")
        );
        assert_eq!(
            flagged("Let me call `list_dir` to see the folder."),
            Some("plan")
        );
    }

    #[test]
    fn answers_are_not_flagged() {
        for answer in [
            "The port is 8472.",
            "The file holds {\"version\": \"3.14.2\"}.",
            "I used `read_file` on config.ini: the port is 8472.",
            "The files are:\n- apple.txt\n- banana.md\n- cherry.csv",
            "The script prints:\n```\nchecksum: 8643\n```",
            "Here is the output of the `wc -l` command:\n```\n7 names.txt\n```",
            "The bash command returned:\n```\nchecksum: 8643\n```",
            "The total is 770 (120 + 340 + 215 + 95).",
            "It contains {\"name\": \"widget\", \"version\": \"3.14.2\"}.",
            "The third line is: the river hums at noon",
            "The file report.txt does not exist in the workspace.",
            "I'll be glad to help with anything else.",
        ] {
            assert_eq!(flagged(answer), None, "{answer}");
        }
    }

    #[test]
    fn copied_tool_errors_are_flagged() {
        // Issue 36: the fix-it text of an unknown tool, saved as the answer.
        let error = "There is no tool named `rename_file`. Did you mean `read_file` or \
                     `write_file`? The tools are: `read_file`, `write_file`, `edit_file`, \
                     `list_dir`, `search_files`, `bash`.";
        assert!(copies_tool_error(
            &format!("Error: {error}"),
            &[error.to_owned()]
        ));
        assert!(copies_tool_error(
            "I tried, but there is no tool named rename_file.",
            &[]
        ));
        let long = "cannot write `out/report.txt`: the parent folder out does not exist in \
                    the workspace, create it first with bash or write a file inside it";
        assert!(copies_tool_error(
            "The parent folder out does not exist in the workspace, create it first with bash \
             or write a file inside it.",
            &[long.to_owned()]
        ));
    }

    #[test]
    fn relaying_a_short_error_is_an_answer() {
        let errors = ["cannot read `report.txt`: no such file or directory".to_owned()];
        assert!(!copies_tool_error(
            "The file report.txt does not exist: there is no such file or directory.",
            &errors
        ));
        assert!(!copies_tool_error("The port is 8472.", &errors));
        assert!(!copies_tool_error(
            "There were errors in 3 lines of app.log.",
            &errors
        ));
    }

    #[test]
    fn only_calls_after_their_result_are_repeats() {
        let key = call_key("read_file", &json!({"path": "sales.csv"}));
        let same = call_key("read_file", &json!("{\"path\": \"sales.csv\"}"));
        assert_eq!(key, same, "string arguments are the same call");
        let step = |requested: &[&String], answered: &[&String]| StepCalls {
            requested: requested.iter().map(|s| (*s).clone()).collect(),
            answered: answered.iter().map(|s| (*s).clone()).collect(),
        };
        // Issue 36's run: the same call three times, the third dropped (requested, no result).
        let run = [
            step(&[&key], &[&key]),
            step(&[&key], &[&key]),
            step(&[&key], &[]),
        ];
        assert_eq!(repeated_after_result(&run), 2);
        // Written twice in one reply: not after a result.
        assert_eq!(repeated_after_result(&[step(&[&key, &key], &[&key])]), 0);
        // Another call in between, or different arguments: not a repeat.
        let other = call_key("read_file", &json!({"path": "b.csv"}));
        assert_eq!(
            repeated_after_result(&[step(&[&key], &[&key]), step(&[&other], &[&other])]),
            0
        );
    }
}
