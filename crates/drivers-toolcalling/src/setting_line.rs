//! A line of a tool result that sets a value: `debug: false`, `port = 8080`, `"port": 443,`,
//! `- debug: true`. Read by the checks of answers against settings in view
//! (`contradicted_setting`, `ambiguous_value`).

use messages::{Messages, Role};

use crate::latest_results::{execution_messages, text_of};

/// Whether a tool result of the running execution of `conversation` holds `:` or `=`, so
/// that one of its lines may set a value: most results set nothing, and then the checks
/// against settings read nothing else (they judge every answer after a tool ran).
pub(crate) fn results_may_set(conversation: &Messages) -> bool {
    execution_messages(conversation)
        .filter(|message| message.role() == Role::Tool)
        .any(|message| {
            text_of(message)
                .bytes()
                .any(|byte| byte == b':' || byte == b'=')
        })
}

/// The longest value read: a setting's value, not a sentence.
const MAX_VALUE_CHARS: usize = 40;

/// The key and value of `line` (normalized: trimmed, without line numbers) when it sets one:
/// a key without spaces, then `:` or `=`, then a short value; quotes and a trailing comma
/// are left out. `None` for any other line.
pub(crate) fn key_value(line: &str) -> Option<(&str, &str)> {
    let (key, value) = line.split_once(':').or_else(|| line.split_once('='))?;
    let key = key
        .trim()
        .trim_start_matches("- ")
        .trim_matches(|c| c == '"' || c == '\'');
    let value = value
        .trim()
        .trim_end_matches(',')
        .trim_matches(|c| c == '"' || c == '\'');
    let plain = |text: &str| !text.is_empty() && !text.contains(char::is_whitespace);
    (plain(key) && plain(value) && value.chars().count() <= MAX_VALUE_CHARS).then_some((key, value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tools::after_one_call;
    use serde_json::json;

    #[test]
    fn settings_in_yaml_ini_and_json_are_read_and_other_lines_are_not() {
        assert_eq!(key_value("debug: false"), Some(("debug", "false")));
        assert_eq!(key_value("port = 8080"), Some(("port", "8080")));
        assert_eq!(key_value("\"port\": 443,"), Some(("port", "443")));
        assert_eq!(key_value("- debug: true"), Some(("debug", "true")));
        for line in [
            "(no line of `config.yaml` contains `debug_mode: true`) 1 line contains `debug`:",
            "note: this is a sentence",
            "server:",
            "port 8080",
        ] {
            assert_eq!(key_value(line), None, "{line}");
        }
    }

    #[test]
    fn only_results_with_a_colon_or_an_equals_sign_may_set_a_value() {
        let after = |result: &str| {
            after_one_call(
                "Is debug on?",
                "read_file",
                json!({"path": "a.yaml"}),
                result,
            )
        };
        assert!(results_may_set(&after("debug: false")));
        assert!(results_may_set(&after("port=8080")));
        assert!(!results_may_set(&after("ok")));
        assert!(!results_may_set(&Messages::new()));
    }
}
