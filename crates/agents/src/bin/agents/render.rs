//! Printing an agent's progress as it happens.

use agents::prelude::*;

/// At most `max` characters of `text` on one line, with `...` when cut.
pub fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let cut: String = flat.chars().take(max).collect();
    format!("{cut}...")
}

/// A printer for the events of a run: tool calls, results and answers, indented.
pub fn print_event(event: &AgentEvent) {
    match event {
        AgentEvent::ToolCallStarted { call, .. } => {
            println!(
                "    -> {}({})",
                call.name(),
                one_line(&call.arguments().to_string(), 100)
            );
        }
        AgentEvent::ToolCallCompleted { execution, .. } => {
            let mark = if execution.has_error() { "!!" } else { "<-" };
            println!(
                "    {mark} {}: {}",
                execution.name(),
                one_line(&execution.result_text(), 100)
            );
        }
        AgentEvent::ToolCallBlocked { call, reason, .. } => {
            println!("    !! {} blocked: {}", call.name(), one_line(reason, 100));
        }
        AgentEvent::InferenceResponded {
            finish_reason: FinishReason::Length,
            ..
        } => {
            eprintln!(
                "warning: the model's reply was cut at its token limit (finish reason `length`); \
                 raise the limit (`llm.max_tokens`) if this repeats"
            );
        }
        AgentEvent::TextDelta { delta, .. } => {
            print!("{delta}");
        }
        _ => {}
    }
}

/// Prints the persisted conversation.
pub fn print_transcript(state: &AgentState) {
    println!(
        "--- persisted conversation ({} messages) ---",
        state.messages().len()
    );
    print!("{}", state.messages().to_transcript());
}
