//! `edit_file`: replace a unique piece of text in a file.

use std::io::{Seek, SeekFrom, Write};

use agents_core::tools::{arguments_schema, Tool, ToolContext, ToolError, ToolOutput};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::read::{shown_whole, CONTENT_SHOWN, MAX_OUTPUT_CHARS};
use super::{
    blocking, io_error, open_file, parse_arguments, read_at_most, relative, too_large, Access,
    Sandbox,
};

/// Files larger than this are not edited, and no edit makes a file larger (rewrite it with
/// write_file, or split it).
pub const MAX_EDIT_BYTES: u64 = 10 * 1024 * 1024;

/// `edit_file{path, old_string, new_string, replace_all?}`: replaces `old_string` with
/// `new_string`. Unless `replace_all` is true, `old_string` must occur exactly once, so the edit
/// lands where the model meant it to.
///
/// An empty `new_string` that replaces whole lines (from a line's start to its end) deletes
/// those lines, line endings included, instead of leaving them blank: asked to delete the line
/// `banana`, a model replaces `banana` with nothing and means the line gone.
#[derive(Clone, Debug)]
pub struct EditFileTool {
    sandbox: Sandbox,
}

/// Arguments of `edit_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditFileArgs {
    /// Path of the file, relative to the workspace root.
    pub path: String,
    /// The exact text to replace (include enough context to make it unique).
    pub old_string: String,
    /// The text to put in its place.
    pub new_string: String,
    /// Replace every occurrence instead of requiring exactly one (default false).
    #[serde(default)]
    pub replace_all: bool,
}

impl EditFileTool {
    /// `edit_file` inside `sandbox`.
    pub fn new(sandbox: Sandbox) -> Self {
        Self { sandbox }
    }
}

#[async_trait]
impl Tool for EditFileTool {
    fn name(&self) -> &str {
        "edit_file"
    }

    fn description(&self) -> &str {
        "Replace an exact piece of text in a file of the workspace. old_string must match the \
         file exactly (whitespace included) and occur once, unless replace_all is true."
    }

    fn other_names(&self) -> &[&str] {
        &[
            "edit",
            "multi_edit",
            "replace",
            "str_replace",
            "replace_in_file",
            "replace_text",
            "update_file",
            "modify_file",
            "patch_file",
            "apply_patch",
            "delete_line",
            "delete_lines",
            "remove_line",
            "remove_lines",
            "insert_line",
        ]
    }

    fn parameters(&self) -> Value {
        arguments_schema::<EditFileArgs>()
    }

    async fn call(
        &self,
        arguments: Value,
        _context: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: EditFileArgs = parse_arguments(arguments)?;
        if args.old_string.is_empty() {
            return Err(ToolError::invalid_arguments(
                "old_string is empty; give the exact text to replace (use write_file to create a file)",
            ));
        }
        if args.old_string == args.new_string {
            return Err(ToolError::invalid_arguments(
                "old_string and new_string are identical; nothing would change",
            ));
        }
        let sandbox = self.sandbox.clone();
        blocking(move || edit_file(&sandbox, &args)).await
    }
}

/// Reads the file through one descriptor, replaces, and writes the result back through it.
fn edit_file(sandbox: &Sandbox, args: &EditFileArgs) -> Result<ToolOutput, ToolError> {
    let path = relative(sandbox, &args.path)?;
    let shown = sandbox.shown(&path);
    let directory = || ToolError::failed(format!("`{shown}` is a directory, not a file"));
    let (mut file, size) = open_file(sandbox, &path, Access::ReadWrite, "read", directory)?;
    if size > MAX_EDIT_BYTES {
        return Err(too_large(&shown, "edit", size, MAX_EDIT_BYTES));
    }
    let bytes = read_at_most(&file, MAX_EDIT_BYTES, &shown)?;
    let content = String::from_utf8(bytes).map_err(|_| {
        ToolError::failed(format!("cannot edit `{shown}`: it is not valid UTF-8 text"))
    })?;
    let count = content.matches(&args.old_string).count();
    if count == 0 {
        return Err(ToolError::failed(
            already_made(&content, &args.new_string).map_or_else(
                || not_found(&shown, &content, &args.old_string),
                |line| {
                    format!(
                        "old_string was not found in `{shown}`, and new_string is there (line \
                     {line}): the edit looks made already (an edit that ran before, say). Read \
                     the file to check it before you change anything more"
                    )
                },
            ),
        ));
    }
    if count > 1 && !args.replace_all {
        return Err(ToolError::failed(format!(
            "old_string occurs {count} times in `{shown}`; add surrounding context to make it \
             unique, or set replace_all to true to replace every occurrence"
        )));
    }
    // the result's size is known before it is built, so a growing replace_all stops here
    let edited_size = edited_size(content.len(), count, &args.old_string, &args.new_string);
    if edited_size > MAX_EDIT_BYTES {
        return Err(ToolError::failed(format!(
            "the edit would make `{shown}` {edited_size} bytes, over the limit of {MAX_EDIT_BYTES}; \
             replace fewer occurrences or split the file"
        )));
    }
    let (edited, deleted) = if args.new_string.is_empty() {
        delete(&content, &args.old_string)
    } else {
        (content.replace(&args.old_string, &args.new_string), 0)
    };
    file.seek(SeekFrom::Start(0))
        .and_then(|_| file.write_all(edited.as_bytes()))
        .and_then(|()| file.set_len(edited.len() as u64))
        .map_err(|e| io_error("write", &shown, &e))?;
    let occurrences = |n: usize| if n == 1 { "occurrence" } else { "occurrences" };
    Ok(ToolOutput::text(if deleted == 0 {
        format!("replaced {count} {} in `{shown}`", occurrences(count))
    } else if deleted == count {
        format!(
            "deleted {count} {} in `{shown}`: whole lines, removed with their line endings",
            occurrences(count)
        )
    } else {
        format!(
            "deleted {count} {} in `{shown}` ({deleted} of them whole lines, removed with \
             their line endings)",
            occurrences(count)
        )
    }))
}

/// `content` without the occurrences of `old` (an edit whose `new_string` is empty), and how
/// many of them were whole lines: such an occurrence goes with its line ending (the one
/// before it when it ends the text without one), so the line is deleted, not left blank.
fn delete(content: &str, old: &str) -> (String, usize) {
    let mut edited = String::with_capacity(content.len());
    let mut kept_from = 0;
    let mut lines = 0;
    for (at, _) in content.match_indices(old) {
        if at < kept_from {
            continue; // inside a line ending already removed (an old_string that starts one)
        }
        edited.push_str(&content[kept_from..at]);
        let end = at + old.len();
        let rest = &content[end..];
        let starts_line = at == 0 || content[..at].ends_with('\n');
        let ending = if old.ends_with('\n') {
            None // the line ending is part of the text replaced
        } else if rest.starts_with("\r\n") {
            Some(2)
        } else if rest.starts_with('\n') {
            Some(1)
        } else if rest.is_empty() {
            Some(0)
        } else {
            None
        };
        kept_from = end;
        if let (true, Some(ending)) = (starts_line, ending) {
            lines += 1;
            kept_from += ending;
            if ending == 0 && edited.ends_with('\n') {
                // the last line, without an ending of its own: the one before it goes
                edited.pop();
                if edited.ends_with('\r') {
                    edited.pop();
                }
            }
        }
    }
    edited.push_str(&content[kept_from..]);
    (edited, lines)
}

/// The size in bytes of a text of `size` bytes after `count` replacements of `old` by `new`.
fn edited_size(size: usize, count: usize, old: &str, new: &str) -> u64 {
    let size = size as u128;
    let count = count as u128;
    let edited = size - count * old.len() as u128 + count * new.len() as u128;
    u64::try_from(edited).unwrap_or(u64::MAX)
}

/// The error for an `old_string` the file does not hold: with the file's line most like it,
/// when one shares a word with it. The 1.5B model sent as `old_string` the text it had
/// wanted to write, line numbers and all (`1 Widget 1.5.0`); told only to read the file and
/// copy the text, it read the file and answered that the edit was made (development task
/// d22, ReAct, 2026-12-07). Else the whole file, when it is small ([`shown_whole`]): told
/// "read the file and copy the text exactly" after `old_string` `2.` for "Delete the second line of steps.txt.", the 1.5B model read
/// the file, then searched it for `2.` and wrote a plan (a probe of issue 36's task kinds,
/// 2026-12-07). A file shown so counts as read for `write_file`.
fn not_found(shown: &str, content: &str, old: &str) -> String {
    match closest_line(content, old) {
        Some((number, line)) => {
            let line: String = line.chars().take(MAX_LINE_SHOWN).collect();
            format!(
                "old_string was not found in `{shown}`; the line most like it is line {number}: \
                 `{line}`. Copy the text exactly as the file has it (read_file's line numbers \
                 are not part of it)"
            )
        }
        None => match shown_whole(content, MAX_OUTPUT_CHARS) {
            Some(numbered) => format!(
                "old_string was not found in `{shown}`, which holds other lines. \
                 {CONTENT_SHOWN} (line number, tab, line):\n{numbered}\nCopy the text to change exactly from these lines, without \
                 their numbers (to delete a line, old_string is the whole line and new_string \
                 is empty)."
            ),
            None => format!(
                "old_string was not found in `{shown}`; read the file and copy the text exactly"
            ),
        },
    }
}

/// The most of a line an error shows.
const MAX_LINE_SHOWN: usize = 200;

/// The most words of `old_string`'s first line compared with each line of the file.
const MAX_WORDS_COMPARED: usize = 16;

/// The line of `content` (1-based, and its text) that shares the most words with the first
/// line of `old` that has one, when a line shares any; the first such on a tie. Words are
/// runs of letters and digits of two characters or more, not digits alone (line numbers,
/// versions), compared ignoring case. Linear in the file.
fn closest_line<'c>(content: &'c str, old: &str) -> Option<(usize, &'c str)> {
    let words = |line: &str| -> Vec<String> {
        line.split(|c: char| !c.is_alphanumeric())
            .filter(|word| word.chars().count() >= 2 && !word.chars().all(|c| c.is_ascii_digit()))
            .map(str::to_lowercase)
            .collect()
    };
    let mut wanted = old.lines().map(words).find(|found| !found.is_empty())?;
    wanted.truncate(MAX_WORDS_COMPARED);
    let mut best: Option<(usize, &str)> = None;
    let mut most = 0;
    for (index, line) in content.lines().enumerate() {
        let shared = words(line)
            .iter()
            .filter(|word| wanted.contains(word))
            .count();
        if shared > most {
            most = shared;
            best = Some((index + 1, line));
        }
    }
    best
}

/// The line (1-based) where `content` holds `new_string`, when it does: an edit whose
/// replacement is there and whose original is not was likely made already. The 1.5B model
/// sent the same `edit_file` call twice in a row; told only that the text was not found, it
/// took the edit for undone and planned it again (development task d4).
fn already_made(content: &str, new_string: &str) -> Option<usize> {
    if new_string.trim().is_empty() {
        return None;
    }
    let at = content.find(new_string)?;
    Some(content[..at].matches('\n').count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn setup(content: &str) -> (tempfile::TempDir, EditFileTool) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), content).unwrap();
        let tool = EditFileTool::new(Sandbox::new(dir.path()).unwrap());
        (dir, tool)
    }

    async fn edit(tool: &EditFileTool, arguments: Value) -> Result<String, ToolError> {
        tool.call(arguments, &ToolContext::default())
            .await
            .map(|o| o.content().to_owned())
    }

    fn read(dir: &tempfile::TempDir) -> String {
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap()
    }

    #[tokio::test]
    async fn replaces_a_unique_match() {
        let (dir, tool) = setup("let x = 1;\nlet y = 2;\n");
        let output = edit(
            &tool,
            json!({"path": "a.txt", "old_string": "x = 1", "new_string": "x = 10"}),
        )
        .await
        .unwrap();
        assert_eq!(output, "replaced 1 occurrence in `a.txt`");
        assert_eq!(read(&dir), "let x = 10;\nlet y = 2;\n");
    }

    #[tokio::test]
    async fn several_matches_need_replace_all() {
        let (dir, tool) = setup("a a a");
        let error = edit(
            &tool,
            json!({"path": "a.txt", "old_string": "a", "new_string": "b"}),
        )
        .await
        .unwrap_err();
        assert!(error
            .message()
            .starts_with("old_string occurs 3 times in `a.txt`"));
        assert_eq!(read(&dir), "a a a");

        let output = edit(
            &tool,
            json!({"path": "a.txt", "old_string": "a", "new_string": "b", "replace_all": true}),
        )
        .await
        .unwrap();
        assert_eq!(output, "replaced 3 occurrences in `a.txt`");
        assert_eq!(read(&dir), "b b b");
    }

    #[tokio::test]
    async fn text_not_found_is_shown_the_line_most_like_it() {
        let (dir, tool) = setup("Widget 1.4.0\nBuilt with care.\n");
        // The model's own text, with read_file's line numbers, as old_string (d22).
        let error = tool
            .call(
                json!({"path": "a.txt", "old_string": "1 Widget 1.5.0\n     2 Built with care.",
                       "new_string": "Widget 1.5.0\nBuilt with care."}),
                &ToolContext::new("test"),
            )
            .await
            .unwrap_err();
        assert_eq!(
            error,
            ToolError::failed(
                "old_string was not found in `a.txt`; the line most like it is line 1: `Widget \
                 1.4.0`. Copy the text exactly as the file has it (read_file's line numbers are \
                 not part of it)"
            )
        );
        assert_eq!(
            read(&dir),
            "Widget 1.4.0\nBuilt with care.\n",
            "nothing written"
        );
        assert_eq!(
            closest_line("alpha\nbeta gamma\n", "gamma beta"),
            Some((2, "beta gamma"))
        );
        assert_eq!(closest_line("alpha\n", "12 34\n\nzeta"), None);
        assert_eq!(closest_line("", "alpha"), None);
    }

    #[tokio::test]
    async fn an_edit_of_text_not_there_shows_a_small_file_and_not_a_large_one() {
        // A probe of issue 36's task kinds: "Delete the second line" sent `2.`.
        let (dir, tool) = setup("wash\ncut\nboil\nserve\n");
        let error = edit(
            &tool,
            json!({"path": "a.txt", "old_string": "2.", "new_string": ""}),
        )
        .await
        .unwrap_err();
        assert!(
            error.message().contains(
                "(line number, tab, line):\n     1\twash\n     2\tcut\n     3\tboil\n     \
                 4\tserve\nCopy the text"
            ),
            "{error:?}"
        );
        // past 2 KiB, no content: read the file
        std::fs::write(dir.path().join("a.txt"), "line\n".repeat(500)).unwrap();
        let error = edit(
            &tool,
            json!({"path": "a.txt", "old_string": "2.", "new_string": ""}),
        )
        .await
        .unwrap_err();
        assert_eq!(
            error.message(),
            "old_string was not found in `a.txt`; read the file and copy the text exactly"
        );
    }

    #[tokio::test]
    async fn clear_errors_for_bad_edits() {
        let (dir, tool) = setup("hello");
        let cases = [
            (json!({"path": "a.txt", "old_string": "bye", "new_string": "x"}),
             ToolError::failed("old_string was not found in `a.txt`, which holds other lines. Here they are, as read_file shows them (line number, tab, line):\n     1\thello\nCopy the text to change exactly from these lines, without their numbers (to delete a line, old_string is the whole line and new_string is empty).")),
            (json!({"path": "a.txt", "old_string": "bye", "new_string": "ell"}),
             ToolError::failed("old_string was not found in `a.txt`, and new_string is there (line 1): the edit looks made already (an edit that ran before, say). Read the file to check it before you change anything more")),
            (json!({"path": "a.txt", "old_string": "hello", "new_string": "hello"}),
             ToolError::invalid_arguments("old_string and new_string are identical; nothing would change")),
            (json!({"path": "a.txt", "old_string": "", "new_string": "x"}),
             ToolError::invalid_arguments("old_string is empty; give the exact text to replace (use write_file to create a file)")),
            (json!({"path": "missing.txt", "old_string": "a", "new_string": "b"}),
             ToolError::failed(
                "cannot read `missing.txt`: no such file or directory; the workspace's top folder holds `a.txt`"
            )),
            (json!({"path": "../a.txt", "old_string": "a", "new_string": "b"}),
             ToolError::invalid_arguments("path `../a.txt` escapes the workspace root")),
        ];
        for (arguments, expected) in cases {
            assert_eq!(edit(&tool, arguments).await.unwrap_err(), expected);
        }
        assert_eq!(read(&dir), "hello");
    }

    #[tokio::test]
    async fn an_empty_replacement_of_whole_lines_deletes_the_lines() {
        let cases = [
            // (file, old_string, replace_all, file after, tool output)
            ("apple\nbanana\ncherry\n", "banana", false, "apple\ncherry\n", "deleted 1 occurrence in `a.txt`: whole lines, removed with their line endings"),
            ("apple\r\nbanana\r\ncherry\r\n", "banana", false, "apple\r\ncherry\r\n", "deleted 1 occurrence in `a.txt`: whole lines, removed with their line endings"),
            ("apple\nbanana\ncherry\ndate\n", "banana\ncherry", false, "apple\ndate\n", "deleted 1 occurrence in `a.txt`: whole lines, removed with their line endings"),
            ("apple\nbanana", "banana", false, "apple", "deleted 1 occurrence in `a.txt`: whole lines, removed with their line endings"),
            ("apple\r\nbanana", "banana", false, "apple", "deleted 1 occurrence in `a.txt`: whole lines, removed with their line endings"),
            ("banana", "banana", false, "", "deleted 1 occurrence in `a.txt`: whole lines, removed with their line endings"),
            ("banana\n", "banana", false, "", "deleted 1 occurrence in `a.txt`: whole lines, removed with their line endings"),
            // the line ending given with the text: removed as given
            ("apple\nbanana\ncherry\n", "banana\n", false, "apple\ncherry\n", "replaced 1 occurrence in `a.txt`"),
            // part of a line: the rest of the line stays
            ("apple pie\nbanana\n", "pie", false, "apple \nbanana\n", "replaced 1 occurrence in `a.txt`"),
            ("apple pie\nbanana\n", "apple", false, " pie\nbanana\n", "replaced 1 occurrence in `a.txt`"),
            ("x\nx y\nx\n", "x", true, " y\n", "deleted 3 occurrences in `a.txt` (2 of them whole lines, removed with their line endings)"),
            ("x\n\nx\n", "x", true, "\n", "deleted 2 occurrences in `a.txt`: whole lines, removed with their line endings"),
        ];
        for (content, old, all, after, output) in cases {
            let (dir, tool) = setup(content);
            let arguments =
                json!({"path": "a.txt", "old_string": old, "new_string": "", "replace_all": all});
            assert_eq!(
                edit(&tool, arguments).await.unwrap(),
                output,
                "{content:?} - {old:?}"
            );
            assert_eq!(read(&dir), after, "{content:?} - {old:?}");
        }
    }

    proptest::proptest! {
        /// Deleting one line's whole text leaves the other lines as they were, in order, with
        /// the file's last line ending kept as it was.
        #[test]
        fn deleting_a_whole_line_keeps_the_others(
            count in 1usize..12,
            chosen in 0usize..12,
            ending in proptest::sample::select(vec!["\n", "\r\n"]),
            trailing in proptest::bool::ANY,
        ) {
            let chosen = chosen % count;
            let lines: Vec<String> = (0..count).map(|i| format!("<line {i}>")).collect();
            let join = |lines: &[&String]| {
                let mut text = lines.iter().map(|l| l.as_str()).collect::<Vec<_>>().join(ending);
                if trailing && !text.is_empty() {
                    text.push_str(ending);
                }
                text
            };
            let content = join(&lines.iter().collect::<Vec<_>>());
            let kept: Vec<&String> = lines.iter().enumerate().filter(|(i, _)| *i != chosen).map(|(_, l)| l).collect();
            let (edited, deleted) = delete(&content, &lines[chosen]);
            proptest::prop_assert_eq!(deleted, 1);
            proptest::prop_assert_eq!(edited, join(&kept));
        }
    }

    #[tokio::test]
    async fn a_shorter_text_truncates_the_file() {
        let (dir, tool) = setup("hello world, and more");
        edit(
            &tool,
            json!({"path": "a.txt", "old_string": "world, and more", "new_string": "w"}),
        )
        .await
        .unwrap();
        assert_eq!(read(&dir), "hello w");
    }

    #[tokio::test]
    async fn files_too_large_to_edit_are_refused() {
        let (dir, tool) = setup("");
        let big = "x".repeat(MAX_EDIT_BYTES as usize + 1);
        std::fs::write(dir.path().join("big.txt"), &big).unwrap();
        let error = edit(
            &tool,
            json!({"path": "big.txt", "old_string": "x", "new_string": "y"}),
        )
        .await
        .unwrap_err();
        assert_eq!(
            error,
            ToolError::failed(format!(
                "`big.txt` is too large to edit ({} bytes, the limit is {MAX_EDIT_BYTES})",
                MAX_EDIT_BYTES + 1
            ))
        );
    }

    #[tokio::test]
    async fn replace_all_cannot_grow_a_file_past_the_limit() {
        let original = "ab".repeat(1000);
        let (dir, tool) = setup(&original);
        let error = edit(
            &tool,
            json!({
                "path": "a.txt",
                "old_string": "a",
                "new_string": "x".repeat(20_000),
                "replace_all": true
            }),
        )
        .await
        .unwrap_err();
        assert_eq!(
            error,
            ToolError::failed(format!(
                "the edit would make `a.txt` 20001000 bytes, over the limit of {MAX_EDIT_BYTES}; \
                 replace fewer occurrences or split the file"
            ))
        );
        assert_eq!(read(&dir), original);
    }
}
