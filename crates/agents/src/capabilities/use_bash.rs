//! `UseBash`: the policy-bound shell tool as a capability.

use std::path::PathBuf;
use std::time::Duration;

use crate::capabilities::{BashPolicy, BashTool};
use crate::{AgentBuilder, AgentCapability};

/// Gives the agent the `bash` tool, run in `working_dir` under `policy` (timeout, output cap,
/// deny patterns). The executor's timeout for `bash` is set above the policy's, so the model
/// sees the tool's own timeout message and the partial output.
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
            .with_timeout_for_tool("bash", self.policy.timeout + Duration::from_secs(10))
            .with_tool(tool)
    }
}
