//! `write_file`: create or overwrite a file.
//!
//! Inside an agent's execution it replaces only a file the execution has read or written
//! (a successful `read_file`, `write_file` or `edit_file` on the same path): a model that
//! has not seen a file's content cannot keep it. Asked to add a line to `list.txt`, the
//! 1.5B model wrote `gamma` over its two lines without reading it (issue 36, development
//! task d14); now it is told to read the file first. A small text file's content comes with
//! that refusal, as `read_file` shows it, and counts as read: the next `write_file` may
//! replace it (what the model lacked was the content, not another step). A new or empty
//! file, and a call made outside an execution (a test, a direct call, a tool server's
//! client, who sees what it replaces), are written as asked.

use std::io::Write;

use agents_core::tools::{arguments_schema, Tool, ToolContext, ToolError, ToolOutput};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::read::{shown_whole, CONTENT_SHOWN, SHOWN_BYTES};
use super::{
    blocking, create_file, io_error, open_file, parse_arguments, relative, Access, RelativePath,
    Sandbox,
};

/// `write_file{path, content}`: writes `content` to `path` (replacing what was there), creating
/// missing parent directories, and reports the bytes and lines written. In an execution, a
/// file with content is replaced only once the execution has read or written it (see the
/// module doc).
#[derive(Clone, Debug)]
pub struct WriteFileTool {
    sandbox: Sandbox,
}

/// Arguments of `write_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFileArgs {
    /// Path of the file, relative to the workspace root.
    pub path: String,
    /// The complete new content of the file.
    pub content: String,
}

impl WriteFileTool {
    /// `write_file` inside `sandbox`.
    pub fn new(sandbox: Sandbox) -> Self {
        Self { sandbox }
    }
}

#[async_trait]
impl Tool for WriteFileTool {
    fn name(&self) -> &str {
        "write_file"
    }

    fn description(&self) -> &str {
        "Write a file in the workspace, replacing its content (parent directories are created). \
         To change part of a file, use edit_file instead; to add lines at its end, append_file."
    }

    fn other_names(&self) -> &[&str] {
        // It creates the folders of the path it writes: a folder with a file in it is one call.
        &[
            "write",
            "create_file",
            "new_file",
            "save_file",
            "file_write",
            "touch",
            "create_folder",
            "create_directory",
            "create_dir",
            "make_directory",
            "make_folder",
            "make_dir",
            "mkdir",
        ]
    }

    fn parameters(&self) -> Value {
        arguments_schema::<WriteFileArgs>()
    }

    fn effects(&self) -> agents_core::ToolEffects {
        // It writes the whole file: running it again with the same arguments changes nothing more.
        agents_core::ToolEffects::Idempotent
    }

    async fn call(&self, arguments: Value, context: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: WriteFileArgs = parse_arguments(arguments)?;
        let sandbox = self.sandbox.clone();
        let path = relative(&sandbox, &args.path)?;
        if context.execution_id.is_some() {
            if let Some(tags) = only_chat_tags(&args.content) {
                return Err(ToolError::failed(format!(
                    "`{}` was not changed: the content you gave is only `{tags}`, the markup of \
                     the chat format, not the file's content. Call write_file again with the \
                     complete text the file should hold.",
                    sandbox.shown(&path)
                )));
            }
            if copies_line_numbers(&args.content) {
                let unnumbered = without_line_numbers(&args.content);
                let shown = if unnumbered.len() as u64 <= SHOWN_BYTES {
                    format!(" Without them, the content is:\n{unnumbered}\n")
                } else {
                    " ".to_owned()
                };
                return Err(ToolError::failed(format!(
                    "`{}` was not changed: each line of the content you gave starts with its \
                     line number as read_file shows it, and those numbers are not part of the \
                     file.{shown}Call write_file again with the lines alone, without the \
                     numbers in front of them.",
                    sandbox.shown(&path)
                )));
            }
        }
        let may_replace =
            context.execution_id.is_none() || seen_in_execution(&sandbox, &path, context);
        // the content a refusal shows must reach the model whole to count as read
        let shown_chars = context
            .output_limit
            .map_or(usize::MAX, |limit| limit.saturating_sub(REFUSAL_CHARS));
        blocking(move || write_file(&sandbox, &path, &args, may_replace, shown_chars)).await
    }
}

/// The content, trimmed, when it is nothing but the markup of a chat template: tool-call and
/// tool-result tags (`<tool_response>`, `</tool_call>`) and special tokens (`<|im_end|>`).
/// Issue 32's 32-turn conversation: asked to change a value in `notes.md`, the 1.5B model
/// called `write_file` with the content `<tool_response>` (its template's next tag), and the
/// notes were replaced by it. No file is meant to hold only that; in an execution such a
/// write is refused.
fn only_chat_tags(content: &str) -> Option<&str> {
    const TAGS: [&str; 5] = [
        "tool_call",
        "tool_response",
        "tool_result",
        "function_call",
        "functions",
    ];
    let is_chat_tag = |word: &str| {
        let special = word.len() > 4 && word.starts_with("<|") && word.ends_with("|>");
        let tag = word
            .strip_prefix("</")
            .or_else(|| word.strip_prefix('<'))
            .and_then(|rest| rest.strip_suffix('>'))
            .is_some_and(|name| TAGS.contains(&name.to_ascii_lowercase().as_str()));
        special || tag
    };
    let trimmed = content.trim();
    (!trimmed.is_empty() && trimmed.split_whitespace().all(is_chat_tag)).then_some(trimmed)
}

/// Whether every line of `content` (empty lines aside) starts with a line number as
/// `read_file` shows one (spaces, the number, then a tab or a space), numbered one after
/// another: the lines were copied with their numbers. The 1.5B model with the ReAct driver
/// (issue 36, development task d22 at 13bb23e) read `about.txt` ("     1\tWidget 1.4.0") and
/// wrote it back as "      1 Widget 1.5.0\n     2 Built with care.": the file then held the
/// numbers. In an execution such a write is refused, and the refusal shows the content
/// without the numbers (up to 2 KiB): told only to send the lines alone, the model sent
/// `edit_file` the numbered text instead (d22 at 23579a7). Data that starts each line with a
/// number without the padding in front ("1 apple") is not judged.
fn copies_line_numbers(content: &str) -> bool {
    let mut next: Option<u64> = None;
    for line in content.lines().filter(|line| !line.is_empty()) {
        let rest = line.trim_start_matches(' ');
        if line.len() - rest.len() < 2 {
            return false;
        }
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let after = rest.as_bytes().get(digits);
        if digits == 0 || !matches!(after, None | Some(b'\t' | b' ')) {
            return false;
        }
        let Ok(number) = rest[..digits].parse::<u64>() else {
            return false;
        };
        if next.is_some_and(|expected| expected != number) {
            return false;
        }
        next = number.checked_add(1);
    }
    next.is_some()
}

/// `content` (lines [`copies_line_numbers`] judged numbered) without the numbers: each
/// line's spaces, digits and the one tab or space after them left out.
fn without_line_numbers(content: &str) -> String {
    content
        .lines()
        .map(|line| {
            let rest = line
                .trim_start_matches(' ')
                .trim_start_matches(|c: char| c.is_ascii_digit());
            rest.strip_prefix(['\t', ' ']).unwrap_or(rest)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Characters of the refusal besides the content it shows (its text and the path twice).
const REFUSAL_CHARS: usize = 1_000;

/// Whether a call of the execution before this one read or wrote `path`: a successful
/// `read_file`, `write_file` or `edit_file` whose `path` is the same file, or a `write_file`
/// or `edit_file` refused with the file's content shown.
fn seen_in_execution(sandbox: &Sandbox, path: &RelativePath, context: &ToolContext) -> bool {
    context.earlier_calls().any(|execution| {
        let seen = if execution.has_error() {
            matches!(execution.name(), "write_file" | "edit_file")
                && execution.result_text().contains(CONTENT_SHOWN)
        } else {
            matches!(execution.name(), "read_file" | "write_file" | "edit_file")
        };
        if !seen {
            return false;
        }
        let same = |seen: &str| {
            sandbox
                .relative(seen)
                .is_ok_and(|seen| seen.same_path(path))
        };
        // a read of a file that is not there may have read others instead (the file of that
        // name above a missing folder, or elsewhere), and names them in its value
        match execution
            .value()
            .filter(|_| execution.name() == "read_file")
            .and_then(|value| value.get("read"))
            .and_then(Value::as_array)
        {
            Some(read) => read.iter().filter_map(Value::as_str).any(same),
            None => execution
                .arguments()
                .get("path")
                .and_then(Value::as_str)
                .is_some_and(same),
        }
    })
}

/// Creates the missing parents beneath the root, then writes the file through its descriptor;
/// a file with content is replaced only when `may_replace`.
fn write_file(
    sandbox: &Sandbox,
    path: &RelativePath,
    args: &WriteFileArgs,
    may_replace: bool,
    shown_chars: usize,
) -> Result<ToolOutput, ToolError> {
    let shown = sandbox.shown(path);
    let (mut file, size) = create_file(sandbox, path)?;
    if size > 0 && !may_replace {
        return Err(not_read(sandbox, path, size, &shown, shown_chars));
    }
    file.set_len(0)
        .and_then(|()| file.write_all(args.content.as_bytes()))
        .map_err(|e| io_error("write", &shown, &e))?;
    let lines = args.content.lines().count();
    Ok(ToolOutput::text(format!(
        "wrote {} bytes ({lines} {}) to `{shown}`",
        args.content.len(),
        if lines == 1 { "line" } else { "lines" }
    )))
}

/// The refusal to replace the `size` bytes of `path`, unread in this execution: with its
/// content, numbered as `read_file` shows it, when it is a small text file whose numbered
/// lines take at most `shown_chars` characters (what the agent's tool-output limit leaves).
fn not_read(
    sandbox: &Sandbox,
    path: &RelativePath,
    size: u64,
    shown: &str,
    shown_chars: usize,
) -> ToolError {
    let directory = || ToolError::failed(String::new());
    let content = (size <= SHOWN_BYTES)
        .then(|| open_file(sandbox, path, Access::Read, "read", directory).ok())
        .flatten()
        .and_then(|(file, _)| super::read_at_most(&file, SHOWN_BYTES, shown).ok())
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|text| shown_whole(&text, shown_chars));
    ToolError::failed(match content {
        Some(numbered) => format!(
            "`{shown}` was not changed: writing would replace its {size} bytes, which you had \
             not read in this task. {CONTENT_SHOWN} (line number, tab, line):\n{numbered}\n\
             Call write_file again with the complete new content of `{shown}` (the lines to \
             keep, without their numbers, and what to add), add lines at its end with \
             append_file, or change only part of it with edit_file."
        ),
        None => format!(
            "`{shown}` was not changed: it holds {size} bytes that you have not read in this \
             task, and writing would replace them. Call read_file on `{shown}` now; then write \
             its complete new content (what to keep and what to add). Or add lines at its end \
             with append_file, or change only part of it with edit_file."
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn setup() -> (tempfile::TempDir, WriteFileTool) {
        let dir = tempfile::tempdir().unwrap();
        let tool = WriteFileTool::new(Sandbox::new(dir.path()).unwrap());
        (dir, tool)
    }

    async fn write(tool: &WriteFileTool, arguments: Value) -> Result<String, ToolError> {
        tool.call(arguments, &ToolContext::default())
            .await
            .map(|o| o.content().to_owned())
    }

    #[test]
    fn chat_template_markup_alone_is_not_file_content() {
        for content in [
            "<tool_response>",
            "<tool_response>\n",
            "  </tool_call> <tool_call>",
            "<|im_end|>",
            "<TOOL_RESPONSE>\n<|im_start|>",
        ] {
            assert!(only_chat_tags(content).is_some(), "{content:?}");
        }
        for content in [
            "",
            "\n",
            "<p>hello</p>",
            "<tool_response> the port is 8080",
            "workers = 6\n<tool_response>",
            "<html>",
            "<||>",
        ] {
            assert_eq!(only_chat_tags(content), None, "{content:?}");
        }
    }

    #[test]
    fn lines_copied_with_their_numbers_are_recognised() {
        for content in [
            // The ReAct 1.5B model's write of d22 (13bb23e).
            "      1 Widget 1.5.0\n     2 Built with care.",
            // As read_file shows them, tab and all, an empty line included.
            "     1\tfirst\n     2\t\n     3\tthird\n",
            "     7\tfrom the middle\n     8\ton",
            "     1\tone line",
        ] {
            assert!(copies_line_numbers(content), "{content:?}");
        }
        for content in [
            "1 apple\n2 pear",
            "     1\tfirst\n     3\tthird",
            "     1\tnumbered\nnot numbered",
            "  12ab",
            "",
            "\n\n",
            "    99999999999999999999999 overflow",
            "fn main() {}",
        ] {
            assert!(!copies_line_numbers(content), "{content:?}");
        }
    }

    #[tokio::test]
    async fn a_write_of_lines_with_their_read_numbers_is_refused_in_an_execution() {
        let (dir, tool) = setup();
        std::fs::write(
            dir.path().join("about.txt"),
            "Widget 1.4.0\nBuilt with care.\n",
        )
        .unwrap();
        let mut context = ToolContext::default();
        context.execution_id = Some("exec-1".into());
        let refused = tool
            .call(
                json!({"path": "about.txt", "content": "      1 Widget 1.5.0\n     2 Built with care."}),
                &context,
            )
            .await
            .unwrap_err();
        assert!(
            refused.to_string().contains(
                "`about.txt` was not changed: each line of the content you gave starts with its \
                 line number as read_file shows it, and those numbers are not part of the file. \
                 Without them, the content is:\nWidget 1.5.0\nBuilt with care.\nCall write_file \
                 again"
            ),
            "{refused}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("about.txt")).unwrap(),
            "Widget 1.4.0\nBuilt with care.\n"
        );
    }

    #[test]
    fn a_refusal_shows_the_content_only_when_it_reaches_the_model_whole() {
        let (dir, _) = setup();
        std::fs::write(dir.path().join("list.txt"), "alpha\nbeta\n").unwrap();
        let sandbox = Sandbox::new(dir.path()).unwrap();
        let path = sandbox.relative("list.txt").unwrap();
        let refusal = |chars| {
            not_read(&sandbox, &path, 11, "list.txt", chars)
                .message()
                .to_owned()
        };
        let shown = refusal(usize::MAX);
        assert!(shown.contains(CONTENT_SHOWN), "{shown}");
        assert!(shown.contains("     1\talpha\n     2\tbeta\n"), "{shown}");
        // a tool-output limit that would cut the lines: no content, so nothing counts as read
        let cut = refusal(20);
        assert!(
            !cut.contains(CONTENT_SHOWN) && !cut.contains("alpha"),
            "{cut}"
        );
        assert!(cut.contains("Call read_file on `list.txt` now"), "{cut}");
    }

    #[tokio::test]
    async fn writes_and_creates_parent_directories() {
        let (dir, tool) = setup();
        let output = write(
            &tool,
            json!({"path": "src/deep/main.rs", "content": "fn main() {}\n// end\n"}),
        )
        .await
        .unwrap();
        assert_eq!(output, "wrote 20 bytes (2 lines) to `src/deep/main.rs`");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("src/deep/main.rs")).unwrap(),
            "fn main() {}\n// end\n"
        );
    }

    #[tokio::test]
    async fn overwrites_an_existing_file() {
        let (dir, tool) = setup();
        std::fs::write(dir.path().join("a.txt"), "old content").unwrap();
        let output = write(&tool, json!({"path": "a.txt", "content": "new"}))
            .await
            .unwrap();
        assert_eq!(output, "wrote 3 bytes (1 line) to `a.txt`");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "new"
        );
    }

    #[tokio::test]
    async fn refuses_directories_and_escapes() {
        let (dir, tool) = setup();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        assert_eq!(
            write(&tool, json!({"path": "sub", "content": "x"}))
                .await
                .unwrap_err(),
            ToolError::failed("`sub` is a directory; give the path of a file")
        );
        assert_eq!(
            write(&tool, json!({"path": "../evil.txt", "content": "x"}))
                .await
                .unwrap_err(),
            ToolError::invalid_arguments("path `../evil.txt` escapes the workspace root")
        );
        assert!(!dir.path().parent().unwrap().join("evil.txt").exists());
    }

    #[tokio::test]
    async fn a_file_on_the_way_is_named_as_a_file_not_a_folder() {
        let (dir, tool) = setup();
        std::fs::write(dir.path().join("reports"), "all good\n").unwrap();
        assert_eq!(
            write(
                &tool,
                json!({"path": "reports/summary.txt", "content": "x"})
            )
            .await
            .unwrap_err(),
            ToolError::failed(
                "cannot write `reports/summary.txt`: `reports` is a file, not a folder, so \
                 nothing can be put inside it; use another path, or move or delete the file \
                 `reports` first"
            )
        );
        std::fs::create_dir(dir.path().join("a")).unwrap();
        std::fs::write(dir.path().join("a/b"), "").unwrap();
        let error = write(&tool, json!({"path": "./a/b/c/d.txt", "content": "x"}))
            .await
            .unwrap_err();
        assert!(
            error.to_string().contains("`a/b` is a file, not a folder"),
            "{error}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("reports")).unwrap(),
            "all good\n",
            "the file on the way is left as it was"
        );
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn does_not_write_through_a_symlinked_directory_out_of_the_root() {
        let (dir, tool) = setup();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        let error = write(&tool, json!({"path": "out/new/file.txt", "content": "x"}))
            .await
            .unwrap_err();
        assert_eq!(
            error,
            ToolError::invalid_arguments("path `out/new/file.txt` escapes the workspace root")
        );
        assert!(!outside.path().join("new").exists());
    }
}
