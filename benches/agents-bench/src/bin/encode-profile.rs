//! `encode-profile`: encodes the requests of a growing conversation in a loop, for
//! `valgrind --tool=callgrind` or `perf` (criterion's timing loop is not deterministic enough
//! to count instructions per request).
//!
//! ```text
//! encode-profile {openai|anthropic} {fresh|incremental} HISTORY STEPS
//! ```
//!
//! Builds a history of HISTORY messages (a system prompt, questions and answers) and five
//! tool definitions, then encodes STEPS requests, each one tool round (two messages) longer
//! than the last, as the `encoding/*` criterion benches do. Instructions per request are
//! (Ir(STEPS) − Ir(0)) / STEPS.
// A profiling driver: it prints the bytes it wrote, so the work cannot be optimised away.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::sync::Arc;

use agents_bench::history;
use inference::providers::{anthropic, openai};
use inference::{
    Anthropic, InferenceRequest, Message, Messages, OpenAiCompatible, ToolCall, ToolSchema,
};
use serde_json::json;

fn main() -> std::process::ExitCode {
    match run() {
        Ok(bytes) => {
            println!("{bytes} bytes encoded");
            std::process::ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("encode-profile: {message}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<usize, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [provider, mode, len, steps] = args.as_slice() else {
        return Err(
            "usage: encode-profile {openai|anthropic} {fresh|incremental} HISTORY STEPS".into(),
        );
    };
    let len: usize = len.parse().map_err(|_| "HISTORY must be a number")?;
    let steps: usize = steps.parse().map_err(|_| "STEPS must be a number")?;
    let tools: Arc<[ToolSchema]> = (0..5)
        .map(|i| {
            ToolSchema::new(
                format!("tool_{i}"),
                format!("Tool number {i}: looks something up and answers in a sentence."),
                json!({"type": "object", "properties": {"query": {"type": "string"}}}),
            )
        })
        .collect();
    let base = Messages::from(vec![Message::system("You answer questions about tickets.")])
        .concat(&history(len.max(1) - 1));
    let openai_model =
        OpenAiCompatible::new("http://127.0.0.1:9/v1", None, "m").map_err(|e| e.to_string())?;
    let anthropic_model = Anthropic::builder()
        .base_url("http://127.0.0.1:9")
        .model("m")
        .build()
        .map_err(|e| e.to_string())?;
    let encode = |request: &InferenceRequest| -> Result<usize, String> {
        Ok(match (provider.as_str(), mode.as_str()) {
            ("openai", "fresh") => {
                serde_json::to_vec(&openai::request_body(request, "m", true, false))
                    .map_err(|e| e.to_string())?
                    .len()
            }
            ("openai", "incremental") => openai_model
                .encode_request(request, true)
                .map_err(|e| e.to_string())?
                .len(),
            ("anthropic", "fresh") => {
                serde_json::to_vec(&anthropic::request_body(request, "m", 4096, true, true))
                    .map_err(|e| e.to_string())?
                    .len()
            }
            ("anthropic", "incremental") => anthropic_model
                .encode_request(request, true)
                .map_err(|e| e.to_string())?
                .len(),
            _ => return Err(format!("unknown provider or mode: {provider} {mode}")),
        })
    };
    let request = |messages: Messages| {
        InferenceRequest::new(messages)
            .with_shared_tools(Arc::clone(&tools))
            .with_cache_breakpoint(base.len() - 1)
    };
    // The history as the model already sent it (the incremental encoder keeps its bytes).
    let mut total = encode(&request(base.clone()))?;
    let mut messages = base.clone();
    for step in 0..steps {
        messages = messages.extended([
            Message::assistant_tool_calls([ToolCall::new(
                format!("call_{step}"),
                "tool_0",
                json!({"query": format!("ticket {step}")}),
            )]),
            Message::tool_result(format!("call_{step}"), "tool_0", "open"),
        ]);
        total += encode(&request(messages.clone()))?;
    }
    Ok(total)
}
