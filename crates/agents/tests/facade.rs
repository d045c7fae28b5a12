//! The facade as a user sees it: the API.md example verbatim, build errors, trace modes and the
//! capabilities installed through the builder.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::{Arc, Mutex};

use agents::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct WeatherArgs {
    city: String,
}

fn weather() -> FunctionTool {
    FunctionTool::new(
        "get_weather",
        "Current weather for a city",
        |args: WeatherArgs| async move {
            Ok::<_, ToolError>(format!("22°C and sunny in {}", args.city))
        },
    )
}

#[tokio::test]
async fn the_api_contract_example_works_as_written() -> Result<(), Box<dyn std::error::Error>> {
    let weather = FunctionTool::new(
        "get_weather",
        "Current weather for a city",
        |args: WeatherArgs| async move {
            Ok::<_, ToolError>(format!("22°C and sunny in {}", args.city))
        },
    );

    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([ToolCall::new(
            "call_1",
            "get_weather",
            json!({"city": "Paris"}),
        )]),
        InferenceResponse::text("It is 22°C and sunny in Paris."),
    ]);

    let agent = AgentBuilder::new()
        .with_model(model)
        .with_tool(weather)
        .with_system_prompt("You are a helpful assistant.")
        .with_separated_tool_trace(true)
        .with_max_steps(10)
        .build()?;

    let state = AgentState::new().with_user_message("What's the weather in Paris?");
    let done = agent.execute(state).await?;

    assert_eq!(done.status(), AgentStatus::Completed);
    assert_eq!(
        done.final_response().unwrap().text(),
        "It is 22°C and sunny in Paris."
    );
    assert_eq!(done.messages().len(), 2);
    assert!(done.store().section(EXECUTION_BUFFER_SECTION).is_empty());
    assert_eq!(done.step_executions().len(), 2);
    Ok(())
}

#[tokio::test]
async fn legacy_is_the_default_and_the_system_prompt_is_sent_but_not_stored() {
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([ToolCall::new(
            "call_1",
            "get_weather",
            json!({"city": "Rome"}),
        )]),
        InferenceResponse::text("Sunny in Rome."),
    ]);
    let agent = AgentBuilder::new()
        .with_model(model.clone())
        .with_tool(weather())
        .with_system_prompt("Be brief.")
        .build()
        .unwrap();
    let done = agent
        .execute(AgentState::new().with_user_message("Rome?"))
        .await
        .unwrap();
    assert_eq!(
        done.messages().len(),
        4,
        "user, tool call, tool result, answer"
    );
    let first_request = &model.requests()[0];
    assert_eq!(first_request.messages.first().unwrap().role(), Role::System);
    assert_eq!(first_request.tools.len(), 1);
    assert!(done.messages().iter().all(|m| m.role() != Role::System));

    // A second turn continues the conversation.
    model.push(InferenceResponse::text("Still sunny."));
    let again = agent
        .execute(done.with_user_message("And now?"))
        .await
        .unwrap();
    assert_eq!(again.final_response().unwrap().text(), "Still sunny.");
    assert_eq!(model.requests()[2].messages.len(), 1 + 4 + 1);
}

#[test]
fn build_errors_say_what_to_fix() {
    let missing = AgentBuilder::new().build().unwrap_err();
    assert_eq!(missing, BuildError::MissingModel);
    assert!(missing.to_string().contains("with_model"));

    let duplicate = AgentBuilder::new()
        .with_model(ScriptedModel::default())
        .with_tool(weather())
        .with_tool(weather())
        .build()
        .unwrap_err();
    assert_eq!(
        duplicate,
        BuildError::DuplicateTool {
            name: "get_weather".into()
        }
    );

    let zero = AgentBuilder::new()
        .with_model(ScriptedModel::default())
        .with_max_steps(0)
        .build()
        .unwrap_err();
    assert_eq!(zero, BuildError::ZeroStepLimit);

    let bad_root = AgentBuilder::new()
        .with_model(ScriptedModel::default())
        .with_capability(UseFileTools::new("/definitely/not/here"))
        .build()
        .unwrap_err();
    assert!(
        matches!(bad_root, BuildError::Capability { ref capability, .. } if capability == "files")
    );
}

#[tokio::test]
async fn step_limit_and_events_through_the_builder() {
    let model = ScriptedModel::new((0..5).map(|i| {
        InferenceResponse::with_tool_calls([ToolCall::new(
            format!("c{i}"),
            "get_weather",
            json!({"city": "Oslo"}),
        )])
    }));
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    let agent = AgentBuilder::new()
        .with_model(model)
        .with_tool(weather())
        .with_max_steps(2)
        .with_separated_tool_trace(true)
        .on_event(move |e| sink.lock().unwrap().push(format!("{e:?}")))
        .build()
        .unwrap();
    let done = agent
        .execute(AgentState::new().with_user_message("loop"))
        .await
        .unwrap();
    assert_eq!(done.stop_reason(), Some(StopReason::StepsLimit));
    assert_eq!(done.step_count(), 2);
    assert!(done.store().section(EXECUTION_BUFFER_SECTION).is_empty());
    let events = events.lock().unwrap();
    assert!(events.iter().any(|e| e.contains("ToolCallCompleted")));
    assert!(events.iter().any(|e| e.contains("ExecutionCompleted")));
}

#[tokio::test]
async fn file_and_bash_capabilities_refuse_escapes_and_denied_commands() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "hello from the sandbox\n").unwrap();
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([
            ToolCall::new("c1", "read_file", json!({"path": "notes.txt"})),
            ToolCall::new("c2", "read_file", json!({"path": "../../etc/passwd"})),
            ToolCall::new("c3", "bash", json!({"command": "echo hi && rm -rf /"})),
            ToolCall::new("c4", "bash", json!({"command": "echo from-bash"})),
        ]),
        InferenceResponse::text("done"),
    ]);
    let agent = AgentBuilder::new()
        .with_model(model.clone())
        .with_capability(UseFileTools::new(dir.path()))
        .with_capability(UseBash::new(dir.path()))
        .build()
        .unwrap();
    let done = agent
        .execute(AgentState::new().with_user_message("go"))
        .await
        .unwrap();
    let executions: Vec<_> = done
        .step_executions()
        .get(0)
        .unwrap()
        .step()
        .tool_executions()
        .iter()
        .cloned()
        .collect();
    assert!(executions[0]
        .result_text()
        .contains("hello from the sandbox"));
    assert!(executions[1].has_error());
    assert!(
        executions[1].result_text().contains("escapes"),
        "{}",
        executions[1].result_text()
    );
    assert!(
        executions[2]
            .result_text()
            .to_lowercase()
            .contains("blocked")
            || executions[2].has_error(),
        "{}",
        executions[2].result_text()
    );
    assert!(executions[3].result_text().contains("from-bash"));
    assert_eq!(
        done.status(),
        AgentStatus::Completed,
        "tool errors are retried, not fatal"
    );
}

#[tokio::test]
async fn summarization_capability_keeps_the_conversation_within_budget() {
    let summarizer = ScriptedModel::new([InferenceResponse::text(
        "Earlier: the user talked about long things.",
    )]);
    let model = ScriptedModel::new([InferenceResponse::text("ok")]);
    let agent = AgentBuilder::new()
        .with_model(model)
        .with_separated_tool_trace(true)
        .with_capability(
            UseSummarization::new(summarizer)
                .with_max_message_tokens(200)
                .with_max_buffer_tokens(100),
        )
        .build()
        .unwrap();
    let mut state = AgentState::new();
    for i in 0..8 {
        let messages = state
            .messages()
            .appended(Message::user(format!("{i} {}", "long text ".repeat(20))));
        state = state.with_messages(messages);
    }
    let done = agent
        .execute(state.with_user_message("now?"))
        .await
        .unwrap();
    assert_eq!(done.store().section(SUMMARY_SECTION).len(), 1);
    assert!(done.store().section(BUFFER_SECTION).is_empty());
    assert!(done.messages().len() < 10);
    assert_eq!(
        done.messages_for_inference().first().unwrap().role(),
        Role::System
    );
}

#[tokio::test]
async fn react_through_the_builder_stops_on_the_final_answer() {
    let model = ScriptedModel::new([
        InferenceResponse::text(
            r#"{"thought":"look it up","type":"call_tool","tool":"get_weather","args":{"city":"Nice"}}"#,
        ),
        InferenceResponse::text(
            r#"```json
{"thought":"done","type":"final_answer","answer":"Nice is sunny."}
```"#,
        ),
    ]);
    let agent = AgentBuilder::new()
        .with_react(model)
        .with_tool(weather())
        .with_separated_tool_trace(true)
        .build()
        .unwrap();
    let done = agent
        .execute(AgentState::new().with_user_message("Nice?"))
        .await
        .unwrap();
    assert_eq!(done.final_response().unwrap().text(), "Nice is sunny.");
    assert_eq!(done.messages().len(), 2);
    assert_eq!(done.step_count(), 2);
}
