//! `UseBash`: the policy-bound shell tool as a capability.

use std::path::PathBuf;
use std::time::Duration;

use crate::capabilities::{BashPolicy, BashTool};
use crate::{AgentBuilder, AgentCapability};

/// How much longer the executor waits for `bash` than the policy lets a command run.
const EXECUTOR_TIMEOUT_MARGIN: Duration = Duration::from_secs(10);

/// Gives the agent the `bash` tool, run in `working_dir` under `policy` (timeout, output cap,
/// environment allow-list, deny patterns). The executor's timeout for `bash` is set 10 s above
/// the policy's, so the model sees the tool's own timeout message and the partial output.
///
/// The deny patterns are a convenience, not a security boundary: what confines a command is
/// the working directory, the clean environment and the timeout (see [`BashPolicy`]).
#[derive(Clone, Debug)]
pub struct UseBash {
    working_dir: PathBuf,
    policy: BashPolicy,
}

impl UseBash {
    /// The bash tool in `working_dir` with the default policy.
    pub fn new(working_dir: impl Into<PathBuf>) -> Self {
        Self {
            working_dir: working_dir.into(),
            policy: BashPolicy::default(),
        }
    }

    /// A copy with another policy.
    pub fn with_policy(mut self, policy: BashPolicy) -> Self {
        self.policy = policy;
        self
    }
}

impl AgentCapability for UseBash {
    fn name(&self) -> &str {
        "bash"
    }

    fn install(&self, builder: AgentBuilder) -> AgentBuilder {
        if !self.working_dir.is_dir() {
            return builder.with_capability_error(
                self.name(),
                format!(
                    "working directory `{}` is not a directory",
                    self.working_dir.display()
                ),
            );
        }
        let tool = BashTool::new(self.working_dir.clone()).with_policy(self.policy.clone());
        builder
            .with_timeout_for_tool(
                "bash",
                self.policy.timeout.saturating_add(EXECUTOR_TIMEOUT_MARGIN),
            )
            .with_tool(tool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;

    #[tokio::test]
    async fn a_policy_without_a_practical_timeout_still_installs_and_runs() {
        let dir = tempfile::tempdir().unwrap();
        let model = ScriptedModel::new([
            InferenceResponse::with_tool_calls([ToolCall::new(
                "c1",
                "bash",
                json!({"command": "echo still-runs"}),
            )]),
            InferenceResponse::text("done"),
        ]);
        let agent = AgentBuilder::new()
            .with_model(model.clone())
            .with_capability(
                UseBash::new(dir.path())
                    .with_policy(BashPolicy::default().with_timeout(Duration::MAX)),
            )
            .build()
            .unwrap();
        let done = agent
            .execute(AgentState::new().with_user_message("go"))
            .await
            .unwrap();
        assert_eq!(done.status(), AgentStatus::Completed);
        let last = model.requests().last().cloned().unwrap();
        assert!(
            last.messages.iter().any(|m| m.text() == "still-runs"),
            "{:?}",
            last.messages
        );
    }
}
