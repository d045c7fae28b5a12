//! Images that tools return (a screenshot tool): they travel with the tool result as content
//! parts, reach providers that take them, are described for the others, survive saving the
//! state, and are bounded in size.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agents::prelude::*;
use inference::providers::{anthropic, openai};

/// A 1×1 PNG.
const PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

fn screenshot(data: &'static str) -> FunctionTool {
    FunctionTool::new(
        "screenshot",
        "Takes a screenshot",
        move |_: serde_json::Value| async move {
            Ok::<_, ToolError>(ToolOutput::text("the login page").with_image("image/png", data))
        },
    )
}

async fn run(tool: FunctionTool, separated: bool) -> (AgentState, ScriptedModel) {
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([ToolCall::new("shot_1", "screenshot", json!({}))]),
        InferenceResponse::text("The page shows a login form."),
    ]);
    let agent = AgentBuilder::new()
        .with_model(model.clone())
        .with_tool(tool)
        .with_separated_tool_trace(separated)
        .build()
        .unwrap();
    let done = agent
        .execute(AgentState::new().with_user_message("What does the page show?"))
        .await
        .unwrap();
    (done, model)
}

#[tokio::test]
async fn a_function_tool_image_reaches_the_model_with_its_result() {
    for separated in [true, false] {
        let (done, model) = run(screenshot(PIXEL), separated).await;
        let request = &model.requests()[1];
        let result = request
            .messages
            .iter()
            .find(|m| m.tool_call_id() == Some("shot_1"))
            .unwrap();
        assert_eq!(result.text(), "the login page");
        insta::assert_json_snapshot!(
            "tool_result_with_image",
            anthropic::messages_to_anthropic(std::iter::once(result)).1
        );
        let body = openai::request_body(request, "m", false, false);
        let tool = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "tool")
            .unwrap()
            .clone();
        assert_eq!(
            tool["content"],
            "the login page\n[image: image/png, 70 bytes; not shown to the model]"
        );
        if separated {
            let options = openai::BodyOptions {
                developer_role: false,
                tool_result_images: true,
            };
            let shown = openai::request_body_with(request, "m", false, options);
            insta::assert_json_snapshot!("openai_tool_result_images", shown["messages"]);
        }
        // Saved and loaded, the image is still there.
        let reloaded = AgentState::from_json(&done.to_json().unwrap()).unwrap();
        let execution = reloaded
            .step_executions()
            .steps()
            .flat_map(|s| s.tool_executions().iter().cloned().collect::<Vec<_>>())
            .next()
            .unwrap();
        assert_eq!(execution.parts().len(), 1);
    }
}

#[tokio::test]
async fn an_image_over_the_size_limit_is_replaced_by_a_note() {
    let huge: &'static str = Box::leak(
        "A".repeat(agents::core::MAX_TOOL_IMAGE_BYTES)
            .into_boxed_str(),
    );
    let (done, model) = run(screenshot(huge), true).await;
    let result = model.requests()[1]
        .messages
        .iter()
        .find(|m| m.tool_call_id() == Some("shot_1"))
        .unwrap()
        .clone();
    assert!(result
        .content()
        .parts()
        .iter()
        .all(|p| p.as_text().is_some()));
    assert!(
        result
            .text()
            .contains("was left out: over the 5000000-byte limit"),
        "{}",
        result.text()
    );
    assert_eq!(done.status(), AgentStatus::Completed);
}
