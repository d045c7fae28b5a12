//! `cargo xtask longrun`: a long conversation through the real agent, per trace mode, on a
//! real small model (issue 32).
//!
//! A fresh workspace of a small project (`longrun/project.rs`) and a scripted user of 32
//! turns (`longrun/turns.rs`), each checked by machine, about a third building on an earlier
//! turn. Every turn is one `agents run --state FILE --output json`: the CLI is what users run,
//! and it brings its own agent setup (system prompt, file and bash tools, tool-call recovery,
//! answer-on-stop), which a library `Session` in this harness would have to copy; `--state`
//! (the conversation in a file, loaded and saved per run) rather than `--session` keeps a
//! database out of the measurement and is what issue 32's first look used. Against llama-server with Qwen2.5-Coder 1.5B at `-c 32768` (temperature
//! 0, fixed seed). The modes run one after another, each with a freshly started server (so
//! that one mode's prompt cache never serves another's): legacy, separated, digest, masked.
//!
//! Measured per turn and mode: input tokens (as the server counts the prompt), the part of it
//! served from the server's prompt cache, output tokens, wall time, pass/fail, whether a turn
//! that needs a tool used one; per mode: totals at turns 10, 20 and 30, recall success (turns
//! that build on an earlier one), forged notes or tool results in the persisted conversation.
//! Writes `target/longrun/longrun.json`, `longrun.md`, two SVG charts and each mode's final
//! conversation (`<model>-<mode>-state.json`); `--write-docs`
//! records each mode's run in `docs/long-horizon/runs.json` (replacing that model and mode's
//! earlier run, keeping the others) and writes `docs/long-horizon.md` (and
//! `docs/long-horizon/*.svg`) from every run recorded there. Each mode runs on a fresh server
//! in either case, so modes run by separate invocations (`--modes legacy`, later
//! `--modes masked`: the whole conversation takes longer than one sitting on 2 cores) are
//! measured as they would be in one; each run records its own commit and date.
//!
//! ```text
//! cargo xtask longrun [--models 1.5b[,0.5b]] [--modes legacy,separated,digest,masked]
//!                     [--turns N] [--max-steps N] [--timeout SECONDS] [--masked-executions N]
//!                     [--agents PATH] [--server URL] [--write-docs]
//! cargo xtask longrun --report-only   # the docs page again, from the recorded runs
//! ```

mod charts;
pub mod check;
mod project;
mod report;
mod turns;

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::local_llm::{
    cache_dir, ensure_llama_server, ensure_model, llama_server_args_with_context, ModelSpec,
    Servers, QWEN_05B, QWEN_15B,
};
use crate::run::{cargo, repo_root, Step};

use self::check::is_forged_evidence;
use self::turns::{Turn, TURNS};

/// Not the e2e or eval port: they may share the machine.
const PORT: u16 = 18191;
const SEED: &str = "42";
/// The server's context window: a request that does not fit fails its turn.
const CONTEXT: u32 = 32_768;
/// Reply cap per inference.
const MAX_REPLY_TOKENS: &str = "512";
/// The trace modes, in the order they run.
pub const MODES: [&str; 4] = ["legacy", "separated", "digest", "masked"];

/// What the command line asked for.
pub struct Options {
    pub models: Vec<&'static ModelSpec>,
    pub modes: Vec<String>,
    pub turns: usize,
    pub max_steps: u32,
    pub timeout: Duration,
    pub masked_executions: u32,
    pub agents: Option<PathBuf>,
    pub write_docs: bool,
    /// Only write `docs/long-horizon.md` and its charts again from the runs recorded in
    /// `docs/long-horizon/runs.json` (after a change to the page's text or a record).
    pub report_only: bool,
    /// An OpenAI-compatible endpoint already running (`http://host:port/v1`), used instead of
    /// starting llama-server (its prompt cache is then shared between modes).
    pub server: Option<String>,
}

impl Options {
    fn parse(args: &[String]) -> Result<Self, String> {
        let mut options = Self {
            models: vec![&QWEN_15B],
            modes: MODES.iter().map(|m| (*m).to_owned()).collect(),
            turns: TURNS.len(),
            max_steps: 8,
            timeout: Duration::from_secs(600),
            masked_executions: 2,
            agents: None,
            write_docs: false,
            report_only: false,
            server: None,
        };
        let mut args = args.iter();
        while let Some(flag) = args.next() {
            if flag == "--write-docs" {
                options.write_docs = true;
                continue;
            }
            if flag == "--report-only" {
                options.report_only = true;
                continue;
            }
            let value = args
                .next()
                .ok_or_else(|| format!("{flag} needs a value; see `cargo xtask help`"))?;
            let list = || value.split(',').map(str::trim).filter(|s| !s.is_empty());
            let number = |what: &str| {
                value
                    .parse::<u64>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("{what} takes a positive number, not `{value}`"))
            };
            match flag.as_str() {
                "--models" => {
                    options.models = list()
                        .map(|key| {
                            [&QWEN_05B, &QWEN_15B]
                                .into_iter()
                                .find(|m| m.key == key)
                                .ok_or_else(|| format!("unknown model `{key}` (known: 0.5b, 1.5b)"))
                        })
                        .collect::<Result<_, _>>()?;
                }
                "--modes" => {
                    options.modes = list().map(str::to_owned).collect();
                    if let Some(bad) = options.modes.iter().find(|m| !MODES.contains(&m.as_str())) {
                        return Err(format!(
                            "unknown mode `{bad}` (known: {})",
                            MODES.join(", ")
                        ));
                    }
                }
                "--turns" => {
                    let n = number("--turns")? as usize;
                    if n > TURNS.len() {
                        return Err(format!("--turns: there are {} turns", TURNS.len()));
                    }
                    options.turns = n;
                }
                "--max-steps" => options.max_steps = number("--max-steps")? as u32,
                "--timeout" => options.timeout = Duration::from_secs(number("--timeout")?),
                "--masked-executions" => {
                    options.masked_executions = number("--masked-executions")? as u32;
                }
                "--agents" => options.agents = Some(value.into()),
                "--server" => {
                    if !(value.starts_with("http://") || value.starts_with("https://")) {
                        return Err(format!("--server takes an http:// URL, not `{value}`"));
                    }
                    options.server = Some(value.trim_end_matches('/').to_owned());
                }
                other => return Err(format!("unknown option `{other}`; see `cargo xtask help`")),
            }
        }
        if options.models.is_empty() || options.modes.is_empty() {
            return Err("nothing to run: a list option is empty".into());
        }
        if options.write_docs && (options.turns < TURNS.len() || options.server.is_some()) {
            // Recorded runs are compared with each other: all of them whole, on a fresh server.
            return Err(
                "--write-docs needs the whole conversation on llama-server (no --turns, no --server)"
                    .into(),
            );
        }
        Ok(options)
    }
}

/// One turn of one mode, as measured.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct TurnResult {
    pub turn: usize,
    pub recall: bool,
    pub needs_tool: bool,
    pub passed: bool,
    /// Prompt tokens as the server counts them (cached ones included).
    pub input_tokens: u64,
    /// The part of `input_tokens` served from the server's prompt cache.
    pub cached_tokens: u64,
    pub output_tokens: u64,
    pub seconds: f64,
    pub tool_calls: usize,
    /// Of `tool_calls`, those whose tool ran (it returned, failed, timed out or panicked);
    /// not those refused before running (a call among other text, a repeat, an unknown tool,
    /// invalid arguments). `None` in runs recorded before it was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls_run: Option<usize>,
    pub steps: u64,
    pub exit_code: Option<i32>,
    pub stop_reason: String,
    pub answer: Option<String>,
    pub answered_by: Option<String>,
    /// The last lines of stderr when the turn failed.
    pub error: String,
}

impl TurnResult {
    /// Whether the turn made at least one call that ran (in runs recorded before that was
    /// counted: at least one call, refused ones included).
    pub fn used_tool(&self) -> bool {
        self.tool_calls_run.unwrap_or(self.tool_calls) > 0
    }
}

/// One mode's run.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct ModeRun {
    pub model: String,
    pub mode: String,
    /// Where and when it ran: `git describe` of the checkout, the UTC date, the machine.
    #[serde(default)]
    pub commit: String,
    #[serde(default)]
    pub date: String,
    #[serde(default)]
    pub machine: String,
    /// The step limit per turn and (masked mode) how many executions kept their outputs.
    #[serde(default)]
    pub max_steps: u32,
    #[serde(default)]
    pub masked_executions: u32,
    pub turns: Vec<TurnResult>,
    /// Assistant messages of the persisted conversation that forge evidence.
    pub forged_messages: usize,
    /// Messages in the persisted conversation at the end.
    pub persisted_messages: usize,
    pub seconds: f64,
}

pub fn run(args: &[String]) -> Result<(), String> {
    let options = Options::parse(args)?;
    let root = repo_root()?;
    if options.report_only {
        let context = report::Context {
            commit: git_describe(&root),
            machine: machine(),
            minutes: 0.0,
            options: &options,
        };
        return write_docs(&[], context, &root);
    }
    let target = root.join("target");
    let built = match &options.agents {
        Some(path) => path.clone(),
        None => {
            Step::new(
                "build the agents CLI",
                cargo(&["build", "-p", "agents", "--bin", "agents"]),
            )
            .run()?;
            target.join("debug").join("agents")
        }
    };
    let out_dir = target.join("longrun");
    std::fs::create_dir_all(&out_dir).map_err(|e| e.to_string())?;
    // A copy, so that builds during the (long) run do not swap the binary under it.
    let agents = out_dir.join(format!("agents-{}", std::process::id()));
    std::fs::copy(&built, &agents)
        .map_err(|e| format!("cannot copy the agents CLI {}: {e}", built.display()))?;

    let scratch = std::env::temp_dir().join(format!("agents-longrun-{}", std::process::id()));
    let started = Instant::now();
    let mut runs = Vec::new();
    if let Some(server) = &options.server {
        for model in &options.models {
            for mode in &options.modes {
                runs.push(run_mode(
                    &agents, server, model, mode, &options, &scratch, &out_dir,
                )?);
            }
        }
    } else {
        runs = run_on_llama_server(&agents, &options, &scratch, &out_dir)?;
    }
    let _ = std::fs::remove_dir_all(&scratch);
    let _ = std::fs::remove_file(&agents);
    // Where and when the runs were made: stamped once, on each run and on the report.
    let context = report::Context {
        commit: git_describe(&root),
        machine: machine(),
        minutes: started.elapsed().as_secs_f64() / 60.0,
        options: &options,
    };
    let date = utc_date();
    for run in &mut runs {
        run.commit.clone_from(&context.commit);
        run.date.clone_from(&date);
        run.machine.clone_from(&context.machine);
    }
    report_all(&runs, context, &root, &out_dir)
}

/// Every model and mode, each mode on a llama-server of its own.
fn run_on_llama_server(
    agents: &Path,
    options: &Options,
    scratch: &Path,
    out_dir: &Path,
) -> Result<Vec<ModeRun>, String> {
    let cache = cache_dir()?;
    std::fs::create_dir_all(&cache).map_err(|e| e.to_string())?;
    let llama = ensure_llama_server(&cache)?;
    let logs = cache.join("logs");
    std::fs::create_dir_all(&logs).map_err(|e| e.to_string())?;
    let server = format!("http://127.0.0.1:{PORT}/v1");
    let mut runs = Vec::new();
    for model in &options.models {
        let file = ensure_model(&cache, model)?;
        for mode in &options.modes {
            // A fresh server per mode: its prompt cache holds only this mode's requests.
            if TcpStream::connect(("127.0.0.1", PORT)).is_ok() {
                return Err(format!(
                    "127.0.0.1:{PORT} is already in use (a longrun left running?); stop it first"
                ));
            }
            let mut servers = Servers::default();
            let extra = ["--temp", "0", "--seed", SEED, "-n", MAX_REPLY_TOKENS];
            servers.start(
                "llama-server-longrun",
                &llama,
                &llama_server_args_with_context(&file, model.alias, PORT, CONTEXT, &extra),
                &logs,
            )?;
            servers.wait_healthy(
                "llama-server-longrun",
                PORT,
                "/health",
                Duration::from_secs(240),
                &logs,
            )?;
            let run = run_mode(agents, &server, model, mode, options, scratch, out_dir)?;
            drop(servers);
            runs.push(run);
        }
    }
    Ok(runs)
}

/// The JSON, the markdown, the charts, and with `--write-docs` the docs page.
fn report_all(
    runs: &[ModeRun],
    context: report::Context<'_>,
    root: &Path,
    out_dir: &Path,
) -> Result<(), String> {
    let options = context.options;
    let json = report::json(runs, &context);
    let json_text = serde_json::to_string_pretty(&json).map_err(|e| e.to_string())?;
    std::fs::write(out_dir.join("longrun.json"), json_text).map_err(|e| e.to_string())?;
    let tokens_chart = out_dir.join("cumulative-input-tokens.svg");
    let success_chart = out_dir.join("success.svg");
    charts::cumulative_input_tokens(runs, &tokens_chart)?;
    charts::success(runs, &success_chart)?;
    let markdown = report::markdown(runs, &context, "");
    std::fs::write(out_dir.join("longrun.md"), &markdown).map_err(|e| e.to_string())?;
    println!("{markdown}");
    eprintln!("longrun report: {}", out_dir.join("longrun.md").display());
    if options.write_docs {
        write_docs(runs, context, root)?;
    }
    Ok(())
}

/// Records `runs` in `docs/long-horizon/runs.json` (each replacing that model and mode's
/// earlier run) and writes `docs/long-horizon.md` and its charts from every recorded run.
fn write_docs(runs: &[ModeRun], context: report::Context<'_>, root: &Path) -> Result<(), String> {
    let docs = root.join("docs");
    let images = docs.join("long-horizon");
    std::fs::create_dir_all(&images).map_err(|e| e.to_string())?;
    let recorded = images.join("runs.json");
    let runs = report::recorded_with(&recorded, runs)?;
    charts::cumulative_input_tokens(&runs, &images.join("cumulative-input-tokens.svg"))?;
    charts::success(&runs, &images.join("success.svg"))?;
    let minutes = runs.iter().map(|r| r.seconds).sum::<f64>() / 60.0;
    let context = report::Context { minutes, ..context };
    let page = report::markdown(&runs, &context, "long-horizon/");
    let path = docs.join("long-horizon.md");
    let existing = std::fs::read_to_string(&path).unwrap_or_default();
    std::fs::write(&path, report::docs_page(&page, &existing)).map_err(|e| e.to_string())?;
    eprintln!("wrote docs/long-horizon.md and docs/long-horizon/*.svg");
    Ok(())
}

/// The whole conversation in one mode: a fresh workspace and conversation file, each turn one
/// CLI run.
fn run_mode(
    agents: &Path,
    server: &str,
    model: &ModelSpec,
    mode: &str,
    options: &Options,
    scratch: &Path,
    out_dir: &Path,
) -> Result<ModeRun, String> {
    let dir = scratch.join(format!("{}-{mode}", model.key));
    let _ = std::fs::remove_dir_all(&dir);
    let workspace = dir.join("workspace");
    std::fs::create_dir_all(&workspace).map_err(|e| e.to_string())?;
    project::write(&workspace).map_err(|e| format!("cannot write the project: {e}"))?;
    // Outside the workspace, so that listing the workspace does not show it.
    let state_file = dir.join("state.json");
    let started = Instant::now();
    let mut results = Vec::new();
    for (index, turn) in TURNS.iter().take(options.turns).enumerate() {
        let result = run_turn(
            agents,
            server,
            model,
            mode,
            options,
            &workspace,
            &state_file,
            index,
            turn,
        )?;
        eprintln!(
            "longrun {} {mode:<9} turn {:>2} {} {:>6} in ({:>6} cached) {:>4} out {:>5.0}s{}{}",
            model.key,
            result.turn,
            if result.passed { "pass" } else { "FAIL" },
            result.input_tokens,
            result.cached_tokens,
            result.output_tokens,
            result.seconds,
            if turn.needs_tool && !result.used_tool() {
                " (no tool)"
            } else {
                ""
            },
            result
                .answer
                .as_deref()
                .map(|a| format!(": {}", one_line(a, 60)))
                .unwrap_or_else(|| format!(" (no answer; {})", one_line(&result.error, 80))),
        );
        results.push(result);
    }
    let document = read_state(&state_file).unwrap_or(Value::Null);
    // Kept for reading: what the conversation held at the end.
    let kept = out_dir.join(format!("{}-{mode}-state.json", model.key));
    let _ = std::fs::copy(&state_file, kept);
    let persisted = persisted_messages(&document);
    let forged_messages = persisted
        .iter()
        .filter(|m| m["role"] == "assistant" && is_forged_evidence(&text_of(&m["content"])))
        .count();
    Ok(ModeRun {
        model: model.key.to_owned(),
        mode: mode.to_owned(),
        turns: results,
        forged_messages,
        persisted_messages: persisted.len(),
        seconds: started.elapsed().as_secs_f64(),
        max_steps: options.max_steps,
        masked_executions: options.masked_executions,
        // Stamped by `run` once every mode has run.
        ..ModeRun::default()
    })
}

#[allow(clippy::too_many_arguments)]
fn run_turn(
    agents: &Path,
    server: &str,
    model: &ModelSpec,
    mode: &str,
    options: &Options,
    workspace: &Path,
    state_file: &Path,
    index: usize,
    turn: &Turn,
) -> Result<TurnResult, String> {
    let number = index + 1;
    let dir = state_file.parent().unwrap_or(workspace);
    let out = dir.join(format!("turn{number:02}.json"));
    let err = dir.join(format!("turn{number:02}.err"));
    let mut command = Command::new(agents);
    command
        .args([
            "run",
            "--quiet",
            "--output",
            "json",
            "--prompt",
            turn.prompt,
        ])
        .arg("--root")
        .arg(workspace)
        .args(["--trace", mode])
        .args(["--max-steps", &options.max_steps.to_string()])
        .arg("--state")
        .arg(state_file)
        .current_dir(workspace)
        .env("OPENAI_BASE_URL", server)
        .env("OPENAI_MODEL", model.alias)
        .env("OPENAI_API_KEY", "")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).map_err(|e| e.to_string())?)
        .stderr(std::fs::File::create(&err).map_err(|e| e.to_string())?);
    if mode == "masked" {
        command.args([
            "--masked-executions",
            &options.masked_executions.to_string(),
        ]);
    }
    let before = read_state(state_file).unwrap_or(Value::Null);
    let started = Instant::now();
    let exit_code = run_with_limit(command, options.timeout)?;
    let seconds = started.elapsed().as_secs_f64();
    let summary: Value = std::fs::read_to_string(&out)
        .ok()
        .and_then(|text| serde_json::from_str(text.trim()).ok())
        .unwrap_or(Value::Null);
    let errors = std::fs::read_to_string(&err).unwrap_or_default();
    let document = read_state(state_file).unwrap_or(Value::Null);
    // The conversation's usage totals grew by what this turn's requests used (also when the
    // run failed and printed no summary; the CLI saves the conversation either way).
    let grown = |field: &str| {
        let total = |d: &Value| d["usage"][field].as_u64().unwrap_or(0);
        total(&document).saturating_sub(total(&before))
    };
    let uncached = grown("input_tokens");
    let cached = grown("cache_read_tokens");
    let output_tokens = grown("output_tokens");
    // This execution's steps (a state holds the steps of its last execution only). A run
    // stopped at the limit saved nothing: the file still holds the turn before's.
    let stopped = exit_code.is_none();
    let executions = if stopped {
        Vec::new()
    } else {
        document["step_executions"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    let calls: Vec<&Value> = executions
        .iter()
        .flat_map(|e| {
            e["step"]["tool_executions"]
                .as_array()
                .into_iter()
                .flatten()
        })
        .collect();
    let tool_calls = calls.len();
    let tool_calls_run = calls.iter().filter(|call| tool_ran(call)).count();
    let answered_by = persisted_messages(&document)
        .last()
        .filter(|_| !stopped)
        .and_then(|m| m["_metadata"]["answered_by"].as_str().map(str::to_owned));
    // An answer counts when this run produced it (exit code 0 and a summary).
    let answer = summary["answer"]
        .as_str()
        .filter(|a| !a.trim().is_empty())
        .map(str::to_owned);
    // The loop's notice says the task was not finished: it never passes a check of the answer.
    let by_notice = answered_by.as_deref() == Some("notice");
    let passed = turn.changes_it_builds_on_hold(TURNS, workspace)
        && if turn.check.is_file_check() {
            turn.check.passes(None, workspace)
        } else {
            !by_notice && turn.check.passes(answer.as_deref(), workspace)
        };
    Ok(TurnResult {
        turn: number,
        recall: turn.is_recall(),
        needs_tool: turn.needs_tool,
        passed,
        input_tokens: uncached + cached,
        cached_tokens: cached,
        output_tokens,
        seconds,
        tool_calls: summary["tool_calls"]
            .as_array()
            .map_or(tool_calls, Vec::len),
        tool_calls_run: Some(tool_calls_run),
        steps: summary["steps"].as_u64().unwrap_or(executions.len() as u64),
        exit_code,
        stop_reason: summary["stop_reason"]
            .as_str()
            .unwrap_or(if exit_code.is_none() {
                "timeout"
            } else {
                "none"
            })
            .to_owned(),
        answer,
        answered_by,
        error: if exit_code == Some(0) {
            String::new()
        } else {
            last_lines(&errors, 3)
        },
    })
}

/// Whether a recorded tool execution's tool ran: it succeeded, or failed while running
/// (failed, timed out, panicked), not refused before it ran.
fn tool_ran(execution: &Value) -> bool {
    let outcome = &execution["outcome"];
    outcome["status"] == "success"
        || matches!(
            outcome["kind"].as_str(),
            Some("failed" | "timed_out" | "panicked")
        )
}

fn read_state(path: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

/// The persisted conversation: the `messages` section of a state document.
fn persisted_messages(document: &Value) -> Vec<Value> {
    document["message_store"]["sections"]
        .as_array()
        .and_then(|sections| sections.iter().find(|s| s["name"] == "messages"))
        .and_then(|section| section["messages"].as_array())
        .cloned()
        .unwrap_or_default()
}

/// The text of a saved message's content (a string, or a list of parts with `text`).
fn text_of(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// Runs `command`, killing it (by PID) after `limit`; `None` when it was killed.
fn run_with_limit(mut command: Command, limit: Duration) -> Result<Option<i32>, String> {
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start the agents CLI: {e}"))?;
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            return Ok(Some(status.code().unwrap_or(-1)));
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Today's date in UTC (`YYYY-MM-DD`), from `date`.
fn utc_date() -> String {
    Command::new("date")
        .args(["-u", "+%Y-%m-%d"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

fn git_describe(root: &Path) -> String {
    Command::new("git")
        .args(["describe", "--always", "--dirty"])
        .current_dir(root)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

/// The CPU model and core count, from /proc (what a reader needs to compare timings).
fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, name)| name.trim().to_owned())
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{model}, {cores} cores")
}

fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        format!("{}...", flat.chars().take(max).collect::<String>())
    }
}

fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

#[cfg(test)]
mod tests {
    use super::check::Check;
    use super::*;

    #[test]
    fn the_project_is_the_size_the_benchmark_promises() {
        let files = project::files();
        assert!(files.len() >= 12, "{} files", files.len());
        let get = |path: &str| {
            files
                .iter()
                .find(|(p, _)| p == path)
                .map(|(_, text)| text.clone())
                .unwrap_or_default()
        };
        let csv = get("data/orders.csv");
        assert_eq!(csv.lines().count(), 241, "a header and 240 rows");
        let log = get("logs/server.log");
        assert_eq!(log.lines().count(), 600);
        assert_eq!(project::files(), files, "generated the same way every time");
    }

    #[test]
    fn the_turns_agree_with_the_project() {
        let files = project::files();
        let get = |path: &str| {
            files
                .iter()
                .find(|(p, _)| p == path)
                .map(|(_, text)| text.clone())
                .unwrap_or_default()
        };
        let log = get("logs/server.log");
        let csv = get("data/orders.csv");
        // Turn 2 and 16: ERROR lines; turn 15 and 28: the first one.
        assert_eq!(log.lines().filter(|l| l.contains("ERROR")).count(), 34);
        let first = log
            .lines()
            .find(|l| l.contains("ERROR"))
            .unwrap_or_default();
        assert!(first.contains("payment gateway timeout") && first.contains("order 1007"));
        // Turn 21: refunded orders; turns 4, 10, 22, 27: the rows asked about.
        assert_eq!(csv.lines().filter(|l| l.ends_with(",refunded")).count(), 15);
        assert!(
            csv.contains("\n1042,2026-10-")
                && csv.contains(",Halvorsen Marine,pallet jack,3,1249.00,")
        );
        assert!(csv.contains(",Brightwater Clinic,label printer,"));
        assert_eq!(csv.matches("1042,").count(), 1, "search finds one row");
        assert_eq!(csv.matches("1107,").count(), 1, "search finds one row");
        assert!(get("config.ini").contains("port = 8472"));
        assert!(get("config.ini").contains("workers = 4"));
        assert!(get("docs/deploy.md").contains("port 8470"));
    }

    #[test]
    fn a_third_of_the_turns_build_on_earlier_ones_and_every_one_is_checked() {
        assert!(TURNS.len() >= 30);
        let recall = TURNS.iter().filter(|t| t.is_recall()).count();
        assert!(recall * 3 >= TURNS.len() - 2, "{recall} recall turns");
        for (i, turn) in TURNS.iter().enumerate() {
            assert!(
                turn.depends_on.iter().all(|&d| d >= 1 && d <= i),
                "turn {} depends on a later turn",
                i + 1
            );
        }
    }

    #[test]
    fn checks_are_generous_about_phrasing_and_strict_about_facts() {
        let here = Path::new(".");
        let count = Check::Number {
            expected: 34,
            word: "thirty-four",
            allowed: &[],
        };
        assert!(count.passes(Some("There are **34** ERROR lines."), here));
        assert!(count.passes(Some("Thirty-four lines."), here));
        assert!(!count.passes(Some("10 lines contain ERROR."), here));
        assert!(!count.passes(Some("34 or 35"), here));
        let port = TURNS[25].check;
        assert!(port.passes(
            Some("It forwards to port 8470; config.ini says 8472, so they differ."),
            here
        ));
        assert!(!port.passes(Some("It forwards to port 8472."), here));
        let host = TURNS[4].check;
        assert!(host.passes(Some("The host is `build.internal`."), here));
        assert!(!host.passes(Some("The host is localhost."), here));
        assert!(!host.passes(Some("db.build.internal"), here));
    }

    #[test]
    fn the_scripted_answers_pass_their_checks() {
        let here = Path::new(".");
        for (i, turn) in TURNS.iter().enumerate() {
            let Some(turns::Reply::Answer(answer)) = turn.script.last() else {
                panic!("turn {} ends without an answer", i + 1);
            };
            if !turn.check.is_file_check() {
                assert!(
                    turn.check.passes(Some(answer), here),
                    "turn {}: {answer}",
                    i + 1
                );
                assert!(
                    !turn.check.passes(Some("I don't know."), here),
                    "turn {}",
                    i + 1
                );
            }
        }
    }

    #[test]
    fn a_turn_about_a_change_passes_only_when_the_change_was_made() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        project::write(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let (change, recall) = (&TURNS[11], &TURNS[12]);
        assert!(change.check.is_file_check() && recall.depends_on == [12]);
        // The reply only claimed the edit: the right-sounding answer does not pass.
        assert!(recall.check.passes(Some("6 workers."), dir.path()));
        assert!(!recall.changes_it_builds_on_hold(TURNS, dir.path()));
        let config = dir.path().join("config.ini");
        let text = std::fs::read_to_string(&config).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(&config, text.replace("workers = 4", "workers = 6"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(recall.changes_it_builds_on_hold(TURNS, dir.path()));
        // Turns that build on answers, not changes, do not look at the files.
        assert!(TURNS[5].changes_it_builds_on_hold(TURNS, Path::new("/nonexistent")));
    }

    #[test]
    fn forged_evidence_is_recognised_and_answers_are_not() {
        assert!(is_forged_evidence(
            "(Notes on the tool calls behind the next answer, kept for later turns.)\n\
             - search_files(...) -> 1 [ERROR] 2 This is an error message"
        ));
        assert!(is_forged_evidence(
            "- read_file({\"path\":\"config.ini\"}) -> port = 80"
        ));
        assert!(is_forged_evidence(
            "<tool_response>\n8472\n</tool_response>"
        ));
        // Issue 32, separated mode at 0643d3d's run: a claim with a made-up JSON result.
        assert!(is_forged_evidence(
            "I called the `read_file` function with the path `notes.md`. The result was a \
             JSON object with the following structure:\n\n```json\n{\"name\": \"read_file\", \
             \"result\": {\"lines\": [\"2023-04-23\"]}}\n```"
        ));
        assert!(is_forged_evidence("{\"output\": \"port = 8472\"}"));
        assert!(!is_forged_evidence("The port is 8472."));
        assert!(!is_forged_evidence("fn read(path: &str) -> String"));
        // A result spoken of in words, or a field named otherwise, is no forgery.
        assert!(!is_forged_evidence(
            "The result was 8472, the output of the search."
        ));
        assert!(!is_forged_evidence("The file sets {\"port\": 8472}."));
    }

    #[test]
    fn a_call_refused_before_it_ran_is_not_a_tool_used() {
        let execution = |outcome: Value| serde_json::json!({ "outcome": outcome });
        assert!(tool_ran(&execution(
            serde_json::json!({"status": "success", "content": "8472"})
        )));
        for kind in ["failed", "timed_out", "panicked"] {
            assert!(tool_ran(&execution(
                serde_json::json!({"status": "failure", "kind": kind, "message": "x"})
            )));
        }
        for kind in ["blocked", "repeated", "unknown_tool", "invalid_arguments"] {
            assert!(!tool_ran(&execution(
                serde_json::json!({"status": "failure", "kind": kind, "message": "x"})
            )));
        }
    }

    #[test]
    fn options_are_checked() {
        let parse = |args: &[&str]| {
            Options::parse(&args.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())
        };
        let options = parse(&[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(options.modes, MODES);
        assert_eq!(options.models.len(), 1);
        assert_eq!(options.turns, TURNS.len());
        assert!(parse(&["--modes", "legacy,bogus"]).is_err());
        assert!(parse(&["--turns", "0"]).is_err());
        assert!(parse(&["--turns", "3", "--write-docs"]).is_err());
        let smoke =
            parse(&["--turns", "3", "--modes", "separated"]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((smoke.turns, smoke.modes.len()), (3, 1));
    }
}
