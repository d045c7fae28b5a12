//! From the arguments to a ready agent: the settings (flags over an optional definition file
//! over the defaults), the conversation a `--state` file holds, and the agent they describe
//! (the model, the prompt and limits, the tools the definition permits, the calls that wait
//! for approval). `agents run`, `agents chat`, `agents serve` and the served agents build
//! theirs here.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agents::capabilities::{
    BashTool, FileTools, ListMetadataTool, LoadSkillTool, PersistMetadata, ReadMetadataTool,
    Sandbox, ShowSkillsList, SkillLibrary, StoreMetadataTool, ToolRegistryTool,
};
use agents::definition::{AgentDefinition, LlmProvider, ToolPolicy, TraceMode};
use agents::inference::ModelCatalog;
use agents::mcp::connect_all;
use agents::prelude::*;

use crate::render::printable;

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

/// The options `agents run` and `agents chat` share: which model, which tools, which limits.
#[derive(Debug, clap::Args)]
pub struct AgentArgs {
    /// An agent definition file (YAML, version 1): prompt, model, limits, tools, capabilities.
    /// The other options override it.
    #[arg(long)]
    pub definition: Option<PathBuf>,
    /// The endpoint's protocol (default: the definition's, else openai).
    #[arg(long, value_enum)]
    pub provider: Option<Provider>,
    /// Base URL (default: the definition's, else OPENAI_BASE_URL / ANTHROPIC_BASE_URL, else the provider's).
    #[arg(long)]
    pub base_url: Option<String>,
    /// Model name (default: the definition's, else OPENAI_MODEL / ANTHROPIC_MODEL).
    #[arg(long)]
    pub model: Option<String>,
    /// Seconds one request to the model may take before it is cancelled and retried
    /// (default: the definition's `llm.request_timeout_sec`, else 120, or 600 for a server on
    /// a loopback or private address: a model on a CPU can take minutes to read a long
    /// prompt).
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub request_timeout: Option<u64>,
    /// Tokens the model's context holds, when the model catalog does not know it or the
    /// server was started with its own (llama-server's `-c`): each tool result the model sees
    /// is bounded to a quarter of it in characters, and a request past 80% of it is reported
    /// (default: the definition's `llm.context_window`, else the catalog's, else what a
    /// llama-server on a loopback or private address says it serves).
    #[arg(long, value_name = "TOKENS", value_parser = clap::value_parser!(u64).range(1..))]
    pub context_window: Option<u64>,
    /// Environment variable holding the API key (default OPENAI_API_KEY / ANTHROPIC_API_KEY).
    #[arg(long)]
    pub api_key_env: Option<String>,
    /// System prompt (default: the definition's, else a short helpful-assistant prompt).
    #[arg(long)]
    pub system: Option<String>,
    /// Directory the file and bash tools are confined to (default: current directory).
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// Leave out the bash tool.
    #[arg(long)]
    pub no_bash: bool,
    /// A skills directory (`<dir>/<skill>/SKILL.md`): adds the `load_skill` tool.
    #[arg(long)]
    pub skills: Option<PathBuf>,
    /// Trace mode (default: the definition's, else separated).
    #[arg(long, value_enum, group = "trace_mode")]
    pub trace: Option<Trace>,
    /// Same as `--trace separated`.
    #[arg(long, group = "trace_mode")]
    pub separated: bool,
    /// Same as `--trace legacy`.
    #[arg(long, group = "trace_mode")]
    pub legacy: bool,
    /// Same as `--trace digest`.
    #[arg(long, group = "trace_mode")]
    pub digest: bool,
    /// With `--trace masked`: how many of the latest turns keep their tool outputs (default:
    /// the definition's `execution.masked_executions`, else 2).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub masked_executions: Option<u32>,
    /// How the agent talks to the model: native tool calls, or ReAct text.
    #[arg(long, value_enum, default_value_t = Driver::Toolcalling)]
    pub driver: Driver,
    /// Step limit (default: the definition's, else 20).
    #[arg(long)]
    pub max_steps: Option<usize>,
    /// What the conversation gets when a run stops without an answer (a limit, an error,
    /// repeated calls): `synthesize` (one more model call, without tools, answers from what
    /// was found), `notice` (a plain note saying why) or `nothing`. Default: the definition's,
    /// else synthesize in separated, digest and masked modes and nothing in legacy mode.
    #[arg(long, value_name = "WHAT", value_parser = parse_answer_on_stop)]
    pub answer_on_stop: Option<AnswerOnStop>,
    /// Recognise tool calls written as JSON text (small local models do this), under the
    /// trust model of docs/drivers.md. Default: on when the base URL is a loopback or private
    /// address (a local server), off for a hosted API; the definition's
    /// `llm.recover_tool_calls` says otherwise, and this flag over both.
    #[arg(long, group = "recovery")]
    pub recover_tool_calls: bool,
    /// Never treat a reply written as JSON text as a tool call.
    #[arg(long, group = "recovery")]
    pub no_recover_tool_calls: bool,
    /// How a tool call recovered from the model's text is shown to the model afterwards:
    /// `native` (as a native call and tool result, the default) or `as-written` (the reply as
    /// the model wrote it, the result as `<tool_response>` text). The saved conversation is
    /// the same either way.
    #[arg(long, value_name = "HOW", value_parser = parse_recovered_calls_shown)]
    pub show_recovered_calls: Option<agents::toolcalling::RecoveredCallsShown>,
    /// Also pass this environment variable to bash commands (repeatable). Commands get only
    /// PATH, HOME, USER, LOGNAME, SHELL, LANG, LANGUAGE, LC_*, TERM, TZ and TMPDIR otherwise.
    /// A name ending in `*` is a prefix; a name that looks like a key, token, secret, password
    /// or credential passes only when given in full.
    #[arg(long = "bash-env", value_name = "NAME")]
    pub bash_env: Vec<String>,
    /// Export OpenTelemetry spans to this OTLP/HTTP collector (e.g. http://127.0.0.1:4318).
    #[cfg(feature = "otel")]
    #[arg(long, value_name = "URL")]
    pub otlp_endpoint: Option<String>,
}

fn parse_answer_on_stop(text: &str) -> Result<AnswerOnStop, String> {
    text.parse::<AnswerOnStop>()
        .map_err(|_| format!("`{text}` is not one of synthesize, notice, nothing"))
}

fn parse_recovered_calls_shown(
    text: &str,
) -> Result<agents::toolcalling::RecoveredCallsShown, String> {
    agents::toolcalling::RecoveredCallsShown::parse(text)
        .ok_or_else(|| format!("`{text}` is not one of native, as-written"))
}

impl AgentArgs {
    /// The trace mode the flags ask for, if any.
    pub fn trace_flag(&self) -> Option<Trace> {
        if self.separated {
            Some(Trace::Separated)
        } else if self.legacy {
            Some(Trace::Legacy)
        } else if self.digest {
            Some(Trace::Digest)
        } else {
            self.trace
        }
    }

    /// The `--root` directory, else the current one.
    pub fn root(&self) -> Result<PathBuf, Error> {
        match &self.root {
            Some(root) => Ok(root.clone()),
            None => Ok(std::env::current_dir()?),
        }
    }
}

/// Starts the OpenTelemetry export `--otlp-endpoint` asks for; dropping the guard sends the
/// spans still buffered.
#[cfg(feature = "otel")]
pub fn telemetry(args: &AgentArgs) -> Result<Option<agents::telemetry::OtelGuard>, Error> {
    Ok(args
        .otlp_endpoint
        .as_deref()
        .map(agents::telemetry::init_otlp)
        .transpose()?)
}

/// The largest `--state` file a run loads: a conversation that grew past it is refused, not
/// read into memory.
const MAX_STATE_BYTES: u64 = 256 * 1024 * 1024;

/// The conversation in `path` (a new one when the file does not exist), at most 256 MiB.
pub fn load_state(path: &Path) -> Result<AgentState, Error> {
    if !path.exists() {
        return Ok(AgentState::new());
    }
    let text = agents::fs::read_to_string_bounded(path, MAX_STATE_BYTES)?;
    AgentState::from_json(&text).map_err(|e| {
        format!(
            "cannot resume from `{}`: {e} (the file was left untouched)",
            path.display()
        )
        .into()
    })
}

/// A ready agent and what the CLI shows about it.
pub struct Prepared {
    /// The agent.
    pub agent: Agent,
    /// The model's name.
    pub model_name: String,
}

/// Builds the agent the options describe: the model, the definition's settings, the flags',
/// the tools (MCP servers' included), answer-on-stop, tool-call recovery, and the tools whose
/// calls wait for a person's approval (`require_approval`, `--require-approval`, besides the
/// definition's `approval.required`). Whoever shows its events attaches a listener
/// ([`Agent::on_event`]).
pub async fn prepare(
    args: &AgentArgs,
    settings: &Settings,
    stream: bool,
    require_approval: &[String],
) -> Result<Prepared, Error> {
    let root = args.root()?;
    let model = model(args, settings)?;
    let model_name = model.name();
    let builder = settings.builder(args, &root)?;
    let builder = match args.driver {
        Driver::Toolcalling => builder.with_shared_model(model),
        Driver::React => builder.with_react(model),
    };
    // Prices and context windows: the built-in catalog, or AGENTS_MODEL_CATALOG's over it.
    let catalog = ModelCatalog::from_env()?;
    let window = match args.context_window {
        Some(tokens) => Some(tokens),
        None => served_context_window(settings, &catalog, &model_name).await,
    };
    let mut builder = builder.with_streaming(stream).with_model_catalog(catalog);
    if let Some(tokens) = window {
        builder = builder.with_context_window(tokens);
    }
    #[cfg(feature = "mcp")]
    {
        let taken: Vec<String> = builder
            .tools()
            .iter()
            .map(|t| t.name().to_owned())
            .collect();
        let taken: Vec<&str> = taken.iter().map(String::as_str).collect();
        let sources =
            definition_tool_sources(settings.definition.as_ref(), &settings.tools, &taken).await?;
        for source in sources {
            builder = builder.with_tool_source(source);
        }
    }
    #[cfg(feature = "serve")]
    if let Some(definition) = settings.definition.as_ref() {
        // Remote A2A agents, each a tool, as the tool policy permits them.
        for entry in &definition.a2a_agents {
            if settings.tools.permits(&entry.name) {
                builder = builder.with_tool(entry.to_tool()?);
            }
        }
    }
    if args.no_recover_tool_calls {
        builder = builder.with_content_tool_call_recovery(false);
    } else if args.recover_tool_calls {
        builder = builder.with_content_tool_call_recovery(true);
    }
    if let Some(shown) = args.show_recovered_calls {
        builder = builder.with_recovered_calls_shown(shown);
    }
    // (the definition's `execution.answer_on_stop` is in the builder already)
    if let Some(answer) = args.answer_on_stop {
        builder = builder.with_answer_on_stop(answer);
    }
    if !require_approval.is_empty() {
        builder = builder.with_approval_required(require_approval.iter().cloned());
    }
    let agent = builder.build()?;
    Ok(Prepared { agent, model_name })
}

/// How long `agents` waits for a local server to say how large its context is.
const PROPS_TIMEOUT: Duration = Duration::from_secs(2);

/// The context window of a model that neither the definition nor the catalog gives one, as a
/// llama-server on a loopback or private address says it serves (its `/props`); `None` for
/// any other server.
async fn served_context_window(
    settings: &Settings,
    catalog: &ModelCatalog,
    model_name: &str,
) -> Option<u64> {
    let given = settings
        .definition
        .as_ref()
        .and_then(|definition| definition.llm.context_window);
    let known = catalog
        .lookup(model_name)
        .and_then(|info| info.context_window);
    if given.is_some() || known.is_some() {
        return None;
    }
    let url = settings
        .endpoint()
        .filter(|url| agents::inference::is_local_endpoint(url))?;
    agents::inference::llama_server_context(&url, PROPS_TIMEOUT).await
}

fn model(args: &AgentArgs, settings: &Settings) -> Result<Arc<dyn LanguageModel>, Error> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    Ok(match settings.provider {
        Provider::Openai => {
            let key_var = args
                .api_key_env
                .clone()
                .unwrap_or_else(|| "OPENAI_API_KEY".into());
            let mut builder =
                OpenAiCompatible::builder().api_key(env(&key_var).unwrap_or_default());
            if let Some(url) = settings.endpoint() {
                builder = builder.base_url(url);
            }
            if let Some(seconds) = settings.request_timeout {
                builder = builder.timeout(Duration::from_secs(seconds));
            }
            let model = settings.model.clone().or_else(|| env("OPENAI_MODEL")).ok_or(
                "no model: pass --model or set OPENAI_MODEL (or run `agents demo`, which needs no endpoint)",
            )?;
            Arc::new(builder.model(model).build()?)
        }
        Provider::Anthropic => {
            let key_var = args
                .api_key_env
                .clone()
                .unwrap_or_else(|| "ANTHROPIC_API_KEY".into());
            let mut builder = Anthropic::builder().api_key(env(&key_var).unwrap_or_default());
            if let Some(url) = settings.endpoint() {
                builder = builder.base_url(url);
            }
            if let Some(seconds) = settings.request_timeout {
                builder = builder.timeout(Duration::from_secs(seconds));
            }
            let model = settings
                .model
                .clone()
                .or_else(|| env("ANTHROPIC_MODEL"))
                .ok_or("no model: pass --model or set ANTHROPIC_MODEL")?;
            Arc::new(builder.model(model).build()?)
        }
    })
}

/// The effective settings: flags win over the definition, the definition over the defaults.
pub struct Settings {
    pub provider: Provider,
    pub model: Option<String>,
    pub base_url: Option<String>,
    /// Seconds one model request may take, when the flag or the definition sets it.
    pub request_timeout: Option<u64>,
    pub trace: Trace,
    pub capabilities: Vec<String>,
    pub tools: ToolPolicy,
    pub definition: Option<AgentDefinition>,
}

impl Settings {
    /// The base URL the model is reached at, when one is set: the flag's or the definition's,
    /// else the provider's variable (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`) when not empty;
    /// `None`: the provider's own default.
    pub fn endpoint(&self) -> Option<String> {
        let variable = match self.provider {
            Provider::Openai => "OPENAI_BASE_URL",
            Provider::Anthropic => "ANTHROPIC_BASE_URL",
        };
        self.base_url
            .clone()
            .or_else(|| std::env::var(variable).ok().filter(|url| !url.is_empty()))
    }

    /// Reads the definition file (if any) and merges it with the flags.
    pub fn resolve(args: &AgentArgs) -> Result<Self, Error> {
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
                Some(TraceMode::Masked) => Trace::Masked,
                Some(TraceMode::Separated) | None => Trace::Separated,
            },
        );
        if args.masked_executions.is_some() && trace != Trace::Masked {
            return Err("--masked-executions applies to `--trace masked` only".into());
        }
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
            request_timeout: args
                .request_timeout
                .or_else(|| definition.as_ref().and_then(|d| d.llm.request_timeout_sec)),
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
    pub fn builder(&self, args: &AgentArgs, root: &Path) -> Result<AgentBuilder, Error> {
        let mut builder = AgentBuilder::new();
        if let Some(definition) = &self.definition {
            builder = definition.configure(builder);
        } else {
            builder = builder.with_system_prompt(DEFAULT_SYSTEM_PROMPT);
        }
        if let Some(system) = &args.system {
            builder = builder.with_system_prompt(system.clone());
        } else if self.definition.is_none() && matches!(args.driver, Driver::Toolcalling) {
            // With requests that offer tools only (the ReAct driver teaches its own reply
            // format): asked for an answer on stop with it, the 0.5B model wrote a call.
            builder = builder.with_tool_call_hint(TOOL_CALL_HINT);
        }
        let max_steps = args
            .max_steps
            .or_else(|| self.definition.as_ref().and_then(|d| d.execution.max_steps))
            .unwrap_or(20);
        let masked_executions = args
            .masked_executions
            .map(|n| n as usize)
            .or_else(|| (self.definition.as_ref()).and_then(|d| d.execution.masked_executions))
            .unwrap_or(agents::processing::DEFAULT_MASKED_EXECUTIONS);
        builder = builder
            .with_max_steps(max_steps)
            .with_trace_retention(match self.trace {
                Trace::Legacy => TraceRetention::Full,
                Trace::Separated => TraceRetention::Ephemeral,
                Trace::Digest => TraceRetention::digest(300),
                Trace::Masked => TraceRetention::masked(masked_executions),
            });
        self.install_tools(builder, args, root)
    }

    fn install_tools(
        &self,
        mut builder: AgentBuilder,
        args: &AgentArgs,
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
                "ok   {} ({}): {}",
                printable(&definition.id),
                printable(&source),
                printable(&definition.description)
            );
        } else {
            println!(
                "warn {} ({}): capabilities the CLI does not know: {}",
                printable(&definition.id),
                printable(&source),
                printable(
                    &unknown
                        .iter()
                        .map(|c| c.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            );
        }
    }
    for error in registry.errors() {
        println!("FAIL {}", printable(&error.to_string()));
    }
    match registry.errors().len() {
        0 => Ok(()),
        n => Err(format!("{n} definition file(s) are invalid").into()),
    }
}

/// Which wire protocol the endpoint speaks.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Provider {
    /// OpenAI chat completions (OpenAI, vLLM, llama.cpp, Ollama, LM Studio).
    Openai,
    /// Anthropic messages.
    Anthropic,
}

/// How the agent talks to the model.
#[derive(Clone, Copy, Debug, Default, clap::ValueEnum)]
pub enum Driver {
    /// The model's native tool calls (default).
    #[default]
    Toolcalling,
    /// The ReAct protocol: Thought / Action / Observation written as text.
    React,
}

/// What of the tool trace persists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Trace {
    /// Everything persists.
    Legacy,
    /// Only questions and answers persist.
    Separated,
    /// Questions, answers and a short digest of the tool calls persist.
    Digest,
    /// Every tool call and result persists, but outputs older than the last few turns
    /// (`--masked-executions`, default 2) become short placeholders (observation masking).
    Masked,
}

/// The definition's `mcp_servers` as tool sources (a server's list is fetched again after it
/// announces a change), offering the tools its tool policy permits; the clients stay
/// connected as long as the sources live. Two servers offering one name, or a server offering
/// the name of one of `taken` (the agent's own tools), is an error here, at the start.
pub async fn definition_tool_sources(
    definition: Option<&AgentDefinition>,
    policy: &ToolPolicy,
    taken: &[&str],
) -> Result<Vec<Arc<dyn ToolSource>>, Error> {
    let Some(definition) = definition else {
        return Ok(Vec::new());
    };
    if definition.mcp_servers.is_empty() {
        return Ok(Vec::new());
    }
    let servers = definition
        .mcp_servers
        .iter()
        .map(|s| s.to_server())
        .collect::<Result<Vec<_>, _>>()?;
    let (clients, tools) = connect_all(servers).await?;
    if let Some(tool) = tools
        .iter()
        .find(|t| policy.permits(t.name()) && taken.contains(&t.name()))
    {
        return Err(format!(
            "an MCP server offers `{}`, which is also one of the agent's own tools: give the server a `prefix` in `mcp_servers`",
            tool.name()
        )
        .into());
    }
    let policy = Arc::new(policy.clone());
    Ok(clients
        .iter()
        .map(|client| {
            let policy = Arc::clone(&policy);
            Arc::new(
                client
                    .tool_source()
                    .with_filter(move |name| policy.permits(name)),
            ) as Arc<dyn ToolSource>
        })
        .collect())
}
