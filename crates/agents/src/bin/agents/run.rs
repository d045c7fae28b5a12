//! `agents run`: an agent with file and bash tools against a real endpoint.

use std::path::PathBuf;
use std::sync::Arc;

use agents::prelude::*;

use crate::render::{print_event, print_transcript};

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
    /// The user's message.
    #[arg(long, short)]
    pub prompt: String,
    /// The endpoint's protocol.
    #[arg(long, value_enum, default_value = "openai")]
    pub provider: Provider,
    /// Base URL (default: OPENAI_BASE_URL / ANTHROPIC_BASE_URL, else the provider's).
    #[arg(long)]
    pub base_url: Option<String>,
    /// Model name (default: OPENAI_MODEL / ANTHROPIC_MODEL).
    #[arg(long)]
    pub model: Option<String>,
    /// Environment variable holding the API key (default OPENAI_API_KEY / ANTHROPIC_API_KEY).
    #[arg(long)]
    pub api_key_env: Option<String>,
    /// System prompt.
    #[arg(
        long,
        default_value = "You are a helpful assistant. Use the tools when they help."
    )]
    pub system: String,
    /// Directory the file and bash tools are confined to (default: current directory).
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// Leave out the bash tool.
    #[arg(long)]
    pub no_bash: bool,
    /// Trace mode.
    #[arg(long, value_enum, default_value = "separated")]
    pub trace: Trace,
    /// Step limit.
    #[arg(long, default_value_t = 20)]
    pub max_steps: usize,
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

fn model(args: &RunArgs) -> Result<Arc<dyn LanguageModel>, Box<dyn std::error::Error>> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    Ok(match args.provider {
        Provider::Openai => {
            let key_var = args
                .api_key_env
                .clone()
                .unwrap_or_else(|| "OPENAI_API_KEY".into());
            let mut builder =
                OpenAiCompatible::builder().api_key(env(&key_var).unwrap_or_default());
            if let Some(url) = args.base_url.clone().or_else(|| env("OPENAI_BASE_URL")) {
                builder = builder.base_url(url);
            }
            let model = args.model.clone().or_else(|| env("OPENAI_MODEL")).ok_or(
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
            if let Some(url) = args.base_url.clone().or_else(|| env("ANTHROPIC_BASE_URL")) {
                builder = builder.base_url(url);
            }
            let model = args
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
    let retention = match args.trace {
        Trace::Legacy => TraceRetention::Full,
        Trace::Separated => TraceRetention::Ephemeral,
        Trace::Digest => TraceRetention::digest(300),
    };
    let mut builder = AgentBuilder::new()
        .with_shared_model(model(&args)?)
        .with_system_prompt(args.system.clone())
        .with_trace_retention(retention)
        .with_max_steps(args.max_steps)
        .with_streaming(args.stream)
        .with_content_tool_call_recovery(args.recover_tool_calls)
        .with_capability(UseFileTools::new(&root))
        .on_event(print_event);
    if !args.no_bash {
        builder = builder.with_capability(UseBash::new(&root));
    }
    let agent = builder.build()?;
    println!("user: {}", args.prompt);
    let mut steps = std::pin::pin!(agent.iterate(state.with_user_message(args.prompt.as_str())));
    let mut last = None;
    while let Some(state) = steps.next().await {
        let state = state?;
        if let Some(step) = state.current_step() {
            if let Some(answer) = step.final_response() {
                if !args.stream {
                    println!("assistant: {}", answer.text());
                } else {
                    println!();
                }
            }
        }
        last = Some(state);
    }
    let done = last.ok_or("the agent produced no state")?;
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
        std::fs::write(path, done.to_json()?)?;
        println!("conversation saved to {}", path.display());
    }
    Ok(())
}
