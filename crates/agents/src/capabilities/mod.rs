//! Capabilities: ready-made tools an agent can be given (file access, a shell, skills,
//! metadata notes, tool discovery).

pub mod bash;
pub mod files;
pub mod metadata;
pub mod skills;
pub mod tool_registry;

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

pub use metadata::{
    ListMetadataTool, MetadataPolicy, PersistMetadata, ReadMetadataTool, StoreMetadataTool,
    UseMetadataTools,
};
pub use skills::{LoadSkillTool, ShowSkillsList, Skill, SkillError, SkillLibrary, UseSkills};
pub use tool_registry::{ToolRegistryTool, UseToolRegistry};
