//! `list_dir`: the entries of a directory.

use agents_core::tools::{arguments_schema, Tool, ToolContext, ToolError, ToolOutput};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use rustix::fs::FileType;

use super::{
    blocking, entry_size, io_error, open_dir, parse_arguments, read_entries, relative, Sandbox,
};

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

    fn effects(&self) -> agents_core::ToolEffects {
        // It reads and changes nothing.
        agents_core::ToolEffects::ReadOnly
    }

    async fn call(
        &self,
        arguments: Value,
        _context: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: ListDirArgs = parse_arguments(arguments)?;
        let sandbox = self.sandbox.clone();
        blocking(move || list_dir(&sandbox, args.path.as_deref().unwrap_or("."))).await
    }
}

/// Opens the directory beneath the root and lists it through its descriptor.
fn list_dir(sandbox: &Sandbox, path: &str) -> Result<ToolOutput, ToolError> {
    let path = relative(sandbox, path)?;
    let shown = sandbox.shown(&path);
    let dir = open_dir(sandbox, &path, &shown, "list")?;
    let mut entries = Vec::new();
    for entry in read_entries(&dir).map_err(|e| io_error("list", &shown, &e))? {
        let entry = entry.map_err(|e| io_error("list", &shown, &e))?;
        let kind = match entry.kind {
            FileType::Directory => Kind::Dir,
            FileType::Symlink => Kind::Link,
            _ => Kind::File(entry_size(&dir, &entry.name)),
        };
        entries.push((kind, entry.name.to_string_lossy().into_owned()));
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
