//! The eval's markdown report: one row per configuration, then one row per task.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::eval::runs::{Config, RunResult};
use crate::eval::tasks::{Half, Task};

/// One configuration's runs.
pub struct Row {
    pub config: Config,
    pub results: Vec<RunResult>,
}

/// What the report's header says about the run.
pub struct Header<'a> {
    pub label: &'a str,
    pub commit: &'a str,
    pub heldout_digest: &'a str,
    pub settings: String,
    pub minutes: f64,
}

pub fn markdown(rows: &[&Row], tasks: &[&Task], header: &Header<'_>) -> String {
    let mut out = String::new();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let _ = writeln!(
        out,
        "# Eval report{}\n",
        if header.label.is_empty() {
            String::new()
        } else {
            format!(": {}", header.label)
        }
    );
    let _ = writeln!(
        out,
        "- {}; {}; {:.1} min in all; load average at the end: {}\n- held-out half sha256 {} \
         (checked against xtask/eval/heldout.sha256)\n",
        header.commit,
        header.settings,
        header.minutes,
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" "),
        header.heldout_digest,
    );
    out.push_str(
        "| model | mode | driver | solved dev | solved held-out | plan or announcement | \
         copied tool error | calls repeated after their result (runs) | \
         answers on stop (synthesized / notice) | no answer saved | empty replies | \
         failed runs (exit codes) | failed but exit 0 | tokens in / out | wall time |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for row in rows {
        let results = &row.results;
        let count = |f: &dyn Fn(&RunResult) -> bool| results.iter().filter(|r| f(r)).count();
        let solved = |half: Half| {
            let runs = count(&|r| r.half == half);
            if runs == 0 {
                "-".to_owned()
            } else {
                format!("{}/{runs}", count(&|r| r.half == half && r.solved))
            }
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} ({}) | {} / {} | {} | {} | {} | {} | {} / {} | {:.0} s |",
            row.config.model.key,
            row.config.mode,
            row.config.driver,
            solved(Half::Dev),
            solved(Half::Heldout),
            count(&|r| r.not_an_answer.is_some()),
            count(&|r| r.copied_error),
            results.iter().map(|r| r.repeated_after_result).sum::<usize>(),
            count(&|r| r.repeated_after_result > 0),
            count(&|r| r.answered_by.as_deref() == Some("synthesize")),
            count(&|r| r.answered_by.as_deref() == Some("notice")),
            count(&|r| r.answer.is_none()),
            results.iter().map(|r| r.empty_replies).sum::<usize>(),
            failed_runs(results),
            count(&|r| r.status == "failed" && r.exit_codes.last() == Some(&Some(0))),
            results.iter().map(|r| r.input_tokens).sum::<u64>(),
            results.iter().map(|r| r.output_tokens).sum::<u64>(),
            results.iter().map(|r| r.seconds).sum::<f64>(),
        );
    }
    out.push_str(
        "\nPer task (✓ solved, ✗ wrong, ∅ no answer saved, P a plan or an announcement of a \
         call saved as the answer, E a copied tool error; `+r` calls repeated after their \
         result):\n\n| task | kind |",
    );
    for row in rows {
        let _ = write!(out, " {} |", row.config.label());
    }
    out.push_str("\n|---|---|");
    out.push_str(&"---|".repeat(rows.len()));
    out.push('\n');
    for task in tasks {
        let _ = write!(out, "| {} {} | {} |", task.id, task.name, task.kind);
        for row in rows {
            let mark = match row.results.iter().find(|r| r.task == task.id) {
                Some(r) => format!("{}{}", mark(r), repeats(r)),
                None => String::new(),
            };
            let _ = write!(out, " {mark} |");
        }
        out.push('\n');
    }
    out
}

/// What one configuration's runs add up to, for the before/after table.
struct Summary {
    dev: String,
    heldout: String,
    plans: usize,
    copied: usize,
    repeated: usize,
}

fn summary(results: &[RunResult]) -> Summary {
    let solved = |half: Half| {
        let runs = results.iter().filter(|r| r.half == half).count();
        let solved = results
            .iter()
            .filter(|r| r.half == half && r.solved)
            .count();
        if runs == 0 {
            "-".to_owned()
        } else {
            format!("{solved}/{runs}")
        }
    };
    Summary {
        dev: solved(Half::Dev),
        heldout: solved(Half::Heldout),
        plans: results.iter().filter(|r| r.not_an_answer.is_some()).count(),
        copied: results.iter().filter(|r| r.copied_error).count(),
        repeated: results.iter().map(|r| r.repeated_after_result).sum(),
    }
}

/// The before/after table: per configuration, each figure as `before → after`.
pub fn comparison(before: &[&Row], after: &[&Row]) -> String {
    let mut out = String::from(
        "| configuration | solved dev | solved held-out | plan or announcement | copied tool error | \
         calls repeated after their result |\n|---|---|---|---|---|---|\n",
    );
    for row in after {
        let label = row.config.label();
        let Some(old) = before.iter().find(|b| b.config.label() == label) else {
            continue;
        };
        let (old, new) = (summary(&old.results), summary(&row.results));
        let _ = writeln!(
            out,
            "| {label} | {} → {} | {} → {} | {} → {} | {} → {} | {} → {} |",
            old.dev,
            new.dev,
            old.heldout,
            new.heldout,
            old.plans,
            new.plans,
            old.copied,
            new.copied,
            old.repeated,
            new.repeated
        );
    }
    out
}

fn mark(result: &RunResult) -> &'static str {
    if result.solved {
        "✓"
    } else if result.not_an_answer.is_some() {
        "P"
    } else if result.copied_error {
        "E"
    } else if result.answer.is_none() {
        "∅"
    } else {
        "✗"
    }
}

fn repeats(result: &RunResult) -> String {
    if result.repeated_after_result == 0 {
        String::new()
    } else {
        format!(" +{}r", result.repeated_after_result)
    }
}

/// `N (code×count, ...)` for the runs that failed.
fn failed_runs(results: &[RunResult]) -> String {
    let mut codes: BTreeMap<String, usize> = BTreeMap::new();
    let failed: Vec<&RunResult> = results.iter().filter(|r| r.failed()).collect();
    for r in &failed {
        let code = match r.exit_codes.last() {
            Some(Some(code)) => code.to_string(),
            Some(None) => "timeout".to_owned(),
            None => "none".to_owned(),
        };
        *codes.entry(code).or_default() += 1;
    }
    if codes.is_empty() {
        return failed.len().to_string();
    }
    let codes = codes
        .iter()
        .map(|(code, n)| format!("{code}×{n}"))
        .collect::<Vec<_>>()
        .join(", ");
    format!("{} ({codes})", failed.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::detectors::NotAnAnswer;
    use crate::eval::tasks::{eval_dir, load_tasks};
    use crate::local_llm::QWEN_15B;

    fn result(task: &str, half: Half, solved: bool) -> RunResult {
        RunResult {
            task: task.into(),
            half,
            solved,
            answer: Some("x".into()),
            not_an_answer: None,
            copied_error: false,
            repeated_after_result: 0,
            answered_by: None,
            empty_replies: 0,
            max_same_call: 0,
            status: "completed".into(),
            stop_reason: "completed".into(),
            exit_codes: vec![Some(0)],
            steps: 1,
            input_tokens: 100,
            output_tokens: 10,
            seconds: 2.0,
            stderr_tail: String::new(),
        }
    }

    fn row(results: Vec<RunResult>) -> Row {
        Row {
            config: Config {
                model: &QWEN_15B,
                mode: "separated".into(),
                driver: "toolcalling".into(),
            },
            results,
        }
    }

    #[test]
    fn the_report_counts_per_half_and_marks_each_task() {
        let all = load_tasks(&eval_dir()).unwrap();
        let tasks: Vec<&Task> = all
            .iter()
            .filter(|t| ["d1", "d2", "h1", "h2"].contains(&t.id.as_str()))
            .collect();
        let mut plan = result("d2", Half::Dev, false);
        plan.not_an_answer = Some(NotAnAnswer::AnnouncesCall);
        plan.repeated_after_result = 2;
        let mut copied = result("h1", Half::Heldout, false);
        copied.copied_error = true;
        let mut timeout = result("h2", Half::Heldout, false);
        timeout.answer = None;
        timeout.exit_codes = vec![None];
        let after = row(vec![result("d1", Half::Dev, true), plan, copied, timeout]);
        let header = Header {
            label: "test",
            commit: "commit abc",
            heldout_digest: "0f",
            settings: "s".into(),
            minutes: 1.0,
        };
        let text = markdown(&[&after], &tasks, &header);
        assert!(
            text.contains("| 1.5b | separated | toolcalling | 1/2 | 0/2 | 1 | 1 | 2 (1) | 0 / 0 | 1 | 0 | 1 (timeout×1) | 0 | 400 / 40 | 8 s |"),
            "{text}"
        );
        assert!(
            text.contains("| d1 read a value from an INI file | read a value | ✓ |"),
            "{text}"
        );
        assert!(text.contains("| P +2r |"), "{text}");
        assert!(text.contains("| E |") && text.contains("| ∅ |"), "{text}");

        let before = row(vec![
            result("d1", Half::Dev, false),
            result("h1", Half::Heldout, false),
        ]);
        let table = comparison(&[&before], &[&after]);
        assert!(
            table.contains(
                "| 1.5b separated toolcalling | 0/1 → 1/2 | 0/1 → 0/2 | 0 → 1 | 0 → 1 | 0 → 2 |"
            ),
            "{table}"
        );
    }
}
