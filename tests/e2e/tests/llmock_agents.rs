//! A full tool-calling run through `AgentBuilder` against llmock, in both trace modes.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agents::prelude::*;
use agents_e2e::{report, server};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct CityArgs {
    /// The city.
    city: String,
}

fn weather() -> FunctionTool {
    FunctionTool::new(
        "get_weather",
        "Get the current weather for a city",
        |args: CityArgs| async move { Ok::<_, ToolError>(format!("22°C and sunny in {}", args.city)) },
    )
}

#[tokio::test]
async fn tool_calling_run_in_both_trace_modes() {
    let Some(url) = server("E2E_LLMOCK_URL") else {
        return;
    };
    for separated in [false, true] {
        let model = OpenAiCompatible::builder()
            .base_url(format!("{url}/v1"))
            .model("gpt-4o-mini")
            .build()
            .unwrap();
        let agent = AgentBuilder::new()
            .with_model(model)
            .with_tool(weather())
            .with_system_prompt("Use the tools.")
            .with_separated_tool_trace(separated)
            .build()
            .unwrap();
        let done = agent
            .execute(AgentState::new().with_user_message("What is the weather in Paris?"))
            .await
            .unwrap();
        assert_eq!(
            done.status(),
            AgentStatus::Completed,
            "{:?}",
            done.stop_reason()
        );
        let tool_ran = done
            .step_executions()
            .steps()
            .flat_map(|s| s.tool_executions().iter())
            .any(|e| e.name() == "get_weather" && !e.has_error());
        assert!(tool_ran, "llmock should call the offered tool");
        assert!(!done.final_response().unwrap().text().is_empty());
        let expected = if separated { 2 } else { 4 };
        assert_eq!(
            done.messages().len(),
            expected,
            "separated={separated}: {}",
            done.messages().to_transcript()
        );
        assert!(done.store().section(EXECUTION_BUFFER_SECTION).is_empty());
        report(&format!(
            "llmock agent run (separated={separated}): {} steps, {} persisted messages, usage {} tokens",
            done.step_count(),
            done.messages().len(),
            done.usage().total()
        ));
    }
}
