#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::Path;

use agents::capabilities::{
    ListMetadataTool, LoadSkillTool, MetadataPolicy, ReadMetadataTool, SkillError, SkillLibrary,
    StoreMetadataTool, ToolRegistryTool, UseMetadataTools, UseSkills, UseToolRegistry,
};
use agents::prelude::*;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn skills_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("pdf-tools/SKILL.md"),
        "---\nname: pdf\ndescription: Extract text and tables from PDF files\nlicense: MIT\n---\n\n# PDF\n\nRun `scripts/extract.py FILE`.\n",
    );
    write(
        &dir.path().join("pdf-tools/scripts/extract.py"),
        "print('x')\n",
    );
    write(
        &dir.path().join("pdf-tools/references/format.md"),
        "# format\n",
    );
    write(
        &dir.path().join("changelog/SKILL.md"),
        "Write changelog entries in the imperative mood.\n",
    );
    write(&dir.path().join("not-a-skill/README.md"), "ignored\n");
    dir
}

#[test]
fn a_skill_library_reads_front_matter_bodies_and_resources() {
    let dir = skills_dir();
    let library = SkillLibrary::load(dir.path()).unwrap();
    assert_eq!(library.names(), ["changelog", "pdf"]);
    let pdf = library.get("pdf").unwrap();
    assert_eq!(pdf.description, "Extract text and tables from PDF files");
    assert_eq!(
        pdf.resources,
        ["references/format.md", "scripts/extract.py"]
    );
    insta::assert_snapshot!(pdf.render(), @r#"
    <skill name="pdf">
    # PDF

    Run `scripts/extract.py FILE`.

    ## Available Resources
    - references/format.md
    - scripts/extract.py
    </skill>
    "#);
    assert_eq!(
        library.list_text(),
        "- [changelog]: \n- [pdf]: Extract text and tables from PDF files"
    );
    assert_eq!(
        SkillLibrary::load(dir.path().join("missing"))
            .unwrap()
            .list_text(),
        "(no skills available)"
    );
}

#[test]
fn malformed_front_matter_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("bad/SKILL.md"),
        "---\nname: [unclosed\n---\nbody\n",
    );
    let error = SkillLibrary::load(dir.path()).unwrap_err();
    assert!(matches!(error, SkillError::FrontMatter { .. }));
    assert!(
        error
            .to_string()
            .contains("bad/SKILL.md: invalid front matter"),
        "{error}"
    );
}

#[tokio::test]
async fn load_skill_lists_loads_and_reports_unknown_skills() {
    let dir = skills_dir();
    let tool = LoadSkillTool::new(SkillLibrary::load(dir.path()).unwrap());
    let context = ToolContext::new("agent");
    let listed = tool.call(json!({}), &context).await.unwrap();
    assert!(
        listed.content().contains("- [pdf]: Extract text"),
        "{}",
        listed.content()
    );
    let loaded = tool
        .call(json!({"skill_name": "pdf"}), &context)
        .await
        .unwrap();
    assert!(loaded.content().starts_with("<skill name=\"pdf\">"));
    let unknown = tool
        .call(json!({"skill_name": "excel"}), &context)
        .await
        .unwrap_err();
    assert_eq!(
        unknown.message(),
        "Skill 'excel' not found.\n\nAvailable skills:\n- [changelog]: \n- [pdf]: Extract text and tables from PDF files"
    );
    let wrong = tool
        .call(json!({"skill_name": 3}), &context)
        .await
        .unwrap_err();
    assert!(matches!(wrong, ToolError::InvalidArguments(_)));
}

#[tokio::test]
async fn use_skills_shows_the_list_to_the_model_and_loads_on_demand() {
    let dir = skills_dir();
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([ToolCall::new(
            "c1",
            "load_skill",
            json!({"skill_name": "pdf"}),
        )]),
        InferenceResponse::text("Use extract.py."),
        InferenceResponse::text("Still pdf."),
    ]);
    let agent = AgentBuilder::new()
        .with_model(model.clone())
        .with_system_prompt("You are helpful.")
        .with_capability(UseSkills::new(dir.path()))
        .build()
        .unwrap();
    let done = agent
        .execute(AgentState::new().with_user_message("How do I read a PDF?"))
        .await
        .unwrap();
    assert_eq!(done.final_response().unwrap().text(), "Use extract.py.");

    let requests = model.requests();
    let first: Vec<String> = requests[0].messages.iter().map(|m| m.text()).collect();
    assert!(
        first
            .iter()
            .any(|t| t.contains("Available skills:\n- [changelog]: \n- [pdf]")),
        "{first:#?}"
    );
    let second: Vec<String> = requests[1].messages.iter().map(|m| m.text()).collect();
    assert!(
        second.iter().any(|t| t.starts_with("<skill name=\"pdf\">")),
        "{second:#?}"
    );

    // The list is configuration: it is in every request's prefix, after the system prompt,
    // and never in the conversation a session stores.
    let again = agent
        .execute(done.with_user_message("And again?"))
        .await
        .unwrap();
    assert!(
        !again
            .messages()
            .iter()
            .any(|m| m.text().contains("Available skills:")),
        "the list is not state"
    );
    for request in model.requests() {
        let texts: Vec<String> = request.messages.iter().map(|m| m.text()).collect();
        assert_eq!(texts[0], "You are helpful.", "{texts:#?}");
        assert!(texts[1].contains("Available skills:"), "{texts:#?}");
        assert_eq!(
            texts
                .iter()
                .filter(|t| t.contains("Available skills:"))
                .count(),
            1,
            "{texts:#?}"
        );
    }

    // A conversation an older version saved with the list in it loses that copy.
    let old = AgentState::new()
        .with_messages(vec![Message::system(
            "<skills>\nAvailable skills:\n- [gone]: an old skill\n</skills>",
        )
        .with_metadata(agents::capabilities::SKILLS_LIST_KEY, true)])
        .with_user_message("Hello");
    let model = ScriptedModel::new([InferenceResponse::text("Hi.")]);
    let agent = AgentBuilder::new()
        .with_model(model.clone())
        .with_capability(UseSkills::new(dir.path()))
        .build()
        .unwrap();
    let done = agent.execute(old).await.unwrap();
    assert!(!done.messages().iter().any(|m| m.text().contains("[gone]")));
    let sent: Vec<String> = model.requests()[0]
        .messages
        .iter()
        .map(|m| m.text())
        .collect();
    assert!(!sent.iter().any(|t| t.contains("[gone]")), "{sent:#?}");
    assert!(sent.iter().any(|t| t.contains("[pdf]")), "{sent:#?}");
}

#[tokio::test]
async fn store_metadata_persists_valid_values_and_refuses_reserved_or_oversized_ones() {
    let big = "x".repeat(70_000);
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([
            ToolCall::new(
                "c1",
                "store_metadata",
                json!({"key": "city", "value": "Paris"}),
            ),
            ToolCall::new("c2", "store_metadata", json!({"key": "tasks", "value": []})),
            ToolCall::new("c3", "store_metadata", json!({"key": "blob", "value": big})),
        ]),
        InferenceResponse::with_tool_calls([
            ToolCall::new("c4", "read_metadata", json!({"key": "city"})),
            ToolCall::new("c5", "list_metadata", json!({})),
        ]),
        InferenceResponse::text("Noted: Paris."),
    ]);
    let agent = AgentBuilder::new()
        .with_model(model.clone())
        .with_error_policy(ErrorPolicy::ignore_tool_errors())
        .with_capability(UseMetadataTools::new())
        .build()
        .unwrap();
    let done = agent
        .execute(AgentState::new().with_user_message("Remember Paris."))
        .await
        .unwrap();
    assert_eq!(done.final_response().unwrap().text(), "Noted: Paris.");
    assert_eq!(done.metadata().get("city"), Some(&json!("Paris")));
    assert!(done.metadata().get("tasks").is_none());
    assert!(done.metadata().get("blob").is_none());

    let steps: Vec<&AgentStep> = done.steps().collect();
    let first: Vec<String> = steps[0]
        .tool_executions()
        .iter()
        .map(|e| e.result_text())
        .collect();
    assert!(
        first[1].starts_with("Error: The key 'tasks' is reserved."),
        "{}",
        first[1]
    );
    assert!(
        first[2].contains("the limit is 65536 bytes"),
        "{}",
        first[2]
    );
    let second: Vec<String> = steps[1]
        .tool_executions()
        .iter()
        .map(|e| e.result_text())
        .collect();
    assert_eq!(second[0], r#"{"key":"city","value":"Paris"}"#);
    assert_eq!(
        second[1],
        r#"{"count":1,"keys":[{"key":"city","type":"string"}]}"#
    );
}

#[tokio::test]
async fn metadata_tools_validate_their_arguments_directly() {
    let context = ToolContext::new("agent");
    let store = StoreMetadataTool::new(MetadataPolicy {
        max_keys: 0,
        ..MetadataPolicy::default()
    });
    let full = store
        .call(json!({"key": "a", "value": 1}), &context)
        .await
        .unwrap_err();
    assert!(full.message().contains("limit"), "{}", full.message());
    let empty = StoreMetadataTool::default()
        .call(json!({"key": " ", "value": 1}), &context)
        .await
        .unwrap_err();
    assert_eq!(empty.message(), "The key must be a non-empty string.");
    let missing = ReadMetadataTool
        .call(json!({"key": "nope"}), &context)
        .await
        .unwrap_err();
    assert_eq!(
        missing.message(),
        "No metadata stored under 'nope'. Stored keys: (none)"
    );
    let listed = ListMetadataTool.call(json!({}), &context).await.unwrap();
    assert_eq!(listed.content(), r#"{"count":0,"keys":[]}"#);
}

fn registry_over_an_agents_tools() -> ToolRegistryTool {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Args {
        city: String,
    }
    let weather = FunctionTool::new(
        "get_weather",
        "Current weather for a city. Uses a web service.",
        |a: Args| async move { Ok::<_, ToolError>(a.city) },
    );
    let root = tempfile::tempdir().unwrap();
    let builder = AgentBuilder::new()
        .with_tool(weather)
        .with_capability(UseFileTools::read_only(root.path()));
    ToolRegistryTool::new(builder.tools().iter().cloned())
}

#[tokio::test]
async fn the_tools_tool_lists_explains_and_searches_the_agents_tools() {
    let registry = registry_over_an_agents_tools();
    let context = ToolContext::new("agent");
    let listed = registry
        .call(json!({"action": "list"}), &context)
        .await
        .unwrap();
    let value = listed.value().unwrap();
    let names: Vec<&str> = value["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["get_weather", "list_dir", "read_file", "search_files"]
    );
    assert_eq!(value["tools"][0]["summary"], "Current weather for a city.");

    let help = registry
        .call(json!({"action": "help", "tool": "get_weather"}), &context)
        .await
        .unwrap();
    assert_eq!(
        help.value().unwrap()["tool"]["parameters"]["required"],
        json!(["city"])
    );

    let found = registry
        .call(
            json!({"action": "search", "query": "WEATHER city"}),
            &context,
        )
        .await
        .unwrap();
    assert_eq!(found.value().unwrap()["count"], 1);

    let unknown = registry
        .call(json!({"action": "help", "tool": "bash"}), &context)
        .await
        .unwrap_err();
    assert_eq!(
        unknown.message(),
        "Unknown tool 'bash'. Available tools: get_weather, list_dir, read_file, search_files"
    );
    let bad = registry
        .call(json!({"action": "delete"}), &context)
        .await
        .unwrap_err();
    assert!(matches!(bad, ToolError::InvalidArguments(_)));
    let limit = registry
        .call(json!({"action": "list", "limit": 0}), &context)
        .await
        .unwrap_err();
    assert!(limit.message().contains("1 to 100"));
}

#[tokio::test]
async fn use_tool_registry_sees_the_tools_installed_before_it() {
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([ToolCall::new(
            "c1",
            "tools",
            json!({"action": "list"}),
        )]),
        InferenceResponse::text("done"),
    ]);
    let root = tempfile::tempdir().unwrap();
    let agent = AgentBuilder::new()
        .with_model(model.clone())
        .with_capability(UseFileTools::read_only(root.path()))
        .with_capability(UseToolRegistry)
        .build()
        .unwrap();
    let done = agent
        .execute(AgentState::new().with_user_message("what can you do?"))
        .await
        .unwrap();
    let step = done.steps().next().unwrap();
    let result = step.tool_executions().iter().next().unwrap().result_text();
    assert!(result.contains(r#""count":3"#), "{result}");
    assert!(!result.contains(r#""name":"tools""#));
    let schemas: Vec<String> = model.requests()[0]
        .tools
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert!(schemas.contains(&"tools".to_owned()));
}
