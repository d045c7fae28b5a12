//! An answer that gives, for what the request asks, the value of another setting, when
//! nothing in the results names what was asked. Asked "What is the database password in
//! settings.ini?", the 1.5B model with the ReAct driver read the file (`[database]`, `host =
//! db.local`, `user = admin`: no password) and answered "The database password is admin."
//! (issue 36, development task d27, 2026-12-07). The person is told a password that is a
//! user name, and not that the file holds none.
//!
//! After the tools ran, an answer of at most 600 bytes is asked about once when it holds the
//! value of a setting line of a result (`user = admin`, `user: admin`), a value the request
//! does not hold, names no word of that setting's key (nor of any other key set to the same
//! value), and names a word of the request (four letters or more, outside file names, not a
//! question word) that no result holds: it calls a value by the name of something the
//! results never mention. The nudge quotes the line and asks for an answer from what the
//! results say, or to say what was asked is not there. Linear in the answer, the request and
//! the results.

use std::collections::HashSet;

use crate::misquoted_result::unnumbered;
use crate::setting_line::key_value;
use crate::unread_file::named_files;
use crate::word_set::{contains_word, WordSet};

/// The longest answer judged: a value is given in a sentence or two.
const MAX_ANSWER_BYTES: usize = 600;

/// Words of a request that ask rather than name what is asked about.
static QUESTION_WORDS: WordSet<'static> = WordSet::new(&[
    "what",
    "which",
    "where",
    "does",
    "tell",
    "show",
    "give",
    "find",
    "that",
    "this",
    "there",
    "have",
    "with",
    "from",
    "file",
    "files",
    "folder",
    "value",
    "values",
    "setting",
    "settings",
    "line",
    "lines",
    "configured",
    "config",
    "says",
    "read",
    "please",
    "only",
    "just",
    "answer",
    "whose",
]);

/// Values too common to tie an answer to one setting.
static PLAIN_VALUES: WordSet<'static> = WordSet::new(&[
    "true", "false", "yes", "no", "on", "off", "none", "null", "enabled", "disabled",
]);

/// A value an answer gives for something no result names: the value, what the answer calls
/// it, and the line that sets it, quoted by the nudge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BorrowedValue {
    /// The value, as the result writes it, lower-cased (`admin`).
    pub value: String,
    /// The request's word the answer gives it for, which no result holds (`password`).
    pub asked: String,
    /// The result's line that sets the value (`user = admin`).
    pub line: String,
}

impl BorrowedValue {
    /// What the tool-calling driver tells the model after such an answer.
    pub(crate) fn nudge(&self) -> String {
        format!(
            "Your last reply gives `{}` for the {}, but no tool result above mentions a {}: \
             `{}` is what the line `{}` sets. Answer from what the results say: if what was \
             asked for is not there, say so.",
            self.value, self.asked, self.asked, self.value, self.line
        )
    }
}

/// The value `answer` gives for a word of `request` that none of `results` (the texts of the
/// execution's tool results that worked) holds, taken from a setting line whose key the
/// answer does not name (see the module's documentation).
///
/// ```
/// use drivers_toolcalling::borrowed_value;
///
/// let request = "What is the database password in settings.ini?";
/// let results = ["     1\t[database]\n     2\thost = db.local\n     3\tuser = admin"];
/// let found = borrowed_value("The database password is admin.", request, results).unwrap();
/// assert_eq!((found.value.as_str(), found.asked.as_str()), ("admin", "password"));
/// assert_eq!(found.line, "user = admin");
/// assert_eq!(borrowed_value("There is no password; the user is admin.", request, results), None);
/// assert_eq!(borrowed_value("settings.ini sets no password.", request, results), None);
/// ```
pub fn borrowed_value<'r>(
    answer: &str,
    request: &str,
    results: impl IntoIterator<Item = &'r str>,
) -> Option<BorrowedValue> {
    if answer.len() > MAX_ANSWER_BYTES || !answer.bytes().any(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    let results: Vec<&str> = results.into_iter().collect();
    let settings: Vec<(String, String, &str)> = results
        .iter()
        .flat_map(|result| result.lines())
        .filter_map(|line| {
            let line = unnumbered(line).trim();
            let (key, value) = key_value(line)?;
            Some((key.to_lowercase(), value.to_lowercase(), line))
        })
        .collect();
    if settings.is_empty() {
        return None;
    }
    let answer = answer.to_lowercase();
    let request = without_file_names(&request.to_lowercase());
    let names_key = |key: &str| {
        key.split(|c: char| !c.is_alphanumeric())
            .any(|part| part.chars().count() >= 3 && contains_word(&answer, part))
    };
    // The values some key the answer names sets: one pass (the answer is short).
    let named_values: HashSet<&str> = settings
        .iter()
        .filter(|(key, _, _)| names_key(key))
        .map(|(_, value, _)| value.as_str())
        .collect();
    let given = settings.iter().find(|(_, value, _)| {
        value.chars().count() >= 2
            && !PLAIN_VALUES.holds(value.as_bytes())
            && contains_word(&answer, value)
            && !contains_word(&request, value)
            && !named_values.contains(value.as_str())
    })?;
    // The results' words, once (`password_hint` gives `password`).
    let result_words: HashSet<String> = results
        .iter()
        .flat_map(|result| result.split(|c: char| !c.is_alphabetic()))
        .filter(|word| word.chars().count() >= 4)
        .map(str::to_lowercase)
        .collect();
    let asked = request
        .split(|c: char| !c.is_alphabetic())
        .filter(|word| word.chars().count() >= 4 && !QUESTION_WORDS.holds(word.as_bytes()))
        .find(|word| contains_word(&answer, word) && !result_words.contains(*word))?;
    Some(BorrowedValue {
        value: given.1.clone(),
        asked: asked.to_owned(),
        line: given.2.to_owned(),
    })
}

/// `request` with each file name it names replaced by a space, in one pass (the names are
/// slices of it).
fn without_file_names(request: &str) -> String {
    let base = request.as_ptr() as usize;
    let mut kept = String::with_capacity(request.len());
    let mut from = 0;
    for file in named_files(request) {
        let at = (file.as_ptr() as usize).saturating_sub(base);
        let end = at + file.len();
        if at < from || end > request.len() || !request.is_char_boundary(at) {
            continue;
        }
        kept.push_str(&request[from..at]);
        kept.push(' ');
        from = end;
    }
    kept.push_str(&request[from..]);
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const D27: &str = "What is the database password in settings.ini?";
    const SETTINGS: &str = "     1\t[database]\n     2\thost = db.local\n     3\tuser = admin";

    #[test]
    fn another_settings_value_given_for_what_no_result_names_is_found_with_its_line() {
        let found = borrowed_value("The database password is admin.", D27, [SETTINGS]);
        let expected = BorrowedValue {
            value: "admin".into(),
            asked: "password".into(),
            line: "user = admin".into(),
        };
        assert_eq!(found, Some(expected.clone()));
        assert_eq!(
            expected.nudge(),
            "Your last reply gives `admin` for the password, but no tool result above mentions \
             a password: `admin` is what the line `user = admin` sets. Answer from what the \
             results say: if what was asked for is not there, say so."
        );
        // JSON and YAML settings, a search's numbered lines
        let json = "{\n  \"host\": \"db.local\",\n  \"user\": \"admin\"\n}";
        assert!(borrowed_value("The password is `admin`.", D27, [json]).is_some());
        let search = "1 line of `settings.yaml` contains `user`:\n3: user: admin";
        assert!(borrowed_value("The password is admin.", D27, [search]).is_some());
    }

    #[test]
    fn answers_that_name_the_key_say_it_is_missing_or_give_what_was_asked_are_not_judged() {
        for answer in [
            "settings.ini has no password; its user is admin.",
            "There is no database password in settings.ini.",
            "The database host is db.local.",
            "The user is admin.",
            "admin",
        ] {
            assert_eq!(borrowed_value(answer, D27, [SETTINGS]), None, "{answer}");
        }
        // The asked-for word is in a result: the value may rightly be its.
        let with_password = "password_hint: see vault\nuser = admin";
        assert_eq!(
            borrowed_value("The password is admin.", D27, [with_password]),
            None
        );
        // A value the request gives, and a plain value, are not judged.
        assert_eq!(
            borrowed_value(
                "The password is admin.",
                "Is the password admin in settings.ini?",
                [SETTINGS]
            ),
            None
        );
        assert_eq!(
            borrowed_value("The cache is on.", "Is the cache enabled?", ["debug: on"]),
            None
        );
        // No setting line at all.
        assert_eq!(
            borrowed_value("The password is admin.", D27, ["admin logged in"]),
            None
        );
    }

    #[test]
    fn file_names_leave_the_request_in_one_pass_and_long_inputs_are_judged() {
        assert_eq!(
            without_file_names("what is the password in settings.ini and a.toml?"),
            "what is the password in   and  ?"
        );
        assert_eq!(without_file_names("no file here"), "no file here");
        // A long request naming many files and a result of many lines of one value: judged
        // in one pass over each (before, one copy of the request per file name, and every
        // setting of the value scanned again for each).
        let request = format!("What is the password? {}", "f.txt ".repeat(20_000));
        let result: String = (0..20_000).map(|i| format!("key{i} = admin\n")).collect();
        let found = borrowed_value("The password is admin.", &request, [result.as_str()]);
        assert_eq!(found.map(|found| found.asked), Some("password".to_owned()));
    }

    proptest! {
        #[test]
        fn any_answer_request_and_result_are_judged_without_panic(
            answer in "[ -~é]{0,80}",
            request in "[ -~é]{0,60}",
            result in "([ a-z0-9_]{0,8}[:=] ?[a-z0-9.é]{0,10}\n|[ -~]{0,20}\n){0,6}",
        ) {
            let _ = borrowed_value(&answer, &request, [result.as_str()]);
        }
    }
}
