//! Subagents, structured output and self-critique through the builder, as a user runs them.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::{Arc, Mutex};

use agents::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct CityArgs {
    city: String,
}

fn weather() -> FunctionTool {
    FunctionTool::new(
        "get_weather",
        "Weather for a city",
        |a: CityArgs| async move { Ok::<_, ToolError>(format!("sunny in {}", a.city)) },
    )
}

fn spawn(id: &str, subagent: &str, prompt: &str) -> InferenceResponse {
    InferenceResponse::with_tool_calls([ToolCall::new(
        id,
        "spawn_subagent",
        json!({"subagent": subagent, "prompt": prompt}),
    )])
}

fn tool_results(request: &InferenceRequest) -> Vec<String> {
    request
        .messages
        .iter()
        .filter(|m| m.role() == Role::Tool)
        .map(|m| m.text())
        .collect()
}

fn researcher() -> SubagentDefinition {
    SubagentDefinition::new(
        "researcher",
        "Looks things up",
        "You research one question.",
    )
}

#[tokio::test]
async fn a_subagent_runs_with_inherited_hooks_and_listeners_and_returns_only_its_answer() {
    // One script for both agents (the child inherits the model): parent call, child tool call,
    // child answer, parent answer.
    let model = ScriptedModel::new([
        spawn("c1", "researcher", "Weather in Oslo?"),
        InferenceResponse::with_tool_calls([ToolCall::new(
            "c2",
            "get_weather",
            json!({"city": "Oslo"}),
        )]),
        InferenceResponse::text("Oslo: sunny."),
        InferenceResponse::text("The researcher says Oslo is sunny."),
    ]);
    let hooked = Arc::new(Mutex::new(Vec::new()));
    let events = Arc::new(Mutex::new(Vec::new()));
    let (h, e) = (Arc::clone(&hooked), Arc::clone(&events));
    let agent = AgentBuilder::new()
        .with_model(model.clone())
        .with_tool(weather())
        .with_capability(UseSubagents::new([researcher()]))
        // Added after the capability: still inherited, the tool is made at build time.
        .on_before_tool(move |call, ctx| {
            h.lock()
                .unwrap()
                .push((call.name().to_owned(), ctx.agent_id.to_string()));
            ToolHookDecision::proceed(call)
        })
        .on_event(move |event| {
            e.lock().unwrap().push((
                event.name(),
                event.agent_id().to_owned(),
                event.source().parent_agent_id.clone(),
            ))
        })
        .build()
        .unwrap();

    let state = AgentState::new().with_user_message("How is Oslo?");
    let parent_id = state.agent_id().to_owned();
    let done = agent.execute(state).await.unwrap();

    assert_eq!(done.status(), AgentStatus::Completed);
    assert_eq!(
        done.final_response().unwrap().text(),
        "The researcher says Oslo is sunny."
    );
    // The parent's model saw only the child's final answer as the tool result.
    let last = model.requests().last().cloned().unwrap();
    assert_eq!(tool_results(&last), vec!["Oslo: sunny.".to_owned()]);
    // The child got its own system prompt and the prompt, not the parent's conversation.
    let child_first = &model.requests()[1];
    let child_texts: Vec<String> = child_first.messages.iter().map(|m| m.text()).collect();
    assert_eq!(
        child_texts,
        vec!["You research one question.", "Weather in Oslo?"]
    );
    // The parent's hook ran for the parent's call and the child's call.
    let hooked = hooked.lock().unwrap().clone();
    assert_eq!(hooked.len(), 2);
    assert_eq!(hooked[0], ("spawn_subagent".to_owned(), parent_id.clone()));
    assert_eq!(hooked[1].0, "get_weather");
    assert_ne!(hooked[1].1, parent_id);
    // The child's events reached the parent's listener, carrying the parent's id.
    let events = events.lock().unwrap().clone();
    let child_events: Vec<_> = events
        .iter()
        .filter(|(_, _, parent)| parent.as_deref() == Some(parent_id.as_str()))
        .collect();
    assert!(child_events
        .iter()
        .any(|(name, _, _)| *name == "execution_completed"));
    assert!(child_events
        .iter()
        .any(|(name, _, _)| *name == "tool_call_completed"));
}

#[tokio::test]
async fn nesting_beyond_the_depth_limit_is_refused_with_a_message_to_the_model() {
    let model = ScriptedModel::new([
        spawn("c1", "researcher", "Dig deeper"),
        spawn("c2", "researcher", "Dig even deeper"), // the child tries to nest
        InferenceResponse::text("Did it myself."),
        InferenceResponse::text("Done."),
    ]);
    let agent = AgentBuilder::new()
        .with_model(model.clone())
        .with_capability(UseSubagents::new([researcher()]).with_max_depth(1))
        .build()
        .unwrap();
    let done = agent
        .execute(AgentState::new().with_user_message("Go"))
        .await
        .unwrap();
    assert_eq!(done.final_response().unwrap().text(), "Done.");
    let requests = model.requests();
    assert_eq!(requests.len(), 4);
    let refused = tool_results(&requests[2]);
    assert_eq!(refused.len(), 1);
    assert!(
        refused[0].contains("maximum subagent nesting depth (1) reached"),
        "{refused:?}"
    );
    assert_eq!(
        tool_results(&requests[3]),
        vec!["Did it myself.".to_owned()]
    );
}

#[tokio::test]
async fn unknown_subagents_list_the_available_ones_and_long_answers_are_cut() {
    let model = ScriptedModel::new([
        spawn("c1", "poet", "Write"),
        spawn("c2", "researcher", "Write a lot"),
        InferenceResponse::text("abcdefghijklmnop"),
        InferenceResponse::text("ok"),
    ]);
    let agent = AgentBuilder::new()
        .with_model(model.clone())
        .with_capability(UseSubagents::new([researcher()]).with_max_result_chars(5))
        .build()
        .unwrap();
    agent
        .execute(AgentState::new().with_user_message("Go"))
        .await
        .unwrap();
    let requests = model.requests();
    let unknown = tool_results(&requests[1]);
    assert!(unknown[0].contains("researcher"), "{unknown:?}");
    assert!(unknown[0].contains("poet"), "{unknown:?}");
    assert_eq!(tool_results(&requests[3])[1], "abcde...");
}

#[tokio::test]
async fn a_subagent_with_its_own_model_and_restricted_tools() {
    let parent = ScriptedModel::new([
        spawn("c1", "researcher", "Weather?"),
        InferenceResponse::text("done"),
    ]);
    let child = ScriptedModel::new([InferenceResponse::text("child answer")]);
    let agent = AgentBuilder::new()
        .with_model(parent.clone())
        .with_tool(weather())
        .with_capability(UseSubagents::new([researcher()
            .with_tools(Vec::<String>::new())
            .with_model(child.clone())]))
        .build()
        .unwrap();
    agent
        .execute(AgentState::new().with_user_message("Go"))
        .await
        .unwrap();
    assert_eq!(child.requests().len(), 1);
    assert!(child.requests()[0].tools.is_empty());
    assert_eq!(
        tool_results(&parent.requests()[1]),
        vec!["child answer".to_owned()]
    );
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct Contact {
    name: String,
    age: u32,
}

#[tokio::test]
async fn structured_output_is_validated_retried_and_stored_in_metadata() {
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([ToolCall::new(
            "c1",
            "structured_output",
            json!({"schema": "contact", "data": {"name": "Ada", "age": "old"}}),
        )]),
        InferenceResponse::with_tool_calls([ToolCall::new(
            "c2",
            "structured_output",
            json!({"schema": "contact", "data": {"name": "Ada", "age": 36}}),
        )]),
        InferenceResponse::text("Saved."),
    ]);
    let agent = AgentBuilder::new()
        .with_model(model.clone())
        .with_capability(
            UseStructuredOutput::new()
                .with_schema::<Contact>("contact", "A person")
                .stored_as("person"),
        )
        .with_separated_tool_trace(true)
        .build()
        .unwrap();
    let done = agent
        .execute(AgentState::new().with_user_message("Ada is 36"))
        .await
        .unwrap();
    assert_eq!(done.status(), AgentStatus::Completed);
    let error = &tool_results(&model.requests()[1])[0];
    assert!(error.contains("age"), "{error}");
    assert!(error.contains("must be an integer"), "{error}");
    let stored: Contact = UseStructuredOutput::read(&done, "person").unwrap().unwrap();
    assert_eq!(
        stored,
        Contact {
            name: "Ada".into(),
            age: 36
        }
    );
}

fn verdict(approved: bool, feedback: &str) -> InferenceResponse {
    InferenceResponse::text(json!({"approved": approved, "feedback": feedback}).to_string())
}

#[tokio::test]
async fn a_rejected_answer_forces_one_more_step_then_the_bound_stops_it() {
    let model = ScriptedModel::new([
        InferenceResponse::text("Paris is in Spain."),
        InferenceResponse::text("Paris is in France."),
    ]);
    let critic = ScriptedModel::new([verdict(false, "Paris is in France.")]);
    let agent = AgentBuilder::new()
        .with_model(model.clone())
        .with_capability(UseSelfCritique::new(critic.clone()).with_max_iterations(1))
        .with_separated_tool_trace(true)
        .build()
        .unwrap();
    let done = agent
        .execute(AgentState::new().with_user_message("Where is Paris?"))
        .await
        .unwrap();
    assert_eq!(done.status(), AgentStatus::Completed);
    assert_eq!(done.step_count(), 2);
    assert_eq!(critic.requests().len(), 1); // the bound was reached: no second review
    assert!(critic.requests()[0]
        .messages
        .get(1)
        .unwrap()
        .text()
        .contains("Paris is in Spain."));
    let second = &model.requests()[1];
    let texts: Vec<String> = second.messages.iter().map(|m| m.text()).collect();
    assert_eq!(texts[0], "Where is Paris?");
    assert_eq!(texts[1], "Paris is in Spain.");
    assert!(texts[2].starts_with("[Critique]") && texts[2].contains("Paris is in France."));
    // Only the question and the accepted answer persist.
    let persisted: Vec<String> = done.messages().iter().map(|m| m.text()).collect();
    assert_eq!(persisted, vec!["Where is Paris?", "Paris is in France."]);
    assert!(done.store().section(EXECUTION_BUFFER_SECTION).is_empty());
}

#[tokio::test]
async fn an_approving_or_failing_critic_lets_the_answer_stand() {
    for critic in [
        ScriptedModel::new([verdict(true, "")]),
        ScriptedModel::new([]), // runs out: an error, which approves
    ] {
        let model = ScriptedModel::new([InferenceResponse::text("42")]);
        let agent = AgentBuilder::new()
            .with_model(model)
            .with_capability(UseSelfCritique::new(critic))
            .build()
            .unwrap();
        let done = agent
            .execute(AgentState::new().with_user_message("?"))
            .await
            .unwrap();
        assert_eq!(done.status(), AgentStatus::Completed);
        assert_eq!(done.step_count(), 1);
    }
}

#[tokio::test]
async fn in_legacy_mode_the_critique_persists_with_the_rejected_answer() {
    let model = ScriptedModel::new([
        InferenceResponse::text("draft"),
        InferenceResponse::text("better"),
        InferenceResponse::text("best"),
    ]);
    let critic = ScriptedModel::new([verdict(false, "more"), verdict(false, "even more")]);
    let agent = AgentBuilder::new()
        .with_model(model)
        .with_capability(UseSelfCritique::new(critic.clone()).with_max_iterations(2))
        .build()
        .unwrap();
    let done = agent
        .execute(AgentState::new().with_user_message("write"))
        .await
        .unwrap();
    assert_eq!(done.step_count(), 3);
    let roles: Vec<Role> = done.messages().iter().map(|m| m.role()).collect();
    assert_eq!(
        roles,
        vec![
            Role::User,
            Role::Assistant,
            Role::User,
            Role::Assistant,
            Role::User,
            Role::Assistant
        ]
    );
    assert_eq!(done.final_response().unwrap().text(), "best");
}

#[tokio::test]
async fn the_step_limit_still_wins_over_the_critic() {
    let model = ScriptedModel::new([InferenceResponse::text("draft")]);
    let critic = ScriptedModel::new([verdict(false, "no")]);
    let agent = AgentBuilder::new()
        .with_model(model)
        .with_capability(UseSelfCritique::new(critic))
        .with_max_steps(1)
        .build()
        .unwrap();
    let done = agent
        .execute(AgentState::new().with_user_message("?"))
        .await
        .unwrap();
    assert_eq!(done.step_count(), 1);
    assert_eq!(done.stop_reason(), Some(StopReason::StepsLimit));
}

#[test]
fn the_capability_tools_tell_the_model_what_they_take() {
    let agent = AgentBuilder::new()
        .with_model(ScriptedModel::new([]))
        .with_capability(UseSubagents::new([
            researcher(),
            SubagentDefinition::new("coder", "Writes code", "You write code."),
        ]))
        .with_capability(UseStructuredOutput::new().with_schema::<Contact>("contact", "A person"))
        .build()
        .unwrap();
    let mut schemas = agent.tools().schemas().to_vec();
    schemas.sort_by(|a, b| a.name.cmp(&b.name));
    insta::assert_json_snapshot!(schemas);
}

#[tokio::test]
async fn with_several_schemas_the_data_is_checked_against_the_chosen_one() {
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([ToolCall::new(
            "c1",
            "structured_output",
            json!({"schema": "contact", "data": {"name": "Ada"}}),
        )]),
        InferenceResponse::with_tool_calls([ToolCall::new(
            "c2",
            "structured_output",
            json!({"schema": "tag", "data": {"label": "vip"}}),
        )]),
        InferenceResponse::text("Done."),
    ]);
    let agent = AgentBuilder::new()
        .with_model(model.clone())
        .with_capability(
            UseStructuredOutput::new()
                .with_schema::<Contact>("contact", "A person")
                .with_json_schema(
                    "tag",
                    "A label",
                    json!({"type": "object", "properties": {"label": {"type": "string"}}, "required": ["label"]}),
                ),
        )
        .build()
        .unwrap();
    let done = agent
        .execute(AgentState::new().with_user_message("Ada, vip"))
        .await
        .unwrap();
    let error = &tool_results(&model.requests()[1])[0];
    assert!(error.contains("does not match schema `contact`"), "{error}");
    assert!(error.contains("age"), "{error}");
    assert!(done.metadata().get("contact").is_none());
    assert_eq!(done.metadata().get("tag"), Some(&json!({"label": "vip"})));
}

#[tokio::test]
async fn a_failing_subagent_is_a_tool_error_for_the_parent() {
    let parent = ScriptedModel::new([
        spawn("c1", "researcher", "Weather?"),
        InferenceResponse::text("The researcher failed; sorry."),
    ]);
    let broken = ScriptedModel::new([]); // the child's model has nothing to say: an error
    let agent = AgentBuilder::new()
        .with_model(parent.clone())
        .with_capability(UseSubagents::new([researcher().with_model(broken)]))
        .with_error_policy(ErrorPolicy::retry_tool_errors(1))
        .build()
        .unwrap();
    let done = agent
        .execute(AgentState::new().with_user_message("Go"))
        .await
        .unwrap();
    assert_eq!(done.status(), AgentStatus::Completed);
    let error = &tool_results(&parent.requests()[1])[0];
    assert!(error.contains("subagent `researcher` failed"), "{error}");
}

#[tokio::test]
async fn before_tool_hooks_can_rewrite_a_call() {
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([ToolCall::new(
            "c1",
            "get_weather",
            json!({"city": "Oslo"}),
        )]),
        InferenceResponse::text("ok"),
    ]);
    let agent = AgentBuilder::new()
        .with_model(model.clone())
        .with_tool(weather())
        .on_before_tool(|call, _| {
            ToolHookDecision::proceed(&ToolCall::new(
                call.id(),
                call.name(),
                json!({"city": "Bergen"}),
            ))
        })
        .build()
        .unwrap();
    agent
        .execute(AgentState::new().with_user_message("Go"))
        .await
        .unwrap();
    assert_eq!(
        tool_results(&model.requests()[1]),
        vec!["sunny in Bergen".to_owned()]
    );
}
