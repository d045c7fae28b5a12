//! An answer that gives one of several values the results show for what was asked, without
//! saying where it comes from. Asked "What port does the config file set?" in a folder with
//! `config.dev.yaml` (port 8080) and `config.prod.yaml` (port 443), the 1.5B model searched
//! both, was shown both lines, and answered "The port set in the config file is 8080." (issue
//! 36, development task d26, 2026-12-06): the person does not learn that there were two, nor
//! which one the answer is.
//!
//! After the tools ran, for a request that names no file, an answer that names the setting
//! (its key, as a word), holds one of its values and no other, and names no file is asked
//! about once when the results show the key set to different values in different files (a
//! file is the one a result's line names last before the setting: a search's heading, a
//! `path:line:` prefix). One key set twice in one file (two sections) is not judged. Linear
//! in the answer and the results.

use messages::{Message, Messages, Role, ToolCall};
use serde_json::Value;

use crate::latest_results::{execution_messages, request, text_of};
use crate::misquoted_result::unnumbered;
use crate::setting_line::key_value;
use crate::unread_file::{named_files, names_a_file};
use crate::word_set::contains_word;

/// The longest answer judged: a value is given in a sentence or two.
const MAX_ANSWER_BYTES: usize = 600;

/// A setting the results show with different values in different files, and the answer
/// gives one of them: named by the nudge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AmbiguousValue {
    /// The setting's key, as the results write it (`port`).
    pub key: String,
    /// Each file and the value it sets, in the order the results show them.
    pub values: Vec<(String, String)>,
}

impl AmbiguousValue {
    /// What the model is told after an answer that gives one of these values.
    pub fn nudge(&self) -> String {
        let values = self
            .values
            .iter()
            .map(|(file, value)| format!("`{file}` sets {value}"))
            .collect::<Vec<_>>()
            .join(", ");
        format!(
            "The tool results above show `{}` set in more than one file: {values}. Your last \
             reply gives one value without saying which file it comes from. Answer with each \
             file and its value, or ask the user which file they mean.",
            self.key
        )
    }
}

/// The settings of `result`, each with the file its line is in: the last file a line of the
/// result named before it, or else the file its call named (`read_file`'s path), if any.
fn settings_by_file(result: &str, called: Option<&str>) -> Vec<(Option<String>, String, String)> {
    let mut file: Option<String> = called.map(str::to_owned);
    let mut settings = Vec::new();
    for line in result.lines() {
        if let Some(named) = named_files(line).last() {
            file = Some(named.to_owned());
        }
        if let Some((key, value)) = key_value(unnumbered(line).trim()) {
            settings.push((file.clone(), key.to_lowercase(), value.to_lowercase()));
        }
    }
    settings
}

/// The file a call's string argument names as a whole (`{"path": "config.dev.yaml"}`), if
/// one does.
fn named_file_argument(call: &ToolCall) -> Option<&str> {
    call.arguments()
        .as_object()?
        .values()
        .filter_map(Value::as_str)
        .find(|value| named_files(value).next() == Some(*value))
}

/// Whether `answer` is judged: short, and naming no file.
fn judged(answer: &str) -> bool {
    answer.len() <= MAX_ANSWER_BYTES && named_files(answer).next().is_none()
}

/// The setting `answer` gives one value of, among different values the results of the
/// running execution in `conversation` show in different files (see [`ambiguous_value`]).
/// `None` when no tool has returned.
pub(crate) fn ambiguous_in_view(answer: &str, conversation: &Messages) -> Option<AmbiguousValue> {
    if !judged(answer) {
        return None;
    }
    // The execution in the order the model read it (it is found newest first).
    let mut execution: Vec<&Message> = execution_messages(conversation).collect();
    execution.reverse();
    let call_of = |id: &str| {
        execution
            .iter()
            .flat_map(|message| message.tool_calls())
            .find(|call| call.id() == id)
    };
    let results = execution
        .iter()
        .filter(|message| message.role() == Role::Tool)
        .map(|message| (message.tool_call_id().and_then(call_of), text_of(message)));
    let request = request(conversation).map(text_of).unwrap_or_default();
    ambiguous_value(answer, &request, results)
}

/// The setting `answer` gives one value of, among different values `results` show in
/// different files (see the module's documentation): `results` are the execution's tool
/// results in the order the model read them, each with its call when known (a call's path
/// names the file of a `read_file` result). `None` for a request that names a file.
///
/// ```
/// use drivers_toolcalling::ambiguous_value;
/// use messages::ToolCall;
///
/// let results = [
///     "1 line of `config.dev.yaml` contains `port`:\n1: port: 8080",
///     "1 line of `config.prod.yaml` contains `port`:\n1: port: 443",
/// ];
/// let results = || results.iter().map(|result| (None::<&ToolCall>, *result));
/// let asked = "What port does the config file set?";
/// let found = ambiguous_value("The port is 8080.", asked, results());
/// assert_eq!(found.map(|found| found.values.len()), Some(2));
/// assert_eq!(ambiguous_value("dev: port 8080, prod: port 443.", asked, results()), None);
/// ```
pub fn ambiguous_value<'c, S: AsRef<str>>(
    answer: &str,
    request: &str,
    results: impl IntoIterator<Item = (Option<&'c ToolCall>, S)>,
) -> Option<AmbiguousValue> {
    if !judged(answer) || names_a_file(request) {
        return None;
    }
    let settings: Vec<(String, String, String)> = results
        .into_iter()
        .flat_map(|(call, result)| {
            settings_by_file(result.as_ref(), call.and_then(named_file_argument))
        })
        .filter_map(|(file, key, value)| Some((file?, key, value)))
        .collect();
    if settings.len() < 2 {
        return None;
    }
    let answer = answer.to_lowercase();
    let mut judged: Vec<&str> = Vec::new();
    for (_, key, _) in &settings {
        if judged.contains(&key.as_str()) || !contains_word(&answer, key) {
            continue;
        }
        judged.push(key);
        let mut values: Vec<(String, String)> = Vec::new();
        for (file, other_key, value) in &settings {
            if other_key == key && !values.iter().any(|(seen, _)| seen == file) {
                values.push((file.clone(), value.clone()));
            }
        }
        let distinct =
            |values: &[(String, String)]| values.iter().any(|(_, value)| value != &values[0].1);
        let given = values
            .iter()
            .filter(|(_, value)| contains_word(&answer, value))
            .count();
        if values.len() >= 2 && distinct(&values) && given == 1 {
            return Some(AmbiguousValue {
                key: key.clone(),
                values,
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tools::after_one_call;
    use messages::{Message, ToolCall};
    use proptest::prelude::*;
    use serde_json::json;

    const D26: &str = "(no file or directory is named `config`; searched the 2 files whose \
                       names begin with `config.`: `config.dev.yaml`, `config.prod.yaml`)\n1 \
                       line of `config.dev.yaml` contains `port`:\n1: port: 8080\n1 line of \
                       `config.prod.yaml` contains `port`:\n1: port: 443";

    fn after(request: &str, result: &str) -> Messages {
        after_one_call(request, "search_files", json!({"pattern": "port"}), result)
    }

    const ASKED: &str = "What port does the config file set?";

    #[test]
    fn one_of_two_files_values_given_without_its_file_is_found_with_both() {
        let found = ambiguous_in_view(
            "The port set in the config file is 8080.",
            &after(ASKED, D26),
        );
        let expected = AmbiguousValue {
            key: "port".to_owned(),
            values: vec![
                ("config.dev.yaml".to_owned(), "8080".to_owned()),
                ("config.prod.yaml".to_owned(), "443".to_owned()),
            ],
        };
        assert_eq!(found, Some(expected.clone()));
        assert!(expected.nudge().contains(
            "set in more than one file: `config.dev.yaml` sets 8080, `config.prod.yaml` sets 443"
        ));
        // `path:line:` lines of a search over a folder name their file too.
        let grep = "config.dev.yaml:1: port: 8080\nconfig.prod.yaml:1: port: 443";
        assert!(ambiguous_in_view("The port is 443.", &after(ASKED, grep)).is_some());
    }

    #[test]
    fn answers_that_give_both_name_the_file_or_give_none_are_not_judged() {
        let results = after(ASKED, D26);
        for answer in [
            "config.dev.yaml sets port 8080 and config.prod.yaml sets port 443.",
            "The port is 8080 in `config.dev.yaml`.",
            "Which config file do you mean? There are two.",
            "It is 8080.",
        ] {
            assert_eq!(ambiguous_in_view(answer, &results), None, "{answer}");
        }
        // A request that names the file.
        let named = after("What port does config.dev.yaml set?", D26);
        assert_eq!(ambiguous_in_view("The port is 8080.", &named), None);
    }

    #[test]
    fn one_file_with_a_key_twice_or_files_that_agree_are_not_judged() {
        let sections = "     1\t[server]\n     2\tport = 8080\n     3\t[db]\n     4\tport = 5432";
        assert_eq!(
            ambiguous_in_view("The server port is 8080.", &after(ASKED, sections)),
            None
        );
        let agree = "config.dev.yaml:1: port: 8080\nconfig.prod.yaml:1: port: 8080";
        // Two files read one by one: each result is its call's file.
        let read = |id: &str, path: &str| ToolCall::new(id, "read_file", json!({ "path": path }));
        let (dev, prod) = (
            read("c1", "config.dev.yaml"),
            read("c2", "config.prod.yaml"),
        );
        let both = Messages::new()
            .appended(Message::user(ASKED))
            .appended(Message::assistant_tool_calls([dev.clone(), prod.clone()]))
            .appended(Message::tool_result_for(&dev, "     1\tport: 8080"))
            .appended(Message::tool_result_for(&prod, "     1\tport: 443"));
        assert_eq!(
            ambiguous_in_view("The port is 443.", &both).map(|found| found.values.len()),
            Some(2)
        );
        assert_eq!(
            ambiguous_in_view("The port is 8080.", &after(ASKED, agree)),
            None
        );
    }

    proptest! {
        #[test]
        fn any_answer_and_result_are_judged_without_panic(
            answer in "\\PC{0,80}",
            result in "[a-z.:= `0-9\\n]{0,160}",
        ) {
            let _ = ambiguous_in_view(&answer, &after(ASKED, &result));
        }
    }
}
