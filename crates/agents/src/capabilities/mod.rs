//! Capabilities: ready-made tools an agent can be given (file access, a shell).

pub mod bash;
pub mod files;

pub use bash::{BashPolicy, BashTool};
pub use files::{
    EditFileTool, FileTools, ListDirTool, ReadFileTool, Sandbox, SandboxError, SearchFilesTool,
    WriteFileTool,
};

mod use_bash;
mod use_file_tools;
mod use_summarization;

pub use use_bash::UseBash;
pub use use_file_tools::UseFileTools;
pub use use_summarization::UseSummarization;
