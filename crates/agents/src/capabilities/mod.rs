//! Capabilities: ready-made tools an agent can be given (file access, a shell).

pub mod bash;
pub mod files;

pub use bash::{BashPolicy, BashTool};
pub use files::{
    EditFileTool, FileTools, ListDirTool, ReadFileTool, Sandbox, SandboxError, SearchFilesTool,
    WriteFileTool,
};
