//! Context cost: a scripted 20-turn conversation, three tool calls a turn with results of a few
//! KB each; the tokens of every request the model received, per mode, and what they cost in
//! dollars at catalog prices, with and without the providers' prompt caches.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex};

use agents::prelude::*;
use agents_processing::{EstimateTokenCounter, TokenCounter};
use async_trait::async_trait;
use inference::InferenceError;
use inference::{ModelCatalog, ModelInfo, Usage};

/// Turns in the conversation.
pub const TURNS: usize = 20;
/// Budgets of the summarizing mode: `messages` is kept within this many tokens ...
pub const MAX_MESSAGE_TOKENS: usize = 600;
/// ... and the set-aside buffer is summarized when it exceeds this many.
pub const MAX_BUFFER_TOKENS: usize = 600;
/// Token budget of the digest mode's digest of each execution (as `agents run --digest`).
pub const DIGEST_TOKENS: usize = 300;

/// Tokens sent in one mode.
#[derive(Debug, Default)]
pub struct ModeCost {
    /// Tokens sent to the agent's model in each turn (all requests of the turn).
    pub per_turn: Vec<usize>,
    /// Requests the agent's model received.
    pub requests: usize,
    /// Requests to the summarizer and the tokens they carried (summarizing mode only).
    pub summarizer_requests: usize,
    pub summarizer_tokens: usize,
    /// Messages persisted after the last turn.
    pub persisted_messages: usize,
    /// Bytes of tool results the tools produced over the conversation.
    pub tool_result_bytes: usize,
    /// Every request of the agent's model as the providers' caches see it, in order.
    pub prompts: Vec<Prompt>,
}

impl ModeCost {
    pub fn total(&self) -> usize {
        self.per_turn.iter().sum()
    }
}

/// The modes.
#[derive(Debug)]
pub struct ContextCost {
    pub legacy: ModeCost,
    pub separated: ModeCost,
    pub digest: ModeCost,
    pub summarized: ModeCost,
}

fn question(turn: usize) -> String {
    format!(
        "Turn {turn}: the `orders-{turn}` service times out under load. Find the handler, check its \
         configuration and tell me what to change."
    )
}

fn answer(turn: usize) -> String {
    format!(
        "The handler `handle_order_{turn}` in src/orders_{turn}.rs awaits the inventory call while \
         holding the connection pool lock, and config/orders_{turn}.json sets `pool_size` to 4 with \
         a 30 s timeout. Release the lock before the call and raise `pool_size` to 16; the p99 \
         should drop well below the timeout."
    )
}

fn script() -> Vec<InferenceResponse> {
    let mut responses = Vec::new();
    for turn in 0..TURNS {
        responses.push(InferenceResponse::with_tool_calls([ToolCall::new(
            format!("t{turn}_search"),
            "search",
            json!({"pattern": format!("handle_order_{turn}")}),
        )]));
        responses.push(InferenceResponse::with_tool_calls([
            ToolCall::new(
                format!("t{turn}_src"),
                "read_file",
                json!({"path": format!("src/orders_{turn}.rs")}),
            ),
            ToolCall::new(
                format!("t{turn}_cfg"),
                "read_file",
                json!({"path": format!("config/orders_{turn}.json")}),
            ),
        ]));
        responses.push(InferenceResponse::text(answer(turn)));
    }
    responses
}

/// About 2.5 KB of search results as JSON.
fn search_result(pattern: &str) -> String {
    let matches: Vec<serde_json::Value> = (0..22)
        .map(|i| {
            json!({
                "path": format!("src/services/module_{i}.rs"),
                "line": 40 + i * 7,
                "text": format!("    let result = {pattern}(request, &ctx).await?; // call site {i}"),
            })
        })
        .collect();
    serde_json::to_string_pretty(&json!({"pattern": pattern, "matches": matches}))
        .unwrap_or_default()
}

/// About 3 KB of Rust source, or 2.5 KB of JSON configuration.
fn file_contents(path: &str) -> String {
    if path.ends_with(".json") {
        let routes: Vec<serde_json::Value> = (0..14)
            .map(|i| json!({"path": format!("/v1/orders/{i}"), "method": "POST", "timeout_ms": 30000, "retries": 2}))
            .collect();
        return serde_json::to_string_pretty(&json!({
            "service": path,
            "pool_size": 4,
            "timeout_s": 30,
            "routes": routes,
        }))
        .unwrap_or_default();
    }
    let mut text = format!("//! {path}: order handling.\n\nuse crate::inventory::Inventory;\n\n");
    for i in 0..12 {
        text.push_str(&format!(
            "/// Handles step {i} of an order.\npub async fn handle_order_step_{i}(pool: &Pool, order: &Order) -> Result<(), Error> {{\n    let conn = pool.lock().await;\n    let stock = Inventory::check(&conn, order.sku, {i}).await?;\n    conn.commit(order.id, stock)?;\n    Ok(())\n}}\n\n"
        ));
    }
    text
}

fn tools(bytes: Arc<Mutex<usize>>) -> Vec<Arc<dyn Tool>> {
    let b1 = Arc::clone(&bytes);
    let search = FunctionTool::untyped(
        "search",
        "Search the code base for a pattern; JSON list of matches",
        json!({"type": "object", "properties": {"pattern": {"type": "string"}}, "required": ["pattern"]}),
        move |args: serde_json::Value, _context| {
            let out = search_result(args["pattern"].as_str().unwrap_or_default());
            if let Ok(mut total) = b1.lock() {
                *total += out.len();
            }
            async move { Ok::<_, ToolError>(out) }
        },
    );
    let read = FunctionTool::untyped(
        "read_file",
        "Read a file of the project",
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        move |args: serde_json::Value, _context| {
            let out = file_contents(args["path"].as_str().unwrap_or_default());
            if let Ok(mut total) = bytes.lock() {
                *total += out.len();
            }
            async move { Ok::<_, ToolError>(out) }
        },
    );
    vec![Arc::new(search), Arc::new(read)]
}

/// Tokens of one request as a model reads it: messages plus tool schemas.
fn request_tokens(request: &InferenceRequest) -> usize {
    let counter = EstimateTokenCounter;
    let tools: usize = request
        .tools
        .iter()
        .map(|t| counter.count_text(&format!("{} {} {}", t.name, t.description, t.parameters)))
        .sum();
    counter.count_messages(&request.messages) + tools
}

/// A scripted summarizer: answers every request with the same compact summary and counts what
/// it was sent.
#[derive(Clone, Default)]
struct Summarizer {
    sent: Arc<Mutex<Vec<usize>>>,
}

#[async_trait]
impl LanguageModel for Summarizer {
    async fn complete(
        &self,
        request: InferenceRequest,
    ) -> Result<InferenceResponse, InferenceError> {
        if let Ok(mut sent) = self.sent.lock() {
            sent.push(request_tokens(&request));
        }
        Ok(InferenceResponse::text(
            "The user is debugging time-outs in the orders services. Each handler holds the \
             connection pool lock across the inventory call, and each service config sets \
             pool_size 4 with a 30 s timeout. Advice so far for every service: release the lock \
             before the call and raise pool_size to 16.",
        ))
    }
}

#[derive(Clone, Copy)]
enum Mode {
    Legacy,
    Separated,
    Digest,
    Summarized,
}

fn run(mode: Mode) -> Result<ModeCost, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let model = ScriptedModel::new(script());
    let bytes = Arc::new(Mutex::new(0usize));
    let summarizer = Summarizer::default();
    let mut builder = AgentBuilder::new()
        .with_model(model.clone())
        .with_system_prompt("You are a senior engineer. Use the tools to inspect the code base.")
        .with_tools(tools(Arc::clone(&bytes)))
        .with_parallel_tool_calls(true)
        .with_separated_tool_trace(!matches!(mode, Mode::Legacy));
    if matches!(mode, Mode::Digest) {
        builder = builder.with_trace_retention(TraceRetention::digest(DIGEST_TOKENS));
    }
    if matches!(mode, Mode::Summarized) {
        builder = builder.with_capability(
            UseSummarization::new(summarizer.clone())
                .with_max_message_tokens(MAX_MESSAGE_TOKENS)
                .with_max_buffer_tokens(MAX_BUFFER_TOKENS)
                .with_max_summary_tokens(256),
        );
    }
    let agent = builder.build().map_err(|e| e.to_string())?;
    let mut state = AgentState::new();
    let mut cost = ModeCost::default();
    for turn in 0..TURNS {
        let before = model.requests().len();
        state = rt
            .block_on(agent.execute(state.with_user_message(question(turn))))
            .map_err(|e| format!("turn {turn}: {e}"))?;
        let answered = state.final_response().map(|m| m.text()) == Some(answer(turn));
        if !answered {
            return Err(format!("turn {turn} did not end with the scripted answer"));
        }
        let requests = model.requests();
        cost.per_turn
            .push(requests[before..].iter().map(request_tokens).sum());
    }
    let requests = model.requests();
    cost.requests = requests.len();
    cost.prompts = requests
        .iter()
        .zip(script())
        .map(|(request, response)| Prompt::of(request, &response))
        .collect();
    if let Ok(sent) = summarizer.sent.lock() {
        cost.summarizer_requests = sent.len();
        cost.summarizer_tokens = sent.iter().sum();
    }
    cost.persisted_messages = state.messages().len();
    cost.tool_result_bytes = bytes.lock().map(|b| *b).unwrap_or(0);
    Ok(cost)
}

pub fn measure() -> Result<ContextCost, String> {
    Ok(ContextCost {
        legacy: run(Mode::Legacy)?,
        separated: run(Mode::Separated)?,
        digest: run(Mode::Digest)?,
        summarized: run(Mode::Summarized)?,
    })
}

/// One request as a prompt cache sees it: blocks in the order the provider reads them (the
/// tool definitions, then each message), each with its tokens and an identity to compare
/// prefixes, and where the Anthropic provider puts its cache breakpoints.
#[derive(Clone, Debug)]
pub struct Prompt {
    /// Tokens of each block.
    tokens: Vec<usize>,
    /// Hash of each prefix: `prefix_hashes[p]` identifies blocks `0..p`.
    prefix_hashes: Vec<u64>,
    /// Prefix lengths (in blocks) that end at a `cache_control` breakpoint, ascending.
    breakpoints: Vec<usize>,
    /// The breakpoint on the last message, when it is not also the end of the persistent
    /// conversation (for the comparison without it).
    tail_breakpoint: Option<usize>,
    /// Tokens of the answer.
    output_tokens: usize,
}

impl Prompt {
    fn of(request: &InferenceRequest, response: &InferenceResponse) -> Self {
        let counter = EstimateTokenCounter;
        let tools: String = request
            .tools
            .iter()
            .map(|t| format!("{} {} {}", t.name, t.description, t.parameters))
            .collect::<Vec<_>>()
            .join(" ");
        let mut keys = vec![tools.clone()];
        let mut tokens = vec![counter.count_text(&tools)];
        for message in request.messages.iter() {
            keys.push(serde_json::to_string(message).unwrap_or_default());
            tokens.push(counter.count_message(message));
        }
        let mut hasher = DefaultHasher::new();
        let mut prefix_hashes = vec![hasher.finish()];
        for key in &keys {
            key.hash(&mut hasher);
            prefix_hashes.push(hasher.finish());
        }
        // The breakpoints `inference::providers::anthropic::request_body` sets: the tool
        // definitions, the system prompt, the end of the persistent conversation and the
        // last message (message `i` is block `i + 1`).
        let messages = request.messages.len();
        let mut breakpoints = vec![1];
        if request
            .messages
            .iter()
            .next()
            .is_some_and(|m| m.role().is_system())
        {
            breakpoints.push(2);
        }
        let mut tail_breakpoint = None;
        if messages > 0 {
            let last = messages - 1;
            let stable = request
                .cache_breakpoint
                .filter(|i| *i < last)
                .unwrap_or(last);
            breakpoints.extend([stable + 2, last + 2]);
            tail_breakpoint = (stable != last).then_some(last + 2);
        }
        breakpoints.sort_unstable();
        breakpoints.dedup();
        let answer =
            Message::assistant(response.content()).with_tool_calls(response.tool_calls().to_vec());
        Self {
            tokens,
            prefix_hashes,
            breakpoints,
            tail_breakpoint,
            output_tokens: counter.count_message(&answer),
        }
    }

    fn prefix_tokens(&self, blocks: usize) -> usize {
        self.tokens[..blocks].iter().sum()
    }

    fn total(&self) -> usize {
        self.tokens.iter().sum()
    }
}

/// How the provider's prompt cache is modelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Caching {
    /// No cache: every input token at the input price.
    Off,
    /// Anthropic, as documented: a prefix ending at a `cache_control` breakpoint is written
    /// (at the cache-write price) when at least 1,024 tokens long; a later request reads (at
    /// the cache-read price) the longest written prefix it repeats unchanged that ends at one
    /// of its own breakpoints or up to 20 blocks before one; the tokens from there to its last
    /// breakpoint are written. Every request is within the 5-minute lifetime of the last.
    Anthropic,
    /// As `Anthropic`, without the breakpoint on the last message (only tools, system prompt
    /// and the end of the persistent conversation).
    AnthropicWithoutTail,
    /// OpenAI, as documented: automatic; a request reads the longest prefix it shares with an
    /// earlier request, from 1,024 tokens on and in steps of 128, at the cached-input price;
    /// nothing is charged for writing.
    OpenAi,
}

/// The usage a provider would bill for these prompts under `caching` (input split into
/// uncached, cache reads and cache writes; output as counted).
pub fn billed_usage(prompts: &[Prompt], caching: Caching) -> Usage {
    const MIN_CACHED: usize = 1024;
    const LOOKBACK: usize = 20;
    let mut written: HashSet<u64> = HashSet::new();
    let mut usage = Usage::default();
    for prompt in prompts {
        let total = prompt.total();
        usage.output_tokens += prompt.output_tokens as u64;
        let (read, write) = match caching {
            Caching::Off => (0, 0),
            Caching::OpenAi => {
                let shared = (1..prompt.prefix_hashes.len())
                    .rev()
                    .find(|p| written.contains(&prompt.prefix_hashes[*p]))
                    .map_or(0, |p| prompt.prefix_tokens(p));
                written.extend(prompt.prefix_hashes[1..].iter().copied());
                let read = if shared >= MIN_CACHED {
                    MIN_CACHED + (shared - MIN_CACHED) / 128 * 128
                } else {
                    0
                };
                (read, 0)
            }
            Caching::Anthropic | Caching::AnthropicWithoutTail => {
                let breakpoints: Vec<usize> = prompt
                    .breakpoints
                    .iter()
                    .copied()
                    .filter(|b| caching == Caching::Anthropic || Some(*b) != prompt.tail_breakpoint)
                    .collect();
                let read = breakpoints
                    .iter()
                    .flat_map(|b| (b.saturating_sub(LOOKBACK).max(1)..=*b).rev())
                    .filter(|p| written.contains(&prompt.prefix_hashes[*p]))
                    .map(|p| prompt.prefix_tokens(p))
                    .max()
                    .unwrap_or(0);
                let cached_end = breakpoints
                    .iter()
                    .filter(|b| prompt.prefix_tokens(**b) >= MIN_CACHED)
                    .copied()
                    .inspect(|b| {
                        written.insert(prompt.prefix_hashes[*b]);
                    })
                    .max();
                let write = cached_end.map_or(0, |b| prompt.prefix_tokens(b).saturating_sub(read));
                (read, write)
            }
        };
        usage.input_tokens += (total - read - write) as u64;
        usage.cache_read_tokens += read as u64;
        usage.cache_write_tokens += write as u64;
    }
    usage
}

/// The priced modes, in table order.
pub fn priced_modes(c: &ContextCost) -> [(&'static str, &ModeCost); 3] {
    [
        ("legacy", &c.legacy),
        ("separated", &c.separated),
        ("digest", &c.digest),
    ]
}

/// One model and cache setting: the billed usage and dollars of each priced mode.
pub struct PricedRow {
    pub model: ModelInfo,
    pub caching: Caching,
    /// Legacy, separated, digest.
    pub modes: [(Usage, f64); 3],
}

/// Dollars for every priced mode with and without caching, for each model.
pub fn dollar_table(c: &ContextCost, models: &[(ModelInfo, Caching)]) -> Vec<PricedRow> {
    let mut rows = Vec::new();
    for (model, caching) in models {
        for caching in [Caching::Off, *caching] {
            let costs = priced_modes(c).map(|(_, mode)| {
                let usage = billed_usage(&mode.prompts, caching);
                (usage, usage.cost(model).total_usd())
            });
            rows.push(PricedRow {
                model: model.clone(),
                caching,
                modes: costs,
            });
        }
    }
    rows
}

/// `docs/cost.md`: the conversation in dollars.
pub fn cost_markdown(
    c: &ContextCost,
    catalog: &ModelCatalog,
    models: &[&str],
) -> Result<String, String> {
    use std::fmt::Write as _;
    let mut chosen = Vec::new();
    for name in models {
        let info = catalog
            .lookup(name)
            .ok_or_else(|| format!("`{name}` is not in the model catalog"))?;
        let caching = if info.provider == "anthropic" {
            Caching::Anthropic
        } else {
            Caching::OpenAi
        };
        chosen.push((info, caching));
    }
    let rows = dollar_table(c, &chosen);
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# What the context costs, in dollars\n\n\
         Generated by `bench-report --cost-only --docs docs` (part of `cargo xtask bench`); do \
         not edit by hand.\n\n\
         The conversation of the context-cost benchmark ([benchmarks.md](benchmarks.md)): \
         {TURNS} turns, each a `search` call, two `read_file` calls in one step and an answer (3 \
         model requests a turn), priced with the built-in model catalog (prices taken {}; see \
         `crates/inference/data/models.json` for the pages they came from). Tokens are counted \
         with `EstimateTokenCounter`; output tokens are the same in every mode.\n\n\
         - **legacy**: every tool call and result persists.\n\
         - **separated**: tool traces live in the execution buffer; questions and answers persist.\n\
         - **digest**: separated, plus a digest of each execution's tool calls (at most \
         {DIGEST_TOKENS} tokens) persists.\n\n\
         The cache is modelled as the providers document it. **Anthropic**: the request carries \
         `cache_control` breakpoints where this library puts them (tool definitions, system \
         prompt, end of the persistent conversation, last message); a prefix ending at a \
         breakpoint is written at the cache-write price (1,024 tokens at least) and read at the \
         cache-read price by a later request that repeats it unchanged, within 20 blocks before \
         one of its own breakpoints. **OpenAI**: automatic; the longest prefix shared with an \
         earlier request is read at the cached-input price from 1,024 tokens on, in steps of 128 \
         tokens; writes are free. Both: every request within the cache lifetime (5 minutes) of \
         the one before; blocks are whole messages (a real cache may match part of one).\n",
        catalog.prices_taken().unwrap_or("on an unknown date")
    );
    let _ = writeln!(
        md,
        "| model | prompt cache | legacy | separated | digest |\n| --- | --- | ---: | ---: | ---: |"
    );
    for PricedRow {
        model,
        caching,
        modes: costs,
    } in &rows
    {
        let cache = if *caching == Caching::Off {
            "off"
        } else {
            "on"
        };
        let _ = writeln!(
            md,
            "| `{}` | {cache} | ${:.2} | ${:.2} | ${:.2} |",
            model.name, costs[0].1, costs[1].1, costs[2].1
        );
    }
    let _ = writeln!(md, "\nSeparated mode with the prompt cache against legacy mode without it (goal: at most 15%):\n");
    for pair in rows.chunks(2) {
        if let [off, on] = pair {
            let _ = writeln!(
                md,
                "- `{}`: ${:.2} against ${:.2}, **{:.1}%** (legacy with the cache: {:.1}%; digest with the cache: {:.1}%)",
                on.model.name,
                on.modes[1].1,
                off.modes[0].1,
                100.0 * on.modes[1].1 / off.modes[0].1,
                100.0 * on.modes[0].1 / off.modes[0].1,
                100.0 * on.modes[2].1 / off.modes[0].1,
            );
        }
    }
    for (model, caching) in chosen.iter().filter(|(_, c)| *c == Caching::Anthropic) {
        let with = billed_usage(&c.separated.prompts, *caching)
            .cost(model)
            .total_usd();
        let without = billed_usage(&c.separated.prompts, Caching::AnthropicWithoutTail)
            .cost(model)
            .total_usd();
        let _ = writeln!(
            md,
            "\nThe breakpoint on the last message (the fourth, after tools, system prompt and the \
             end of the persistent conversation) lets each step of a run read the previous step's \
             trace from the cache: separated mode on `{}` costs ${with:.3} with it, ${without:.3} \
             without it.",
            model.name
        );
    }
    let _ = writeln!(
        md,
        "\nTokens billed with the cache on (input / cache reads / cache writes / output):\n"
    );
    let _ = writeln!(
        md,
        "| model | legacy | separated | digest |\n| --- | --- | --- | --- |"
    );
    for PricedRow {
        model,
        caching,
        modes: costs,
    } in &rows
    {
        if *caching == Caching::Off {
            continue;
        }
        let cell = |u: &Usage| {
            format!(
                "{} / {} / {} / {}",
                u.input_tokens, u.cache_read_tokens, u.cache_write_tokens, u.output_tokens
            )
        };
        let _ = writeln!(
            md,
            "| `{}` | {} | {} | {} |",
            model.name,
            cell(&costs[0].0),
            cell(&costs[1].0),
            cell(&costs[2].0)
        );
    }
    let _ = writeln!(
        md,
        "\nWhy separated mode and the cache work together: legacy mode re-sends every earlier \
         tool result, so its prompts grow fast; the cache makes re-reading them cheaper but every \
         new turn still writes (Anthropic) or sends (OpenAI) its whole new trace once, and the \
         reads grow quadratically. Separated mode keeps the persistent prefix small and stable \
         (questions and answers), so almost every prompt is a cheap cache read of that prefix \
         plus the current execution's own trace."
    );
    Ok(md)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A prompt of blocks `(identity, tokens)` with a breakpoint on its last block.
    fn prompt(blocks: &[(u64, usize)]) -> Prompt {
        let mut hasher = DefaultHasher::new();
        let mut prefix_hashes = vec![hasher.finish()];
        for (key, _) in blocks {
            key.hash(&mut hasher);
            prefix_hashes.push(hasher.finish());
        }
        Prompt {
            tokens: blocks.iter().map(|(_, t)| *t).collect(),
            prefix_hashes,
            breakpoints: vec![blocks.len()],
            tail_breakpoint: None,
            output_tokens: 10,
        }
    }

    #[test]
    fn a_repeated_prefix_is_read_and_the_rest_written_or_sent() {
        let first = prompt(&[(1, 1500), (2, 500)]);
        let second = prompt(&[(1, 1500), (2, 500), (3, 700)]);
        let other = prompt(&[(9, 3000)]);
        let prompts = [first, second, other];

        let off = billed_usage(&prompts, Caching::Off);
        assert_eq!((off.input_tokens, off.cache_read_tokens), (7700, 0));
        assert_eq!(off.output_tokens, 30);

        let anthropic = billed_usage(&prompts, Caching::Anthropic);
        assert_eq!(
            anthropic.cache_read_tokens, 2000,
            "the first prompt, read by the second"
        );
        assert_eq!(anthropic.cache_write_tokens, 2000 + 700 + 3000);
        assert_eq!(anthropic.input_tokens, 0);

        let openai = billed_usage(&prompts, Caching::OpenAi);
        // 2000 shared tokens: 1024, then whole steps of 128.
        assert_eq!(openai.cache_read_tokens, 1024 + 7 * 128);
        assert_eq!(openai.cache_write_tokens, 0);
        assert_eq!(openai.input_tokens, 7700 - 1920);
    }

    #[test]
    fn short_prefixes_are_not_cached() {
        let prompts = [prompt(&[(1, 900)]), prompt(&[(1, 900), (2, 50)])];
        for caching in [Caching::Anthropic, Caching::OpenAi] {
            let usage = billed_usage(&prompts, caching);
            assert_eq!(usage.cache_read_tokens + usage.cache_write_tokens, 0);
        }
    }
}
