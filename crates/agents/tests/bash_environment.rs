//! The bash tool's environment policy with real secrets in the agent's environment. One test in
//! its own binary: it sets process-wide variables before any other thread runs.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agents::capabilities::{BashPolicy, BashTool};
use agents::prelude::*;

#[test]
fn secrets_in_the_agents_environment_never_reach_a_command_unless_listed_by_name() {
    // Set before the runtime starts, while no other thread of this process reads the environment.
    std::env::set_var("OPENAI_API_KEY", "sk-test-not-for-commands");
    std::env::set_var("MY_SECRET_TOKEN", "token-not-for-commands");
    std::env::set_var("MY_DEPLOY_TOKEN", "token-listed-by-name");
    std::env::set_var("MY_REGION", "eu-north");
    std::env::set_var("UNLISTED_SETTING", "not-listed");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = |tool: BashTool| {
        let output =
            runtime.block_on(tool.call(json!({"command": "env"}), &ToolContext::default()));
        output.unwrap().content().to_owned()
    };

    let plain = run(BashTool::new(dir.path()));
    assert!(plain.lines().any(|l| l.starts_with("PATH=")), "{plain}");
    for secret in [
        "OPENAI_API_KEY",
        "MY_SECRET_TOKEN",
        "MY_DEPLOY_TOKEN",
        "MY_REGION",
        "UNLISTED_SETTING",
    ] {
        assert!(
            !plain.contains(secret),
            "{secret} reached the command:\n{plain}"
        );
    }
    assert!(!plain.contains("not-for-commands"), "{plain}");

    let policy = BashPolicy::default()
        .with_env_var("MY_*")
        .with_env_var("MY_DEPLOY_TOKEN");
    let configured = run(BashTool::new(dir.path()).with_policy(policy));
    let lines: Vec<&str> = configured.lines().collect();
    assert!(
        lines.contains(&"MY_DEPLOY_TOKEN=token-listed-by-name"),
        "{configured}"
    );
    assert!(lines.contains(&"MY_REGION=eu-north"), "{configured}");
    assert!(
        !configured.contains("MY_SECRET_TOKEN"),
        "a prefix passed a secret:\n{configured}"
    );
    assert!(!configured.contains("OPENAI_API_KEY"), "{configured}");
    assert!(lines.iter().any(|l| l.starts_with("PATH=")), "{configured}");
}
