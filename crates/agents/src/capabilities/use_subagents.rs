//! `UseSubagents`: let the agent hand a task to a specialised child agent.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agents_core::{AgentState, AgentStatus, StepOptions, Tool, ToolContext, ToolError, ToolOutput};
use async_trait::async_trait;
use inference::LanguageModel;
use serde_json::{json, Value};

use crate::{AgentBuilder, AgentCapability};

/// The name of the tool [`UseSubagents`] installs.
pub const SPAWN_SUBAGENT_TOOL: &str = "spawn_subagent";

/// Which model a subagent talks to.
#[derive(Clone, Default)]
pub enum SubagentModel {
    /// The parent's model (and driver kind).
    #[default]
    Inherit,
    /// Another model.
    Model(Arc<dyn LanguageModel>),
}

impl fmt::Debug for SubagentModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SubagentModel::Inherit => f.write_str("Inherit"),
            SubagentModel::Model(model) => write!(f, "Model({})", model.name()),
        }
    }
}

/// A child agent the parent may spawn: its name and description (shown to the parent's
/// model), its system prompt, the parent tools it may use and its model.
#[derive(Clone, Debug)]
pub struct SubagentDefinition {
    /// The name the parent's model uses to pick it.
    pub name: String,
    /// What it is good at.
    pub description: String,
    /// Its system prompt.
    pub system_prompt: String,
    /// The parent tools it may use by name; `None` inherits all of them.
    pub tools: Option<Vec<String>>,
    /// Its model.
    pub model: SubagentModel,
}

impl SubagentDefinition {
    /// A subagent that inherits the parent's tools and model.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        system_prompt: impl Into<String>,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            system_prompt: system_prompt.into(),
            tools: None,
            model: SubagentModel::Inherit,
        }
    }

    /// Restricts it to the named parent tools (the spawn tool itself must be listed for the
    /// child to spawn further subagents).
    pub fn with_tools(mut self, tools: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.tools = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    /// Lets it talk to `model` instead of the parent's.
    pub fn with_model(mut self, model: impl LanguageModel + 'static) -> Self {
        self.model = SubagentModel::Model(Arc::new(model));
        self
    }
}

/// Gives the agent a `spawn_subagent{subagent, prompt}` tool.
///
/// The child runs its own execution (separated tool trace, the parent's tool hooks, event
/// listeners, error policy and step limit; its events carry the parent's id as
/// `parent_agent_id`) and the parent receives only the child's final answer, cut at
/// [`with_max_result_chars`](Self::with_max_result_chars) (default 8000) with `...`.
/// Children may spawn children up to [`with_max_depth`](Self::with_max_depth) levels (default
/// 3), and one step of one agent runs at most
/// [`with_max_concurrent_subagents`](Self::with_max_concurrent_subagents) subagents at once
/// (default 4; with parallel tool calls, the calls past it fail at once). Calls past either
/// limit return an error to the model, which can do the task itself or spawn later. So an
/// agent tree holds at most `concurrent^depth` running subagents. The tool is created when the
/// agent is built, so it sees every tool, hook and listener configured on the builder.
#[derive(Clone, Debug)]
pub struct UseSubagents {
    definitions: Vec<SubagentDefinition>,
    max_depth: usize,
    max_concurrent: usize,
    max_result_chars: usize,
    timeout: Duration,
}

impl UseSubagents {
    /// Subagents from `definitions`.
    pub fn new(definitions: impl IntoIterator<Item = SubagentDefinition>) -> Self {
        Self {
            definitions: definitions.into_iter().collect(),
            max_depth: 3,
            max_concurrent: 4,
            max_result_chars: 8000,
            timeout: Duration::from_secs(1800),
        }
    }

    /// How deep subagents may nest (default 3: parent → child → grandchild → great-grandchild).
    pub fn with_max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// How many subagents one step of one agent may run at once (default 4; at least 1).
    pub fn with_max_concurrent_subagents(mut self, limit: usize) -> Self {
        self.max_concurrent = limit.max(1);
        self
    }

    /// How many characters of the child's answer the parent receives (default 8000).
    pub fn with_max_result_chars(mut self, chars: usize) -> Self {
        self.max_result_chars = chars;
        self
    }

    /// How long one subagent run may take (default 30 minutes).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

impl AgentCapability for UseSubagents {
    fn name(&self) -> &str {
        "subagents"
    }

    fn install(&self, builder: AgentBuilder) -> AgentBuilder {
        if self.definitions.is_empty() {
            return builder.with_capability_error(self.name(), "no subagent definitions given");
        }
        let config = Arc::new(self.clone());
        builder
            .with_timeout_for_tool(SPAWN_SUBAGENT_TOOL, self.timeout)
            .on_build(move |builder| {
                let tool = SpawnSubagentTool::new(Arc::clone(&config), builder.clone(), 0);
                builder.with_tool(tool)
            })
    }
}

/// The `spawn_subagent` tool: runs a child agent and returns its final answer.
struct SpawnSubagentTool {
    config: Arc<UseSubagents>,
    parent: AgentBuilder,
    depth: usize,
    description: String,
    running: Running,
}

/// How many calls of one tool run now, per (agent id, step number); an entry leaves the map
/// when its last call ends, so the map holds only running steps.
type Running = Arc<Mutex<HashMap<(Arc<str>, usize), usize>>>;

/// One running call, counted in [`Running`] until dropped (finished, failed or cancelled).
struct RunningCall {
    running: Running,
    key: (Arc<str>, usize),
}

impl RunningCall {
    /// Counts a new call for `key`, unless `limit` calls run already.
    fn start(running: &Running, key: (Arc<str>, usize), limit: usize) -> Option<Self> {
        let mut counts = running.lock().unwrap_or_else(PoisonError::into_inner);
        let count = counts.entry(key.clone()).or_insert(0);
        if *count >= limit {
            return None;
        }
        *count += 1;
        Some(Self {
            running: Arc::clone(running),
            key,
        })
    }
}

impl Drop for RunningCall {
    fn drop(&mut self) {
        let mut counts = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = counts.get_mut(&self.key) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                counts.remove(&self.key);
            }
        }
    }
}

impl SpawnSubagentTool {
    fn new(config: Arc<UseSubagents>, parent: AgentBuilder, depth: usize) -> Self {
        let mut description = String::from(
            "Hand a self-contained task to a specialised subagent and get back its final answer. \
             The subagent does not see this conversation: put everything it needs in `prompt`. \
             Available subagents:",
        );
        for definition in &config.definitions {
            description.push_str(&format!(
                "\n- {}: {}",
                definition.name, definition.description
            ));
        }
        Self {
            config,
            parent,
            depth,
            description,
            running: Running::default(),
        }
    }

    fn available(&self) -> String {
        self.config
            .definitions
            .iter()
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn child_builder(&self, definition: &SubagentDefinition) -> AgentBuilder {
        let model = match &definition.model {
            SubagentModel::Inherit => None,
            SubagentModel::Model(model) => Some(Arc::clone(model)),
        };
        let builder = self
            .parent
            .subagent_builder(
                &definition.system_prompt,
                definition.tools.as_deref(),
                model,
            )
            .with_name(definition.name.as_str());
        let may_spawn = definition
            .tools
            .as_ref()
            .is_none_or(|names| names.iter().any(|n| n == SPAWN_SUBAGENT_TOOL));
        if !may_spawn {
            return builder;
        }
        // The nested tool builds grandchildren from the child's configuration.
        let nested =
            SpawnSubagentTool::new(Arc::clone(&self.config), builder.clone(), self.depth + 1);
        builder
            .with_timeout_for_tool(SPAWN_SUBAGENT_TOOL, self.config.timeout)
            .with_tool(nested)
    }
}

#[async_trait]
impl Tool for SpawnSubagentTool {
    fn name(&self) -> &str {
        SPAWN_SUBAGENT_TOOL
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        let names: Vec<&str> = self
            .config
            .definitions
            .iter()
            .map(|d| d.name.as_str())
            .collect();
        json!({
            "type": "object",
            "properties": {
                "subagent": {
                    "type": "string",
                    "enum": names,
                    "description": "Which subagent to run."
                },
                "prompt": {
                    "type": "string",
                    "description": "The complete task for the subagent."
                }
            },
            "required": ["subagent", "prompt"],
            "additionalProperties": false
        })
    }

    async fn call(&self, arguments: Value, context: &ToolContext) -> Result<ToolOutput, ToolError> {
        let name = arguments
            .get("subagent")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let prompt = arguments
            .get("prompt")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .trim();
        let Some(definition) = self.config.definitions.iter().find(|d| d.name == name) else {
            return Err(ToolError::invalid_arguments(format!(
                "unknown subagent `{name}`; available: {}",
                self.available()
            )));
        };
        if prompt.is_empty() {
            return Err(ToolError::invalid_arguments(
                "`prompt` is empty: describe the task for the subagent",
            ));
        }
        if self.depth >= self.config.max_depth {
            return Err(ToolError::failed(format!(
                "maximum subagent nesting depth ({}) reached: `{name}` cannot be spawned here; \
                 do the task yourself",
                self.config.max_depth
            )));
        }
        let key = (Arc::clone(&context.agent_id), context.step_number);
        let Some(_running) = RunningCall::start(&self.running, key, self.config.max_concurrent)
        else {
            return Err(ToolError::failed(format!(
                "too many subagents at once: {} already run in this step, so `{name}` was not \
                 started; use their answers first and spawn it in a later step, or do the task \
                 yourself",
                self.config.max_concurrent
            )));
        };
        let agent = self
            .child_builder(definition)
            .build()
            .map_err(|e| ToolError::failed(format!("subagent `{name}` could not be built: {e}")))?;
        // A call that waited on the subagent's approvals resumes its saved, decided state.
        let state = match &context.resumed {
            Some(saved) => AgentState::clone(saved),
            None => agent
                .new_state()
                .with_parent_agent_id(context.agent_id.to_string())
                .with_user_message(prompt),
        };
        tracing::info!(
            target: "agents::subagents",
            parent = %context.agent_id,
            child = %state.agent_id(),
            subagent = name,
            depth = self.depth + 1,
            "spawning subagent"
        );
        let done = agent
            .execute_with(
                state,
                &StepOptions::new().with_cancellation(context.cancellation.clone()),
            )
            .await
            .map_err(|e| ToolError::failed(format!("subagent `{name}` failed: {e}")))?;
        if done.status() == AgentStatus::Suspended {
            // The child inherits the parent's approval policy: its waiting calls become the
            // parent's (the parent suspends; decisions are routed into this saved state).
            return Err(ToolError::AwaitingApproval(Box::new(
                agents_core::SuspendedRun::new(name, done),
            )));
        }
        if done.status() == AgentStatus::Failed {
            let errors = done
                .current_step()
                .map(|step| step.error_messages().join("; "))
                .unwrap_or_default();
            return Err(ToolError::failed(format!(
                "subagent `{name}` failed: {errors}"
            )));
        }
        let answer = done.final_response().map(|m| m.text()).unwrap_or_default();
        if answer.trim().is_empty() {
            return Err(ToolError::failed(format!(
                "subagent `{name}` finished without an answer"
            )));
        }
        Ok(ToolOutput::text(cap_chars(
            &answer,
            self.config.max_result_chars,
        )))
    }
}

fn cap_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_calls_are_counted_per_agent_and_step_and_forgotten_when_done() {
        let running = Running::default();
        let key = |agent: &str, step| (Arc::<str>::from(agent), step);
        let first = RunningCall::start(&running, key("a", 1), 2).unwrap();
        let second = RunningCall::start(&running, key("a", 1), 2).unwrap();
        assert!(RunningCall::start(&running, key("a", 1), 2).is_none());
        // Another step, another agent: counted apart.
        let other_step = RunningCall::start(&running, key("a", 2), 2).unwrap();
        let other_agent = RunningCall::start(&running, key("b", 1), 2).unwrap();
        drop(first);
        let third = RunningCall::start(&running, key("a", 1), 2).unwrap();
        drop((second, third, other_step, other_agent));
        assert!(running.lock().unwrap().is_empty());
    }

    #[test]
    fn answers_are_cut_at_a_char_boundary() {
        assert_eq!(cap_chars("héllo", 2), "hé...");
        assert_eq!(cap_chars("héllo", 5), "héllo");
    }
}
