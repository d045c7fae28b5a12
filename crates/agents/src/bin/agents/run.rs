//! `agents run`: an agent with file and bash tools against a real endpoint.

use std::path::PathBuf;
use std::sync::Arc;

use agents::inference::{ModelCatalog, ModelInfo};
use agents::prelude::*;

use crate::render::{one_line, print_event, print_transcript, printable};
use crate::setup::Settings;

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
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Trace {
    /// Everything persists.
    Legacy,
    /// Only questions and answers persist.
    Separated,
    /// Questions, answers and a short digest of the tool calls persist.
    Digest,
}

/// Options of `agents run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The user's message (not needed with `--resume`).
    #[arg(long, short, required_unless_present = "resume")]
    pub prompt: Option<String>,
    /// Durable sessions: `--session NAME`, `--resume`, `--db URL`.
    #[command(flatten)]
    pub session: crate::sessions::SessionArgs,
    /// Human approval: `--require-approval TOOL,..`, `--approve all|none|TOOL,..`.
    #[command(flatten)]
    pub approval: crate::approve::ApprovalArgs,
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
    /// How the agent talks to the model: native tool calls, or ReAct text.
    #[arg(long, value_enum, default_value_t = Driver::Toolcalling)]
    pub driver: Driver,
    /// Step limit (default: the definition's, else 20).
    #[arg(long)]
    pub max_steps: Option<usize>,
    /// Stream the model's text as it arrives.
    #[arg(long)]
    pub stream: bool,
    /// Recognise tool calls written as JSON text (small local models do this). On by default
    /// (the definition's `llm.recover_tool_calls` can turn it off); kept for old scripts.
    #[arg(long, group = "recovery")]
    pub recover_tool_calls: bool,
    /// Never treat a reply written as JSON text as a tool call.
    #[arg(long, group = "recovery")]
    pub no_recover_tool_calls: bool,
    /// Conversation file: loaded if it exists (at most 256 MiB), saved after the run
    /// (atomically, readable by you only).
    #[arg(long)]
    pub state: Option<PathBuf>,
    /// Also pass this environment variable to bash commands (repeatable). Commands get only
    /// PATH, HOME, USER, LOGNAME, SHELL, LANG, LANGUAGE, LC_*, TERM, TZ and TMPDIR otherwise.
    /// A name ending in `*` is a prefix; a name that looks like a key, token, secret, password
    /// or credential passes only when given in full.
    #[arg(long = "bash-env", value_name = "NAME")]
    pub bash_env: Vec<String>,
    /// Print the persisted conversation at the end.
    #[arg(long)]
    pub transcript: bool,
    /// Export OpenTelemetry spans to this OTLP/HTTP collector (e.g. http://127.0.0.1:4318).
    #[cfg(feature = "otel")]
    #[arg(long, value_name = "URL")]
    pub otlp_endpoint: Option<String>,
}

impl RunArgs {
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
}

fn model(
    args: &RunArgs,
    settings: &Settings,
) -> Result<Arc<dyn LanguageModel>, Box<dyn std::error::Error>> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    Ok(match settings.provider {
        Provider::Openai => {
            let key_var = args
                .api_key_env
                .clone()
                .unwrap_or_else(|| "OPENAI_API_KEY".into());
            let mut builder =
                OpenAiCompatible::builder().api_key(env(&key_var).unwrap_or_default());
            if let Some(url) = settings.base_url.clone().or_else(|| env("OPENAI_BASE_URL")) {
                builder = builder.base_url(url);
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
            if let Some(url) = settings
                .base_url
                .clone()
                .or_else(|| env("ANTHROPIC_BASE_URL"))
            {
                builder = builder.base_url(url);
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

/// The largest `--state` file a run loads: a conversation that grew past it is refused, not
/// read into memory.
const MAX_STATE_BYTES: u64 = 256 * 1024 * 1024;

/// The catalog entry of the model (built-in prices, or AGENTS_MODEL_CATALOG's).
fn price_of(model: &str) -> Result<Option<ModelInfo>, Box<dyn std::error::Error>> {
    Ok(ModelCatalog::from_env()?.lookup(model))
}

fn load_state(path: &Option<PathBuf>) -> Result<AgentState, Box<dyn std::error::Error>> {
    let Some(path) = path else {
        return Ok(AgentState::new());
    };
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

/// The exit codes of `agents run` (also in its `--help`).
pub const EXIT_CODES_HELP: &str = "Exit codes:
  0    the run completed
  1    the run failed: stopped on an error, or on an empty reply from the model (one line on
       stderr names the stop reason and the last error); the conversation is still saved
  2    bad usage or configuration (options, definition file, state file, endpoint settings)
  3    waiting for approval (a --session run): the waiting calls are printed; decide with
       `agents approve|reject --session NAME CALL_ID`, then `agents run --session NAME --resume`
  130  cancelled (reserved: Ctrl-C)";

/// How `agents run` ended.
#[derive(Debug)]
pub enum RunError {
    /// Bad options or configuration (exit code 2).
    Usage(Box<dyn std::error::Error>),
    /// The run itself failed (exit code 1); the message is one line.
    Failed(String),
    /// The run waits for a person's decision (exit code 3).
    Waiting,
}

impl RunError {
    /// The process exit code.
    pub fn exit_code(&self) -> u8 {
        match self {
            RunError::Usage(_) => 2,
            RunError::Failed(_) => 1,
            RunError::Waiting => 3,
        }
    }
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Usage(error) => write!(f, "{error}"),
            RunError::Failed(message) => f.write_str(message),
            RunError::Waiting => f.write_str(
                "the run waits for approval; decide with `agents approve` or `agents reject`",
            ),
        }
    }
}

/// A configuration error, exit code 2.
fn usage(error: impl Into<Box<dyn std::error::Error>>) -> RunError {
    RunError::Usage(error.into())
}

/// Runs one user turn and prints it as it happens.
pub async fn run(args: RunArgs) -> Result<(), RunError> {
    // Dropped when the run ends, which sends the spans still buffered.
    #[cfg(feature = "otel")]
    let _telemetry = args
        .otlp_endpoint
        .as_deref()
        .map(agents::telemetry::init_otlp)
        .transpose()
        .map_err(usage)?;
    let state = load_state(&args.state).map_err(usage)?;
    let root = match &args.root {
        Some(root) => root.clone(),
        None => std::env::current_dir().map_err(usage)?,
    };
    let settings = Settings::resolve(&args).map_err(usage)?;
    let model = model(&args, &settings).map_err(usage)?;
    let model_name = model.name();
    let builder = settings.builder(&args, &root).map_err(usage)?;
    let builder = match args.driver {
        Driver::Toolcalling => builder.with_shared_model(model),
        Driver::React => builder.with_react(model),
    };
    let mut builder = builder.with_streaming(args.stream).on_event(print_event);
    #[cfg(feature = "mcp")]
    {
        builder = builder.with_tools(
            crate::mcp::definition_tools(settings.definition.as_ref(), &settings.tools)
                .await
                .map_err(usage)?,
        );
    }
    if args.no_recover_tool_calls {
        builder = builder.with_content_tool_call_recovery(false);
    } else if args.recover_tool_calls {
        builder = builder.with_content_tool_call_recovery(true);
    }
    let builder = crate::approve::configure(builder, &args.approval);
    let agent = builder.build().map_err(usage)?;
    let price = price_of(&model_name).map_err(usage)?;
    let prompt = args.prompt.as_deref().unwrap_or_default();
    let done = if args.session.session.is_some() {
        if !args.session.resume {
            println!("user: {prompt}");
        }
        let done = crate::sessions::run(&agent, &args.session, args.prompt.as_deref())
            .await
            .map_err(|e| RunError::Failed(one_line(&e.to_string(), 300)))?;
        if let Some(answer) = done.final_response().filter(|_| !args.stream) {
            println!("assistant: {}", printable(&answer.text()));
        }
        done
    } else {
        println!("user: {prompt}");
        let mut steps = std::pin::pin!(agent.iterate(state.with_user_message(prompt)));
        let mut last = None;
        while let Some(state) = steps.next().await {
            let state = state.map_err(|e| {
                RunError::Failed(format!("the run failed: {}", one_line(&e.to_string(), 300)))
            })?;
            if let Some(step) = state.current_step() {
                if let Some(answer) = step.final_response() {
                    if !args.stream {
                        println!("assistant: {}", printable(&answer.text()));
                    } else {
                        println!();
                    }
                }
            }
            last = Some(state);
        }
        last.ok_or_else(|| RunError::Failed("the agent produced no state".into()))?
    };
    // Approval (approve.rs): decide what can be decided and resume; a session run left
    // waiting exits 3 below.
    let done = crate::approve::settle(&agent, &args.approval, &args.session, done)
        .await
        .map_err(|e| RunError::Failed(one_line(&e.to_string(), 300)))?;
    let usage = done.execution_usage();
    println!(
        "[{:?}{}] {} step(s); tokens: {} in, {} out, {} total; {}",
        done.status(),
        done.stop_reason()
            .map(|r| format!(", {r:?}"))
            .unwrap_or_default(),
        done.step_executions().len(),
        usage.input_tokens,
        usage.output_tokens,
        usage.total(),
        match &price {
            Some(info) => format!("cost ${:.6}", usage.cost(info).total_usd()),
            None => "unknown price".to_owned(),
        }
    );
    if args.transcript {
        print_transcript(&done);
    }
    if let Some(path) = &args.state {
        let json = done
            .to_json()
            .map_err(|e| RunError::Failed(format!("cannot save the conversation: {e}")))?;
        agents::fs::write_atomic(path, json.as_bytes()).map_err(|e| {
            RunError::Failed(format!(
                "cannot save the conversation to {}: {e}",
                path.display()
            ))
        })?;
        println!("conversation saved to {}", path.display());
    }
    if done.status() == AgentStatus::Suspended {
        let name = args.session.session.as_deref().unwrap_or_default();
        println!("{}", crate::approve::pending_report(&done, name));
        return Err(RunError::Waiting);
    }
    match failure(&done) {
        Some(message) => Err(RunError::Failed(message)),
        None => Ok(()),
    }
}

/// One line saying why the run failed (stop reason and last error), when it did: its status
/// is `Failed`, or it stopped on an empty reply.
fn failure(state: &AgentState) -> Option<String> {
    let reason = state.stop_reason();
    let failed = state.status() == AgentStatus::Failed || reason == Some(StopReason::EmptyResponse);
    if !failed {
        return None;
    }
    let reason = reason.map_or("unknown", StopReason::as_str);
    let last_error = state.steps().rev().find_map(|step| {
        step.error_messages().pop().or_else(|| {
            step.tool_executions()
                .errors()
                .last()
                .and_then(|e| e.error_message().map(str::to_owned))
        })
    });
    Some(match (reason, last_error) {
        ("empty_response", _) => {
            "the run failed (stop reason: empty_response): the model sent an empty reply, twice"
                .to_owned()
        }
        (reason, Some(error)) => format!(
            "the run failed (stop reason: {reason}); last error: {}",
            one_line(&error, 300)
        ),
        (reason, None) => format!("the run failed (stop reason: {reason})"),
    })
}
