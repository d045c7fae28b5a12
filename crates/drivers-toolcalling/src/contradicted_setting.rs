//! A yes-or-no answer that a setting in a tool result contradicts. Asked "Is debug mode
//! enabled in config.yaml?", the 1.5B model searched the file and was shown `2: debug:
//! false`, then answered "Yes, debug mode is enabled in `config.yaml`." (issue 36,
//! development task d18, 2026-12-06). The result is in view and says the opposite; the
//! person gets the wrong answer with the evidence beside it.
//!
//! After the tools ran, a reply that says yes (or "is enabled", "is on", "is true") about a
//! setting whose line in a result of the execution is `key: false` (or `= false`, `off`,
//! `no`, `disabled`), or no about one that is true, is asked about once, quoting the line. A
//! reply is judged only when it says one thing: yes-words and no-words together ("Yes, it
//! is disabled") are not judged, nor a setting whose name is itself a negation
//! (`disable_cache: true`), nor one the reply names without one of its lines saying the
//! opposite while another agrees. Linear in the reply and the results.

use messages::{Messages, Role};

use crate::latest_results::{execution_messages, text_of};
use crate::misquoted_result::result_lines;
use crate::setting_line::key_value;
use crate::word_set::{contains_word, WordSet};

/// A setting in a tool result that contradicts the reply's yes or no: the line as the
/// result has it (normalized), quoted by the nudge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContradictedSetting {
    /// The line (`debug: false`).
    pub line: String,
}

impl ContradictedSetting {
    /// What the model is told after a reply this line contradicts.
    pub fn nudge(&self) -> String {
        format!(
            "Your last reply does not agree with the tool result above, which says `{}`. \
             Read that line again and answer the question from what it says.",
            self.line
        )
    }
}

/// The longest reply judged: a yes-or-no answer is a sentence or two.
const MAX_REPLY_BYTES: usize = 600;

/// What says a setting is on, inside a reply.
static ON_WORDS: WordSet<'static> = WordSet::new(&[
    "is enabled",
    "are enabled",
    "is on",
    "is turned on",
    "is switched on",
    "is set to true",
    "is set to on",
    "is set to yes",
    "is true",
    "is active",
    "is activated",
]);

/// What says a setting is off, inside a reply. `not ` covers "is not enabled", "does not"
/// (followed by a space or a stop, so that "another" and "notes" are not read as it).
static OFF_WORDS: WordSet<'static> = WordSet::new(&[
    "not ",
    "not.",
    "not,",
    "n't",
    "disabled",
    "is off",
    "turned off",
    "switched off",
    "is false",
    "set to false",
    "set to off",
    "set to no",
    "inactive",
    "deactivated",
]);

/// Words in a setting's name that negate it (`disable_cache`, `no_color`): its value says
/// the opposite of the words a reply uses for the thing, so it is never judged.
const NEGATING_NAME_WORDS: [&str; 12] = [
    "disable", "disabled", "no", "not", "skip", "ignore", "without", "exclude", "deny", "hide",
    "suppress", "off",
];

/// Words in a setting's name too general to tie it to a reply ("debug mode" names `debug`).
const GENERAL_NAME_WORDS: [&str; 7] = [
    "enable", "enabled", "mode", "use", "allow", "flag", "setting",
];

/// Whether a reply says yes or no, when it says only one of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Polarity {
    On,
    Off,
}

/// The yes or no `reply` gives, when it gives one and not both: its first word (`Yes`,
/// `No`) or its words for a setting ([`ON_WORDS`], [`OFF_WORDS`]).
fn polarity(reply: &str) -> Option<Polarity> {
    let first = reply
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or("");
    let yes = first.eq_ignore_ascii_case("yes");
    let no = first.eq_ignore_ascii_case("no");
    let on = yes || ON_WORDS.in_text(reply);
    let off = no || OFF_WORDS.in_text(reply);
    match (on, off) {
        (true, false) => Some(Polarity::On),
        (false, true) => Some(Polarity::Off),
        _ => None,
    }
}

/// The name words and the value of a setting line (`debug: false`, `debug = off`,
/// `"debug": false,`), when its value is a boolean: `None` for any other line.
fn setting(line: &str) -> Option<(Vec<&str>, Polarity)> {
    let (key, value) = key_value(line)?;
    let value = match value {
        "true" | "yes" | "on" | "enabled" => Polarity::On,
        "false" | "no" | "off" | "disabled" => Polarity::Off,
        _ => return None,
    };
    let words: Vec<&str> = key
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .collect();
    if words.iter().any(|word| NEGATING_NAME_WORDS.contains(word)) {
        return None;
    }
    let words: Vec<&str> = words
        .into_iter()
        .filter(|word| word.len() >= 3 && !GENERAL_NAME_WORDS.contains(word))
        .collect();
    (!words.is_empty()).then_some((words, value))
}

/// The setting line of `results` (the texts of the execution's tool results, newest first)
/// that `reply`'s yes or no contradicts, if any (see the module's documentation).
///
/// ```
/// use drivers_toolcalling::contradicted_setting;
///
/// let results = ["     1\tname: shop\n     2\tdebug: false"];
/// let found = contradicted_setting("Yes, debug mode is enabled.", results);
/// assert_eq!(found.map(|found| found.line), Some("debug: false".to_owned()));
/// assert_eq!(contradicted_setting("No, debug mode is disabled.", results), None);
/// ```
pub fn contradicted_setting<S: AsRef<str>>(
    reply: &str,
    results: impl IntoIterator<Item = S>,
) -> Option<ContradictedSetting> {
    if reply.len() > MAX_REPLY_BYTES {
        return None;
    }
    let said = polarity(reply)?;
    let reply = reply.to_lowercase();
    let mut contradicting = None;
    for result in results {
        for line in result_lines(result.as_ref()) {
            let Some((words, value)) = setting(&line) else {
                continue;
            };
            if !words.iter().any(|word| contains_word(&reply, word)) {
                continue;
            }
            if value == said {
                // A line the reply agrees with: the reply may be about that one.
                return None;
            }
            if contradicting.is_none() {
                contradicting = Some(ContradictedSetting { line: line.clone() });
            }
        }
    }
    contradicting
}

/// [`contradicted_setting`] over the tool results of the running execution in
/// `conversation`. `None` when no tool has returned.
pub(crate) fn contradicted_in_view(
    reply: &str,
    conversation: &Messages,
) -> Option<ContradictedSetting> {
    contradicted_setting(
        reply,
        execution_messages(conversation)
            .filter(|message| message.role() == Role::Tool)
            .map(text_of),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tools::after_one_call;
    use messages::Message;
    use proptest::prelude::*;
    use serde_json::json;

    fn after(result: &str) -> Messages {
        after_one_call(
            "Is debug mode enabled in config.yaml?",
            "search_files",
            json!({"pattern": "debug_mode: true", "path": "config.yaml"}),
            result,
        )
    }

    const SEARCHED: &str = "(no line of `config.yaml` contains `debug_mode: true`) 1 line \
                            contains `debug`:\n2: debug: false";

    #[test]
    fn a_yes_that_a_false_setting_in_view_contradicts_is_found_with_its_line() {
        let found = contradicted_in_view(
            "Yes, debug mode is enabled in `config.yaml`.",
            &after(SEARCHED),
        );
        assert_eq!(
            found,
            Some(ContradictedSetting {
                line: "debug: false".to_owned()
            })
        );
        assert!(found.is_some_and(|found| found.nudge().contains("`debug: false`")));
        // "another" and "notes" hold no "not".
        assert!(contradicted_in_view(
            "Debug mode is on, as another line of the notes shows.",
            &after(SEARCHED)
        )
        .is_some());
    }

    #[test]
    fn a_no_that_a_true_setting_contradicts_is_found_in_every_form_of_line() {
        for result in [
            "app: shop\ndebug: true\nworkers: 2",
            "     2\tdebug = on",
            "{\n  \"debug\": true,\n  \"workers\": 2\n}",
            "config.yaml:2: debug: yes",
        ] {
            assert!(
                contradicted_in_view("No, debug mode is not enabled.", &after(result)).is_some(),
                "{result}"
            );
            assert!(
                contradicted_in_view("Debug mode is off.", &after(result)).is_some(),
                "{result}"
            );
        }
    }

    #[test]
    fn an_answer_that_agrees_or_says_both_or_names_no_setting_is_not_judged() {
        let results = after(SEARCHED);
        for reply in [
            "No, debug mode is not enabled: config.yaml sets `debug: false`.",
            "Debug mode is disabled.",
            // Yes to a question about it being off.
            "Yes, debug mode is disabled.",
            // Another setting, not in view.
            "Yes, caching is enabled.",
            // No yes or no at all.
            "The file sets debug and log_level.",
        ] {
            assert_eq!(contradicted_in_view(reply, &results), None, "{reply}");
        }
        // A long reply is not a yes-or-no answer.
        let long = format!("Yes, debug is on. {}", "More words. ".repeat(60));
        assert_eq!(contradicted_in_view(&long, &results), None);
        // Nothing returned yet.
        let asked = Messages::new().appended(Message::user("Is debug mode enabled?"));
        assert_eq!(contradicted_in_view("Yes, debug is on.", &asked), None);
    }

    #[test]
    fn a_setting_named_as_a_negation_or_one_of_two_that_disagree_is_not_judged() {
        let negated = after("disable_cache: true\nno_color: false");
        assert_eq!(
            contradicted_in_view("No, the cache is not used.", &negated),
            None
        );
        assert_eq!(contradicted_in_view("Yes, color is on.", &negated), None);
        // Two files, one on and one off: a yes may be about either.
        let two = after("config.dev.yaml:1: debug: true\nconfig.prod.yaml:1: debug: false");
        assert_eq!(contradicted_in_view("Yes, debug is enabled.", &two), None);
        // A value that is not a boolean.
        let level = after("log_level: info");
        assert_eq!(
            contradicted_in_view("No, the log level is not debug.", &level),
            None
        );
    }

    proptest! {
        #[test]
        fn any_reply_and_result_is_judged_without_panic(
            reply in "\\PC{0,80}",
            result in "[a-z_:= \"'{},\\n0-9]{0,120}",
        ) {
            let _ = contradicted_in_view(&reply, &after(&result));
        }
    }
}
