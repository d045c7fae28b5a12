//! `docs/benchmarks.md` and the SVG plots, from the measured numbers.

use std::fmt::Write;

use crate::allocations::StepAllocations;
use crate::context_cost::{ContextCost, ModeCost, MAX_BUFFER_TOKENS, MAX_MESSAGE_TOKENS, TURNS};
use crate::criterion_data::{CriterionData, Estimate, HISTORIES, RIG_HISTORIES};
use crate::http_overhead::HttpOverhead;
use crate::parallel_tools::ParallelTools;
use crate::scale::Scale;
use crate::svg::{bars, group_digits, lines};

/// Everything the report shows.
pub struct Report {
    pub quick: bool,
    pub scale: Scale,
    pub parallel: ParallelTools,
    pub context: ContextCost,
    pub criterion: CriterionData,
    pub allocations: Vec<StepAllocations>,
    /// The HTTP step's overhead, run and transfer alternated.
    pub http: Vec<HttpOverhead>,
}

/// Steps in one measured execution (tool call, then answer).
const STEPS: f64 = 2.0;

fn time(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

fn per_step(e: &Estimate) -> String {
    format!(
        "{} ({} – {})",
        time(e.mean_ns / STEPS),
        time(e.lower_ns / STEPS),
        time(e.upper_ns / STEPS)
    )
}

fn reduction(from: usize, to: usize) -> f64 {
    100.0 * (from as f64 - to as f64) / (from.max(1) as f64)
}

fn tokens(n: usize) -> String {
    group_digits(n as u64)
}

impl Report {
    fn overhead(&self, mode: &str, len: usize) -> Option<&Estimate> {
        self.criterion
            .overhead
            .iter()
            .find(|(m, l, _)| m == mode && *l == len)
            .map(|(_, _, e)| e)
    }

    fn allocation(&self, mode: &str, history: usize) -> Option<&StepAllocations> {
        self.allocations
            .iter()
            .find(|a| a.mode == mode && a.history == history)
    }

    fn rig(&self, framework: &str, len: usize) -> Option<&Estimate> {
        self.criterion
            .rig_compare
            .iter()
            .find(|(f, l, _)| f == framework && *l == len)
            .map(|(_, _, e)| e)
    }

    /// `(file name, SVG)` of every plot.
    pub fn plots(&self) -> Vec<(&'static str, String)> {
        let c = &self.context;
        let summarized_with_summarizer: Vec<f64> =
            c.summarized.per_turn.iter().map(|t| *t as f64).collect();
        let mut plots = vec![(
            "context-tokens-per-turn.svg",
            lines(
                "Tokens sent to the model per turn (3 tool calls a turn)",
                "turn",
                "tokens (estimated)",
                &[
                    (
                        "legacy (trace persists)",
                        c.legacy.per_turn.iter().map(|t| *t as f64).collect(),
                    ),
                    (
                        "separated (ephemeral trace)",
                        c.separated.per_turn.iter().map(|t| *t as f64).collect(),
                    ),
                    ("separated + summarization", summarized_with_summarizer),
                ],
            ),
        )];
        let mut rows = Vec::new();
        for (series, mode) in ["full", "ephemeral"].iter().enumerate() {
            for len in HISTORIES {
                if let Some(e) = self.overhead(mode, len) {
                    rows.push((
                        format!("{mode}, {} msgs", group_digits(len as u64)),
                        series,
                        e.mean_ns / STEPS / 1e3,
                    ));
                }
            }
        }
        if !rows.is_empty() {
            plots.push((
                "overhead-per-step.svg",
                bars(
                    "Framework overhead per step (zero-latency model, no-op tool)",
                    "µs per step (lower is better)",
                    &rows,
                    &["legacy (Full)", "separated (Ephemeral)"],
                    |v| format!("{v:.2} µs"),
                ),
            ));
        }
        let mut rows = Vec::new();
        for len in RIG_HISTORIES {
            for (series, framework) in ["agents", "rig"].iter().enumerate() {
                if let Some(e) = self.rig(framework, len) {
                    rows.push((
                        format!("{framework}, {} msgs", group_digits(len as u64)),
                        series,
                        e.mean_ns / STEPS / 1e3,
                    ));
                }
            }
        }
        if !rows.is_empty() {
            plots.push((
                "rig-comparison.svg",
                bars(
                    "Same two-step tool-calling conversation: agents vs rig",
                    "µs per step (lower is better)",
                    &rows,
                    &["agents (this project)", "rig-agent 0.44.0"],
                    |v| format!("{v:.2} µs"),
                ),
            ));
        }
        let p = &self.parallel;
        plots.push((
            "parallel-tools.svg",
            bars(
                "8 tool calls of 100 ms in one step: wall time of the execution",
                "milliseconds (lower is better)",
                &[
                    ("parallel".to_owned(), 0, p.parallel.as_secs_f64() * 1e3),
                    ("sequential".to_owned(), 1, p.sequential.as_secs_f64() * 1e3),
                ],
                &["parallel tool calls", "sequential"],
                |v| format!("{v:.0} ms"),
            ),
        ));
        plots
    }

    pub fn markdown(&self) -> String {
        let mut md = String::new();
        let _ = writeln!(md, "# Benchmarks\n");
        let _ = writeln!(
            md,
            "Generated by `cargo xtask bench`{} from the numbers measured in that run; do not edit by \
             hand. Machine: {} worker threads (`available_parallelism`), release builds. Models are \
             scripted and answer instantly, so every time below is the framework's own cost. \
             Measurements taken by hand (profiles, before and after one change, the 16-core \
             machine) are in [performance.md](performance.md).\n",
            if self.quick { " --quick (short runs: rough numbers)" } else { "" },
            self.scale.worker_threads
        );
        self.summary(&mut md);
        self.context_section(&mut md);
        self.overhead_section(&mut md);
        self.rig_section(&mut md);
        self.encoding_section(&mut md);
        self.recovery_section(&mut md);
        self.scale_section(&mut md);
        self.serialization_section(&mut md);
        self.parallel_section(&mut md);
        let _ = writeln!(
            md,
            "## Peers\n\n\
             Ours against rig, the OpenAI Agents SDK and Pydantic AI in process CPU time per run, \
             before and after the core redesign: [benchmarks-peers.md](benchmarks-peers.md) \
             (written from `cargo xtask bench-peers`, which this report does not run).\n\n\
             ## Features\n\n\
             What each feature of the step costs (time, instructions and allocations per run, \
             one default switched off or one opt-in switched on at a time): \
             [benchmarks-features.md](benchmarks-features.md) (written from \
             `cargo xtask bench --features`, which this report does not run).\n"
        );
        let _ = writeln!(
            md,
            "## Reproducing\n\n\
             ```sh\ncargo xtask bench          # everything, about 10 minutes plus the first rig build\n\
             cargo xtask bench --quick  # short smoke run; writes its report under the target directory\n```\n\n\
             Sources: `benches/agents-bench` (criterion groups `overhead/*`, `serialization/*`, \
             `encoding/*`, `http_step/*` and `recovery/*`; `cargo xtask bench --scale` runs the \
             `bench-scale` binary, runs per second by worker count; `encode-profile` drives the \
             encoders for callgrind), \
             the report binary `bench-report` with the context-cost, scale and parallel-tools \
             measurements), `benches/rig-compare` (a separate cargo project with its own lock file, \
             so rig never enters the workspace's dependency graph; its `profile` binary runs either side \
             in a loop for `perf` or `valgrind --tool=callgrind`: `cargo run --release \
             --manifest-path benches/rig-compare/Cargo.toml --bin profile -- agents 100000`), \
             `xtask/src/bench.rs`."
        );
        md
    }

    fn summary(&self, md: &mut String) {
        let c = &self.context;
        let _ = writeln!(md, "## Summary\n\n| what | result |\n| --- | --- |");
        let _ = writeln!(
            md,
            "| tokens sent over a 20-turn, 60-tool-call conversation | legacy {} → separated {} (**−{:.0}%**) → separated + summarization {} (**−{:.0}%**, summarizer input included) |",
            tokens(c.legacy.total()),
            tokens(c.separated.total()),
            reduction(c.legacy.total(), c.separated.total()),
            tokens(c.summarized.total() + c.summarized.summarizer_tokens),
            reduction(c.legacy.total(), c.summarized.total() + c.summarized.summarizer_tokens),
        );
        if let (Some(small), Some(large)) = (
            self.overhead("ephemeral", 10),
            self.overhead("ephemeral", 10_000),
        ) {
            let allocations = self
                .allocation("ephemeral", 10)
                .map(|a| format!(", {:.0} heap allocations", a.allocations))
                .unwrap_or_default();
            let _ = writeln!(
                md,
                "| framework overhead per step (separated mode) | {} at 10 messages of history, {} at 10,000{allocations} |",
                time(small.mean_ns / STEPS),
                time(large.mean_ns / STEPS)
            );
        }
        if let (Some(ours), Some(rig)) = (self.rig("agents", 10), self.rig("rig", 10)) {
            let ratio = rig.mean_ns / ours.mean_ns;
            let verdict = if ratio >= 5.0 {
                format!("rig takes **{ratio:.2}×** our time (target ours ≥ 5× faster: met)")
            } else if ratio >= 1.0 {
                format!("rig takes **{ratio:.2}×** our time (target ours ≥ 5× faster: not met)")
            } else {
                format!(
                    "rig is **{:.2}× faster** (target was ours ≥ 5× faster: not met)",
                    1.0 / ratio
                )
            };
            let large = match (self.rig("agents", 1_000), self.rig("rig", 1_000)) {
                (Some(o), Some(r)) => format!(
                    "; at 1,000 messages rig takes **{:.2}×** our time",
                    r.mean_ns / o.mean_ns
                ),
                _ => String::new(),
            };
            let _ = writeln!(
                md,
                "| same conversation through rig-agent 0.44.0, 10 messages of history | {verdict} per step ({} vs our {}){large} |",
                time(rig.mean_ns / STEPS),
                time(ours.mean_ns / STEPS)
            );
        }
        let s = &self.scale;
        let _ = writeln!(
            md,
            "| {} concurrent executions, 10 ms tool | {} wall, {}/{} answered, peak RSS {} MiB, {:.1} KiB per held state |",
            group_digits(s.executions as u64),
            time(s.wall.as_nanos() as f64),
            group_digits(s.completed_with_answer as u64),
            group_digits(s.executions as u64),
            s.peak_rss_kib / 1024,
            s.bytes_per_held_state() / 1024.0
        );
        if let (Some(to), Some(from)) = (self.criterion.to_json, self.criterion.from_json) {
            let _ = writeln!(
                md,
                "| state with 1,000 messages and 100 step executions | {} KiB of JSON; to_json {}, from_json {} |",
                group_digits((self.criterion_bytes() / 1024) as u64),
                time(to.mean_ns),
                time(from.mean_ns)
            );
        }
        let p = &self.parallel;
        let _ = writeln!(
            md,
            "| 8 parallel tool calls of 100 ms | {} (sequential: {}) |\n",
            time(p.parallel.as_nanos() as f64),
            time(p.sequential.as_nanos() as f64)
        );
    }

    fn context_section(&self, md: &mut String) {
        let c = &self.context;
        let _ = writeln!(
            md,
            "## Context cost (the headline)\n\n\
             A scripted {TURNS}-turn conversation. Every turn: a `search` call (≈2.5 KB of JSON \
             matches), then two `read_file` calls in one step (≈3 KB of Rust source, ≈2 KB of JSON \
             configuration), then the answer: 3 tool calls and 3 model requests a turn, {} KB of tool \
             results in all. Tokens are counted with `agents_processing::EstimateTokenCounter` over \
             every request the model received (messages plus tool schemas). Deterministic: the same \
             numbers on every run.\n\n\
             - **legacy**: `TraceRetention::Full`, every tool call and result persists in `messages`.\n\
             - **separated**: `TraceRetention::Ephemeral`, tool traces live in the execution buffer \
             and only questions and answers persist.\n\
             - **separated + summarization**: as separated, plus `UseSummarization` \
             (`MoveMessagesToBuffer` at {MAX_MESSAGE_TOKENS} tokens, `SummarizeBuffer` at \
             {MAX_BUFFER_TOKENS} tokens) with a scripted summarizer; the summarizer's own input is \
             counted separately and added to the total.\n\n\
             ![tokens per turn](benchmarks/context-tokens-per-turn.svg)\n",
            c.legacy.tool_result_bytes / 1024
        );
        let _ = writeln!(
            md,
            "| turn | legacy | separated | separated + summarization |\n| ---: | ---: | ---: | ---: |"
        );
        for turn in 0..TURNS {
            let get = |m: &ModeCost| m.per_turn.get(turn).copied().unwrap_or(0);
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} |",
                turn + 1,
                tokens(get(&c.legacy)),
                tokens(get(&c.separated)),
                tokens(get(&c.summarized))
            );
        }
        let _ = writeln!(
            md,
            "| **total to the agent's model** | **{}** | **{}** (−{:.0}%) | **{}** (−{:.0}%) |",
            tokens(c.legacy.total()),
            tokens(c.separated.total()),
            reduction(c.legacy.total(), c.separated.total()),
            tokens(c.summarized.total()),
            reduction(c.legacy.total(), c.summarized.total())
        );
        let _ = writeln!(
            md,
            "| summarizer input | – | – | {} in {} requests |",
            tokens(c.summarized.summarizer_tokens),
            c.summarized.summarizer_requests
        );
        let all = c.summarized.total() + c.summarized.summarizer_tokens;
        let _ = writeln!(
            md,
            "| **total incl. summarizer** | {} | {} | **{}** (−{:.0}%) |",
            tokens(c.legacy.total()),
            tokens(c.separated.total()),
            tokens(all),
            reduction(c.legacy.total(), all)
        );
        let _ = writeln!(
            md,
            "| last turn | {} | {} | {} |",
            tokens(c.legacy.per_turn.last().copied().unwrap_or(0)),
            tokens(c.separated.per_turn.last().copied().unwrap_or(0)),
            tokens(c.summarized.per_turn.last().copied().unwrap_or(0))
        );
        let _ = writeln!(
            md,
            "| model requests | {} | {} | {} |\n| messages persisted after turn {TURNS} | {} | {} | {} |\n",
            c.legacy.requests,
            c.separated.requests,
            c.summarized.requests,
            c.legacy.persisted_messages,
            c.separated.persisted_messages,
            c.summarized.persisted_messages
        );
        let _ = writeln!(
            md,
            "In legacy mode each turn re-sends every earlier tool result, so the cost per turn grows \
             linearly and the total quadratically; in separated mode a turn carries only its own \
             trace plus the earlier questions and answers. With summarization the persisted part is \
             bounded too. The full trace is not lost in separated mode: it stays in the step \
             executions of the state for debugging.\n"
        );
    }

    fn overhead_section(&self, md: &mut String) {
        let _ = writeln!(
            md,
            "## Framework overhead per step\n\n\
             Criterion group `overhead/{{full,ephemeral}}/{{10,1000,10000}}`: one full \
             `Agent::execute` through `drivers_toolcalling::ToolCallingDriver` with a zero-latency \
             model that clones pre-built responses in a cycle (it records nothing) and a no-op tool: \
             step 1 calls the tool, step 2 answers. The state holds a history of 10, 1,000 or 10,000 \
             messages first; processors are `standard_processors` with `TraceRetention::Full` \
             (legacy) or `Ephemeral` (separated). Time per step = time per execution / 2; in \
             brackets the 95% confidence interval of the mean. Current-thread tokio runtime, \
             `block_on` included.\n"
        );
        if self.criterion.overhead.is_empty() {
            let _ = writeln!(md, "_Not measured in this run._\n");
            return;
        }
        let _ = writeln!(
            md,
            "![overhead per step](benchmarks/overhead-per-step.svg)\n\n\
             | history (messages) | legacy (`Full`) per step | separated (`Ephemeral`) per step |\n| ---: | ---: | ---: |"
        );
        for len in HISTORIES {
            let cell = |mode| {
                self.overhead(mode, len)
                    .map(per_step)
                    .unwrap_or_else(|| "–".to_owned())
            };
            let _ = writeln!(
                md,
                "| {} | {} | {} |",
                group_digits(len as u64),
                cell("full"),
                cell("ephemeral")
            );
        }
        let _ = writeln!(
            md,
            "\nHeap allocations per step of the same execution, counted by `bench-report`'s \
             wrapping global allocator over 1,000 executions (allocations and reallocations; bytes \
             requested):\n\n\
             | history (messages) | legacy (`Full`) | separated (`Ephemeral`) |\n| ---: | ---: | ---: |"
        );
        for history in [10usize, 10_000] {
            let cell = |mode| {
                self.allocation(mode, history)
                    .map(|a| format!("{:.1} ({:.0} B)", a.allocations, a.bytes))
                    .unwrap_or_else(|| "–".to_owned())
            };
            let _ = writeln!(
                md,
                "| {} | {} | {} |",
                group_digits(history as u64),
                cell("full"),
                cell("ephemeral")
            );
        }
        let _ = writeln!(md);
    }

    fn rig_section(&self, md: &mut String) {
        let _ = writeln!(
            md,
            "## Side by side with rig\n\n\
             `benches/rig-compare`, criterion group `rig_vs_agents/{{agents,rig}}/{{10,1000}}`, both \
             measured in the same run on the same runtime: the same two-step conversation (one tool \
             call, then the answer) on top of a history of 10 or 1,000 messages. rig: \
             `rig-agent` 0.44.0 (the agent runtime that was split out of `rig-core`; `rig-core` \
             0.44.0 with `test-utils` underneath), an agent with one no-op tool, `max_turns(2)`, \
             no hooks, the history passed with `.history(..)`; its `CompletionModel` is a \
             bench-only model cloning pre-built responses in a cycle. Ours: the separated-mode agent \
             of the overhead bench. Equal work: two model calls and one tool call, one tool at a \
             time, no hooks or listeners.\n"
        );
        if self.criterion.rig_compare.is_empty() {
            let _ = writeln!(
                md,
                "_Not measured in this run (rig-compare failed or was skipped)._\n"
            );
            return;
        }
        let _ = writeln!(
            md,
            "![rig comparison](benchmarks/rig-comparison.svg)\n\n\
             | history (messages) | agents per step | rig per step | rig / agents |\n| ---: | ---: | ---: | ---: |"
        );
        for len in RIG_HISTORIES {
            if let (Some(ours), Some(rig)) = (self.rig("agents", len), self.rig("rig", len)) {
                let _ = writeln!(
                    md,
                    "| {} | {} | {} | **{:.1}×** |",
                    group_digits(len as u64),
                    per_step(ours),
                    per_step(rig),
                    rig.mean_ns / ours.mean_ns
                );
            }
        }
        let _ = writeln!(
            md,
            "\nrig's history is an owned `Vec<Message>` that the caller hands over per prompt (the \
             clone of it is part of each measured rig run); ours is a persistent, structurally \
             shared list, so a state is cloned in O(1).\n"
        );
    }

    fn encoding_section(&self, md: &mut String) {
        let find = |name: &str, len: usize| {
            self.criterion
                .encoding
                .iter()
                .find(|(n, l, _)| n == name && *l == len)
                .map(|(_, _, e)| e.mean_ns)
        };
        if self.criterion.encoding.is_empty()
            && self.criterion.http_step.is_empty()
            && self.http.is_empty()
        {
            return;
        }
        let _ = writeln!(
            md,
            "## Request encoding\n\n\
             Criterion group `encoding/{{provider}}/{{fresh,incremental}}/N`: the body of one step's \
             request on a history of N messages (a system prompt, questions and answers, five tool \
             definitions, a cache breakpoint at the end of the history), the conversation growing \
             by one tool round (two messages) per request and starting again from the history every \
             32 requests. `fresh` is `serde_json::to_vec` of the provider's `request_body` (what \
             every call cost before); `incremental` is the provider's own encoder, which reuses the \
             bytes of the messages it wrote for an earlier request of the same history and sends \
             the body as a chain of shared chunks. Both give the same bytes.\n\n\
             | provider | N | fresh | incremental | incremental / fresh |\n| --- | ---: | ---: | ---: | ---: |"
        );
        for provider in ["openai", "anthropic"] {
            for len in HISTORIES {
                let (Some(fresh), Some(incremental)) = (
                    find(&format!("{provider}/fresh"), len),
                    find(&format!("{provider}/incremental"), len),
                ) else {
                    continue;
                };
                let _ = writeln!(
                    md,
                    "| {provider} | {} | {} | {} | {:.1}% |",
                    group_digits(len as u64),
                    time(fresh),
                    time(incremental),
                    100.0 * incremental / fresh
                );
            }
        }
        let verdict = |provider: &str| match (
            find(&format!("{provider}/fresh"), 10),
            find(&format!("{provider}/incremental"), 10),
            find(&format!("{provider}/fresh"), 10_000),
            find(&format!("{provider}/incremental"), 10_000),
        ) {
            (Some(f10), Some(i10), Some(f), Some(i)) => format!(
                "{provider}: {:.1}% at 10,000 messages ({}), {:.2}× fresh at 10 ({})",
                100.0 * i / f,
                if i <= 0.1 * f { "met" } else { "**not met**" },
                i10 / f10,
                if i10 <= f10 * 1.05 {
                    "met"
                } else {
                    "**not met**"
                }
            ),
            _ => format!("{provider}: not measured"),
        };
        let _ = writeln!(
            md,
            "\nGoals: incremental at most 10% of fresh at 10,000 messages, no slower at 10: {}; {}.\n",
            verdict("openai"),
            verdict("anthropic")
        );
        let step = |kind: &str, len: usize| {
            self.criterion
                .http_step
                .iter()
                .find(|(k, l, _)| k == kind && *l == len)
                .map(|(_, _, e)| e.mean_ns)
        };
        if !self.criterion.http_step.is_empty() {
            self.http_step_criterion_table(md, step);
        }
        self.http_overhead_section(md);
    }

    /// Criterion's `http_step` estimates.
    fn http_step_criterion_table(
        &self,
        md: &mut String,
        step: impl Fn(&str, usize) -> Option<f64>,
    ) {
        let _ = writeln!(
            md,
            "Criterion group `http_step/{{run,transfer,transfer_whole}}/N`: a two-step run (tool \
             call, result, answer) through the real `OpenAiCompatible` provider against a local \
             mock server (`agents_bench::mock_openai`, std sockets, answers at once), and two raw \
             POSTs of the same two bodies with reqwest: `transfer` sends them as the provider \
             does (a chain of shared chunks with a `Content-Length`, `RequestBody::for_attempt`), \
             the cost of moving the bytes; `transfer_whole` sends each in one buffer. The run's \
             own overhead is run − transfer. Past hyper's 408 KiB write buffer a chain goes out \
             in two writes where one buffer goes in one; the last column is that difference.\n\n\
             | N | run | transfer | run − transfer | transfer (one buffer) |\n\
             | ---: | ---: | ---: | ---: | ---: |"
        );
        for len in HISTORIES {
            if let (Some(run), Some(transfer)) = (step("run", len), step("transfer", len)) {
                let _ = writeln!(
                    md,
                    "| {} | {} | {} | {} | {} |",
                    group_digits(len as u64),
                    time(run),
                    time(transfer),
                    time(run - transfer),
                    step("transfer_whole", len).map_or_else(|| "-".to_owned(), time)
                );
            }
        }
        let _ = writeln!(md);
    }

    /// The run and the transfer alternated in rounds (`http_overhead`), and the flatness goal.
    fn http_overhead_section(&self, md: &mut String) {
        let (Some(first), Some(last)) = (self.http.first(), self.http.last()) else {
            return;
        };
        let _ = writeln!(
            md,
            "The same run and transfer measured in alternation by `bench-report` ({} rounds of a \
             batch of runs, then a batch of transfers, on one runtime against one mock server; \
             medians over the rounds): criterion measures `run` and `transfer` seconds apart, and \
             their difference, a sixth of either at 10,000 messages, carries the drift of a \
             shared machine's clock between them. The goal is judged on this table.\n\n\
             | N | run | transfer | run − transfer |\n\
             | ---: | ---: | ---: | ---: |",
            first.rounds
        );
        for measured in &self.http {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} |",
                group_digits(measured.history as u64),
                time(measured.run_us * 1e3),
                time(measured.transfer_us * 1e3),
                time(measured.overhead_us * 1e3),
            );
        }
        let (first, last) = (first.overhead_us, last.overhead_us);
        let _ = writeln!(
            md,
            "\nGoal: the run's overhead (body bytes aside) flat within 20% from 10 to 10,000 \
             messages: {:+.0}% ({}).\n",
            100.0 * (last - first) / first,
            if (last - first).abs() <= 0.2 * first {
                "met"
            } else {
                "**not met**"
            }
        );
    }

    fn recovery_section(&self, md: &mut String) {
        if self.criterion.recovery.is_empty() {
            return;
        }
        let _ = writeln!(
            md,
            "## Text recovery\n\n\
             Criterion group `recovery/*`: what a tool-calling step with content recovery on (the \
             default) does to a reply without native tool calls: `recover_tool_calls`, then \
             `recover_announced_call`. A plain answer is the common case (every final answer pays \
             it); the others are calls written as text.\n\n\
             | reply | time |\n| --- | ---: |"
        );
        for (reply, e) in &self.criterion.recovery {
            let _ = writeln!(md, "| {reply} | {} |", time(e.mean_ns));
        }
        let _ = writeln!(md);
    }

    fn scale_section(&self, md: &mut String) {
        let s = &self.scale;
        let _ = writeln!(
            md,
            "## Scale\n\n\
             {} agent executions spawned at once on one multi-threaded tokio runtime ({} worker \
             threads), separated mode, a model that answers instantly and a tool that sleeps 10 ms \
             (tokio timer), so all executions are in flight together.\n\n\
             | measure | value |\n| --- | ---: |\n\
             | wall time, spawn to last join | {} |\n\
             | executions finished with their answer | {} of {} (failed: {}) |\n\
             | RSS before (baseline) | {:.1} MiB |\n\
             | peak RSS (`VmHWM`) | {:.1} MiB |\n\
             | peak above baseline per in-flight execution | {:.1} KiB |\n\
             | RSS growth holding {} finished states (fresh process) | {:.1} MiB |\n\
             | memory per held (idle) state | {:.1} KiB |\n\n\
             Goal: at most 50 KB per in-flight execution at 10,000 executions: {}.\n",
            group_digits(s.executions as u64),
            s.worker_threads,
            time(s.wall.as_nanos() as f64),
            group_digits(s.completed_with_answer as u64),
            group_digits(s.executions as u64),
            s.failed,
            s.baseline_rss_kib as f64 / 1024.0,
            s.peak_rss_kib as f64 / 1024.0,
            s.peak_bytes_per_execution() / 1024.0,
            group_digits(s.executions as u64),
            s.held_states_rss_kib as f64 / 1024.0,
            s.bytes_per_held_state() / 1024.0,
            if s.peak_bytes_per_execution() <= 50_000.0 {
                "met"
            } else {
                "**not met**"
            },
        );
        let _ = writeln!(
            md,
            "A held state is a finished conversation (question, answer, two step executions with \
             their full trace). Nothing is lost: the report binary fails if any execution did not \
             finish with its scripted answer.\n"
        );
    }

    fn serialization_section(&self, md: &mut String) {
        let _ = writeln!(
            md,
            "## Serialization\n\n\
             Criterion group `serialization/{{to_json,from_json}}`: `AgentState::to_json` and \
             `AgentState::from_json` of a state with 1,000 messages (legacy mode, so tool calls and \
             results among them) and 100 step executions with their full traces.\n"
        );
        match (self.criterion.to_json, self.criterion.from_json) {
            (Some(to), Some(from)) => {
                let bytes = self.criterion_bytes();
                let mbps = |e: Estimate| bytes as f64 / (e.mean_ns / 1e9) / (1024.0 * 1024.0);
                let _ = writeln!(
                    md,
                    "| measure | value |\n| --- | ---: |\n| JSON size | {} bytes ({:.0} KiB) |\n\
                     | `to_json` | {} ({:.0} MiB/s) |\n| `from_json` | {} ({:.0} MiB/s) |\n",
                    group_digits(bytes as u64),
                    bytes as f64 / 1024.0,
                    per_call(&to),
                    mbps(to),
                    per_call(&from),
                    mbps(from)
                );
                if let Some(shape) = serialized_shape() {
                    let _ = writeln!(
                        md,
                        "The document is version 2 of the state format: every message is written \
                         once ({} here: the store's, then those only steps hold), and a step names \
                         its input, trace and response messages as runs of positions into that \
                         list. The steps of this state name {} messages in all; version 1 wrote \
                         each of them in full (14.8 MB and 37 ms / 113 ms for this state, measured \
                         before the change), so its size grew with steps × history, while version 2 \
                         grows with the conversation. Reading shares the messages again, as in the \
                         state that was written; version 1 documents are still read.\n",
                        group_digits(shape.written as u64),
                        group_digits(shape.referenced as u64)
                    );
                }
            }
            _ => {
                let _ = writeln!(md, "_Not measured in this run._\n");
            }
        }
    }

    fn criterion_bytes(&self) -> usize {
        serialized_shape().map_or(0, |shape| shape.bytes)
    }

    fn parallel_section(&self, md: &mut String) {
        let p = &self.parallel;
        let _ = writeln!(
            md,
            "## Parallel tools\n\n\
             One step with {} tool calls that each sleep {} ms (real tokio time), then the answer; \
             wall time of the whole `Agent::execute` (best of three for parallel), parallel tool \
             calls on (`ToolCallingDriver::with_parallel_tool_calls(true)`) and off.\n\n\
             ![parallel tools](benchmarks/parallel-tools.svg)\n\n\
             | mode | wall time |\n| --- | ---: |\n| parallel | {} |\n| sequential | {} |\n",
            p.calls,
            p.tool_delay.as_millis(),
            time(p.parallel.as_nanos() as f64),
            time(p.sequential.as_nanos() as f64)
        );
    }
}

fn per_call(e: &Estimate) -> String {
    format!(
        "{} ({} – {})",
        time(e.mean_ns),
        time(e.lower_ns),
        time(e.upper_ns)
    )
}

/// What the serialized benchmark state (built as in the criterion bench) holds.
struct SerializedShape {
    /// Length of `to_json`.
    bytes: usize,
    /// Messages written: the store's and `step_messages`.
    written: usize,
    /// Messages the steps name (input, trace and response lists, current step included).
    referenced: usize,
}

fn serialized_shape() -> Option<SerializedShape> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    let state = rt.block_on(agents_bench::big_state()).ok()?;
    let json = state.to_json().ok()?;
    let value: serde_json::Value = serde_json::from_str(&json).ok()?;
    let step_messages = value
        .get("step_messages")
        .and_then(serde_json::Value::as_array)
        .map_or(0, Vec::len);
    let store = state
        .store()
        .sections()
        .iter()
        .map(|section| section.messages().len())
        .sum::<usize>();
    let referenced = state
        .steps()
        .map(|step| {
            step.input_messages().len()
                + step.trace_messages().len()
                + step.response_messages().len()
        })
        .sum();
    Some(SerializedShape {
        bytes: json.len(),
        written: store + step_messages,
        referenced,
    })
}
