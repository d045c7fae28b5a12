//! Streaming the answer to stdout as it arrives: `with_streaming(true)` and the
//! `AgentEvent::TextDelta` events.
//!
//! Run with `cargo run --example streaming_tokens`. Needs nothing: without `OPENAI_BASE_URL`
//! a scripted model answers (in one piece, as a non-streaming server would). With
//! `OPENAI_BASE_URL` (and `OPENAI_MODEL`, `OPENAI_API_KEY` if needed) set, it streams from that
//! OpenAI-compatible server, e.g. a local llama-server (see docs/local-servers.md).

#![allow(clippy::print_stdout)]

use std::io::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use agents::prelude::*;
use agents::AgentEvent;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let builder = if std::env::var_os("OPENAI_BASE_URL").is_some() {
        AgentBuilder::new().with_model(OpenAiCompatible::from_env()?)
    } else {
        AgentBuilder::new().with_model(ScriptedModel::new([InferenceResponse::text(
            "Rust is a systems language with memory safety without a garbage collector.",
        )]))
    };
    let streamed = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&streamed);
    let agent = builder
        .with_streaming(true)
        .on_event(move |event| {
            if let AgentEvent::TextDelta { delta, .. } = event {
                counter.fetch_add(delta.len(), Ordering::Relaxed);
                print!("{delta}");
                let _ = std::io::stdout().flush();
            }
        })
        .build()?;
    let done = agent
        .execute(AgentState::new().with_user_message("Describe Rust in one sentence."))
        .await?;
    println!();
    let answer = done.final_response().ok_or("no answer")?.text();
    // Everything printed came from the stream, and the stream was the whole answer.
    if streamed.load(Ordering::Relaxed) != answer.len() {
        return Err(format!(
            "streamed {} bytes, the answer has {}",
            streamed.load(Ordering::Relaxed),
            answer.len()
        )
        .into());
    }
    println!(
        "({} tokens in, {} out)",
        done.usage().input_tokens,
        done.usage().output_tokens
    );
    Ok(())
}
