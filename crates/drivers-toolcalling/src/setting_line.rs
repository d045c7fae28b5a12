//! A line of a tool result that sets a value: `debug: false`, `port = 8080`, `"port": 443,`,
//! `- debug: true`. Read by the checks of answers against settings in view
//! (`contradicted_setting`, `ambiguous_value`).

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
}
