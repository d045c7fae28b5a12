//! One task under one configuration: a fresh workspace, one `agents run` per turn with the
//! conversation carried in a `--state` file (as a user would), then the checks and the
//! detectors over what was saved.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::eval::detectors::{
    call_key, calls_in_text, copies_tool_error, judged_answer, plan_or_announcement,
    repeated_after_result, NotAnAnswer, StepCalls,
};
use crate::eval::tasks::{Half, Task};
use crate::local_llm::ModelSpec;

/// One configuration: which model, trace mode and driver.
#[derive(Clone)]
pub struct Config {
    pub model: &'static ModelSpec,
    pub mode: String,
    pub driver: String,
}

impl Config {
    pub fn label(&self) -> String {
        format!("{} {} {}", self.model.key, self.mode, self.driver)
    }
}

/// How a run talks to the model server and how long it may take.
pub struct RunSettings<'a> {
    pub agents: &'a Path,
    pub port: u16,
    pub max_steps: u32,
    pub timeout: Duration,
    /// More arguments for every `agents run` (`--agents-arg`).
    pub extra_args: &'a [String],
}

/// What one task run under one configuration produced.
pub struct RunResult {
    pub task: String,
    pub half: Half,
    pub solved: bool,
    /// The last saved assistant answer, if the conversation ends with one.
    pub answer: Option<String>,
    /// The answer is a plan or the announcement of a call (and why), not an answer.
    pub not_an_answer: Option<NotAnAnswer>,
    /// The answer copies a tool error.
    pub copied_error: bool,
    /// Calls made again after their result came back (summed over the turns).
    pub repeated_after_result: usize,
    /// How an answer appended on a stop was made (`synthesize`, `notice`), if it was.
    pub answered_by: Option<String>,
    /// Replies with neither text nor tool calls.
    pub empty_replies: usize,
    /// The highest number of times one call (tool and arguments) was made in one execution.
    pub max_same_call: usize,
    pub status: String,
    pub stop_reason: String,
    /// Exit codes of the CLI invocations (`None`: killed at the time limit).
    pub exit_codes: Vec<Option<i32>>,
    pub steps: usize,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub seconds: f64,
    pub stderr_tail: String,
}

impl RunResult {
    pub fn failed(&self) -> bool {
        self.status != "completed" || self.exit_codes.iter().any(|c| *c != Some(0))
    }

    pub fn to_json(&self) -> Value {
        json!({
            "task": self.task,
            "half": self.half.name(),
            "solved": self.solved,
            "answer": self.answer,
            "plan_or_announcement": self.not_an_answer.map(NotAnAnswer::as_str),
            "copied_tool_error": self.copied_error,
            "repeated_after_result": self.repeated_after_result,
            "answered_by": self.answered_by,
            "empty_replies": self.empty_replies,
            "max_same_call": self.max_same_call,
            "status": self.status,
            "stop_reason": self.stop_reason,
            "exit_codes": self.exit_codes,
            "steps": self.steps,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "seconds": (self.seconds * 10.0).round() / 10.0,
            "stderr_tail": self.stderr_tail,
        })
    }
}

/// Runs `task` under `config` in `scratch/<config>-<task>/workspace`.
pub fn run_task(
    task: &Task,
    config: &Config,
    settings: &RunSettings<'_>,
    scratch: &Path,
) -> Result<RunResult, String> {
    let dir = scratch.join(format!(
        "{}-{}-{}-{}",
        config.model.key, config.mode, config.driver, task.id
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let workspace = dir.join("workspace");
    std::fs::create_dir_all(&workspace).map_err(|e| e.to_string())?;
    task.create_files(&workspace)?;
    // Outside the workspace, so that listing the workspace does not show it.
    let state_file = dir.join("state.json");
    let started = Instant::now();
    let mut exit_codes = Vec::new();
    let mut stderr_tail = String::new();
    let mut documents = Vec::new();
    for (turn, prompt) in task.turns.iter().enumerate() {
        let out = dir.join(format!("turn{}.out", turn + 1));
        let err = dir.join(format!("turn{}.err", turn + 1));
        let mut command = Command::new(settings.agents);
        command
            .args(["run", "--prompt", prompt, "--root"])
            .arg(&workspace)
            .args(["--trace", &config.mode, "--driver", &config.driver])
            .args(["--max-steps", &settings.max_steps.to_string()])
            .args(settings.extra_args)
            .arg("--state")
            .arg(&state_file)
            .current_dir(&workspace)
            .env(
                "OPENAI_BASE_URL",
                format!("http://127.0.0.1:{}/v1", settings.port),
            )
            .env("OPENAI_MODEL", config.model.alias)
            .env("OPENAI_API_KEY", "")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).map_err(|e| e.to_string())?)
            .stderr(std::fs::File::create(&err).map_err(|e| e.to_string())?);
        let code = run_with_limit(command, settings.timeout)?;
        exit_codes.push(code);
        let errors = std::fs::read_to_string(&err).unwrap_or_default();
        stderr_tail = last_lines(&errors, 3);
        // A run that left no state, or one that is not JSON, saved no answer (and the
        // evaluation goes on: one broken run must not lose hours of others).
        let document = std::fs::read_to_string(&state_file)
            .ok()
            .map(|text| serde_json::from_str::<Value>(&text));
        match document {
            Some(Ok(document)) => documents.push(document),
            Some(Err(error)) => {
                stderr_tail = format!("{}: not a state document: {error}", state_file.display());
                documents.push(Value::Null);
            }
            None => documents.push(Value::Null),
        }
        if code.is_none() {
            break;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let last = documents.last().cloned().unwrap_or(Value::Null);
    // A turn that saved nothing (or timed out) leaves the previous turn's document behind.
    let saved_last_turn = documents.len() == task.turns.len()
        && exit_codes.last().is_some_and(Option::is_some)
        && !last.is_null()
        && (documents.len() < 2 || documents[documents.len() - 2] != last);
    let answer = if saved_last_turn {
        final_answer(&last)
    } else {
        None
    };
    let answered_by = if answer.is_some() {
        answered_on_stop(&last)
    } else {
        None
    };
    let solved = task
        .checks
        .iter()
        .all(|check| check.passes(answer.as_deref(), answered_by.as_deref(), &workspace));
    let turns = turn_stats(&documents);
    let judged = judged_answer(answer.as_deref(), answered_by.as_deref());
    let not_an_answer = judged.and_then(plan_or_announcement);
    let copied_error = judged.is_some_and(|a| copies_tool_error(a, &turns.tool_errors));
    Ok(RunResult {
        task: task.id.clone(),
        half: task.half,
        solved,
        not_an_answer,
        copied_error,
        repeated_after_result: turns.repeated_after_result,
        answer,
        answered_by,
        empty_replies: turns.empty_replies,
        max_same_call: turns.max_same_call,
        status: last["status"].as_str().unwrap_or("none").to_owned(),
        stop_reason: stop_reason(&last),
        exit_codes,
        steps: turns.steps,
        input_tokens: turns.input_tokens,
        output_tokens: turns.output_tokens,
        seconds,
        stderr_tail,
    })
}

/// What the saved step executions of all turns say.
#[derive(Default)]
struct TurnStats {
    steps: usize,
    input_tokens: u64,
    output_tokens: u64,
    empty_replies: usize,
    max_same_call: usize,
    repeated_after_result: usize,
    /// The text of every failed tool result.
    tool_errors: Vec<String>,
}

/// Reads the documents saved after each turn; each holds every earlier turn's steps too, so
/// each turn (one execution) is the slice its document added.
fn turn_stats(documents: &[Value]) -> TurnStats {
    let mut stats = TurnStats::default();
    let mut previous_steps = 0;
    for document in documents.iter().filter(|d| !d.is_null()) {
        let executions = document["step_executions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let new = executions.get(previous_steps..).unwrap_or_default();
        previous_steps = executions.len();
        let mut calls: BTreeMap<String, usize> = BTreeMap::new();
        let mut steps = Vec::new();
        for execution in new {
            stats.steps += 1;
            let step = &execution["step"];
            let response = &step["inference_response"];
            let usage = &response["usage"];
            stats.input_tokens += usage["input_tokens"].as_u64().unwrap_or(0);
            stats.output_tokens += usage["output_tokens"].as_u64().unwrap_or(0);
            let text = response["content"].as_str().unwrap_or("");
            let native = response["tool_calls"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if !response.is_null() && text.trim().is_empty() && native.is_empty() {
                stats.empty_replies += 1;
            }
            for call in &native {
                *calls
                    .entry(call_key(
                        call["name"].as_str().unwrap_or(""),
                        &call["arguments"],
                    ))
                    .or_default() += 1;
            }
            let mut step_calls = StepCalls::default();
            step_calls.requested.extend(
                native
                    .iter()
                    .map(|c| call_key(c["name"].as_str().unwrap_or(""), &c["arguments"])),
            );
            step_calls.requested.extend(
                calls_in_text(text)
                    .iter()
                    .map(|(name, arguments)| call_key(name, arguments)),
            );
            for tool in step["tool_executions"].as_array().into_iter().flatten() {
                let call = &tool["call"];
                let key = call_key(call["name"].as_str().unwrap_or(""), &call["arguments"]);
                step_calls.requested.push(key.clone());
                step_calls.answered.push(key);
                let outcome = &tool["outcome"];
                if outcome["status"] == "failure" {
                    if let Some(message) = outcome["message"].as_str() {
                        stats.tool_errors.push(message.to_owned());
                    }
                }
            }
            steps.push(step_calls);
        }
        stats.repeated_after_result += repeated_after_result(&steps);
        stats.max_same_call = stats
            .max_same_call
            .max(calls.values().copied().max().unwrap_or(0));
    }
    stats
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

/// The persisted conversation's final answer: the last message of the `messages` section when
/// it is an assistant message with text and no tool calls.
fn final_answer(document: &Value) -> Option<String> {
    let last = last_message(document)?;
    let has_calls = last["tool_calls"].as_array().is_some_and(|c| !c.is_empty());
    let text = text_of(&last["content"]);
    (last["role"] == "assistant" && !has_calls && !text.trim().is_empty()).then_some(text)
}

/// How the final answer was made when the execution stopped without one: `synthesize` or
/// `notice` (the message's `answered_by` metadata), `None` for a model's own answer.
fn answered_on_stop(document: &Value) -> Option<String> {
    let last = last_message(document)?;
    // Message metadata is stored under `_metadata`.
    last["_metadata"]["answered_by"].as_str().map(str::to_owned)
}

fn last_message(document: &Value) -> Option<&Value> {
    let sections = document["message_store"]["sections"].as_array()?;
    let messages = sections.iter().find(|s| s["name"] == "messages")?["messages"].as_array()?;
    messages.last()
}

/// The document's stop reason: stored for an interrupted execution, else the last step
/// execution's outcome.
fn stop_reason(document: &Value) -> String {
    document["stop_reason"]
        .as_str()
        .or_else(|| {
            document["step_executions"]
                .as_array()
                .and_then(|e| e.last())
                .and_then(|e| e["outcome"]["stop_reason"].as_str())
        })
        .unwrap_or("none")
        .to_owned()
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

fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notice_is_read_as_an_answer_on_stop() {
        let document = json!({"message_store": {"sections": [{"name": "messages", "messages": [
            {"role": "assistant", "content": "I could not finish.", "_metadata": {"answered_by": "notice"}}
        ]}]}});
        assert_eq!(answered_on_stop(&document).as_deref(), Some("notice"));
        assert_eq!(
            final_answer(&document).as_deref(),
            Some("I could not finish.")
        );
    }

    #[test]
    fn turn_stats_count_repeats_per_execution_and_collect_tool_errors() {
        let read = json!({"name": "read_file", "arguments": {"path": "a"}});
        let step = |content: &str, native: Value, executed: Value| {
            json!({"step": {
                "inference_response": {"content": content, "tool_calls": native,
                    "usage": {"input_tokens": 10, "output_tokens": 2}},
                "tool_executions": executed,
            }})
        };
        let ok = json!([{"call": read, "outcome": {"status": "success", "content": "x"}}]);
        let failed = json!([{"call": {"name": "rename_file", "arguments": {}},
            "outcome": {"status": "failure", "kind": "not_found", "message": "There is no tool named `rename_file`."}}]);
        let first_turn = json!({"step_executions": [
            step("", json!([read]), ok.clone()),
            step("Again:\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n```", json!([]), ok),
            step("{\"name\": \"rename_file\", \"arguments\": {}}", json!([]), failed),
            step("The answer.", json!([]), json!([])),
        ]});
        // The second turn is a new execution: the same call once more is not a repeat.
        let mut second_turn = first_turn.clone();
        let more = second_turn["step_executions"].as_array_mut().unwrap();
        more.push(step(
            "",
            json!([read]),
            json!([{"call": read, "outcome": {"status": "success", "content": "x"}}]),
        ));
        let stats = turn_stats(&[first_turn, second_turn]);
        assert_eq!(stats.steps, 5);
        assert_eq!(stats.repeated_after_result, 1);
        assert_eq!(stats.input_tokens, 50);
        assert_eq!(stats.tool_errors, ["There is no tool named `rename_file`."]);
        assert_eq!(stats.empty_replies, 0);
    }

    /// A real state saved by `agents run` (this build, separated mode) against a scripted
    /// server that replayed issue 36's run: a fenced call in prose, the same call again after
    /// its result, a call to a tool that does not exist, then the fix-it error as the answer.
    #[test]
    fn a_saved_state_of_issue_36s_run_is_read_as_such() {
        let path = crate::eval::tasks::eval_dir().join("testdata/copied_error.state.json");
        let document: Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let stats = turn_stats(std::slice::from_ref(&document));
        assert_eq!(stats.steps, 4);
        assert_eq!(stats.repeated_after_result, 1, "the second read_file");
        assert_eq!(stats.input_tokens, 200);
        assert_eq!(stats.tool_errors.len(), 1);
        assert!(stats.tool_errors[0].starts_with("There is no tool named `rename_file`"));
        let answer = final_answer(&document).unwrap();
        assert!(copies_tool_error(&answer, &stats.tool_errors));
        assert_eq!(answered_on_stop(&document), None);
        assert_eq!(stop_reason(&document), "completed");
        assert_eq!(document["status"], "completed", "nothing failed loudly");
    }
}
