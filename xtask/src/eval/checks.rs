//! How a task's result is judged: generous about phrasing, strict about facts. Answer checks
//! read the last saved answer (lowercased, markdown and quotes removed); workspace checks read
//! the files the run left behind.

use std::path::Path;

use serde::Deserialize;

use crate::longrun::check::normalize;

/// One check of a task (a task passes when all of its checks pass).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Check {
    /// The answer holds every `all`, at least one `any` (when given) and no `none`.
    Answer(TextCheck),
    /// The answer states `expected` (digits or the word) and no number outside `allowed`.
    Number(NumberCheck),
    /// The answer's first yes/no marker ("yes", "true", "enabled", "no", "false", "disabled",
    /// "not enabled", ...) says this, and the answer does not report a failure.
    YesNo(bool),
    /// The answer says the file or value asked for is not there.
    SaysMissing,
    /// The answer says the request matches more than one thing (or asks which one).
    SaysAmbiguous,
    /// The file has exactly these lines (each trimmed, compared case-insensitively; leading and
    /// trailing blank lines ignored).
    File(FileCheck),
    /// The path does not exist.
    Absent(String),
    /// The file exists and has an execute bit.
    Executable(String),
    /// At least one of these checks passes.
    Either(Vec<Check>),
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextCheck {
    #[serde(default)]
    pub all: Vec<String>,
    #[serde(default)]
    pub any: Vec<String>,
    #[serde(default)]
    pub none: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NumberCheck {
    pub expected: i64,
    /// Numbers the answer may also state (the inputs of a sum, a count it mentions).
    #[serde(default)]
    pub allowed: Vec<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileCheck {
    pub path: String,
    pub lines: Vec<String>,
}

/// Phrases that say a file or a value is not there.
const MISSING: &[&str] = &[
    "not exist",
    "doesn't exist",
    "does not exist",
    "not found",
    "no such",
    "cannot find",
    "can't find",
    "couldn't find",
    "could not find",
    "unable to find",
    "missing",
    "no file",
    "isn't a file",
    "not present",
    "not contain",
    "doesn't contain",
    "does not contain",
    "doesn't have",
    "does not have",
    "not specif",
    "n't specif",
    "not set",
    "not stored",
    "n't stored",
    "not defined",
    "not list",
    "n't list",
    "not include",
    "n't include",
    "not mention",
    "n't mention",
    "no mention",
    "not provide",
    "n't provide",
    "not give",
    "n't give",
    "not available",
    "there is no",
    "there's no",
    "isn't any",
    "is no ",
    "no phone",
    "no password",
];

/// Phrases that say a request matches more than one thing, or ask which one is meant.
const AMBIGUOUS: &[&str] = &[
    "ambiguous",
    "which one",
    "which of",
    "which file",
    "which config",
    "which sam",
    "more than one",
    "multiple",
    "several",
    "two config",
    "two files",
    "two people",
    "two contacts",
    "two entries",
    "two sams",
    "two matches",
    "there are two",
    "both",
    "please specify",
    "could you specify",
    "can you specify",
    "clarify",
];

/// Phrases of a run that did not get the facts: a yes/no answer with one of these is no answer.
const FAILURE: &[&str] = &[
    "could not",
    "couldn't",
    "cannot",
    "can't",
    "unable",
    "no such file",
    "not found",
    "does not exist",
    "doesn't exist",
];

impl Check {
    /// A check that could never pass, or that passes on any answer, is a mistake in the task.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            Check::Answer(text) if text.all.is_empty() && text.any.is_empty() => {
                Err("an answer check needs `all` or `any`".into())
            }
            Check::Number(number) if number.allowed.contains(&number.expected) => {
                Err("a number check's `allowed` must not hold the expected number".into())
            }
            Check::Either(choices) if choices.len() < 2 => {
                Err("`either` needs at least two checks".into())
            }
            Check::Either(choices) => choices.iter().try_for_each(Check::validate),
            _ => Ok(()),
        }
    }

    /// Whether the check passes. `answer` is the last saved answer, if any; `answered_by` says
    /// how an answer on a stop was made. The loop's notice may quote a tool's result (the port,
    /// the line), but it says the task was not finished: it never passes an answer check.
    pub fn passes(
        &self,
        answer: Option<&str>,
        answered_by: Option<&str>,
        workspace: &Path,
    ) -> bool {
        let answer = answer.filter(|_| answered_by != Some("notice"));
        match self {
            Check::File(file) => file_has_lines(&workspace.join(&file.path), &file.lines),
            Check::Absent(path) => std::fs::symlink_metadata(workspace.join(path)).is_err(),
            Check::Executable(path) => is_executable(&workspace.join(path)),
            Check::Either(choices) => choices
                .iter()
                .any(|c| c.passes(answer, answered_by, workspace)),
            answer_check => answer.is_some_and(|a| answer_check.answer_passes(&normalize(a))),
        }
    }

    /// The answer checks on a normalized answer.
    fn answer_passes(&self, text: &str) -> bool {
        match self {
            Check::Answer(check) => {
                check.all.iter().all(|s| text.contains(&normalize(s)))
                    && (check.any.is_empty()
                        || check.any.iter().any(|s| text.contains(&normalize(s))))
                    && !check.none.iter().any(|s| text.contains(&normalize(s)))
            }
            Check::Number(check) => {
                let numbers = numbers(text);
                let expected = check.expected as f64;
                let stated = numbers.contains(&expected)
                    || number_words(check.expected)
                        .iter()
                        .any(|w| has_phrase(text, w));
                stated
                    && numbers
                        .iter()
                        .all(|n| *n == expected || check.allowed.iter().any(|a| *a as f64 == *n))
            }
            Check::YesNo(expected) => {
                !FAILURE.iter().any(|f| text.contains(f)) && yes_or_no(text) == Some(*expected)
            }
            Check::SaysMissing => MISSING.iter().any(|p| text.contains(p)),
            Check::SaysAmbiguous => AMBIGUOUS.iter().any(|p| text.contains(p)),
            Check::File(_) | Check::Absent(_) | Check::Executable(_) | Check::Either(_) => false,
        }
    }
}

fn file_has_lines(path: &Path, lines: &[String]) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    let got: Vec<String> = text
        .trim()
        .lines()
        .map(|l| l.trim().to_lowercase())
        .collect();
    let want: Vec<String> = lines.iter().map(|l| l.trim().to_lowercase()).collect();
    got == want
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether `phrase` occurs in `text` as whole words.
fn has_phrase(text: &str, phrase: &str) -> bool {
    text.match_indices(phrase).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + phrase.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// The numbers written with digits in `text`: `1,234` is one number (a comma followed by
/// exactly three digits), `12.50` is 12.5, `3.25.2` is 3.25 and 2, `file2` holds 2.
pub fn numbers(text: &str) -> Vec<f64> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let mut digits = String::new();
        while i < chars.len() {
            let c = chars[i];
            let thousands = c == ','
                && chars.len() > i + 3
                && chars[i + 1..=i + 3].iter().all(char::is_ascii_digit)
                && !chars.get(i + 4).is_some_and(char::is_ascii_digit);
            if c.is_ascii_digit() {
                digits.push(c);
            } else if !thousands {
                break;
            }
            i += 1;
        }
        if chars.get(i) == Some(&'.') && chars.get(i + 1).is_some_and(char::is_ascii_digit) {
            digits.push('.');
            i += 1;
            while i < chars.len() && chars[i].is_ascii_digit() {
                digits.push(chars[i]);
                i += 1;
            }
        }
        if let Ok(n) = digits.parse() {
            found.push(n);
        }
    }
    found
}

/// The English words for `n` (0 to 999): `forty-two` and `forty two`.
fn number_words(n: i64) -> Vec<String> {
    const ONES: [&str; 20] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ];
    const TENS: [&str; 10] = [
        "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    ];
    fn below_hundred(n: usize, joiner: &str) -> String {
        if n < 20 {
            ONES[n].to_owned()
        } else if n.is_multiple_of(10) {
            TENS[n / 10].to_owned()
        } else {
            format!("{}{joiner}{}", TENS[n / 10], ONES[n % 10])
        }
    }
    let Ok(n) = usize::try_from(n) else {
        return Vec::new();
    };
    if n >= 1000 {
        return Vec::new();
    }
    ["-", " "]
        .iter()
        .map(|joiner| {
            if n < 100 {
                below_hundred(n, joiner)
            } else if n.is_multiple_of(100) {
                format!("{} hundred", ONES[n / 100])
            } else {
                format!(
                    "{} hundred {}",
                    ONES[n / 100],
                    below_hundred(n % 100, joiner)
                )
            }
        })
        .collect()
}

/// The answer's first yes/no marker: `Some(true)` for yes, true, enabled, turned on;
/// `Some(false)` for no, false, disabled, off, and a negated positive ("not enabled", "isn't
/// on"); a negated negative ("not disabled") is a yes. `None` without a marker.
pub fn yes_or_no(text: &str) -> Option<bool> {
    const NEGATORS: &[&str] = &["not", "isn't", "isnt", "never", "aren't", "wasn't"];
    let words: Vec<&str> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    let marker = |i: usize| -> Option<bool> {
        match words[i] {
            "yes" | "true" | "enabled" | "enable" | "active" => Some(true),
            "on" if i > 0 && matches!(words[i - 1], "turned" | "switched" | "is" | "set") => {
                Some(true)
            }
            "no" | "false" | "disabled" | "off" | "inactive" => Some(false),
            _ => None,
        }
    };
    for i in 0..words.len() {
        if NEGATORS.contains(&words[i]) {
            // "not enabled", "is not turned on", "not set to true".
            for j in i + 1..words.len().min(i + 4) {
                if let Some(value) = marker(j) {
                    return Some(!value);
                }
            }
            continue;
        }
        if let Some(value) = marker(i) {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(check: &Check, text: &str) -> bool {
        check.passes(Some(text), None, Path::new("."))
    }

    #[test]
    fn a_notice_never_passes_an_answer_check() {
        let port = Check::Answer(TextCheck {
            all: vec!["8472".into()],
            ..TextCheck::default()
        });
        let notice = "I could not finish this task: I kept repeating the same tool call. \
                      The earlier result was: port = 8472";
        let here = Path::new(".");
        assert!(port.passes(Some(notice), None, here));
        assert!(port.passes(Some(notice), Some("synthesize"), here));
        assert!(!port.passes(Some(notice), Some("notice"), here));
    }

    #[test]
    fn number_checks_reject_a_second_candidate() {
        let check = Check::Number(NumberCheck {
            expected: 7,
            allowed: vec![],
        });
        assert!(answer(&check, "The file has **7** lines."));
        assert!(answer(&check, "Seven lines."));
        assert!(!answer(&check, "It has 7 or 8 lines."));
        assert!(!answer(&check, "17 lines"));
        assert!(!answer(&check, "Eleven lines."));
        assert!(!check.passes(None, None, Path::new(".")));
    }

    #[test]
    fn number_checks_read_separators_decimals_and_words() {
        let sum = Check::Number(NumberCheck {
            expected: 1234,
            allowed: vec![1000, 234],
        });
        assert!(answer(&sum, "The total is $1,234.00."));
        assert!(answer(&sum, "1000 + 234 = 1234"));
        assert!(!answer(&sum, "The total is 1,235."));
        assert!(!answer(&sum, "The total is 1234.5"));
        let words = Check::Number(NumberCheck {
            expected: 42,
            allowed: vec![],
        });
        assert!(answer(&words, "Forty-two."));
        assert!(answer(&words, "forty two"));
        assert!(!answer(&words, "fortytwo or 41"));
        assert_eq!(numbers("1,2,3 and 3.25.2"), vec![1.0, 2.0, 3.0, 3.25, 2.0]);
        assert_eq!(number_words(125)[0], "one hundred twenty-five");
    }

    #[test]
    fn text_checks_are_generous_about_phrasing_only() {
        let check = Check::Answer(TextCheck {
            all: vec!["bravo".into()],
            none: vec!["alpha.txt".into(), "charlie.txt".into()],
            ..TextCheck::default()
        });
        assert!(answer(&check, "It is `notes/bravo.txt`."));
        assert!(answer(&check, "It is notes/\\*\\*bravo\\*\\*.txt"));
        assert!(!answer(&check, "alpha.txt and bravo.txt"));
    }

    #[test]
    fn yes_no_takes_the_first_marker_and_reads_negations() {
        let no = Check::YesNo(false);
        let yes = Check::YesNo(true);
        // The run: "True" for `debug: false`.
        assert!(!answer(&no, "True"));
        assert!(answer(&no, "No, debug mode is not enabled (debug: false)."));
        assert!(answer(
            &no,
            "Debug mode is **not enabled**: the file sets `debug: false`."
        ));
        assert!(answer(&no, "It is disabled."));
        assert!(!answer(&no, "Yes, debug mode is enabled."));
        assert!(!answer(&no, "I could not read config.yaml, so no."));
        assert!(!answer(&no, "The file does not say."));
        assert!(answer(&yes, "Yes, compression is enabled; debug is false."));
        assert!(answer(
            &yes,
            "Compression is turned on (compression: true)."
        ));
        assert!(answer(&yes, "It is not disabled."));
        assert!(!answer(&yes, "No, compression is off."));
        assert!(!answer(&yes, "Compression is set in server.yaml."));
    }

    #[test]
    fn missing_and_ambiguous_answers_are_recognised() {
        assert!(answer(
            &Check::SaysMissing,
            "The file minutes.md does not exist."
        ));
        assert!(answer(
            &Check::SaysMissing,
            "settings.ini has no password entry: it is not set."
        ));
        assert!(answer(
            &Check::SaysMissing,
            "The database password is not stored in the `settings.ini` file."
        ));
        assert!(!answer(&Check::SaysMissing, "The password is hunter2."));
        assert!(answer(
            &Check::SaysAmbiguous,
            "There are two Sams: which one do you mean?"
        ));
        assert!(!answer(
            &Check::SaysAmbiguous,
            "Sam's email is sam.lee@mail.test."
        ));
    }

    #[test]
    fn workspace_checks_read_the_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "\nalpha \nBeta\n\n").unwrap();
        let lines = |l: &[&str]| {
            Check::File(FileCheck {
                path: "a.txt".into(),
                lines: l.iter().map(|s| (*s).to_owned()).collect(),
            })
        };
        assert!(lines(&["alpha", "beta"]).passes(None, None, dir.path()));
        assert!(!lines(&["alpha"]).passes(None, None, dir.path()));
        assert!(Check::Absent("b.txt".into()).passes(None, None, dir.path()));
        assert!(!Check::Absent("a.txt".into()).passes(None, None, dir.path()));
        assert!(!Check::Executable("a.txt".into()).passes(None, None, dir.path()));
        use std::os::unix::fs::PermissionsExt as _;
        let path = dir.path().join("a.txt");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o744)).unwrap();
        assert!(Check::Executable("a.txt".into()).passes(None, None, dir.path()));
        // A file check still judges a run answered by a notice: the file is the result.
        assert!(lines(&["alpha", "beta"]).passes(Some("x"), Some("notice"), dir.path()));
    }

    #[test]
    fn either_passes_when_one_choice_does() {
        let check = Check::Either(vec![
            Check::Answer(TextCheck {
                all: vec!["8080".into(), "443".into()],
                ..TextCheck::default()
            }),
            Check::SaysAmbiguous,
        ]);
        assert!(answer(&check, "dev sets 8080, prod sets 443"));
        assert!(answer(&check, "Which config do you mean?"));
        assert!(!answer(&check, "The port is 8080."));
    }
}
