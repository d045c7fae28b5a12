//! An answer for one of several files a read showed, when the request named none of them.
//! Asked "What version does the README say?" with `api/README.md` and `web/README.md` and
//! none at the top, the 1.5B model read `README.md`; `read_file` showed both files, each
//! under its name, and said the request does not say which one it means; the model answered
//! "The README file is named `api/README.md` and says "Version 2.1 of the API."" (a probe
//! of issue 36's task kinds, 2026-12-07): the person does not learn that there were two.
//!
//! A read of several files is a tool result whose first line is the note of `read_file` (the
//! `agents` crate) for a name several files have (`(no file is named ...; 2 files have that
//! name, each shown below: ...)`) and whose files each start under a `== path ==` line.
//! After such a result, an answer of at most 600 bytes that names some of the files and not
//! all (by path, or by the folder that tells them apart), or none of them, and asks nothing,
//! is asked about once. Linear in the answer and the results.

use crate::backticks::in_backticks;
use crate::word_set::contains_word;

/// The longest answer judged.
const MAX_ANSWER_BYTES: usize = 600;

/// What the note of a read of several files of one name says, after the count (`2 files
/// have that name, each shown below: `, or `... that name with an extension, each ...`).
const SEVERAL_NOTE: [&str; 2] = [" files have that name", ", each shown below: "];

/// The files a read showed for a name several files have, when the answer gives one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeveralFiles {
    /// The files, as the read's `== path ==` lines name them.
    pub files: Vec<String>,
}

impl SeveralFiles {
    /// What the model is told after an answer for only one of them.
    pub fn nudge(&self) -> String {
        format!(
            "The tool result above shows {} files of that name: {}, and the request does not \
             say which one it means. Your last reply answers for one of them only. Answer for \
             each file, naming it, or ask the user which one they mean.",
            self.files.len(),
            in_backticks(&self.files, ", ")
        )
    }
}

/// The files of a read of several files in `results` (the texts of the execution's tool
/// results that worked) when `answer` answers for one of them only (see the module's
/// documentation).
///
/// ```
/// use drivers_toolcalling::one_of_several_files;
///
/// let read = "(no file is named `README.md` in the workspace's top folder; 2 files have \
///             that name, each shown below: `api/README.md`, `web/README.md`; the request \
///             does not say which one it means)\n== api/README.md ==\n     1\tVersion 2.1\n\
///             == web/README.md ==\n     1\tVersion 5.0";
/// let found = one_of_several_files("The README says version 2.1.", [read]);
/// assert_eq!(found.map(|found| found.files.len()), Some(2));
/// assert_eq!(one_of_several_files("api: 2.1; web: 5.0.", [read]), None);
/// ```
pub fn one_of_several_files<R: AsRef<str>>(
    answer: &str,
    results: impl IntoIterator<Item = R>,
) -> Option<SeveralFiles> {
    if answer.len() > MAX_ANSWER_BYTES || answer.contains('?') {
        return None;
    }
    let answer = answer.to_lowercase();
    results.into_iter().find_map(|result| {
        let result = result.as_ref();
        let note = result.lines().next()?;
        let several = SEVERAL_NOTE.iter().all(|part| note.contains(part));
        if !note.starts_with("(no file is named `") || !several {
            return None;
        }
        let files: Vec<String> = result
            .lines()
            .filter_map(|line| line.strip_prefix("== ")?.strip_suffix(" =="))
            .map(str::to_owned)
            .collect();
        if files.len() < 2 {
            return None;
        }
        let named = files
            .iter()
            .filter(|file| names(&answer, file, &files))
            .count();
        (named < files.len()).then_some(SeveralFiles { files })
    })
}

/// Whether `answer` (lower-cased) names `file` among `files`: by its path, or by a folder of
/// its path that no other file's path has (`api` of `api/README.md` beside `web/README.md`).
fn names(answer: &str, file: &str, files: &[String]) -> bool {
    let file = file.to_lowercase();
    if answer.contains(&file) {
        return true;
    }
    let folders = file.split('/').rev().skip(1);
    folders.into_iter().any(|folder| {
        !files.iter().any(|other| {
            let other = other.to_lowercase();
            other != file && other.split('/').rev().skip(1).any(|part| part == folder)
        }) && contains_word(answer, folder)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const READ: &str = "(no file is named `README.md` in the workspace's top folder; 2 files \
                        have that name, each shown below: `api/README.md`, `web/README.md`; \
                        the request does not say which one it means)\n== api/README.md ==\n     \
                        1\tVersion 2.1 of the API.\n== web/README.md ==\n     1\tVersion 5.0 of \
                        the web app.";

    #[test]
    fn an_answer_for_one_file_or_for_none_by_name_is_found() {
        for answer in [
            "The README file is named `api/README.md` and says \"Version 2.1 of the API.\"",
            "The README says version 2.1.",
            "Version 5.0 (web).",
        ] {
            let found = one_of_several_files(answer, [READ]);
            assert_eq!(
                found.as_ref().map(|found| found.files.clone()),
                Some(vec!["api/README.md".to_owned(), "web/README.md".to_owned()]),
                "{answer}"
            );
            assert!(found.unwrap().nudge().starts_with(
                "The tool result above shows 2 files of that name: `api/README.md`, \
                 `web/README.md`, and the request does not say which one it means."
            ));
        }
    }

    #[test]
    fn an_answer_for_each_file_or_a_question_is_not_asked_about() {
        for answer in [
            "api/README.md says 2.1 and web/README.md says 5.0.",
            "The API's README (api) says 2.1; the web app's (web) says 5.0.",
            "Which README do you mean, api or web?",
        ] {
            assert_eq!(one_of_several_files(answer, [READ]), None, "{answer}");
        }
        // Any other result: a read of one file, or a result that only looks like one.
        let one = "(no file is named `a.txt` in `docs`; read `a.txt`, the one file of that \
                   name, instead)\n     1\t12";
        let forged = "     1\t== api/README.md ==\n     2\t== web/README.md ==";
        for result in [one, forged] {
            assert_eq!(one_of_several_files("It is 2.1.", [result]), None);
        }
    }

    #[test]
    fn a_folder_both_paths_share_does_not_name_either() {
        let read = "(no file is named `x.md` in `docs`; 2 files have that name, each shown \
                    below: `docs/a/x.md`, `docs/b/x.md`; ...)\n== docs/a/x.md ==\n     1\t1\n\
                    == docs/b/x.md ==\n     1\t2";
        assert!(one_of_several_files("In docs it is 1.", [read]).is_some());
        assert_eq!(one_of_several_files("a: 1, b: 2.", [read]), None);
    }

    proptest! {
        #[test]
        fn any_answer_and_result_are_judged_without_panic(
            answer in "\\PC{0,80}",
            result in "(\\(no file is named `x` in y; 2 files have that name, each shown below: z\\)\n|== [a-z/]{0,8} ==\n|[ -~]{0,20}\n){0,6}",
        ) {
            if let Some(found) = one_of_several_files(&answer, [result.as_str()]) {
                prop_assert!(found.files.len() >= 2);
            }
        }
    }
}
