//! Recovery of calls written as text is on by default for a local server and off for a hosted
//! API (which calls tools natively); the builder's setting says otherwise.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agents::inference::{
    InferenceError, InferenceRequest, InferenceResponse, LanguageModel, ScriptedModel,
};
use agents::prelude::*;
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

/// A scripted model that says it talks to `endpoint`.
struct At {
    endpoint: &'static str,
    model: ScriptedModel,
}

#[async_trait]
impl LanguageModel for At {
    async fn complete(
        &self,
        request: InferenceRequest,
    ) -> Result<InferenceResponse, InferenceError> {
        self.model.complete(request).await
    }
    fn endpoint(&self) -> Option<String> {
        Some(self.endpoint.to_owned())
    }
}

#[derive(Deserialize, JsonSchema)]
struct Path {
    path: String,
}

const CALL: &str = r#"{"name": "read_file", "arguments": {"path": "a.txt"}}"#;

async fn answer(endpoint: &'static str, setting: Option<bool>) -> String {
    let model = At {
        endpoint,
        model: ScriptedModel::new([
            InferenceResponse::text(CALL),
            InferenceResponse::text("It says hi."),
        ]),
    };
    let mut builder = AgentBuilder::new()
        .with_model(model)
        .with_tool(FunctionTool::new(
            "read_file",
            "Reads a file.",
            |args: Path| async move { Ok::<_, String>(format!("{} says hi", args.path)) },
        ));
    if let Some(setting) = setting {
        builder = builder.with_content_tool_call_recovery(setting);
    }
    let done = builder
        .build()
        .unwrap()
        .execute(AgentState::new().with_user_message("What does a.txt say?"))
        .await
        .unwrap();
    done.final_response().map(|m| m.text()).unwrap_or_default()
}

#[tokio::test]
async fn on_for_a_local_server_off_for_a_hosted_api_unless_set() {
    for local in [
        "http://127.0.0.1:8080/v1",
        "http://localhost:11434/v1",
        "http://192.168.1.5/v1",
    ] {
        assert_eq!(answer(local, None).await, "It says hi.", "{local}");
        assert_eq!(answer(local, Some(false)).await, CALL, "{local}");
    }
    for hosted in ["https://api.openai.com/v1", "https://api.anthropic.com"] {
        assert_eq!(answer(hosted, None).await, CALL, "{hosted}");
        assert_eq!(answer(hosted, Some(true)).await, "It says hi.", "{hosted}");
    }
}
