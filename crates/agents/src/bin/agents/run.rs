//! `agents run`: an agent with file and bash tools against a real endpoint.

use std::path::PathBuf;
use std::sync::Arc;

use agents::prelude::*;

use crate::render::{print_event, print_transcript};
use crate::setup::Settings;

/// Which wire protocol the endpoint speaks.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Provider {
    /// OpenAI chat completions (OpenAI, vLLM, llama.cpp, Ollama, LM Studio).
    Openai,
    /// Anthropic messages.
    Anthropic,
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
    /// Step limit (default: the definition's, else 20).
    #[arg(long)]
    pub max_steps: Option<usize>,
    /// Stream the model's text as it arrives.
    #[arg(long)]
    pub stream: bool,
    /// Recognise tool calls written as JSON text (small local models do this).
    #[arg(long)]
    pub recover_tool_calls: bool,
    /// Conversation file: loaded if it exists, saved after the run.
    #[arg(long)]
    pub state: Option<PathBuf>,
    /// Print the persisted conversation at the end.
    #[arg(long)]
    pub transcript: bool,
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

fn load_state(path: &Option<PathBuf>) -> Result<AgentState, Box<dyn std::error::Error>> {
    let Some(path) = path else {
        return Ok(AgentState::new());
    };
    if !path.exists() {
        return Ok(AgentState::new());
    }
    let text = std::fs::read_to_string(path)?;
    AgentState::from_json(&text).map_err(|e| {
        format!(
            "cannot resume from `{}`: {e} (the file was left untouched)",
            path.display()
        )
        .into()
    })
}

/// Runs one user turn and prints it as it happens.
pub async fn run(args: RunArgs) -> Result<(), Box<dyn std::error::Error>> {
    let state = load_state(&args.state)?;
    let root = match &args.root {
        Some(root) => root.clone(),
        None => std::env::current_dir()?,
    };
    let settings = Settings::resolve(&args)?;
    let builder = settings
        .builder(&args, &root)?
        .with_shared_model(model(&args, &settings)?)
        .with_streaming(args.stream)
        .with_content_tool_call_recovery(args.recover_tool_calls)
        .on_event(print_event);
    let agent = builder.build()?;
    let prompt = args.prompt.as_deref().unwrap_or_default();
    let done = if args.session.session.is_some() {
        if !args.session.resume {
            println!("user: {prompt}");
        }
        let done = crate::sessions::run(&agent, &args.session, args.prompt.as_deref()).await?;
        if let Some(answer) = done.final_response().filter(|_| !args.stream) {
            println!("assistant: {}", answer.text());
        }
        done
    } else {
        println!("user: {prompt}");
        iterate(&agent, state.with_user_message(prompt), args.stream).await?
    };
    let usage = done.execution_usage();
    println!(
        "[{:?}{}] {} step(s); tokens: {} in, {} out, {} total",
        done.status(),
        done.stop_reason()
            .map(|r| format!(", {r:?}"))
            .unwrap_or_default(),
        done.step_executions().len(),
        usage.input_tokens,
        usage.output_tokens,
        usage.total()
    );
    if args.transcript {
        print_transcript(&done);
    }
    if let Some(path) = &args.state {
        crate::sessions::write_private(path, &done.to_json()?)?;
        println!("conversation saved to {}", path.display());
    }
    Ok(())
}

/// Runs the agent step by step, printing each final answer; returns the final state.
async fn iterate(
    agent: &Agent,
    state: AgentState,
    stream: bool,
) -> Result<AgentState, Box<dyn std::error::Error>> {
    let mut steps = std::pin::pin!(agent.iterate(state));
    let mut last = None;
    while let Some(state) = steps.next().await {
        let state = state?;
        if let Some(step) = state.current_step() {
            if let Some(answer) = step.final_response() {
                if !stream {
                    println!("assistant: {}", answer.text());
                } else {
                    println!();
                }
            }
        }
        last = Some(state);
    }
    Ok(last.ok_or("the agent produced no state")?)
}
