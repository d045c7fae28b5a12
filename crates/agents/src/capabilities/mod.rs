//! Capabilities: ready-made bundles an agent can be given (file access, a shell, subagents,
//! summarization, structured output, self-critique, skills, metadata notes, tool discovery).

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
mod use_self_critique;
mod use_structured_output;
mod use_subagents;
mod use_summarization;

pub use use_bash::UseBash;
pub use use_file_tools::UseFileTools;
pub use use_self_critique::{UseSelfCritique, CRITIQUE_METADATA_KEY};
pub use use_structured_output::{OutputSchema, UseStructuredOutput, STRUCTURED_OUTPUT_TOOL};
pub use use_subagents::{SubagentDefinition, SubagentModel, UseSubagents, SPAWN_SUBAGENT_TOOL};
pub use use_summarization::UseSummarization;

pub use metadata::{
    ListMetadataTool, MetadataPolicy, PersistMetadata, ReadMetadataTool, StoreMetadataTool,
    UseMetadataTools,
};
pub use skills::{
    LoadSkillTool, ShowSkillsList, Skill, SkillError, SkillLibrary, UseSkills, SKILLS_LIST_KEY,
};
pub use tool_registry::{ToolRegistryTool, UseToolRegistry};
