//! Tools that change while an agent runs (`ToolSource`): each step offers, and runs, the
//! tools the source has at that step.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::{Arc, Mutex};

use agents_core::{
    Agent, AgentState, FunctionTool, StepsLimit, Tool, ToolCallPresenceCheck, ToolSource,
};
use async_trait::async_trait;
use drivers_toolcalling::ToolCallingDriver;
use inference::{InferenceResponse, ScriptedModel};
use messages::ToolCall;
use serde_json::{json, Value};

/// A source whose list the test changes, as an MCP server announcing a new list would.
#[derive(Default)]
struct Switchable {
    tools: Mutex<Vec<Arc<dyn Tool>>>,
}

impl Switchable {
    fn offer(&self, names: &[&'static str]) {
        *self.tools.lock().unwrap() = names
            .iter()
            .map(|&name| {
                let tool = FunctionTool::new(name, "A tool.", move |_: Value| async move {
                    Ok::<_, String>(format!("{name} ran"))
                });
                Arc::new(tool) as Arc<dyn Tool>
            })
            .collect();
    }
}

#[async_trait]
impl ToolSource for Switchable {
    async fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools.lock().unwrap().clone()
    }
}

fn call(id: &str, name: &str) -> InferenceResponse {
    InferenceResponse::with_tool_calls([ToolCall::new(id, name, json!({}))])
}

fn offered(model: &ScriptedModel, request: usize) -> Vec<String> {
    let mut names: Vec<String> = model.requests()[request]
        .tools
        .iter()
        .map(|t| t.name.clone())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn each_step_offers_and_runs_the_tools_the_source_has_then() {
    let source = Arc::new(Switchable::default());
    source.offer(&["old_tool"]);
    let model = ScriptedModel::new([
        call("c1", "old_tool"),
        call("c2", "new_tool"),
        call("c3", "old_tool"),
        InferenceResponse::text("done"),
    ]);
    let own = FunctionTool::new("own", "The agent's own tool.", |_: Value| async {
        Ok::<_, String>("own".to_owned())
    });
    let agent = Agent::new(ToolCallingDriver::new(model.clone()))
        .with_tool(own)
        .with_tool_source(Arc::clone(&source) as Arc<dyn ToolSource>)
        .with_criterion(ToolCallPresenceCheck::new())
        .with_criterion(StepsLimit::new(6));

    let mut state = AgentState::new().with_user_message("go");
    state = agent.step(state).await.unwrap();
    // The server's list changes between steps.
    source.offer(&["new_tool"]);
    let state = agent.execute(state).await.unwrap();

    assert_eq!(offered(&model, 0), ["old_tool", "own"]);
    assert_eq!(offered(&model, 1), ["new_tool", "own"]);
    let results: Vec<(String, bool)> = state
        .steps()
        .flat_map(|s| s.tool_executions().iter())
        .map(|e| (e.call().name().to_owned(), !e.has_error()))
        .collect();
    // The tool removed from the list is no longer run: an unknown-tool error for the model.
    assert_eq!(
        results,
        [
            ("old_tool".to_owned(), true),
            ("new_tool".to_owned(), true),
            ("old_tool".to_owned(), false)
        ]
    );
}

#[tokio::test]
async fn a_source_tool_never_replaces_an_agent_tool_of_the_same_name() {
    let source = Arc::new(Switchable::default());
    source.offer(&["own"]);
    let model = ScriptedModel::new([call("c1", "own"), InferenceResponse::text("done")]);
    let own = FunctionTool::new("own", "The agent's own tool.", |_: Value| async {
        Ok::<_, String>("the agent's own".to_owned())
    });
    let agent = Agent::new(ToolCallingDriver::new(model.clone()))
        .with_tool(own)
        .with_tool_source(source as Arc<dyn ToolSource>)
        .with_criterion(ToolCallPresenceCheck::new())
        .with_criterion(StepsLimit::new(4));
    let state = agent
        .execute(AgentState::new().with_user_message("go"))
        .await
        .unwrap();
    let first = state.steps().next().unwrap();
    assert_eq!(
        first.tool_executions().iter().next().unwrap().result_text(),
        "the agent's own"
    );
    assert_eq!(model.requests()[0].tools.len(), 1);
}
