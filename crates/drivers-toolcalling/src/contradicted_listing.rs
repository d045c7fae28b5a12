//! An answer that a directory listing in view contradicts: the count of a kind of file, or
//! the largest file. Asked "How many Markdown (.md) files are in the docs folder?", the 1.5B
//! model with the ReAct driver listed the folder, was shown `In all: 5 files (3 .md files,
//! 1 .json file, 1 .txt file).`, and answered "There are 5 Markdown files in the docs
//! folder."; asked "Which file in the data folder is the largest?", it was shown `[file]
//! beta.log (1380 bytes, the largest)` and answered "alpha.log is the largest file, with a
//! size of 60 bytes." (issue 36, development tasks d20 and d19, 2026-12-07). The listing says
//! the answer in its own words; the person gets the opposite with the evidence beside it.
//!
//! A listing is a tool result of lines `[file] NAME (N bytes)`, the largest marked `[file]
//! NAME (N bytes, the largest)`, and a count line `In all: T files (K .EXT files, ...)` (the
//! form of `list_dir`, the `agents` crate's listing tool; its line `With the files in its
//! subfolders: ...` counts the files below the folder too, and a count of either line is
//! given). After the tools ran, an answer is
//! asked about once, quoting the listing's line, when:
//! - it writes a number before a kind of file ("5 Markdown files", "5 .md files") and no
//!   listing counts that many files of the kind, while one counts the kind; or
//! - it says "largest" or "biggest", names a file of a listing that marks another as the
//!   largest, and names no file a listing marks so.
//!
//! Linear in the answer and the results.

use std::borrow::Cow;

use messages::Messages;

use crate::latest_results::{text_of, worked_result_texts};
use crate::word_set::{contains_word, WordSet};

/// A listing line that contradicts an answer: what the answer says, and the line it
/// contradicts, quoted by the nudge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListingContradiction {
    /// What the answer says, in its words: `5 markdown files`, "`alpha.log` is the largest".
    pub said: String,
    /// The listing's line that says otherwise: `In all: 5 files (3 .md files, 1 .json file).`
    /// (both count lines, joined by `` ` and ` ``, for a listing that counts its subfolders'
    /// files too).
    pub listed: String,
}

impl ListingContradiction {
    /// What the tool-calling driver tells the model after such an answer.
    pub(crate) fn nudge(&self) -> String {
        let (line, says) = if self.listed.contains("` and `") {
            ("those lines", "they say")
        } else {
            ("that line", "it says")
        };
        format!(
            "Your last reply says {}, but the listing above says `{}`. Read {line} again and \
             answer the question from what {says}.",
            self.said, self.listed
        )
    }
}

/// The longest answer judged: a count or a file's name is a sentence or two.
const MAX_ANSWER_BYTES: usize = 600;

/// How far after its number a kind of file may be named ("5 Markdown files", "3 files of
/// type .md" is not read), and how far after the kind the word "file" must follow.
const KIND_WITHIN: usize = 2;

/// How far after "Markdown files" the number given as their count may come ("... in the
/// docs folder is 5").
const NUMBER_WITHIN: usize = 6;

/// The words just before a number that give it as a count: "... is 5", "... are 3".
const COUNT_VERBS: &[&str] = &["is", "are", "was", "were", "equals", "totals", "total"];

/// Names of kinds of files an answer may use for an extension, lower-cased. "text" is not
/// among them: `.log` and `.csv` files are text too.
const KIND_NAMES: &[(&str, &str)] = &[
    ("markdown", "md"),
    ("python", "py"),
    ("rust", "rs"),
    ("javascript", "js"),
    ("typescript", "ts"),
    ("yaml", "yaml"),
    ("shell", "sh"),
];

/// One listing of a tool result: its files, the one marked the largest, its count line and
/// the kinds it counts.
#[derive(Debug, Default)]
struct Listing<'r> {
    files: Vec<&'r str>,
    largest: Option<&'r str>,
    largest_line: Option<&'r str>,
    count_line: Option<&'r str>,
    tree_line: Option<&'r str>,
    kinds: Vec<(String, u64)>,
}

/// The listing line of `results` (the texts of the execution's tool results that worked)
/// that `answer` contradicts, if any (see the module's documentation).
///
/// ```
/// use drivers_toolcalling::contradicted_listing;
///
/// let listing = "[file] alpha.log (60 bytes)\n[file] beta.log (1380 bytes, the largest)\n\
///                [file] notes.md (9 bytes)\nIn all: 3 files (2 .log files, 1 .md file).";
/// let found = contradicted_listing("alpha.log is the largest file.", [listing]).unwrap();
/// assert_eq!(found.listed, "[file] beta.log (1380 bytes, the largest)");
/// let found = contradicted_listing("There are 3 Markdown files.", [listing]).unwrap();
/// assert_eq!(found.listed, "In all: 3 files (2 .log files, 1 .md file).");
/// assert_eq!(contradicted_listing("The largest is beta.log.", [listing]), None);
/// assert_eq!(contradicted_listing("There is 1 Markdown file.", [listing]), None);
/// ```
pub fn contradicted_listing<'r>(
    answer: &str,
    results: impl IntoIterator<Item = &'r str>,
) -> Option<ListingContradiction> {
    if !may_contradict_a_listing(answer) {
        return None;
    }
    let answer = answer.to_lowercase();
    let superlative = contains_word(&answer, "largest") || contains_word(&answer, "biggest");
    let listings: Vec<Listing<'r>> = results
        .into_iter()
        .filter(|result| result.contains("[file] "))
        .map(listing)
        .collect();
    if listings.is_empty() {
        return None;
    }
    if superlative {
        if let Some(found) = wrong_largest(&answer, &listings) {
            return Some(found);
        }
    }
    wrong_count(&answer, &listings)
}

/// Whether `answer` is short enough and holds a number or the word "largest" or "biggest"
/// (in any case): the answers [`contradicted_listing`] judges. Most answers are not: their
/// results are not read then (a search of each 7-byte window for the two words cost 327
/// instructions of a 2-step run's 55,000, issue 35).
pub(crate) fn may_contradict_a_listing(answer: &str) -> bool {
    if answer.len() > MAX_ANSWER_BYTES {
        return false;
    }
    // Without a short cut, so that the compiler can look at many bytes at once.
    let digit = answer
        .bytes()
        .fold(false, |any, b| any | b.is_ascii_digit());
    digit || SUPERLATIVES.in_text(answer)
}

/// The words that ask which file is the largest.
static SUPERLATIVES: WordSet<'static> = WordSet::new(&["largest", "biggest"]);

/// Whether `reply`, asked for on a stop with `input`, gives what a listing in view says
/// otherwise (see `contradicted_listing`): the listings are the tool results of `input`, or
/// its last message (the page of results the loop writes when the first answer on stop was
/// not one).
pub(crate) fn contradicts_a_listing_on_stop(input: &Messages, reply: &str) -> bool {
    if !may_contradict_a_listing(reply) {
        return false;
    }
    let results: Vec<Cow<'_, str>> = worked_result_texts(input.iter())
        .chain(input.iter().last().map(text_of))
        .collect();
    contradicted_listing(reply, results.iter().map(|result| &**result)).is_some()
}

/// The start of a listing's line that counts the files of its subfolders too (`list_dir`'s
/// `With the files in its subfolders: 6 files (5 .rs files, 1 .py file).`).
const TREE_LINE: &str = "With the files in its subfolders: ";

/// The listing of one result: its `[file]` lines, its `In all:` line and the line that
/// counts its subfolders' files too.
fn listing(result: &str) -> Listing<'_> {
    let mut found = Listing::default();
    for line in result.lines().map(str::trim) {
        if let Some(entry) = line.strip_prefix("[file] ") {
            let Some(at) = entry.rfind(" (") else {
                continue;
            };
            let name = &entry[..at];
            found.files.push(name);
            if entry.ends_with(", the largest)") {
                found.largest = Some(name);
                found.largest_line = Some(line);
            }
        } else if let Some(counts) = line.strip_prefix("In all: ") {
            found.count_line = Some(line);
            found.kinds.extend(kinds_counted(counts));
        } else if let Some(counts) = line.strip_prefix(TREE_LINE) {
            // The folder's count with its subfolders' files: a count of either is given.
            found.tree_line = Some(line);
            found.kinds.extend(kinds_counted(counts));
        }
    }
    found
}

/// The kinds a count line counts: `5 files (3 .md files, 1 .json file) ...` gives `md` 3 and
/// `json` 1.
fn kinds_counted(counts: &str) -> Vec<(String, u64)> {
    let Some(open) = counts.find('(') else {
        return Vec::new();
    };
    let inside = &counts[open + 1..];
    let inside = &inside[..inside.find(')').unwrap_or(inside.len())];
    inside
        .split(", ")
        .filter_map(|part| {
            let mut words = part.split_whitespace();
            let count = words.next()?.parse::<u64>().ok()?;
            let extension = words.next()?.strip_prefix('.')?;
            Some((extension.to_lowercase(), count))
        })
        .collect()
}

/// Whether `answer` names `file`, by its whole name or (`lenient`) by its name without its
/// extension, when that is three letters or more.
fn names(answer: &str, file: &str, lenient: bool) -> bool {
    let file = file.to_lowercase();
    if contains_word(answer, &file) {
        return true;
    }
    lenient
        && file
            .rsplit_once('.')
            .is_some_and(|(stem, _)| stem.len() >= 3 && contains_word(answer, stem))
}

/// An answer about the largest file that names a listed file and none marked the largest.
fn wrong_largest(answer: &str, listings: &[Listing<'_>]) -> Option<ListingContradiction> {
    let marked: Vec<&Listing<'_>> = listings.iter().filter(|l| l.largest.is_some()).collect();
    if marked.iter().any(|listing| {
        listing
            .largest
            .is_some_and(|file| names(answer, file, true))
    }) {
        return None;
    }
    for listing in marked {
        let (Some(largest), Some(line)) = (listing.largest, listing.largest_line) else {
            continue;
        };
        if let Some(named) = listing
            .files
            .iter()
            .find(|file| **file != largest && names(answer, file, false))
        {
            return Some(ListingContradiction {
                said: format!("`{named}` is the largest"),
                listed: line.to_owned(),
            });
        }
    }
    None
}

/// An answer that counts files of a kind a listing counts, with a number no listing gives.
fn wrong_count(answer: &str, listings: &[Listing<'_>]) -> Option<ListingContradiction> {
    let words: Vec<&str> = answer
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
        .map(|word| word.trim_end_matches('.'))
        .filter(|word| !word.is_empty())
        .collect();
    counts_claimed(&words, listings)
        .into_iter()
        .find_map(|(number, extension, kind)| {
            let counts: Vec<(&Listing<'_>, u64)> = listings
                .iter()
                .flat_map(|listing| {
                    listing
                        .kinds
                        .iter()
                        .filter(|(counted, _)| counted == extension)
                        .map(move |(_, count)| (listing, *count))
                })
                .collect();
            if counts.iter().any(|(_, count)| *count == number) {
                return None;
            }
            let listing = counts.first()?.0;
            let line = listing.count_line?;
            let plural = if number == 1 { "file" } else { "files" };
            // Both count lines, when the listing has two (the nudge quotes `listed`).
            let listed = match listing.tree_line {
                Some(tree) => format!("{line}` and `{tree}"),
                None => line.to_owned(),
            };
            Some(ListingContradiction {
                said: format!("{number} {kind} {plural}"),
                listed,
            })
        })
}

/// The counts of a kind of file `words` (an answer's, lower-cased) give, with the extension
/// and the words that name the kind: a number before the kind and "file(s)" ("5 Markdown
/// files"), or the kind and "files" before a number given as theirs ("the number of Markdown
/// files in the docs folder is 5", "Markdown files: 3").
fn counts_claimed<'a>(words: &[&'a str], listings: &[Listing<'_>]) -> Vec<(u64, &'a str, String)> {
    let is_file = |word: &str| word == "file" || word == "files";
    (0..words.len())
        .filter_map(|at| {
            if let Ok(number) = words[at].parse::<u64>() {
                // A number, the kind, then "file(s)".
                let (kind_at, extension) = (at + 1..words.len().min(at + 1 + KIND_WITHIN))
                    .find_map(|next| extension_named(words[next], listings).map(|e| (next, e)))?;
                let after = words.get(kind_at + 1..words.len().min(kind_at + 1 + KIND_WITHIN))?;
                return after
                    .iter()
                    .any(|word| is_file(word))
                    .then(|| (number, extension, words[at + 1..=kind_at].join(" ")));
            }
            // The kind, "files", then its number.
            let extension = extension_named(words[at], listings)?;
            if !words.get(at + 1).is_some_and(|word| is_file(word)) {
                return None;
            }
            let from = at + 2;
            let (number_at, number) = (from..words.len().min(from + NUMBER_WITHIN))
                .find_map(|next| words[next].parse::<u64>().ok().map(|n| (next, n)))?;
            let given = number_at == from || COUNT_VERBS.contains(&words[number_at - 1]);
            given.then(|| (number, extension, words[at].to_owned()))
        })
        .collect()
}

/// The extension `word` names when a listing counts it: `md`, `.md` or `markdown` for `md`.
fn extension_named<'w>(word: &'w str, listings: &[Listing<'_>]) -> Option<&'w str> {
    let bare = word.strip_prefix('.').unwrap_or(word);
    let extension = KIND_NAMES
        .iter()
        .find(|(name, _)| *name == bare)
        .map_or(bare, |(_, extension)| *extension);
    listings
        .iter()
        .flat_map(|listing| listing.kinds.iter())
        .any(|(kind, _)| kind == extension)
        .then_some(extension)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const DOCS: &str = "[file] conf.json (3 bytes)\n[file] faq.md (6 bytes)\n[file] intro.md (8 \
                        bytes)\n[file] logo.txt (7 bytes)\n[file] setup.md (8 bytes)\nIn all: 5 \
                        files (3 .md files, 1 .json file, 1 .txt file).";
    const DATA: &str = "[file] alpha.log (60 bytes)\n[file] beta.log (1380 bytes, the largest)\n\
                        [file] gamma.log (330 bytes)\nIn all: 3 files (3 .log files).";

    #[test]
    fn a_count_of_a_kind_the_listing_counts_otherwise_is_found_with_the_count_line() {
        let found = contradicted_listing("There are 5 Markdown files in the docs folder.", [DOCS]);
        assert_eq!(
            found,
            Some(ListingContradiction {
                said: "5 markdown files".into(),
                listed: "In all: 5 files (3 .md files, 1 .json file, 1 .txt file).".into(),
            })
        );
        assert!(found
            .unwrap()
            .nudge()
            .contains("`In all: 5 files (3 .md files"));
        for answer in [
            "The docs folder holds 4 .md files.",
            "There are 2 md files.",
            "I count 2 JSON files.",
            "The number of Markdown files in the docs folder is 5.",
            "Markdown files: 5",
        ] {
            assert!(contradicted_listing(answer, [DOCS]).is_some(), "{answer}");
        }
    }

    #[test]
    fn a_right_count_or_a_count_of_something_else_is_not_asked_about() {
        for answer in [
            "There are 3 Markdown files in the docs folder.",
            "There are 3 Markdown (.md) files: faq.md, intro.md and setup.md.",
            "The docs folder holds 5 files, 3 of them Markdown files.",
            "There are 5 files in the docs folder.",
            "Markdown files: 3 of the 5 files.",
            "The number of Markdown files in the docs folder is 3.",
            "Markdown files make up 3 of the 5 files in the folder.",
            "The Markdown files are faq.md, intro.md and setup.md; 5 files in all.",
            // a kind no listing counts, or no listing at all
            "There are 2 Python files.",
            "There are 7 Markdown files in the docs folder."
                .repeat(40)
                .as_str(),
        ] {
            assert_eq!(contradicted_listing(answer, [DOCS]), None, "{answer}");
        }
        assert_eq!(
            contradicted_listing("There are 5 Markdown files.", ["1\t# Intro"]),
            None
        );
        // another listing counts that many
        let other = "[file] a.md (1 bytes)\nIn all: 5 files (5 .md files).";
        assert_eq!(
            contradicted_listing("There are 5 Markdown files.", [DOCS, other]),
            None
        );
    }

    #[test]
    fn a_count_of_the_files_below_the_folder_is_a_count_the_listing_gives() {
        // A probe of issue 36's task kinds: "There are 5 .rs files in total" was told the
        // listing said otherwise, when its second count line said 5.
        let src = "[dir] util/\n[file] build.py (1 bytes)\n[file] lib.rs (1 bytes)\n\
                   [file] main.rs (13 bytes, the largest)\n\
                   In all: 3 files (2 .rs files, 1 .py file) and 1 directory.\n\
                   With the files in its subfolders: 6 files (5 .rs files, 1 .py file).";
        for answer in [
            "There are 5 .rs files in total, with 2 .rs files and 1 .py file.",
            "There are 2 Rust files directly in src.",
        ] {
            assert_eq!(contradicted_listing(answer, [src]), None, "{answer}");
        }
        let found = contradicted_listing("There are 3 Rust files under src.", [src]);
        assert_eq!(
            found.map(|found| found.nudge()).unwrap_or_default(),
            "Your last reply says 3 rust files, but the listing above says `In all: 3 files (2 \
             .rs files, 1 .py file) and 1 directory.` and `With the files in its subfolders: 6 \
             files (5 .rs files, 1 .py file).`. Read those lines again and answer the question \
             from what they say."
        );
    }

    #[test]
    fn a_file_named_the_largest_that_the_listing_does_not_mark_is_found() {
        let found = contradicted_listing(
            "alpha.log is the largest file, with a size of 60 bytes.",
            [DATA],
        );
        assert_eq!(
            found,
            Some(ListingContradiction {
                said: "`alpha.log` is the largest".into(),
                listed: "[file] beta.log (1380 bytes, the largest)".into(),
            })
        );
        assert!(contradicted_listing("The biggest file is gamma.log.", [DATA]).is_some());
    }

    #[test]
    fn the_marked_file_named_or_no_superlative_is_not_asked_about() {
        for answer in [
            "The largest file is beta.log (1380 bytes).",
            "beta is the largest; alpha.log is the smallest.",
            "alpha.log holds 60 bytes.",
            "The largest file is in the data folder.",
        ] {
            assert_eq!(contradicted_listing(answer, [DATA]), None, "{answer}");
        }
        // a listing that marks no file (a tie, one file)
        let tie = "[file] a.log (5 bytes)\n[file] b.log (5 bytes)\nIn all: 2 files (2 .log files).";
        assert_eq!(contradicted_listing("a.log is the largest.", [tie]), None);
    }

    #[test]
    fn an_answer_on_stop_is_judged_against_the_results_or_the_page_of_them() {
        use messages::{Message, ToolCall};
        let call = ToolCall::new("call_1", "list_dir", serde_json::json!({"path": "docs"}));
        let instruction = Message::user("You have to stop now. Do not call any tools.");
        let with_results = Messages::new()
            .appended(Message::user("How many Markdown files are in docs?"))
            .appended(Message::assistant_tool_calls([call.clone()]))
            .appended(Message::tool_result_for(&call, DOCS))
            .appended(instruction.clone());
        assert!(contradicts_a_listing_on_stop(
            &with_results,
            "There are 5 Markdown files."
        ));
        assert!(!contradicts_a_listing_on_stop(
            &with_results,
            "There are 3 Markdown files."
        ));
        let page = Messages::new().appended(Message::user(format!(
            "You have to stop now. My request was: How many Markdown files are in docs?\n\n\
             What your tool calls returned:\n\nlist_dir {{\"path\":\"docs\"}}: {DOCS}"
        )));
        assert!(contradicts_a_listing_on_stop(
            &page,
            "There are 5 Markdown files."
        ));
        let nothing = Messages::new()
            .appended(Message::user("How many Markdown files are in docs?"))
            .appended(instruction);
        assert!(!contradicts_a_listing_on_stop(
            &nothing,
            "There are 5 Markdown files."
        ));
    }

    proptest! {
        #[test]
        fn any_answer_and_result_are_judged_without_panic(
            answer in "[ -~é]{0,80}",
            result in "(\\[file\\] [a-z.]{0,6} \\([0-9]{1,3} bytes(, the largest)?\\)\n|In all: [0-9 a-z.,()]{0,30}\n|[ -~]{0,20}\n){0,6}",
        ) {
            let _ = contradicted_listing(&answer, [result.as_str()]);
        }
    }
}
