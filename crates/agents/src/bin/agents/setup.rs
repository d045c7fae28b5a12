//! Turning `agents run` options (and an optional definition file) into an agent builder: the
//! model, the prompt and limits, and the tools the definition permits.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agents::capabilities::{
    BashTool, FileTools, ListMetadataTool, LoadSkillTool, PersistMetadata, ReadMetadataTool,
    Sandbox, ShowSkillsList, SkillLibrary, StoreMetadataTool, ToolRegistryTool,
};
use agents::definition::{AgentDefinition, LlmProvider, ToolPolicy, TraceMode};
use agents::prelude::*;

use crate::run::{Driver, Provider, RunArgs, Trace};

/// The system prompt when neither `--system` nor a definition gives one: look before you
/// answer. Judged with `cargo xtask eval` over all its tasks, not tuned to any one.
pub const DEFAULT_SYSTEM_PROMPT: &str = "You are a helpful assistant working in a directory of \
files, with tools to list, read, search, write and edit them.
- Look before you answer: when the request is about files or their contents, use a tool to \
list or read them first. Never guess what a file says or which files exist.
- Use one tool at a time and wait for its result. When a tool reports an error, read it and \
fix your call, or tell the user what went wrong (for example, that a file does not exist).
- When you have what you need, answer the user in plain text, briefly, with the facts you \
found. A question that needs no files you answer directly.";

/// How to call a tool, for the tool-calling driver (small local models often write calls as
/// text; the agent accepts a reply that is only such a JSON object).
pub const TOOL_CALL_HINT: &str = "To use a tool, make a tool call. If you cannot, reply with \
only one JSON object and nothing else, like {\"name\": \"read_file\", \"arguments\": \
{\"path\": \"notes.txt\"}}.";

/// The capability names a definition (or the CLI) can ask for.
pub const CAPABILITIES: [&str; 5] = ["files", "bash", "skills", "metadata", "tool_registry"];

type Error = Box<dyn std::error::Error>;

/// The effective settings: flags win over the definition, the definition over the defaults.
pub struct Settings {
    pub provider: Provider,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub trace: Trace,
    pub capabilities: Vec<String>,
    pub tools: ToolPolicy,
    pub definition: Option<AgentDefinition>,
}

impl Settings {
    /// Reads the definition file (if any) and merges it with the flags.
    pub fn resolve(args: &RunArgs) -> Result<Self, Error> {
        let definition = args
            .definition
            .as_ref()
            .map(AgentDefinition::from_file)
            .transpose()?;
        let provider = match (args.provider, &definition) {
            (Some(provider), _) => provider,
            (None, Some(d)) => match d.llm.provider {
                LlmProvider::Openai => Provider::Openai,
                LlmProvider::Anthropic => Provider::Anthropic,
                LlmProvider::Scripted => {
                    return Err(format!(
                        "{}: `llm.provider` is `scripted`, which has no endpoint to run against; pass --provider",
                        path_text(args.definition.as_deref())
                    )
                    .into())
                }
            },
            (None, None) => Provider::Openai,
        };
        let trace = args.trace_flag().unwrap_or(
            match definition.as_ref().and_then(|d| d.execution.trace) {
                Some(TraceMode::Legacy) => Trace::Legacy,
                Some(TraceMode::Digest) => Trace::Digest,
                Some(TraceMode::Separated) | None => Trace::Separated,
            },
        );
        let capabilities = match &definition {
            Some(d) if !d.capabilities.is_empty() => d.capabilities.clone(),
            _ if args.no_bash => vec!["files".to_owned()],
            _ => vec!["files".to_owned(), "bash".to_owned()],
        };
        let mut capabilities: Vec<String> = capabilities
            .into_iter()
            .filter(|c| !(args.no_bash && c == "bash"))
            .collect();
        if args.skills.is_some() && !capabilities.iter().any(|c| c == "skills") {
            capabilities.push("skills".to_owned());
        }
        if let Some(unknown) = capabilities
            .iter()
            .find(|c| !CAPABILITIES.contains(&c.as_str()))
        {
            return Err(format!(
                "{}: unknown capability `{unknown}` (known: {})",
                path_text(args.definition.as_deref()),
                CAPABILITIES.join(", ")
            )
            .into());
        }
        Ok(Self {
            provider,
            model: args
                .model
                .clone()
                .or_else(|| definition.as_ref().map(|d| d.llm.model.clone())),
            base_url: args
                .base_url
                .clone()
                .or_else(|| definition.as_ref().and_then(|d| d.llm.base_url.clone())),
            trace,
            capabilities,
            tools: definition
                .as_ref()
                .map(|d| d.tools.clone())
                .unwrap_or_default(),
            definition,
        })
    }

    /// The builder with the definition's settings, then the flags', then the tools.
    pub fn builder(&self, args: &RunArgs, root: &Path) -> Result<AgentBuilder, Error> {
        let mut builder = AgentBuilder::new();
        if let Some(definition) = &self.definition {
            builder = definition.configure(builder);
        } else {
            let prompt = match args.driver {
                Driver::Toolcalling => format!("{DEFAULT_SYSTEM_PROMPT}\n{TOOL_CALL_HINT}"),
                // The ReAct driver teaches its own reply format.
                Driver::React => DEFAULT_SYSTEM_PROMPT.to_owned(),
            };
            builder = builder.with_system_prompt(prompt);
        }
        if let Some(system) = &args.system {
            builder = builder.with_system_prompt(system.clone());
        }
        let max_steps = args
            .max_steps
            .or_else(|| self.definition.as_ref().and_then(|d| d.execution.max_steps))
            .unwrap_or(20);
        builder = builder
            .with_max_steps(max_steps)
            .with_trace_retention(match self.trace {
                Trace::Legacy => TraceRetention::Full,
                Trace::Separated => TraceRetention::Ephemeral,
                Trace::Digest => TraceRetention::digest(300),
            });
        self.install_tools(builder, args, root)
    }

    fn install_tools(
        &self,
        mut builder: AgentBuilder,
        args: &RunArgs,
        root: &Path,
    ) -> Result<AgentBuilder, Error> {
        let permitted = |tool: &Arc<dyn Tool>| self.tools.permits(tool.name());
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        let has = |name: &str| self.capabilities.iter().any(|c| c == name);
        if has("files") {
            let sandbox =
                Sandbox::new(root).map_err(|e| format!("--root {}: {e}", root.display()))?;
            tools.extend(FileTools::new(sandbox).all().iter().cloned());
        }
        if has("bash") {
            let policy = (args.bash_env.iter()).fold(BashPolicy::default(), |policy, name| {
                policy.with_env_var(name)
            });
            tools.push(Arc::new(BashTool::new(root).with_policy(policy)));
        }
        if has("skills") {
            let dir = args.skills.clone().unwrap_or_else(|| root.join("skills"));
            let library = Arc::new(SkillLibrary::load(&dir)?);
            tools.push(Arc::new(LoadSkillTool::new(Arc::clone(&library))));
            builder = builder.with_processor(ShowSkillsList::new(library));
        }
        if has("metadata") {
            tools.push(Arc::new(StoreMetadataTool::default()));
            tools.push(Arc::new(ReadMetadataTool));
            tools.push(Arc::new(ListMetadataTool));
            builder = builder.with_processor(PersistMetadata);
        }
        let mut tools: Vec<Arc<dyn Tool>> = tools.into_iter().filter(permitted).collect();
        if has("tool_registry") && self.tools.permits("tools") {
            tools.push(Arc::new(ToolRegistryTool::new(tools.clone())));
        }
        Ok(builder.with_tools(tools))
    }
}

fn path_text(path: Option<&Path>) -> String {
    path.map_or_else(|| "agents run".to_owned(), |p| p.display().to_string())
}

/// `agents check PATH...`: validates definition files and directories.
pub fn check(paths: &[PathBuf]) -> Result<(), Error> {
    let mut registry = agents::definition::AgentDefinitionRegistry::new();
    for path in paths {
        if path.is_dir() {
            registry.load_directory(path)?;
        } else {
            // the error is kept in the registry and reported below
            let _ = registry.load_file(path);
        }
    }
    for definition in registry.all() {
        let source = registry
            .source_of(&definition.id)
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let unknown: Vec<&String> = definition
            .capabilities
            .iter()
            .filter(|c| !CAPABILITIES.contains(&c.as_str()))
            .collect();
        if unknown.is_empty() {
            println!(
                "ok   {} ({source}): {}",
                definition.id, definition.description
            );
        } else {
            println!(
                "warn {} ({source}): capabilities the CLI does not know: {}",
                definition.id,
                unknown
                    .iter()
                    .map(|c| c.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    for error in registry.errors() {
        println!("FAIL {error}");
    }
    match registry.errors().len() {
        0 => Ok(()),
        n => Err(format!("{n} definition file(s) are invalid").into()),
    }
}
