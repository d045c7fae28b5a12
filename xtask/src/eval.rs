//! `cargo xtask eval`: task success of the `agents` CLI against real small local models.
//!
//! Serves each model with llama-server on 127.0.0.1 (one at a time; temperature 0, a fixed
//! seed, a capped reply length), then runs every task (`xtask/eval/dev/*.yaml`, the
//! development half, and `xtask/eval/heldout/*.yaml`, the held-out half) through `agents run`
//! in a fresh temporary workspace for each configuration (model × trace mode × driver) and
//! build, checks the answer and the files by machine, and reports solved tasks per half,
//! answers that are plans or copied tool errors, calls repeated after their result, tokens
//! and time. Writes `target/<out>.md` and `target/<out>.json`. Too slow for CI; see
//! `docs/eval.md` for how it works and the measured tables.
//!
//! ```text
//! cargo xtask eval [--configs 1.5b/separated/toolcalling,...] [--half dev|heldout|both]
//!                  [--models 0.5b,1.5b --modes separated,... --drivers toolcalling,react]
//!                  [--tasks d1,h2,...] [--before PATH] [--agents PATH] [--timeout SECONDS]
//!                  [--max-steps N] [--label TEXT] [--out NAME] [--agents-arg ARG]...
//! ```

mod checks;
mod detectors;
mod report;
mod runs;
#[cfg(test)]
mod solutions;
mod tasks;

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::eval::report::{Header, Row};
use crate::eval::runs::{run_task, Config, RunSettings};
use crate::eval::tasks::{eval_dir, heldout_digest, load_tasks, Half, Task};
use crate::local_llm::{
    cache_dir, ensure_llama_server, ensure_model, llama_server_args, ModelSpec, Servers, QWEN_05B,
    QWEN_15B,
};
use crate::run::{cargo, repo_root, Step};

/// Not the e2e port: an eval and an e2e run may share the machine.
const PORT: u16 = 18190;
const SEED: &str = "42";
/// Reply cap per inference (llama-server's default `n_predict` for requests that set none).
const MAX_REPLY_TOKENS: &str = "512";

/// The configurations issue 36 requires (time on two cores is the limit): the 1.5B model with
/// both drivers and the 0.5B model with tool calling, all in separated mode.
const REQUIRED: &[(&str, &str, &str)] = &[
    ("1.5b", "separated", "toolcalling"),
    ("1.5b", "separated", "react"),
    ("0.5b", "separated", "toolcalling"),
];

const MODES: &[&str] = &["separated", "legacy", "digest"];
const DRIVERS: &[&str] = &["toolcalling", "react"];

/// The file that records the held-out half's digest (see [`heldout_digest`]).
const HELDOUT_DIGEST_FILE: &str = "heldout.sha256";

/// What the command line asked for.
struct Options {
    configs: Vec<Config>,
    halves: Vec<Half>,
    /// Task ids (`d1`, `h2`); empty: every task of the chosen halves.
    tasks: Vec<String>,
    timeout: Option<Duration>,
    max_steps: u32,
    label: String,
    /// An `agents` binary to evaluate instead of building this checkout's.
    agents: Option<PathBuf>,
    /// An older `agents` binary to evaluate first, as "before", in the same run.
    before: Option<PathBuf>,
    /// The report's file name under `target/`, without extension (default `eval-report`).
    out: String,
    /// More arguments for every `agents run`, one per `--agents-arg` (`--agents-arg
    /// --show-recovered-calls --agents-arg as-written`), to compare one build's options.
    agents_args: Vec<String>,
    /// Keep every run's folder (workspace, state file, CLI output) under this folder, to read
    /// afterwards; without it they go to a temporary folder deleted at the end.
    keep: Option<PathBuf>,
}

fn model(key: &str) -> Result<&'static ModelSpec, String> {
    match key {
        "0.5b" => Ok(&QWEN_05B),
        "1.5b" => Ok(&QWEN_15B),
        other => Err(format!("unknown model `{other}` (known: 0.5b, 1.5b)")),
    }
}

fn known<'a>(value: &'a str, known: &[&str], what: &str) -> Result<&'a str, String> {
    if known.contains(&value) {
        Ok(value)
    } else {
        Err(format!(
            "unknown {what} `{value}` (known: {})",
            known.join(", ")
        ))
    }
}

fn config(model_key: &str, mode: &str, driver: &str) -> Result<Config, String> {
    Ok(Config {
        model: model(model_key)?,
        mode: known(mode, MODES, "mode")?.to_owned(),
        driver: known(driver, DRIVERS, "driver")?.to_owned(),
    })
}

impl Options {
    fn parse(args: &[String]) -> Result<Self, String> {
        let mut options = Self {
            configs: Vec::new(),
            halves: Half::ALL.to_vec(),
            tasks: Vec::new(),
            timeout: None,
            max_steps: 8,
            label: String::new(),
            agents: None,
            before: None,
            out: "eval-report".into(),
            agents_args: Vec::new(),
            keep: None,
        };
        let mut configs: Option<Vec<Config>> = None;
        let (mut models, mut modes, mut drivers) = (None, None, None);
        let mut args = args.iter();
        while let Some(flag) = args.next() {
            let value = args
                .next()
                .ok_or_else(|| format!("{flag} needs a value; see `cargo xtask help`"))?;
            let list = || -> Vec<String> {
                value
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect()
            };
            match flag.as_str() {
                "--configs" => {
                    let mut parsed = Vec::new();
                    for entry in list() {
                        if entry == "required" {
                            for (m, mode, driver) in REQUIRED {
                                parsed.push(config(m, mode, driver)?);
                            }
                            continue;
                        }
                        let parts: Vec<&str> = entry.split('/').collect();
                        let [m, mode, driver] = parts[..] else {
                            return Err(format!(
                                "a configuration is model/mode/driver (1.5b/separated/react), \
                                 not `{entry}`"
                            ));
                        };
                        parsed.push(config(m, mode, driver)?);
                    }
                    configs = Some(parsed);
                }
                "--models" => models = Some(list()),
                "--modes" => modes = Some(list()),
                "--drivers" => drivers = Some(list()),
                "--half" => {
                    options.halves = match value.as_str() {
                        "dev" => vec![Half::Dev],
                        "heldout" => vec![Half::Heldout],
                        "both" => Half::ALL.to_vec(),
                        other => {
                            return Err(format!("--half is dev, heldout or both, not `{other}`"))
                        }
                    }
                }
                "--tasks" => options.tasks = list(),
                "--timeout" => {
                    let seconds: u64 = value
                        .parse()
                        .map_err(|_| format!("--timeout takes seconds, not `{value}`"))?;
                    options.timeout = Some(Duration::from_secs(seconds));
                }
                "--max-steps" => {
                    options.max_steps = value
                        .parse()
                        .map_err(|_| format!("--max-steps takes a number, not `{value}`"))?;
                }
                "--label" => options.label = value.clone(),
                "--agents" => options.agents = Some(value.into()),
                "--before" => options.before = Some(value.into()),
                "--out" => options.out = value.clone(),
                "--agents-arg" => options.agents_args.push(value.clone()),
                "--keep" => options.keep = Some(value.into()),
                other => return Err(format!("unknown option `{other}`; see `cargo xtask help`")),
            }
        }
        let crossed = models.is_some() || modes.is_some() || drivers.is_some();
        options.configs = match (configs, crossed) {
            (Some(_), true) => {
                return Err(
                    "give --configs, or --models/--modes/--drivers (crossed), not both".into(),
                )
            }
            (Some(configs), false) => configs,
            (None, true) => {
                let models = models.unwrap_or_else(|| vec!["0.5b".into(), "1.5b".into()]);
                let modes = modes.unwrap_or_else(|| vec!["separated".into()]);
                let drivers = drivers.unwrap_or_else(|| vec!["toolcalling".into(), "react".into()]);
                let mut crossed = Vec::new();
                for m in &models {
                    for mode in &modes {
                        for driver in &drivers {
                            crossed.push(config(m, mode, driver)?);
                        }
                    }
                }
                crossed
            }
            (None, false) => REQUIRED
                .iter()
                .map(|(m, mode, driver)| config(m, mode, driver))
                .collect::<Result<_, _>>()?,
        };
        if options.configs.is_empty() {
            return Err("nothing to run: no configuration".into());
        }
        Ok(options)
    }

    /// The per-run limit: the 1.5B model is about 3x slower per token.
    fn timeout_for(&self, model: &ModelSpec) -> Duration {
        self.timeout.unwrap_or(if model.key == "1.5b" {
            Duration::from_secs(360)
        } else {
            Duration::from_secs(180)
        })
    }

    /// The tasks to run, in order; an unknown id is an error.
    fn select<'a>(&self, tasks: &'a [Task]) -> Result<Vec<&'a Task>, String> {
        if let Some(unknown) = self
            .tasks
            .iter()
            .find(|id| !tasks.iter().any(|t| &t.id == *id))
        {
            return Err(format!(
                "unknown task `{unknown}` (ids are d1.. for the dev half, h1.. for the held-out half)"
            ));
        }
        let chosen: Vec<&Task> = tasks
            .iter()
            .filter(|t| self.halves.contains(&t.half))
            .filter(|t| self.tasks.is_empty() || self.tasks.contains(&t.id))
            .collect();
        if chosen.is_empty() {
            return Err("nothing to run: no task of the chosen half matches --tasks".into());
        }
        Ok(chosen)
    }
}

/// Fails when the held-out half differs from the one recorded in `heldout.sha256`.
fn verify_heldout(dir: &Path) -> Result<String, String> {
    let digest = heldout_digest(dir)?;
    let file = dir.join(HELDOUT_DIGEST_FILE);
    let recorded = std::fs::read_to_string(&file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let recorded = recorded.split_whitespace().next().unwrap_or_default();
    if recorded != digest {
        return Err(format!(
            "the held-out half (xtask/eval/heldout/) was edited: its sha256 is {digest}, the \
             recorded one ({}) is {recorded}. The held-out tasks are never edited; add tasks to \
             the dev half instead, or restore the held-out files from git",
            file.display()
        ));
    }
    Ok(digest)
}

// ----- the whole evaluation -----------------------------------------------------------------

pub fn run(args: &[String]) -> Result<(), String> {
    let options = Options::parse(args)?;
    let dir = eval_dir();
    let digest = verify_heldout(&dir)?;
    let all_tasks = load_tasks(&dir)?;
    let tasks = options.select(&all_tasks)?;
    let root = repo_root()?;
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
    // Copies, so that builds during the (long) evaluation do not swap a binary under it.
    let bin_dir = target.join("eval");
    std::fs::create_dir_all(&bin_dir).map_err(|e| e.to_string())?;
    let mut builds: Vec<(String, PathBuf)> = Vec::new();
    if let Some(before) = &options.before {
        builds.push((format!("before ({})", before.display()), before.clone()));
    }
    let this_build = match &options.agents {
        Some(path) => format!("binary {}", path.display()),
        None => git_describe(&root),
    };
    builds.push((this_build, built));
    let mut copies = Vec::new();
    for (n, (label, path)) in builds.iter().enumerate() {
        let copy = bin_dir.join(format!("agents-{}-{n}", std::process::id()));
        std::fs::copy(path, &copy)
            .map_err(|e| format!("cannot copy the agents CLI {}: {e}", path.display()))?;
        copies.push((label.clone(), copy));
    }

    let cache = cache_dir()?;
    std::fs::create_dir_all(&cache)
        .map_err(|e| format!("cannot create {}: {e}", cache.display()))?;
    let llama = ensure_llama_server(&cache)?;
    let logs = cache.join("logs");
    std::fs::create_dir_all(&logs).map_err(|e| e.to_string())?;
    let scratch = match &options.keep {
        Some(dir) => dir.clone(),
        None => std::env::temp_dir().join(format!("agents-eval-{}", std::process::id())),
    };

    let started = Instant::now();
    let mut rows: Vec<(String, Row)> = Vec::new();
    // One server per model, every configuration and build of that model against it.
    let mut models: Vec<&'static ModelSpec> = Vec::new();
    for config in &options.configs {
        if !models.iter().any(|m| m.key == config.model.key) {
            models.push(config.model);
        }
    }
    for model in models {
        let file = ensure_model(&cache, model)?;
        if TcpStream::connect(("127.0.0.1", PORT)).is_ok() {
            return Err(format!(
                "127.0.0.1:{PORT} is already in use (an eval left running?); stop it first"
            ));
        }
        let mut servers = Servers::default();
        let extra = ["--temp", "0", "--seed", SEED, "-n", MAX_REPLY_TOKENS];
        servers.start(
            "llama-server-eval",
            &llama,
            &llama_server_args(&file, model.alias, PORT, &extra),
            &logs,
        )?;
        servers.wait_healthy(
            "llama-server-eval",
            PORT,
            "/health",
            Duration::from_secs(240),
            &logs,
        )?;
        for (build, agents) in &copies {
            let settings = RunSettings {
                agents,
                port: PORT,
                max_steps: options.max_steps,
                timeout: options.timeout_for(model),
                extra_args: &options.agents_args,
            };
            for config in options.configs.iter().filter(|c| c.model.key == model.key) {
                let mut results = Vec::new();
                for task in &tasks {
                    let result = run_task(task, config, &settings, &scratch)?;
                    eprintln!(
                        "eval {} task {:>3} {:<40} {}{} ({}, {:.0}s){}",
                        config.label(),
                        task.id,
                        task.name,
                        if result.solved { "solved" } else { "FAILED" },
                        result
                            .not_an_answer
                            .map(|r| format!(" [{}]", r.as_str()))
                            .unwrap_or_default(),
                        result.stop_reason,
                        result.seconds,
                        result
                            .answer
                            .as_deref()
                            .map(|a| format!(": {}", one_line(a, 70)))
                            .unwrap_or_else(|| " (no answer)".into())
                    );
                    results.push(result);
                }
                rows.push((
                    build.clone(),
                    Row {
                        config: config.clone(),
                        results,
                    },
                ));
            }
        }
        drop(servers);
    }
    match &options.keep {
        Some(dir) => eprintln!("eval: every run's folder is kept under {}", dir.display()),
        None => {
            let _ = std::fs::remove_dir_all(&scratch);
        }
    }
    for (_, copy) in &copies {
        let _ = std::fs::remove_file(copy);
    }
    let minutes = started.elapsed().as_secs_f64() / 60.0;
    let settings = format!(
        "llama-server `-c 4096 -t 2 --temp 0 --seed {SEED} -n {MAX_REPLY_TOKENS}`; \
         `agents run --max-steps {}{}` with its defaults otherwise",
        options.max_steps,
        options
            .agents_args
            .iter()
            .map(|a| format!(" {a}"))
            .collect::<String>()
    );
    let mut report = String::new();
    let rows_of = |build: &str| -> Vec<&Row> {
        rows.iter()
            .filter(|(b, _)| b == build)
            .map(|(_, r)| r)
            .collect()
    };
    if let [(before, _), (after, _)] = &copies[..] {
        report.push_str(&format!(
            "# Before and after\n\nBefore: {before}; after: {after}.\n\n"
        ));
        report.push_str(&report::comparison(&rows_of(before), &rows_of(after)));
        report.push('\n');
    }
    for (build, _) in &copies {
        let header = Header {
            label: &options.label,
            commit: build,
            heldout_digest: &digest,
            settings: settings.clone(),
            minutes,
        };
        report.push_str(&report::markdown(&rows_of(build), &tasks, &header));
        report.push('\n');
    }
    let json_report = json!({
        "label": options.label,
        "heldout_sha256": digest,
        "settings": {
            "temperature": 0, "seed": SEED, "max_reply_tokens": MAX_REPLY_TOKENS,
            "max_steps": options.max_steps, "context": 4096, "threads": 2,
            "agents_args": options.agents_args,
        },
        "minutes": minutes,
        "configurations": rows.iter().map(|(build, row)| json!({
            "build": build,
            "model": row.config.model.key, "mode": row.config.mode, "driver": row.config.driver,
            "runs": row.results.iter().map(runs::RunResult::to_json).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    });
    let md_path = target.join(format!("{}.md", options.out));
    std::fs::write(&md_path, &report).map_err(|e| e.to_string())?;
    let json_text = serde_json::to_string_pretty(&json_report).map_err(|e| e.to_string())?;
    std::fs::write(target.join(format!("{}.json", options.out)), json_text)
        .map_err(|e| e.to_string())?;
    println!("{report}");
    eprintln!("eval report: {}", md_path.display());
    Ok(())
}

fn git_describe(root: &Path) -> String {
    let output = Command::new("git")
        .args(["describe", "--always", "--dirty"])
        .current_dir(root)
        .output();
    let described = output
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    format!("commit {described}")
}

fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        format!("{}...", flat.chars().take(max).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Options, String> {
        Options::parse(&args.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())
    }

    fn labels(options: &Options) -> Vec<String> {
        options.configs.iter().map(Config::label).collect()
    }

    #[test]
    fn the_default_is_the_required_set_on_both_halves() {
        let options = parse(&[]).unwrap();
        assert_eq!(
            labels(&options),
            [
                "1.5b separated toolcalling",
                "1.5b separated react",
                "0.5b separated toolcalling"
            ]
        );
        assert_eq!(options.halves, Half::ALL);
        assert!(options.agents_args.is_empty());
        let named = parse(&["--configs", "required"]).unwrap();
        assert_eq!(labels(&named), labels(&options));
    }

    #[test]
    fn configs_halves_and_tasks_are_parsed_and_checked() {
        let options = parse(&[
            "--configs",
            "0.5b/digest/react",
            "--half",
            "heldout",
            "--tasks",
            "h1,h3",
        ])
        .unwrap();
        assert_eq!(labels(&options), ["0.5b digest react"]);
        assert_eq!(options.halves, [Half::Heldout]);
        let with_args = parse(&[
            "--agents-arg",
            "--show-recovered-calls",
            "--agents-arg",
            "as-written",
        ])
        .unwrap();
        assert_eq!(
            with_args.agents_args,
            ["--show-recovered-calls", "as-written"],
            "passed on in order, values that start with -- included"
        );
        assert_eq!(
            parse(&["--keep", "/tmp/runs"]).unwrap().keep,
            Some(PathBuf::from("/tmp/runs"))
        );
        let crossed = parse(&["--models", "1.5b", "--modes", "separated,legacy"]).unwrap();
        assert_eq!(crossed.configs.len(), 4);
        for bad in [
            &["--configs", "1.5b/separated"][..],
            &["--configs", "7b/separated/react"],
            &["--configs", "1.5b/separated/react", "--models", "0.5b"],
            &["--half", "all"],
            &["--modes", "fast"],
            &["--tasks"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        let tasks = load_tasks(&eval_dir()).unwrap();
        assert!(parse(&["--tasks", "h99"]).unwrap().select(&tasks).is_err());
        let dev_only = parse(&["--half", "dev", "--tasks", "h1"]).unwrap();
        assert!(
            dev_only.select(&tasks).is_err(),
            "h1 is not in the dev half"
        );
        let chosen = parse(&["--tasks", "d1,h1"]).unwrap();
        assert_eq!(chosen.select(&tasks).unwrap().len(), 2);
    }

    #[test]
    fn the_heldout_half_is_the_recorded_one() {
        // Fails when a held-out task file is edited, added or removed.
        verify_heldout(&eval_dir()).unwrap();
    }

    #[test]
    fn an_edited_heldout_half_is_refused() {
        let copy = tempfile::tempdir().unwrap();
        let heldout = copy.path().join("heldout");
        std::fs::create_dir(&heldout).unwrap();
        for entry in std::fs::read_dir(eval_dir().join("heldout")).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, heldout.join(path.file_name().unwrap())).unwrap();
        }
        std::fs::copy(
            eval_dir().join(HELDOUT_DIGEST_FILE),
            copy.path().join(HELDOUT_DIGEST_FILE),
        )
        .unwrap();
        verify_heldout(copy.path()).unwrap();
        let file = heldout.join("h07-no-tool.yaml");
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, text.replace("spider", "ant")).unwrap();
        let error = verify_heldout(copy.path()).unwrap_err();
        assert!(error.contains("was edited"), "{error}");
    }
}
