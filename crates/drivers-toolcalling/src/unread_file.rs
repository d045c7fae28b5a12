//! An answer to a request that names a file, given when no tool has run: "How many lines of
//! app.log contain ERROR?" answered "There are 10" without opening app.log (it holds 34).
//! Issue 32's long conversations found it: in separated mode the 1.5B model looked things up
//! on the first turn and answered from memory from then on, inventing counts, dates and
//! names. The driver answers such a reply with one nudge to look at the file.

/// What the model is told after answering a request that names a file when no tool has run:
/// once per step.
pub(crate) const UNREAD_FILE_NUDGE: &str = "No tool has run for this request, and it names a \
file, so your answer was not read from the file. Call a tool to read it now: reply with only \
the tool call. If the request needs no file, repeat your answer.";

/// Extensions of the files people ask an agent about: text, data, configuration and source.
const EXTENSIONS: [&str; 30] = [
    "txt", "md", "csv", "tsv", "log", "ini", "cfg", "conf", "toml", "yaml", "yml", "json", "jsonl",
    "xml", "html", "css", "js", "ts", "py", "rs", "go", "java", "c", "h", "cpp", "rb", "sh", "sql",
    "env", "lock",
];

/// Whether `request` names a file: a word like `notes.md` or `src/app.py`, whose extension
/// is one of [`EXTENSIONS`] (any case). Numbers ("3.5"), abbreviations ("e.g."), host names
/// ("example.com") and extensions alone ("an .ini file") are not files.
pub(crate) fn names_a_file(request: &str) -> bool {
    request
        .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/')))
        .map(|word| word.trim_end_matches('.'))
        .any(|word| {
            word.rsplit_once('.').is_some_and(|(stem, extension)| {
                stem.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                    && EXTENSIONS
                        .iter()
                        .any(|known| known.eq_ignore_ascii_case(extension))
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_that_name_a_file_are_recognised() {
        // Requests of issue 32's conversation and issue 36's eval.
        for request in [
            "When is the next release planned, according to notes.md?",
            "How many lines in logs/app.log contain ERROR?",
            "What port does `config.ini` set?",
            "Sum the amount column of sales.CSV.",
            "Is debug mode enabled in settings.yaml (true or false)?",
            "Where is parse_line defined in src/parser.py?",
            "Create a file named RELEASE.txt that holds only the release date.",
        ] {
            assert!(names_a_file(request), "{request}");
        }
    }

    #[test]
    fn other_requests_do_not() {
        for request in [
            "What is 17 times 3?",
            "Remind me: who owns the release?",
            "Which port did you find before?",
            "Is version 3.5 newer than 3.10?",
            "Name a fruit, e.g. an apple.",
            "Open example.com in a browser.",
            "What is an .ini file for?",
            "",
        ] {
            assert!(!names_a_file(request), "{request}");
        }
    }
}
