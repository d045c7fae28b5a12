//! File tools confined to a workspace root: `read_file`, `write_file`, `edit_file`, `list_dir`
//! and `search_files`.

mod edit;
mod list;
mod read;
mod sandbox;
mod search;
mod write;

use std::path::Path;
use std::sync::Arc;

use agents_core::tools::{Tool, ToolError, Tools};
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use edit::EditFileTool;
pub use list::ListDirTool;
pub use read::ReadFileTool;
pub use sandbox::{Sandbox, SandboxError};
pub use search::SearchFilesTool;
pub use write::WriteFileTool;

/// The file tools over one [`Sandbox`].
///
/// ```
/// use agents::capabilities::files::{FileTools, Sandbox};
///
/// let sandbox = Sandbox::new(std::env::temp_dir()).unwrap();
/// let tools = FileTools::new(sandbox).all();
/// assert_eq!(
///     tools.names(),
///     ["read_file", "write_file", "edit_file", "list_dir", "search_files"]
/// );
/// ```
#[derive(Clone, Debug)]
pub struct FileTools {
    sandbox: Sandbox,
}

impl FileTools {
    /// File tools working inside `sandbox`.
    pub fn new(sandbox: Sandbox) -> Self {
        Self { sandbox }
    }

    /// The sandbox the tools work in.
    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    /// `read_file`, `write_file` and `edit_file`.
    pub fn editing(&self) -> Tools {
        Tools::new()
            .with(ReadFileTool::new(self.sandbox.clone()))
            .with(WriteFileTool::new(self.sandbox.clone()))
            .with(EditFileTool::new(self.sandbox.clone()))
    }

    /// `read_file`, `list_dir` and `search_files` (nothing that writes).
    pub fn read_only(&self) -> Tools {
        Tools::new()
            .with(ReadFileTool::new(self.sandbox.clone()))
            .with(ListDirTool::new(self.sandbox.clone()))
            .with(SearchFilesTool::new(self.sandbox.clone()))
    }

    /// All five file tools.
    pub fn all(&self) -> Tools {
        let mut tools = self.editing();
        let extra: [Arc<dyn Tool>; 2] = [
            Arc::new(ListDirTool::new(self.sandbox.clone())),
            Arc::new(SearchFilesTool::new(self.sandbox.clone())),
        ];
        for tool in extra {
            tools.insert(tool);
        }
        tools
    }
}

/// Deserializes a tool's arguments; a mismatch is an invalid-arguments error.
fn parse_arguments<T: DeserializeOwned>(arguments: Value) -> Result<T, ToolError> {
    serde_json::from_value(arguments).map_err(|e| ToolError::invalid_arguments(e.to_string()))
}

/// Resolves `path` in the sandbox; an escape is an invalid-arguments error the model can fix.
fn resolve(sandbox: &Sandbox, path: &str) -> Result<std::path::PathBuf, ToolError> {
    sandbox.resolve(path).map_err(|error| match error {
        SandboxError::Escapes { .. } => ToolError::invalid_arguments(error.to_string()),
        other => ToolError::failed(other.to_string()),
    })
}

/// A readable message for an I/O error on `path`.
fn io_error(action: &str, shown: &str, error: &std::io::Error) -> ToolError {
    let reason = match error.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_owned(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => error.to_string(),
    };
    ToolError::failed(format!("cannot {action} `{shown}`: {reason}"))
}

/// True when `path` is an existing directory.
async fn is_dir(path: &Path) -> bool {
    tokio::fs::metadata(path)
        .await
        .map(|m| m.is_dir())
        .unwrap_or(false)
}
