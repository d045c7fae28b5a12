//! Agent definition files: YAML (version 1) describing an agent's prompt, model, limits, tools and
//! capabilities, parsed strictly, and a registry that loads a directory of them.
//!
//! ```
//! use agents::definition::AgentDefinition;
//!
//! let yaml = "
//! version: 1
//! id: helper
//! name: Helper
//! description: Answers questions about the project
//! system_prompt: You are a careful assistant.
//! llm: { provider: openai, model: gpt-4o-mini }
//! execution: { max_steps: 8, trace: separated }
//! ";
//! let definition = AgentDefinition::from_yaml_str(yaml, "helper.yaml").unwrap();
//! assert_eq!(definition.id, "helper");
//! assert_eq!(definition.execution.max_steps, Some(8));
//!
//! let error = AgentDefinition::from_yaml_str(&yaml.replace("max_steps: 8", "max_steps: eight"), "helper.yaml")
//!     .unwrap_err();
//! assert!(error.to_string().starts_with("helper.yaml: `execution.max_steps`: "));
//! ```

mod a2a_agents;
mod agent_definition;
mod definition_error;
mod mcp_servers;
mod parse;
mod registry;

pub use a2a_agents::A2aAgentDefinition;
pub use agent_definition::{
    AgentDefinition, ApprovalSettings, ErrorPolicyName, ExecutionSettings, LlmProvider,
    LlmSettings, ToolPolicy, TraceMode,
};
pub use definition_error::DefinitionError;
pub use mcp_servers::{expand_env, McpServerDefinition};
pub use registry::AgentDefinitionRegistry;
