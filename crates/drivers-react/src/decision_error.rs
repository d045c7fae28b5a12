//! `DecisionError`: why a model's ReAct reply cannot be used, in words the model can act on.

use std::borrow::Cow;

use agents_core::tools::doing_the_job_clause;
use drivers_toolcalling::{in_backticks, in_backticks_and};
use thiserror::Error;

/// Why a ReAct reply could not be read or does not fit the tools.
///
/// Every message is written to be sent back to the model so it can correct itself; see
/// [`DecisionError::feedback`].
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum DecisionError {
    /// The reply holds no JSON object.
    #[error("the reply contains no JSON object")]
    NoJson,
    /// A field has the wrong JSON type.
    #[error("field `{field}` must be {expected}, got {found}")]
    WrongFieldType {
        /// The field.
        field: String,
        /// What it should be.
        expected: String,
        /// What was there.
        found: String,
    },
    /// `type` is missing and cannot be inferred.
    #[error("field `type` is missing; set it to \"call_tool\" or \"final_answer\"")]
    MissingKind,
    /// `type` has an unknown value.
    #[error("field `type` must be \"call_tool\" or \"final_answer\", got {found}")]
    UnknownKind {
        /// The value found.
        found: String,
    },
    /// A `call_tool` decision names no tool.
    #[error("a call_tool decision needs `tool`, the name of the tool to call")]
    MissingTool,
    /// A `call_tool` decision while no tools are available.
    #[error(
        "no tools are available, so `call_tool` is not possible; answer with type \"final_answer\""
    )]
    NoTools,
    /// The tool is not one of the available tools.
    #[error("unknown tool `{tool}`{}; available tools: {}", doing_the_job_clause(tool, instead), .available.join(", "))]
    UnknownTool {
        /// The name the model used.
        tool: String,
        /// The tools that give `tool` among their other names (`write_file` for
        /// `create_folder`: `agents_core::Tools::known_as`), named to the model as the ones to
        /// use; usually empty.
        instead: Vec<String>,
        /// The names it may use.
        available: Vec<String>,
    },
    /// `args` is not a JSON object.
    #[error("`args` for tool `{tool}` must be a JSON object of named arguments, got {found}")]
    ArgsNotObject {
        /// The tool.
        tool: String,
        /// What was there.
        found: String,
    },
    /// Required arguments are missing.
    #[error("tool `{tool}` is missing required arguments: {}", .missing.join(", "))]
    MissingArguments {
        /// The tool.
        tool: String,
        /// The missing parameter names.
        missing: Vec<String>,
    },
    /// An argument has the wrong JSON type for the tool's schema.
    #[error("argument `{argument}` of tool `{tool}` must be {expected}, got {found}")]
    InvalidArgument {
        /// The tool.
        tool: String,
        /// The argument.
        argument: String,
        /// The type(s) the schema allows.
        expected: String,
        /// What was there.
        found: String,
    },
    /// A `final_answer` decision has no answer.
    #[error("a final_answer decision needs a non-empty `answer`")]
    MissingAnswer,
    /// A `final_answer` whose answer describes how to use a tool instead of answering ("To
    /// get the port, I'll use the `read_file` tool."): small local models write it in place
    /// of the call (issue 36). Asked about once per step; see [`ReActDriver`](crate::ReActDriver).
    #[error("the final answer describes how to use a tool instead of answering")]
    PlanAsAnswer {
        /// Whether a tool has run in the execution: then the results are there to answer
        /// from; otherwise the call is still to be made.
        tools_ran: bool,
    },
    /// A `final_answer` to a request for a change to files when every call of the execution
    /// that succeeded only read, or none ran: nothing has changed. Asked about once per step.
    #[error("the request asks for a change, and nothing has changed yet{}", nothing_changed_why(*.tools_ran, *.change_failed))]
    NothingChanged {
        /// Whether a tool has run in the execution.
        tools_ran: bool,
        /// Whether a call of a tool that changes things ran and failed.
        change_failed: bool,
    },
    /// A `final_answer` to a request to run something (a script, a command, the tests) when
    /// every call of the execution only read, or none ran: nothing has run it. Asked about
    /// once per step.
    #[error("the request asks to run something, and no call has run it{}", if *.tools_ran { ": the tools that ran only read" } else { "" })]
    NothingRan {
        /// Whether a tool has run in the execution.
        tools_ran: bool,
    },
    /// A `final_answer` that says files the request asks to change were changed when no call
    /// that worked changed them (`drivers_toolcalling::files_claimed_changed`): "The version
    /// in about.txt has been changed" after only a read of `about.txt`. Asked about once per
    /// step.
    #[error("your answer says {} {} changed, but no call has changed {}", files_named(.files), if .files.len() > 1 { "were" } else { "was" }, it_or_them(.files))]
    UnmadeChange {
        /// The files, as the request names them.
        files: Vec<String>,
    },
    /// A `final_answer` to a request to change files when calls that worked changed some of
    /// the files it names, and the calls that would change these failed
    /// (`drivers_toolcalling::files_no_call_used` over the calls that worked and are not
    /// read-only): asked to change `VERSION` and `about.txt`, the 1.5B model edited
    /// `VERSION`, failed to write and to edit `about.txt` and answered with its lines
    /// (development task d22 at ccd9c7d). A file the request names that no change was tried
    /// on (the source of a copy) is not asked about. Asked about once per step.
    #[error("the request asks to change {} too, and the calls that would change {} failed: no call that worked has changed {}", files_named(.files), it_or_them(.files), it_or_them(.files))]
    UnchangedFiles {
        /// The files, as the request names them.
        files: Vec<String>,
    },
    /// A `final_answer` to a request that names files no call of the execution has used:
    /// the answer did not come from them. Asked about once per step.
    #[error("the request names {}, and no tool call of yours has used {}, so your answer did not come from {}", files_named(.files), it_or_them(.files), it_or_them(.files))]
    UnusedFiles {
        /// The files, as the request names them.
        files: Vec<String>,
    },
    /// A `final_answer` that names the file holding the words a request asks about ("Which
    /// file mentions a zeppelin?") when no tool result holds them
    /// (`drivers_toolcalling::terms_no_result_holds`): no file was seen to hold them. Asked
    /// about once per step.
    #[error("no tool result contains {}, so no file was seen to hold {}: your answer names a file without having looked inside it", in_backticks(.terms, ", "), it_or_them(.terms))]
    UnseenTerms {
        /// The words the request asks a file to hold, lower-cased.
        terms: Vec<String>,
    },
    /// A `final_answer` that a directory listing among the tool results contradicts
    /// (`drivers_toolcalling::contradicted_listing`): "There are 5 Markdown files" beside
    /// `In all: 5 files (3 .md files, ...)`. Asked about once per step, quoting the line.
    #[error("your answer says {said}, but the listing says `{listed}`")]
    ContradictedListing {
        /// What the answer says: `5 markdown files`, "`alpha.log` is the largest".
        said: String,
        /// The listing's line that says otherwise.
        listed: String,
    },
    /// A `final_answer` that gives another setting's value for something no tool result
    /// names (`drivers_toolcalling::borrowed_value`): "The database password is admin."
    /// beside `user = admin`. Asked about once per step, quoting the line.
    #[error("your answer gives `{value}` for the {asked}, but no tool result mentions a {asked}: `{value}` is what the line `{line}` sets")]
    BorrowedValue {
        /// The value, lower-cased.
        value: String,
        /// The request's word the answer gives it for.
        asked: String,
        /// The result's line that sets the value.
        line: String,
    },
    /// A `final_answer` that gives values nothing the model was shown holds: an email address
    /// or a number of two digits or more that no tool result, the request or an earlier
    /// message holds (`drivers_toolcalling::unseen_values`): `support@example.com` after a
    /// search that showed only a file's name. Asked about once per step.
    #[error("your answer gives {}, which no tool result shows", in_backticks(.values, ", "))]
    UnseenValues {
        /// The values, as the answer wrote them (addresses lower-cased).
        values: Vec<String>,
    },
    /// A `final_answer` to a request for arithmetic that gives numbers no tool result shows,
    /// without the calculation (`drivers_toolcalling::uncalculated_numbers`): "The total is
    /// 890." Asked about once per step.
    #[error("your answer gives {}, which no tool result shows, without the calculation that gives {}", in_backticks(.numbers, ", "), it_or_them(.numbers))]
    UncalculatedNumbers {
        /// The numbers, as the answer wrote them (group commas left out).
        numbers: Vec<String>,
    },
    /// A `final_answer` for one of several files that a read showed for one name, when the
    /// request named none of them (`drivers_toolcalling::one_of_several_files`). Asked about
    /// once per step.
    #[error("the tool result shows {} files of that name: {}, and the request does not say which one it means; your answer is for one of them only", .files.len(), in_backticks(.files, ", "))]
    OneOfSeveralFiles {
        /// The files the read showed.
        files: Vec<String>,
    },
    /// A `final_answer` that says yes or no about a setting whose line in a tool result says
    /// the opposite (`drivers_toolcalling::contradicted_setting`): "Yes, debug mode is
    /// enabled." beside `debug: false`. Asked about once per step.
    #[error("your answer does not agree with the tool result, which says `{line}`")]
    ContradictedSetting {
        /// The result's line (`debug: false`).
        line: String,
    },
    /// A `final_answer` that gives one of the different values several files set for what it
    /// names, without its file, when the request named none
    /// (`drivers_toolcalling::ambiguous_value`): "The port is 8080." beside
    /// `config.dev.yaml` (8080) and `config.prod.yaml` (443). Asked about once per step.
    #[error("the tool results show `{key}` set in more than one file: {}; your answer gives one value without saying which file it comes from", files_and_values(.values))]
    AmbiguousValue {
        /// The setting's key (`port`).
        key: String,
        /// Each file and the value it sets.
        values: Vec<(String, String)>,
    },
    /// A `final_answer` to a request that names an operation and its operand ("times 3")
    /// that gives only numbers the results or the request hold, without a calculation
    /// (`drivers_toolcalling::operand_answer`): "12". Asked about once per step.
    #[error("the request asks for a calculation (`{operation}`), but your answer gives only {}, which the tool results or the request already hold", in_backticks(.numbers, ", "))]
    OperandAnswer {
        /// The operation as the request wrote it (`times 3`).
        operation: String,
        /// The numbers, as the answer wrote them (group commas left out).
        numbers: Vec<String>,
    },
    /// A `final_answer` whose own arithmetic is wrong (`drivers_toolcalling::wrong_arithmetic`):
    /// "120 + 340 + 215 + 95 = 890". Asked about once per step, with the value.
    #[error("your answer says {written}, but {expression} = {value}")]
    WrongArithmetic {
        /// The expression and the wrong result, as the answer wrote them.
        written: String,
        /// The expression.
        expression: String,
        /// Its value.
        value: String,
    },
}

/// `files` in backticks, joined for a sentence: "`a.txt`", "`a.txt`, `b.txt` and `c.txt`".
fn files_named(files: &[String]) -> String {
    if files.is_empty() {
        "a file".to_owned()
    } else {
        in_backticks_and(files)
    }
}

fn nothing_changed_why(tools_ran: bool, change_failed: bool) -> &'static str {
    if change_failed {
        ": the calls that would change files failed"
    } else if tools_ran {
        ": the tools that ran only read"
    } else {
        ""
    }
}

/// "`a.yaml` sets 8080, `b.yaml` sets 443".
fn files_and_values(values: &[(String, String)]) -> String {
    values
        .iter()
        .map(|(file, value)| format!("`{file}` sets {value}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn it_or_them(files: &[String]) -> &'static str {
    if files.len() > 1 {
        "them"
    } else {
        "it"
    }
}

impl DecisionError {
    /// The correction message for the model: what was wrong and what to do.
    ///
    /// ```
    /// use drivers_react::DecisionError;
    ///
    /// let feedback = DecisionError::MissingAnswer.feedback();
    /// assert!(feedback.contains("a final_answer decision needs a non-empty `answer`"));
    /// ```
    pub fn feedback(&self) -> String {
        // The questions about a final answer say what to do instead; they name no excuse
        // (told "if it cannot be made, say why", the 1.5B model answered that the tool had
        // not been run yet: `drivers_toolcalling`'s change-request notes).
        let next: Cow<'static, str> = match self {
            DecisionError::PlanAsAnswer { tools_ran: true } => Cow::Borrowed(
                "Do not describe tools or calls. If the tool results above answer the question, \
                 give those facts in \"answer\"; if a result you need is missing, reply with a \
                 \"call_tool\" decision for it.",
            ),
            DecisionError::PlanAsAnswer { tools_ran: false } => Cow::Borrowed(
                "Do not describe tools or calls. No tool has run for this request: if it needs \
                 a tool, reply with a \"call_tool\" decision now. If the user only asked how \
                 something is done, give that answer again.",
            ),
            DecisionError::NothingChanged {
                change_failed: true,
                ..
            } => Cow::Borrowed(
                "Make the change now: reply with a \"call_tool\" decision for the tool that \
                 makes it, doing what the error above asks.",
            ),
            DecisionError::NothingChanged {
                tools_ran: true, ..
            } => Cow::Borrowed(
                "Make the change now: reply with a \"call_tool\" decision for the tool that \
                 makes it, using what you read above.",
            ),
            DecisionError::NothingChanged {
                tools_ran: false, ..
            } => Cow::Borrowed(
                "Make the change now: reply with a \"call_tool\" decision for the tool that \
                 makes it.",
            ),
            DecisionError::UnmadeChange { .. } | DecisionError::UnchangedFiles { .. } => Cow::Borrowed(
                "Make the change now: reply with a \"call_tool\" decision for the tool that \
                 makes it, using what you read above.",
            ),
            DecisionError::NothingRan { .. } => Cow::Borrowed(
                "Run it now: reply with a \"call_tool\" decision for the tool that runs it, \
                 then answer from what it prints.",
            ),
            DecisionError::UnusedFiles { files } => {
                let it = it_or_them(files);
                let them = if files.len() > 1 {
                    "those files"
                } else {
                    "that file"
                };
                Cow::Owned(format!(
                    "If the request needs {them}, reply with a \"call_tool\" decision now (read \
                     {it}, or change {it} as asked). If it does not, give your answer again."
                ))
            }
            DecisionError::UnseenTerms { .. } => Cow::Borrowed(
                "Search the files for it or read them now: reply with a \"call_tool\" \
                 decision, then answer from what it returns.",
            ),
            DecisionError::ContradictedListing { .. } => {
                Cow::Borrowed("Read that line again and give your final_answer from what it says.")
            }
            DecisionError::BorrowedValue { .. } => Cow::Borrowed(
                "Give your final_answer from what the results say: if what was asked for is \
                 not there, say so.",
            ),
            DecisionError::UnseenValues { .. } => Cow::Borrowed(
                "Give only values the results show: if the file that holds what was asked has \
                 not been read, reply with a \"call_tool\" decision that reads it; if what was \
                 asked is not there, say so in your final_answer.",
            ),
            DecisionError::ContradictedSetting { .. } => Cow::Borrowed(
                "Read that line again and give your final_answer from what it says.",
            ),
            DecisionError::AmbiguousValue { .. } => Cow::Borrowed(
                "Give your final_answer with each file and its value, or ask the user which \
                 file they mean.",
            ),
            DecisionError::OneOfSeveralFiles { .. } => Cow::Borrowed(
                "Give your final_answer for each file, naming it, or ask the user which one \
                 they mean.",
            ),
            DecisionError::UncalculatedNumbers { .. } | DecisionError::OperandAnswer { .. } => Cow::Borrowed(
                "Write the calculation out in your final_answer with the numbers from the tool \
                 results (for example `12 + 30 = 42`), then the result.",
            ),
            DecisionError::WrongArithmetic { .. } => Cow::Borrowed(
                "Correct the arithmetic and give your final_answer again with the right number.",
            ),
            _ => Cow::Borrowed(
                "Reply again with exactly one JSON object, either {\"thought\": ..., \"type\": \
                 \"call_tool\", \"tool\": ..., \"args\": {...}} or {\"thought\": ..., \"type\": \
                 \"final_answer\", \"answer\": ...}.",
            ),
        };
        format!("Your last reply could not be used: {self}. {next}")
    }
}

/// A short rendering of a JSON value for error messages.
pub(crate) fn describe(value: &serde_json::Value) -> String {
    let kind = match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "a list",
        serde_json::Value::Object(_) => "an object",
    };
    let text = value.to_string();
    let shown: String = text.chars().take(60).collect();
    let ellipsis = if shown.len() < text.len() { "..." } else { "" };
    if value.is_null() {
        kind.to_owned()
    } else {
        format!("{kind} ({shown}{ellipsis})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_name_what_is_wrong() {
        let unknown = DecisionError::UnknownTool {
            tool: "fly".into(),
            instead: Vec::new(),
            available: vec!["search".into(), "calc".into()],
        };
        assert_eq!(
            unknown.to_string(),
            "unknown tool `fly`; available tools: search, calc"
        );
        let other_name = DecisionError::UnknownTool {
            tool: "grep".into(),
            instead: vec!["search".into()],
            available: vec!["search".into(), "calc".into()],
        };
        assert_eq!(
            other_name.to_string(),
            "unknown tool `grep`; for what `grep` does, use `search`; available tools: search, \
             calc"
        );
        let missing = DecisionError::MissingArguments {
            tool: "calc".into(),
            missing: vec!["a".into(), "b".into()],
        };
        assert_eq!(
            missing.to_string(),
            "tool `calc` is missing required arguments: a, b"
        );
    }

    #[test]
    fn a_plan_is_told_to_call_or_answer_from_the_results() {
        let before = DecisionError::PlanAsAnswer { tools_ran: false }.feedback();
        assert!(
            before.contains("No tool has run") && before.contains("\"call_tool\" decision now")
        );
        let after = DecisionError::PlanAsAnswer { tools_ran: true }.feedback();
        assert!(after.contains("tool results above") && !after.contains("No tool has run"));
    }

    #[test]
    fn questions_about_an_answer_name_what_is_missing() {
        let unused = DecisionError::UnusedFiles {
            files: vec!["b.txt".into()],
        };
        assert_eq!(
            unused.to_string(),
            "the request names `b.txt`, and no tool call of yours has used it, so your answer did not come from it"
        );
        let two = DecisionError::UnusedFiles {
            files: vec!["a.txt".into(), "b.txt".into(), "c.txt".into()],
        };
        assert!(two.to_string().starts_with("the request names `a.txt`, `b.txt` and `c.txt`, and no tool call of yours has used them"));
        let read_only = DecisionError::NothingChanged {
            tools_ran: true,
            change_failed: false,
        }
        .feedback();
        assert!(
            read_only.contains("the tools that ran only read")
                && read_only.contains("using what you read above"),
            "{read_only}"
        );
        let failed = DecisionError::NothingChanged {
            tools_ran: true,
            change_failed: true,
        }
        .feedback();
        assert!(
            failed.contains("the calls that would change files failed")
                && failed.contains("doing what the error above asks"),
            "{failed}"
        );
        let none = DecisionError::NothingChanged {
            tools_ran: false,
            change_failed: false,
        }
        .feedback();
        assert!(
            !none.contains("only read") && !none.contains("cannot"),
            "{none}"
        );
    }

    #[test]
    fn describe_shortens_long_values() {
        assert_eq!(describe(&json!(5)), "a number (5)");
        assert_eq!(describe(&json!(null)), "null");
        let long = describe(&json!("x".repeat(200)));
        assert!(long.ends_with("...)") && long.len() < 100, "{long}");
    }
}
