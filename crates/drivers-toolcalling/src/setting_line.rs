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

/// Whether `text` holds `word` as a whole word: no letter or digit just before or after it.
pub(crate) fn holds_word(text: &str, word: &str) -> bool {
    !word.is_empty()
        && text.match_indices(word).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + word.len()..].chars().next();
            !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
        })
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

    #[test]
    fn a_word_is_held_only_whole() {
        assert!(holds_word("the port is 8080.", "8080"));
        assert!(holds_word("debug mode", "debug"));
        assert!(!holds_word("80801", "8080"));
        assert!(!holds_word("debugging", "debug"));
        assert!(!holds_word("anything", ""));
    }
}
