//! Context cost: a scripted 20-turn conversation, three tool calls a turn with results of a few
//! KB each; the tokens of every request the model received, per mode.

use std::sync::{Arc, Mutex};

use agents::prelude::*;
use agents_processing::{EstimateTokenCounter, TokenCounter};
use async_trait::async_trait;
use inference::InferenceError;

/// Turns in the conversation.
pub const TURNS: usize = 20;
/// Budgets of the summarizing mode: `messages` is kept within this many tokens ...
pub const MAX_MESSAGE_TOKENS: usize = 600;
/// ... and the set-aside buffer is summarized when it exceeds this many.
pub const MAX_BUFFER_TOKENS: usize = 600;

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
}

impl ModeCost {
    pub fn total(&self) -> usize {
        self.per_turn.iter().sum()
    }
}

/// The three modes.
#[derive(Debug)]
pub struct ContextCost {
    pub legacy: ModeCost,
    pub separated: ModeCost,
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
    cost.requests = model.requests().len();
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
        summarized: run(Mode::Summarized)?,
    })
}
