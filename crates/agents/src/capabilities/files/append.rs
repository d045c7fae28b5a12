//! `append_file`: add lines to the end of a file.
//!
//! Asked to add a line to a list, the 1.5B model called `append_to_file` three times in one
//! run, a tool that did not exist, and never read the file to write it whole (issue 36,
//! development task d14). Adding to a file's end is an edit of its own: nothing in the file
//! is replaced, so nothing needs reading first, and a long log or list is not sent back
//! whole to grow by a line.

use std::io::{Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;

use agents_core::tools::{arguments_schema, Tool, ToolContext, ToolError, ToolOutput};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{
    blocking, create_file, io_error, open_file, parse_arguments, relative, Access, RelativePath,
    Sandbox,
};

/// `append_file{path, content}`: adds `content` to the end of `path` as whole lines: on a new
/// line when the file's last line has no line ending, and ended by one (the file's own, `\n`
/// or `\r\n`). One line ending at the start of `content` is that new line, not an empty
/// one: the 1.5B model wrote `"\ngamma"` to add the line `gamma` to a file whose last line
/// was ended (write two to leave an empty line). A missing file is created, with its parent
/// directories.
///
/// It is not idempotent (a second call adds the lines again), so it declares the default
/// [`ToolEffects::SideEffecting`](agents_core::ToolEffects::SideEffecting).
#[derive(Clone, Debug)]
pub struct AppendFileTool {
    sandbox: Sandbox,
}

/// Arguments of `append_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppendFileArgs {
    /// Path of the file, relative to the workspace root.
    pub path: String,
    /// The lines to add at the end of the file.
    pub content: String,
}

impl AppendFileTool {
    /// `append_file` inside `sandbox`.
    pub fn new(sandbox: Sandbox) -> Self {
        Self { sandbox }
    }
}

#[async_trait]
impl Tool for AppendFileTool {
    fn name(&self) -> &str {
        "append_file"
    }

    fn description(&self) -> &str {
        "Add lines to the end of a file in the workspace, keeping what it holds (the file is \
         created if missing)."
    }

    fn other_names(&self) -> &[&str] {
        &[
            "append",
            "append_to_file",
            "append_line",
            "append_lines",
            "add_line",
            "add_to_file",
        ]
    }

    fn parameters(&self) -> Value {
        arguments_schema::<AppendFileArgs>()
    }

    async fn call(
        &self,
        arguments: Value,
        _context: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: AppendFileArgs = parse_arguments(arguments)?;
        if args.content.is_empty() {
            return Err(ToolError::invalid_arguments(
                "content is empty; give the lines to add to the end of the file",
            ));
        }
        // Only line breaks and spaces: the 1.5B model, asked to remove a file's last line,
        // appended "\n" and said the line was removed (a probe of issue 36's task kinds).
        if args.content.trim().is_empty() {
            return Err(ToolError::invalid_arguments(
                "content holds only line breaks or spaces: nothing was added. append_file adds \
                 lines at the end of a file and cannot remove any; to remove a line, call \
                 edit_file with the whole line as old_string and an empty new_string",
            ));
        }
        let sandbox = self.sandbox.clone();
        let path = relative(&sandbox, &args.path)?;
        blocking(move || append_file(&sandbox, &path, &args.content)).await
    }
}

/// Creates the missing parents beneath the root, then adds `content` at the end of the file
/// through its descriptor.
fn append_file(
    sandbox: &Sandbox,
    path: &RelativePath,
    content: &str,
) -> Result<ToolOutput, ToolError> {
    let shown = sandbox.shown(path);
    let (mut file, size) = create_file(sandbox, path)?;
    let (before, ending) = if size == 0 {
        ("", "\n")
    } else {
        // the last two bytes tell whether the last line is ended, and how
        let directory = || ToolError::failed(format!("`{shown}` is a directory"));
        let (reader, _) = open_file(sandbox, path, Access::Read, "read", directory)?;
        let mut tail = [0u8; 2];
        let start = size.saturating_sub(2);
        let read = reader
            .read_at(
                &mut tail[..usize::try_from(size - start).unwrap_or(2)],
                start,
            )
            .map_err(|e| io_error("read", &shown, &e))?;
        line_endings(&tail[..read])
    };
    let added = lines_to_add(before, content, ending);
    file.seek(SeekFrom::End(0))
        .and_then(|_| file.write_all(added.as_bytes()))
        .map_err(|e| io_error("write", &shown, &e))?;
    let lines = added[before.len()..].lines().count();
    Ok(ToolOutput::text(format!(
        "appended {lines} {} ({} bytes) to the end of `{shown}`",
        if lines == 1 { "line" } else { "lines" },
        added.len()
    )))
}

/// What goes before the added text (a line ending when the file's last line has none) and
/// the line ending to use, from the file's last bytes: `\r\n` when its last line ends so.
fn line_endings(tail: &[u8]) -> (&'static str, &'static str) {
    match tail {
        [] => ("", "\n"),
        [.., b'\r', b'\n'] => ("", "\r\n"),
        [.., b'\n'] => ("", "\n"),
        _ => ("\n", "\n"),
    }
}

/// `content` as whole lines after `before`: without one line ending at its start (the tool
/// starts it on a new line itself), ended by `ending` when it is not already.
fn lines_to_add(before: &str, content: &str, ending: &str) -> String {
    let content = content
        .strip_prefix("\r\n")
        .or_else(|| content.strip_prefix('\n'))
        .unwrap_or(content);
    let mut added = String::with_capacity(before.len() + content.len() + ending.len());
    added.push_str(before);
    added.push_str(content);
    if !content.ends_with('\n') {
        added.push_str(ending);
    }
    added
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn setup() -> (tempfile::TempDir, AppendFileTool) {
        let dir = tempfile::tempdir().unwrap();
        let tool = AppendFileTool::new(Sandbox::new(dir.path()).unwrap());
        (dir, tool)
    }

    async fn append(tool: &AppendFileTool, arguments: Value) -> Result<String, ToolError> {
        tool.call(arguments, &ToolContext::default())
            .await
            .map(|o| o.content().to_owned())
    }

    #[tokio::test]
    async fn adds_whole_lines_at_the_end() {
        let cases = [
            // (file before, content, file after, tool output)
            (
                "alpha\nbeta\n",
                "gamma",
                "alpha\nbeta\ngamma\n",
                "appended 1 line (6 bytes) to the end of `a.txt`",
            ),
            (
                "alpha\nbeta",
                "gamma",
                "alpha\nbeta\ngamma\n",
                "appended 1 line (7 bytes) to the end of `a.txt`",
            ),
            (
                "alpha\r\nbeta\r\n",
                "gamma",
                "alpha\r\nbeta\r\ngamma\r\n",
                "appended 1 line (7 bytes) to the end of `a.txt`",
            ),
            (
                "alpha\n",
                "gamma\ndelta\n",
                "alpha\ngamma\ndelta\n",
                "appended 2 lines (12 bytes) to the end of `a.txt`",
            ),
            (
                "",
                "gamma",
                "gamma\n",
                "appended 1 line (6 bytes) to the end of `a.txt`",
            ),
            (
                "x",
                "y",
                "x\ny\n",
                "appended 1 line (3 bytes) to the end of `a.txt`",
            ),
            // one line ending first is the new line the tool starts anyway
            (
                "alpha\nbeta\n",
                "\ngamma",
                "alpha\nbeta\ngamma\n",
                "appended 1 line (6 bytes) to the end of `a.txt`",
            ),
            (
                "alpha\nbeta",
                "\ngamma\n",
                "alpha\nbeta\ngamma\n",
                "appended 1 line (7 bytes) to the end of `a.txt`",
            ),
            (
                "alpha\r\n",
                "\r\ngamma",
                "alpha\r\ngamma\r\n",
                "appended 1 line (7 bytes) to the end of `a.txt`",
            ),
            // two leave an empty line
            (
                "# Notes\n",
                "\n\n## Next",
                "# Notes\n\n## Next\n",
                "appended 2 lines (9 bytes) to the end of `a.txt`",
            ),
        ];
        for (before, content, after, output) in cases {
            let (dir, tool) = setup();
            std::fs::write(dir.path().join("a.txt"), before).unwrap();
            let result = append(&tool, json!({"path": "a.txt", "content": content})).await;
            assert_eq!(result.unwrap(), output, "{before:?} + {content:?}");
            let file = std::fs::read_to_string(dir.path().join("a.txt")).unwrap();
            assert_eq!(file, after, "{before:?} + {content:?}");
        }
    }

    #[tokio::test]
    async fn creates_a_missing_file_and_its_directories() {
        let (dir, tool) = setup();
        let output = append(
            &tool,
            json!({"path": "logs/today.log", "content": "started"}),
        )
        .await
        .unwrap();
        assert_eq!(
            output,
            "appended 1 line (8 bytes) to the end of `logs/today.log`"
        );
        let file = std::fs::read_to_string(dir.path().join("logs/today.log")).unwrap();
        assert_eq!(file, "started\n");
    }

    #[tokio::test]
    async fn refuses_empty_content_directories_and_escapes() {
        let (dir, tool) = setup();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let cases = [
            (
                json!({"path": "a.txt", "content": ""}),
                ToolError::invalid_arguments(
                    "content is empty; give the lines to add to the end of the file",
                ),
            ),
            (
                json!({"path": "a.txt", "content": "\n"}),
                ToolError::invalid_arguments(
                    "content holds only line breaks or spaces: nothing was added. append_file \
                     adds lines at the end of a file and cannot remove any; to remove a line, \
                     call edit_file with the whole line as old_string and an empty new_string",
                ),
            ),
            (
                json!({"path": "sub", "content": "x"}),
                ToolError::failed("`sub` is a directory; give the path of a file"),
            ),
            (
                json!({"path": "../evil.txt", "content": "x"}),
                ToolError::invalid_arguments("path `../evil.txt` escapes the workspace root"),
            ),
        ];
        for (arguments, expected) in cases {
            assert_eq!(append(&tool, arguments).await.unwrap_err(), expected);
        }
        assert!(!dir.path().join("a.txt").exists());
        assert!(!dir.path().parent().unwrap().join("evil.txt").exists());
    }

    proptest::proptest! {
        /// Whatever the file held, appending keeps it as a prefix (a line ending added when
        /// its last line had none) and ends with the added text and a line ending.
        #[test]
        fn the_file_keeps_what_it_held(
            before in "[a-z\\n]{0,20}",
            content in "[a-z]{1,8}(\\n[a-z]{1,8}){0,2}\\n?",
        ) {
            let (before_text, ending) = line_endings(before.as_bytes());
            let after = format!("{before}{}", lines_to_add(before_text, &content, ending));
            proptest::prop_assert!(after.starts_with(&before));
            let added = &after[before.len()..];
            let separated = before.is_empty() || before.ends_with('\n');
            let expected_added = if separated { content.clone() } else { format!("\n{content}") };
            proptest::prop_assert!(added.starts_with(&expected_added));
            proptest::prop_assert!(after.ends_with('\n'));
            proptest::prop_assert_eq!(after.lines().count(), before.lines().count() + content.lines().count());
        }
    }
}
