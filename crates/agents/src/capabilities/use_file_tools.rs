//! `UseFileTools`: the sandboxed file tools as a capability.

use std::path::PathBuf;

use crate::capabilities::{FileTools, Sandbox};
use crate::{AgentBuilder, AgentCapability};

/// Gives the agent `read_file`, `write_file`, `edit_file`, `append_file`, `move_file`,
/// `list_dir` and `search_files`, confined to `root` (paths escaping it are refused).
/// [`UseFileTools::read_only`] leaves out the tools that write.
#[derive(Clone, Debug)]
pub struct UseFileTools {
    root: PathBuf,
    read_only: bool,
}

impl UseFileTools {
    /// All file tools under `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            read_only: false,
        }
    }

    /// Only the tools that read (`read_file`, `list_dir`, `search_files`).
    pub fn read_only(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            read_only: true,
        }
    }
}

impl AgentCapability for UseFileTools {
    fn name(&self) -> &str {
        "files"
    }

    fn install(&self, builder: AgentBuilder) -> AgentBuilder {
        match Sandbox::new(&self.root) {
            Ok(sandbox) => {
                let tools = FileTools::new(sandbox);
                let set = if self.read_only {
                    tools.read_only()
                } else {
                    tools.all()
                };
                builder.with_tool_set(&set)
            }
            Err(error) => builder.with_capability_error(self.name(), error.to_string()),
        }
    }
}
