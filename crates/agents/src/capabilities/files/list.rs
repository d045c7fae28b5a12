//! `list_dir`: the entries of a directory.

use agents_core::tools::{arguments_schema, Tool, ToolContext, ToolError, ToolOutput};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{io_error, is_dir, parse_arguments, resolve, Sandbox};

/// Entries shown at most; the rest are counted.
pub const MAX_ENTRIES: usize = 100;

/// `list_dir{path?}`: a directory's entries, directories first, each group sorted by name, as
/// `[dir] name/`, `[file] name (N bytes)` or `[link] name` lines.
#[derive(Clone, Debug)]
pub struct ListDirTool {
    sandbox: Sandbox,
}

/// Arguments of `list_dir`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDirArgs {
    /// Directory to list, relative to the workspace root (default: the root).
    #[serde(default)]
    pub path: Option<String>,
}

impl ListDirTool {
    /// `list_dir` inside `sandbox`.
    pub fn new(sandbox: Sandbox) -> Self {
        Self { sandbox }
    }
}

#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Dir,
    File(u64),
    Link,
}

#[async_trait]
impl Tool for ListDirTool {
    fn name(&self) -> &str {
        "list_dir"
    }

    fn description(&self) -> &str {
        "List the files and directories in a directory of the workspace (directories first)."
    }

    fn parameters(&self) -> Value {
        arguments_schema::<ListDirArgs>()
    }

    async fn call(
        &self,
        arguments: Value,
        _context: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: ListDirArgs = parse_arguments(arguments)?;
        let path = resolve(&self.sandbox, args.path.as_deref().unwrap_or("."))?;
        let shown = self.sandbox.display(&path);
        if !is_dir(&path).await {
            if tokio::fs::metadata(&path).await.is_ok() {
                return Err(ToolError::failed(format!(
                    "`{shown}` is a file, not a directory (use read_file to read it)"
                )));
            }
            return Err(ToolError::failed(format!(
                "cannot list `{shown}`: no such directory"
            )));
        }
        let mut reader = tokio::fs::read_dir(&path)
            .await
            .map_err(|e| io_error("list", &shown, &e))?;
        let mut entries = Vec::new();
        while let Some(entry) = reader
            .next_entry()
            .await
            .map_err(|e| io_error("list", &shown, &e))?
        {
            let name = entry.file_name().to_string_lossy().into_owned();
            let kind = match entry.file_type().await {
                Ok(t) if t.is_dir() => Kind::Dir,
                Ok(t) if t.is_symlink() => Kind::Link,
                _ => Kind::File(entry.metadata().await.map(|m| m.len()).unwrap_or(0)),
            };
            entries.push((kind, name));
        }
        if entries.is_empty() {
            return Ok(ToolOutput::text(format!("(`{shown}` is empty)")));
        }
        entries.sort_by(|(a, a_name), (b, b_name)| {
            let group = |k: &Kind| matches!(k, Kind::Dir).then_some(0).unwrap_or(1);
            group(a).cmp(&group(b)).then_with(|| a_name.cmp(b_name))
        });
        let total = entries.len();
        let mut lines: Vec<String> = entries
            .into_iter()
            .take(MAX_ENTRIES)
            .map(|(kind, name)| match kind {
                Kind::Dir => format!("[dir] {name}/"),
                Kind::File(size) => format!("[file] {name} ({size} bytes)"),
                Kind::Link => format!("[link] {name}"),
            })
            .collect();
        if total > MAX_ENTRIES {
            lines.push(format!("... and {} more entries", total - MAX_ENTRIES));
        }
        Ok(ToolOutput::text(lines.join("\n")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    async fn list(tool: &ListDirTool, arguments: Value) -> Result<String, ToolError> {
        tool.call(arguments, &ToolContext::default())
            .await
            .map(|o| o.content().to_owned())
    }

    #[tokio::test]
    async fn lists_directories_first_then_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b.txt"), "12345").unwrap();
        std::fs::write(dir.path().join("a.txt"), "").unwrap();
        std::fs::create_dir(dir.path().join("zeta")).unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/lib.rs"), "").unwrap();
        let tool = ListDirTool::new(Sandbox::new(dir.path()).unwrap());
        assert_eq!(
            list(&tool, json!({})).await.unwrap(),
            "[dir] src/\n[dir] zeta/\n[file] a.txt (0 bytes)\n[file] b.txt (5 bytes)"
        );
        assert_eq!(
            list(&tool, json!({"path": "src"})).await.unwrap(),
            "[file] lib.rs (0 bytes)"
        );
        assert_eq!(
            list(&tool, json!({"path": "zeta"})).await.unwrap(),
            "(`zeta` is empty)"
        );
    }

    #[tokio::test]
    async fn caps_long_listings() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..(MAX_ENTRIES + 5) {
            std::fs::write(dir.path().join(format!("f{i:03}.txt")), "").unwrap();
        }
        let tool = ListDirTool::new(Sandbox::new(dir.path()).unwrap());
        let output = list(&tool, json!({})).await.unwrap();
        assert_eq!(output.lines().count(), MAX_ENTRIES + 1);
        assert!(output.ends_with("... and 5 more entries"));
    }

    #[tokio::test]
    async fn refuses_files_missing_paths_and_escapes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "").unwrap();
        let tool = ListDirTool::new(Sandbox::new(dir.path()).unwrap());
        assert_eq!(
            list(&tool, json!({"path": "a.txt"})).await.unwrap_err(),
            ToolError::failed("`a.txt` is a file, not a directory (use read_file to read it)")
        );
        assert_eq!(
            list(&tool, json!({"path": "nope"})).await.unwrap_err(),
            ToolError::failed("cannot list `nope`: no such directory")
        );
        assert_eq!(
            list(&tool, json!({"path": ".."})).await.unwrap_err(),
            ToolError::invalid_arguments("path `..` escapes the workspace root")
        );
    }
}
