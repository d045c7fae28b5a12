//! The long-run report: JSON (every turn of every mode) and markdown (summary tables, totals at
//! turns 10, 20 and 30, the turn-by-turn matrix, the goals of issue 32 as measured).

use std::fmt::Write as _;

use serde_json::{json, Value};

use super::turns::TURNS;
use super::{ModeRun, Options, TurnResult, CONTEXT, MAX_REPLY_TOKENS, SEED};

/// What the report says about the run besides the results.
pub struct Context<'a> {
    pub commit: String,
    pub machine: String,
    pub minutes: f64,
    pub options: &'a Options,
}

/// The checkpoints the issue asks totals at.
const CHECKPOINTS: [usize; 3] = [10, 20, 30];

/// A mode's figures over its first `upto` turns.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Totals {
    pub turns: usize,
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
    pub seconds: f64,
    pub passed: usize,
    pub recall_turns: usize,
    pub recall_passed: usize,
    pub tool_turns: usize,
    pub tool_turns_used: usize,
}

impl Totals {
    /// Over the first `upto` turns of `turns`.
    pub fn of(turns: &[TurnResult], upto: usize) -> Self {
        let mut totals = Totals::default();
        for turn in turns.iter().take(upto) {
            totals.turns += 1;
            totals.input_tokens += turn.input_tokens;
            totals.cached_tokens += turn.cached_tokens;
            totals.output_tokens += turn.output_tokens;
            totals.seconds += turn.seconds;
            totals.passed += usize::from(turn.passed);
            if turn.recall {
                totals.recall_turns += 1;
                totals.recall_passed += usize::from(turn.passed);
            }
            if turn.needs_tool {
                totals.tool_turns += 1;
                totals.tool_turns_used += usize::from(turn.used_tool());
            }
        }
        totals
    }

    /// The share of turns that needed a tool and used one (1 when none needed one).
    pub fn tool_use_share(&self) -> f64 {
        share(self.tool_turns_used, self.tool_turns)
    }
}

/// How many answers of `turns` repeat, word for word, the answer of an earlier turn that asked
/// something else (case, spacing and a closing full stop aside): the model answering from the
/// conversation's earlier answers instead of the request.
pub fn repeated_answers(turns: &[TurnResult]) -> usize {
    let answer = |turn: &TurnResult| {
        turn.answer
            .as_deref()
            .map(|text| {
                text.split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
                    .trim_end_matches('.')
                    .to_lowercase()
            })
            .filter(|text| !text.is_empty())
    };
    let prompt = |turn: &TurnResult| TURNS.get(turn.turn.wrapping_sub(1)).map(|t| t.prompt);
    turns
        .iter()
        .enumerate()
        .filter(|(i, turn)| {
            answer(turn).is_some_and(|text| {
                turns[..*i].iter().any(|earlier| {
                    answer(earlier).as_ref() == Some(&text) && prompt(earlier) != prompt(turn)
                })
            })
        })
        .count()
}

fn share(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        1.0
    } else {
        part as f64 / whole as f64
    }
}

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".to_owned()
    } else {
        format!("{:.0}%", 100.0 * part as f64 / whole as f64)
    }
}

fn turn_json(turn: &TurnResult) -> Value {
    json!({
        "turn": turn.turn,
        "recall": turn.recall,
        "needs_tool": turn.needs_tool,
        "used_tool": turn.used_tool(),
        "tool_calls": turn.tool_calls,
        "tool_calls_run": turn.tool_calls_run,
        "passed": turn.passed,
        "input_tokens": turn.input_tokens,
        "cached_input_tokens": turn.cached_tokens,
        "output_tokens": turn.output_tokens,
        "seconds": (turn.seconds * 10.0).round() / 10.0,
        "steps": turn.steps,
        "exit_code": turn.exit_code,
        "stop_reason": turn.stop_reason,
        "answer": turn.answer,
        "answered_by": turn.answered_by,
        "error": turn.error,
    })
}

fn totals_json(totals: &Totals) -> Value {
    json!({
        "turns": totals.turns,
        "input_tokens": totals.input_tokens,
        "cached_input_tokens": totals.cached_tokens,
        "output_tokens": totals.output_tokens,
        "seconds": totals.seconds.round(),
        "passed": totals.passed,
        "recall_turns": totals.recall_turns,
        "recall_passed": totals.recall_passed,
        "tool_turns": totals.tool_turns,
        "tool_turns_used": totals.tool_turns_used,
    })
}

/// Everything, for scripts and for comparing runs.
pub fn json(runs: &[ModeRun], context: &Context<'_>) -> Value {
    json!({
        "commit": context.commit,
        "machine": context.machine,
        "minutes": (context.minutes * 10.0).round() / 10.0,
        "settings": {
            "context": CONTEXT, "temperature": 0, "seed": SEED,
            "max_reply_tokens": MAX_REPLY_TOKENS, "threads": 2,
            "max_steps": context.options.max_steps,
            "masked_executions": context.options.masked_executions,
            "turns": context.options.turns,
        },
        "runs": runs.iter().map(|run| json!({
            "model": run.model,
            "mode": run.mode,
            "seconds": run.seconds.round(),
            "forged_messages": run.forged_messages,
            "persisted_messages": run.persisted_messages,
            "totals": CHECKPOINTS.iter().filter(|&&c| c <= run.turns.len())
                .map(|&c| (c.to_string(), totals_json(&Totals::of(&run.turns, c))))
                .chain(std::iter::once(("all".to_owned(), totals_json(&Totals::of(&run.turns, usize::MAX)))))
                .collect::<serde_json::Map<_, _>>(),
            "turns": run.turns.iter().map(turn_json).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// The markdown report; `images` is the folder the SVG charts are linked from (relative).
pub fn markdown(runs: &[ModeRun], context: &Context<'_>, images: &str) -> String {
    let mut out = String::new();
    let options = context.options;
    let server = match &options.server {
        Some(url) => format!("the server already running at {url} (not restarted between modes)"),
        None => format!(
            "llama-server `-c {CONTEXT} -t 2 --temp 0 --seed {SEED} -n {MAX_REPLY_TOKENS}`, a fresh \
             server per mode"
        ),
    };
    let _ = writeln!(
        out,
        "- {}; {:.0} min in all\n- {server}; `agents run --state FILE --output json` per turn",
        context.machine, context.minutes,
    );
    for run in runs {
        let masked = if run.mode == "masked" {
            format!(
                ", observation masking keeps the last {} executions",
                run.masked_executions
            )
        } else {
            String::new()
        };
        let commit = if run.commit.is_empty() {
            &context.commit
        } else {
            &run.commit
        };
        // A run recorded on another machine says which.
        let elsewhere = if run.machine.is_empty() || run.machine == context.machine {
            String::new()
        } else {
            format!(", {}", run.machine)
        };
        let _ = writeln!(
            out,
            "- {} {}: commit {commit}{}{elsewhere}, `--max-steps {}`{masked}, {:.0} min",
            run.model,
            run.mode,
            if run.date.is_empty() {
                String::new()
            } else {
                format!(" on {}", run.date)
            },
            run.max_steps,
            run.seconds / 60.0,
        );
    }
    out.push('\n');
    out.push_str(
        "| model | mode | turns passed | recall passed | tool turns that used a tool | \
         input tokens (all turns) | vs legacy | cached by the server | output tokens | \
         forged notes/results persisted | answers repeating an earlier one | wall time |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for run in runs {
        let all = Totals::of(&run.turns, usize::MAX);
        let legacy = legacy_of(runs, &run.model).map(|l| Totals::of(&l.turns, usize::MAX));
        let _ = writeln!(
            out,
            "| {} | {} | {}/{} | {}/{} | {}/{} ({:.0}%) | {} | {} | {} | {} | {} | {} | {:.0} min |",
            run.model,
            run.mode,
            all.passed,
            all.turns,
            all.recall_passed,
            all.recall_turns,
            all.tool_turns_used,
            all.tool_turns,
            100.0 * all.tool_use_share(),
            all.input_tokens,
            legacy.map_or("-".to_owned(), |l| percent(
                all.input_tokens,
                l.input_tokens
            )),
            percent(all.cached_tokens, all.input_tokens),
            all.output_tokens,
            run.forged_messages,
            repeated_answers(&run.turns),
            run.seconds / 60.0,
        );
    }
    out.push_str(
        "\nCumulative input tokens (cached share) and turns passed at turns 10, 20, 30:\n\n",
    );
    out.push_str("| model | mode |");
    for c in CHECKPOINTS {
        let _ = write!(out, " turn {c} |");
    }
    out.push_str("\n|---|---|");
    out.push_str(&"---|".repeat(CHECKPOINTS.len()));
    out.push('\n');
    for run in runs {
        let _ = write!(out, "| {} | {} |", run.model, run.mode);
        for c in CHECKPOINTS {
            if run.turns.len() < c {
                out.push_str(" - |");
                continue;
            }
            let t = Totals::of(&run.turns, c);
            let _ = write!(
                out,
                " {} ({}), {}/{} passed |",
                t.input_tokens,
                percent(t.cached_tokens, t.input_tokens),
                t.passed,
                t.turns
            );
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "\n![cumulative input tokens by turn]({images}cumulative-input-tokens.svg)\n\n\
         ![success per mode]({images}success.svg)\n"
    );
    out.push_str(&goals(runs));
    out.push_str(&matrix(runs));
    out
}

fn legacy_of<'a>(runs: &'a [ModeRun], model: &str) -> Option<&'a ModeRun> {
    runs.iter().find(|r| r.model == model && r.mode == "legacy")
}

/// Issue 32's goals at turn 30 (or the last turn of a shorter run), as measured (reported,
/// not asserted).
fn goals(runs: &[ModeRun]) -> String {
    let last = runs
        .iter()
        .map(|r| r.turns.len())
        .max()
        .unwrap_or(0)
        .min(30);
    let mut out = format!("Issue 32's goals at turn {last} (measured, not asserted):\n\n");
    for run in runs {
        let at = Totals::of(&run.turns, 30);
        let mut lines: Vec<String> = Vec::new();
        if let Some(legacy) = legacy_of(runs, &run.model).filter(|_| run.mode != "legacy") {
            let l = Totals::of(&legacy.turns, 30);
            if run.mode == "separated" || run.mode == "digest" {
                let ratio = share(at.input_tokens as usize, l.input_tokens as usize);
                lines.push(format!(
                    "input tokens {:.0}% of legacy's (goal: at most 25%) {}",
                    100.0 * ratio,
                    mark(ratio <= 0.25)
                ));
                lines.push(format!(
                    "success {} vs legacy's {} (goal: within one turn) {}",
                    at.passed,
                    l.passed,
                    mark(at.passed + 1 >= l.passed)
                ));
            }
            if run.mode == "digest" {
                lines.push(format!(
                    "recall {} vs legacy's {} (goal: at least legacy's minus one) {}",
                    at.recall_passed,
                    l.recall_passed,
                    mark(at.recall_passed + 1 >= l.recall_passed)
                ));
            }
        }
        let tool_share = at.tool_use_share();
        lines.push(format!(
            "turns that needed a tool used one: {:.0}% (goal: at least 90%) {}",
            100.0 * tool_share,
            mark(tool_share >= 0.9)
        ));
        lines.push(format!(
            "forged notes or tool results persisted: {} (goal: 0) {}",
            run.forged_messages,
            mark(run.forged_messages == 0)
        ));
        let failed_recall: Vec<String> = run
            .turns
            .iter()
            .filter(|t| t.recall && !t.passed)
            .map(|t| t.turn.to_string())
            .collect();
        if !failed_recall.is_empty() {
            lines.push(format!("recall turns failed: {}", failed_recall.join(", ")));
        }
        let _ = writeln!(out, "- {} {}: {}", run.model, run.mode, lines.join("; "));
    }
    out.push('\n');
    out
}

fn mark(ok: bool) -> &'static str {
    if ok {
        "(met)"
    } else {
        "(NOT met)"
    }
}

/// One row per turn: ✓ passed, ✗ failed, with `·` when a turn that needed a tool used none.
fn matrix(runs: &[ModeRun]) -> String {
    let mut out = String::from(
        "Per turn (✓ passed, ✗ failed; `·` a turn that needed a tool used none; R builds on an \
         earlier turn; input tokens of the turn):\n\n| turn |",
    );
    for run in runs {
        let _ = write!(out, " {} {} |", run.model, run.mode);
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(runs.len()));
    out.push('\n');
    let turns = runs.iter().map(|r| r.turns.len()).max().unwrap_or(0);
    for index in 0..turns {
        let recall = runs
            .iter()
            .find_map(|r| r.turns.get(index))
            .is_some_and(|t| t.recall);
        let _ = write!(out, "| {}{} |", index + 1, if recall { " R" } else { "" });
        for run in runs {
            match run.turns.get(index) {
                Some(t) => {
                    let _ = write!(
                        out,
                        " {}{} {} |",
                        if t.passed { "✓" } else { "✗" },
                        if t.needs_tool && !t.used_tool() {
                            "·"
                        } else {
                            ""
                        },
                        t.input_tokens
                    );
                }
                None => out.push_str(" |"),
            }
        }
        out.push('\n');
    }
    out
}

/// The runs recorded in `path` (a JSON list, absent at first) with `new` ones in place of the
/// recorded runs of the same model and mode, written back to `path`; in model order, then the
/// modes' order ([`super::MODES`]).
///
/// # Errors
/// When `path` exists but cannot be read or parsed (it is not overwritten then), or cannot be
/// written.
pub fn recorded_with(path: &std::path::Path, new: &[ModeRun]) -> Result<Vec<ModeRun>, String> {
    let mut runs: Vec<ModeRun> = match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text)
            .map_err(|e| format!("{} is not a list of recorded runs: {e}", path.display()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    runs.retain(|old| {
        !new.iter()
            .any(|n| n.model == old.model && n.mode == old.mode)
    });
    runs.extend(new.iter().cloned());
    let order = |mode: &str| {
        super::MODES
            .iter()
            .position(|m| *m == mode)
            .unwrap_or(usize::MAX)
    };
    runs.sort_by(|a, b| {
        a.model
            .cmp(&b.model)
            .then(order(&a.mode).cmp(&order(&b.mode)))
    });
    let text = serde_json::to_string_pretty(&runs).map_err(|e| e.to_string())?;
    std::fs::write(path, text + "\n")
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(runs)
}

/// The line of `docs/long-horizon.md` after which the page is written by hand (what a run
/// shows, the scripted twin): a rewrite keeps it and everything below it.
pub const KEPT_BELOW: &str = "<!-- Written by hand from here on: `cargo xtask longrun --write-docs` keeps this line and what follows. -->";

/// `docs/long-horizon.md`: what the benchmark is, then the report, then the hand-written part
/// of the `existing` page (from [`KEPT_BELOW`] on), if it has one.
pub fn docs_page(report: &str, existing: &str) -> String {
    let kept = existing
        .find(KEPT_BELOW)
        .map(|at| &existing[at..])
        .unwrap_or(KEPT_BELOW);
    let page = generated_page(report);
    format!("{}\n\n{kept}", page.trim_end())
}

/// The generated part of the docs page.
fn generated_page(report: &str) -> String {
    format!(
        "# Long conversations on a real small model\n\n\
         Measured by `cargo xtask longrun` (issue 32): one conversation of 32 turns through the \
         `agents` CLI (`agents run --state FILE` per turn, the agent setup users get) on a small \
         project (configuration, a 240-row CSV, a 600-line log, source files, notes), once per \
         trace mode, against Qwen2.5-Coder 1.5B (Q4_K_M) in llama-server on the CPU. Every \
         turn is an ordinary task with a machine check; 11 build on an earlier turn (a value \
         from an earlier tool result, an earlier answer, a file changed earlier): their success \
         is reported as recall. Modes: **legacy** (every call and result persists), \
         **separated** (only questions and answers persist), **digest** (plus bounded calls \
         and result excerpts per execution), **masked** (observation masking: legacy, with \
         tool outputs older than the last executions replaced by a placeholder). The same \
         conversation with a scripted model runs in CI (`crates/agents/tests/long_horizon.rs`), \
         where its token counts are exact and snapshotted \
         (`crates/agents/tests/snapshots/long_horizon__long_horizon_tokens.snap`).\n\n\
         Rerun: `cargo xtask longrun --write-docs`, or one mode at a time \
         (`--modes legacy --write-docs`: each run replaces that mode's in \
         `docs/long-horizon/runs.json`, and the page is written from all of them). A mode \
         takes 15 to 25 minutes on 2 cores (20 to 60 before each tool result was bounded by \
         the served context), most of it in the turns where the model reads a large file (the \
         log, the CSV): this machine reads a prompt at 20 to 50 tokens per second, and a turn \
         is stopped, failed, at 600 s.\n\n\
         \"Tool turns that used a tool\" counts the turns that needed a file or a command and \
         made a call that ran (a call refused before running, as one written among other text, \
         does not count; runs recorded before that rule count every call).\n\n\
         \"Answers repeating an earlier one\" counts the answers that repeat, word for word, \
         the answer of an earlier turn that asked something else: the small model answering from the conversation instead of the \
         request.\n\n\
         Input tokens are the prompt tokens the server counted for every request of the turn; \
         \"cached\" is the part llama-server served from its prompt cache, as it reports it. \
         A request that does not fit the 32,768-token context fails its turn.\n\n{report}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(mode: &str, tokens_per_turn: u64, passed_every: usize) -> ModeRun {
        ModeRun {
            model: "1.5b".into(),
            mode: mode.into(),
            turns: (1..=32)
                .map(|turn| TurnResult {
                    turn,
                    passed: turn % passed_every == 0,
                    recall: turn % 3 == 0,
                    needs_tool: turn % 2 == 0,
                    tool_calls: usize::from(turn % 4 == 0),
                    input_tokens: tokens_per_turn * turn as u64,
                    cached_tokens: tokens_per_turn * turn as u64 / 2,
                    ..TurnResult::default()
                })
                .collect(),
            ..ModeRun::default()
        }
    }

    #[test]
    fn totals_at_the_checkpoints_and_the_goals_are_reported() {
        let runs = [run("legacy", 1000, 1), run("separated", 100, 2)];
        let at_10 = Totals::of(&runs[0].turns, 10);
        assert_eq!(at_10.input_tokens, 1000 * 55);
        assert_eq!(at_10.cached_tokens, 500 * 55);
        assert_eq!(
            (at_10.recall_turns, at_10.tool_turns, at_10.tool_turns_used),
            (3, 5, 2)
        );
        let options = Options {
            models: vec![],
            modes: vec![],
            turns: 32,
            max_steps: 8,
            timeout: std::time::Duration::from_secs(1),
            masked_executions: 2,
            agents: None,
            write_docs: false,
            report_only: false,
            server: None,
        };
        let context = Context {
            commit: "abc".into(),
            machine: "test".into(),
            minutes: 1.0,
            options: &options,
        };
        let text = markdown(&runs, &context, "long-horizon/");
        assert!(text.contains("| 1.5b | separated | 16/32 |"), "{text}");
        assert!(
            text.contains("input tokens 10% of legacy's (goal: at most 25%) (met)"),
            "{text}"
        );
        assert!(
            text.contains("success 15 vs legacy's 30 (goal: within one turn) (NOT met)"),
            "{text}"
        );
        assert!(
            text.contains("turns that needed a tool used one: 47%"),
            "{text}"
        );
        assert!(text.contains("](long-horizon/success.svg)"));
        // A run recorded on another machine names it; one from this machine does not repeat it.
        let mut elsewhere = runs.clone();
        elsewhere[1].machine = "a 16-core machine".into();
        elsewhere[0].machine = "test".into();
        let text = markdown(&elsewhere, &context, "");
        assert!(
            text.contains("commit abc, a 16-core machine, `--max-steps"),
            "{text}"
        );
        assert!(!text.contains(", test, `--max-steps"), "{text}");
        let document = json(&runs, &context);
        assert_eq!(
            document["runs"][1]["totals"]["30"]["input_tokens"],
            100 * 465
        );
        assert_eq!(
            document["runs"][0]["turns"].as_array().map(Vec::len),
            Some(32)
        );
    }

    #[test]
    fn answers_that_repeat_an_earlier_turn_word_for_word_are_counted() {
        let turn = |turn: usize, answer: &str| TurnResult {
            turn,
            answer: Some(answer.to_owned()),
            ..TurnResult::default()
        };
        let turns = [
            turn(1, "The port is 8472."),
            turn(2, "The next release is planned for 2026-12-04."),
            turn(3, "the next release is  planned for 2026-12-04"),
            turn(4, "The port is 8472 (config.ini)."),
            turn(5, "The port is 8472."),
            TurnResult {
                turn: 6,
                ..TurnResult::default()
            },
        ];
        assert_eq!(repeated_answers(&turns), 2);
        assert_eq!(repeated_answers(&turns[..2]), 0);
    }

    #[test]
    fn a_rewrite_of_the_docs_page_keeps_what_was_written_by_hand() {
        let existing =
            format!("# old title\n\nold tables\n\n{KEPT_BELOW}\n\n## What it shows\n\nby hand\n");
        let page = docs_page("| new table |\n", &existing);
        assert!(page.contains("| new table |"));
        assert!(!page.contains("old tables"), "the old report is replaced");
        assert!(page.ends_with(&format!("{KEPT_BELOW}\n\n## What it shows\n\nby hand\n")));
        // A page without the line gets it, so the next rewrite keeps what is added below it.
        let first = docs_page("| table |\n", "");
        assert!(first.trim_end().ends_with(KEPT_BELOW));
    }

    #[test]
    fn runs_recorded_one_mode_at_a_time_add_up_to_one_report() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("runs.json");
        let mut masked = run("masked", 900, 1);
        masked.commit = "aaa".into();
        let recorded = recorded_with(&path, &[masked]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(recorded.len(), 1);
        let mut legacy = run("legacy", 1000, 1);
        legacy.commit = "bbb".into();
        let mut again = run("masked", 800, 1);
        again.commit = "ccc".into();
        let recorded = recorded_with(&path, &[legacy, again]).unwrap_or_else(|e| panic!("{e}"));
        let modes: Vec<_> = recorded
            .iter()
            .map(|r| (r.mode.as_str(), r.commit.as_str()))
            .collect();
        assert_eq!(
            modes,
            [("legacy", "bbb"), ("masked", "ccc")],
            "replaced, in the modes' order"
        );
        let reread = recorded_with(&path, &[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(reread.len(), 2);
        assert_eq!(reread[1].turns.len(), 32, "every turn survives the file");
        assert_eq!(reread[1].turns[4].input_tokens, 800 * 5);
        std::fs::write(&path, "not json").unwrap_or_else(|e| panic!("{e}"));
        let error = recorded_with(&path, &[]).err().unwrap_or_default();
        assert!(error.contains("is not a list of recorded runs"), "{error}");
        assert_eq!(
            std::fs::read_to_string(&path).ok().as_deref(),
            Some("not json")
        );
    }
}
