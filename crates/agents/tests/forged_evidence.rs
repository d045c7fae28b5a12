#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! Issue 32's findings, with scripted models: a reply that writes tool results itself is never
//! saved as an answer (in any trace mode), and in the separated modes the system prompt says
//! that earlier answers came from tools.

use agents::core::{ANSWERED_BY_KEY, EXECUTION_BUFFER_SECTION};
use agents::prelude::*;
use agents::processing::EXECUTION_DIGEST_KEY;
use agents::SEPARATED_TRACE_NOTE;
use drivers_toolcalling::{forged_evidence, FORGED_REPLY_KEY};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct PathArgs {
    path: String,
}

fn read_file() -> FunctionTool {
    FunctionTool::new("read_file", "Reads a file", |args: PathArgs| async move {
        Ok::<_, ToolError>(format!("{}: port = 8472", args.path))
    })
}

fn read(id: &str, path: &str) -> InferenceResponse {
    InferenceResponse::with_tool_calls([ToolCall::new(id, "read_file", json!({ "path": path }))])
}

/// What a 1.5B model wrote in issue 32 after seeing digest notes.
const FORGED_NOTE: &str = "(Notes on the tool calls behind the next answer, kept for later \
turns.)\n- read_file({\"path\":\"config.ini\"}) -> port = 80\nThe port is 80.";

fn modes() -> [(&'static str, TraceRetention); 4] {
    [
        ("legacy", TraceRetention::Full),
        ("separated", TraceRetention::Ephemeral),
        ("digest", TraceRetention::digest(300)),
        ("masked", TraceRetention::masked(2)),
    ]
}

fn agent(model: ScriptedModel, retention: TraceRetention) -> Agent {
    AgentBuilder::new()
        .with_model(model)
        .with_tool(read_file())
        .with_system_prompt("You answer questions about files.")
        .with_trace_retention(retention)
        .build()
        .unwrap()
}

fn no_persisted_forgery(state: &AgentState, mode: &str) {
    for message in state.messages().iter() {
        assert!(
            forged_evidence(&message.text(), &["read_file"]).is_none(),
            "{mode}: forged text persisted: {}",
            message.text()
        );
    }
}

#[tokio::test]
async fn a_forged_note_is_withheld_and_the_model_is_asked_to_call_the_tool() {
    for (mode, retention) in modes() {
        let model = ScriptedModel::new([
            InferenceResponse::text(FORGED_NOTE),
            read("c1", "config.ini"),
            InferenceResponse::text("The port is 8472."),
        ]);
        let done = agent(model.clone(), retention)
            .execute(AgentState::new().with_user_message("Which port does config.ini set?"))
            .await
            .unwrap();
        assert_eq!(done.status(), AgentStatus::Completed, "{mode}");
        assert_eq!(
            done.final_response().map(|m| m.text()).as_deref(),
            Some("The port is 8472."),
            "{mode}"
        );
        no_persisted_forgery(&done, mode);
        // The second request told the model why its reply was not used.
        let second = model.requests()[1].messages.to_transcript();
        assert!(
            second.contains("Your last reply was not shown"),
            "{mode}: {second}"
        );
        assert!(
            !second.contains("port = 80\n"),
            "{mode}: the forgery is not shown again"
        );
        assert!(done.store().section(EXECUTION_BUFFER_SECTION).is_empty());
    }
}

#[tokio::test]
async fn a_forgery_after_a_step_of_a_plan_is_told_the_plans_next_step() {
    // Development task d11 (1.5B model): a numbered plan, its first step's call, then a
    // `<tool_response>` of the model's own (there, after the plan written again).
    let plan = "To answer, I'll need to:\n1. Read config.ini with `read_file`.\n2. Compare the \
                port with 8080.";
    let model = ScriptedModel::new([
        InferenceResponse::text(plan).with_calls([ToolCall::new(
            "c1",
            "read_file",
            json!({"path": "config.ini"}),
        )]),
        InferenceResponse::text("<tool_response>\nport = 8472\n</tool_response>"),
        InferenceResponse::text("The port is 8472, not 8080."),
    ]);
    let done = agent(model.clone(), TraceRetention::Ephemeral)
        .execute(AgentState::new().with_user_message("Is the port in config.ini 8080?"))
        .await
        .unwrap();
    assert_eq!(
        done.final_response().map(|m| m.text()).as_deref(),
        Some("The port is 8472, not 8080.")
    );
    let third = model.requests()[2].messages.to_transcript();
    assert!(
        third.contains(
            "Call the tool you need now, then answer from what it returns. Do the next step of \
             your plan now: Compare the port with 8080."
        ),
        "{third}"
    );
    no_persisted_forgery(&done, "separated");
}

#[tokio::test]
async fn forging_twice_stops_the_run_without_saving_the_forgery() {
    for (mode, retention) in modes() {
        let template_forgery = "<tool_response>\nport = 80\n</tool_response>\nThe port is 80.";
        let model = ScriptedModel::new([
            InferenceResponse::text(FORGED_NOTE),
            InferenceResponse::text(template_forgery),
            // The synthesized answer (separated modes) forges too: the notice replaces it.
            InferenceResponse::text(FORGED_NOTE),
        ]);
        let done = agent(model, retention)
            .execute(AgentState::new().with_user_message("Which port does config.ini set?"))
            .await
            .unwrap();
        assert_eq!(
            done.stop_reason(),
            Some(StopReason::Guard),
            "{mode}: {:?}",
            done.messages().to_transcript()
        );
        assert_eq!(done.step_count(), 2, "{mode}");
        no_persisted_forgery(&done, mode);
        let last = done.messages().last().cloned().unwrap();
        if mode != "legacy" {
            // Every mode but legacy answers on stop (masked too: a refused reply in the trace
            // is no answer to the person's question).
            assert_eq!(
                last.metadata().get(ANSWERED_BY_KEY),
                Some(&json!("notice")),
                "{mode}: {}",
                last.text()
            );
        } else {
            // Legacy keeps the trace, so the refusals are the last word.
            assert!(last.metadata().contains_key(FORGED_REPLY_KEY), "{mode}");
        }
    }
}

#[tokio::test]
async fn an_ordinary_answer_that_names_a_tool_is_accepted() {
    let model = ScriptedModel::new([InferenceResponse::text(
        "`read_file(path: &str) -> String` reads a file; I used it before: the port is 8472.",
    )]);
    let done = agent(model, TraceRetention::Ephemeral)
        .execute(AgentState::new().with_user_message("How do I read a file?"))
        .await
        .unwrap();
    assert_eq!(done.step_count(), 1);
    assert!(done.final_response().unwrap().text().contains("8472"));
}

#[tokio::test]
async fn the_check_can_be_turned_off() {
    let model = ScriptedModel::new([InferenceResponse::text(FORGED_NOTE)]);
    let done = AgentBuilder::new()
        .with_model(model)
        .with_tool(read_file())
        .with_forged_evidence_check(false)
        .build()
        .unwrap()
        .execute(AgentState::new().with_user_message("Which port?"))
        .await
        .unwrap();
    assert_eq!(done.final_response().unwrap().text(), FORGED_NOTE);
}

#[tokio::test]
async fn digest_mode_persists_calls_and_results_not_a_note() {
    let model = ScriptedModel::new([
        read("c1", "config.ini"),
        InferenceResponse::text("The port is 8472."),
    ]);
    let done = agent(model, TraceRetention::digest(300))
        .execute(AgentState::new().with_user_message("Which port does config.ini set?"))
        .await
        .unwrap();
    let digest: Vec<Message> = done
        .messages()
        .iter()
        .filter(|m| m.metadata().contains_key(EXECUTION_DIGEST_KEY))
        .cloned()
        .collect();
    let roles: Vec<Role> = digest.iter().map(|m| m.role()).collect();
    assert_eq!(roles, [Role::Assistant, Role::Tool]);
    assert!(digest[0].text().is_empty(), "no assistant prose to copy");
    assert_eq!(digest[1].text(), "config.ini: port = 8472");
}

#[tokio::test]
async fn separated_modes_say_in_the_system_prompt_how_answers_were_found() {
    for (mode, retention) in modes() {
        let model = ScriptedModel::new([InferenceResponse::text("Hello.")]);
        agent(model.clone(), retention)
            .execute(AgentState::new().with_user_message("Hi"))
            .await
            .unwrap();
        let system = model.requests()[0].messages.get(0).unwrap().text();
        assert!(system.starts_with("You answer questions about files."));
        let noted = system.ends_with(SEPARATED_TRACE_NOTE);
        let separated = mode == "separated" || mode == "digest";
        assert_eq!(noted, separated, "{mode}: {system}");
    }
    // Without tools there is nothing to look up: no note.
    let model = ScriptedModel::new([InferenceResponse::text("Hello.")]);
    AgentBuilder::new()
        .with_model(model.clone())
        .with_separated_tool_trace(true)
        .build()
        .unwrap()
        .execute(AgentState::new().with_user_message("Hi"))
        .await
        .unwrap();
    assert!(model.requests()[0]
        .messages
        .iter()
        .all(|m| m.role() != Role::System));
    // And it can be turned off.
    let model = ScriptedModel::new([InferenceResponse::text("Hello.")]);
    AgentBuilder::new()
        .with_model(model.clone())
        .with_tool(read_file())
        .with_separated_tool_trace(true)
        .with_trace_mode_note(false)
        .build()
        .unwrap()
        .execute(AgentState::new().with_user_message("Hi"))
        .await
        .unwrap();
    assert!(model.requests()[0]
        .messages
        .iter()
        .all(|m| m.role() != Role::System));
}
