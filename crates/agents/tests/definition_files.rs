#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agents::definition::{
    AgentDefinition, AgentDefinitionRegistry, DefinitionError, ErrorPolicyName, LlmProvider,
    TraceMode,
};
use agents::prelude::*;

const VALID: &str = "\
version: 1
id: helper
name: Helper
description: Answers questions about the project
system_prompt: |
  You are a careful assistant.
llm:
  provider: openai
  model: gpt-4o-mini
  base_url: http://localhost:8080/v1
  temperature: 0.2
  max_tokens: 512
execution:
  max_steps: 8
  max_tokens: 50000
  timeout_sec: 120
  error_policy: retry_tool_errors
  error_policy_max_retries: 2
  trace: separated
tools:
  allow: [read_file, list_dir, bash]
  deny: [bash]
capabilities: [files, bash]
metadata:
  cost_tier: low
";

fn parse(yaml: &str) -> Result<AgentDefinition, DefinitionError> {
    AgentDefinition::from_yaml_str(yaml, "agents/helper.yaml")
}

#[test]
fn a_complete_definition_parses_into_typed_settings() {
    let definition = parse(VALID).unwrap();
    assert_eq!(definition.id, "helper");
    assert_eq!(definition.system_prompt, "You are a careful assistant.");
    assert_eq!(definition.llm.provider, LlmProvider::Openai);
    assert_eq!(
        definition.llm.base_url.as_deref(),
        Some("http://localhost:8080/v1")
    );
    assert_eq!(definition.execution.max_steps, Some(8));
    assert_eq!(
        definition.execution.error_policy,
        Some(ErrorPolicyName::RetryToolErrors)
    );
    assert_eq!(definition.execution.trace, Some(TraceMode::Separated));
    assert!(definition.tools.permits("read_file"));
    assert!(!definition.tools.permits("bash"), "deny wins over allow");
    assert!(
        !definition.tools.permits("write_file"),
        "not in the allow list"
    );
    assert_eq!(definition.capabilities, ["files", "bash"]);
    assert_eq!(definition.metadata["cost_tier"], "low");
}

/// `append_file` came after definitions that deny `write_file` were written: such a list
/// denies appending too, and an allow list naming `write_file` allows it.
#[test]
fn lists_that_name_write_file_name_append_file_too() {
    let with_tools = |tools: &str| {
        parse(&format!(
            "version: 1\nid: a\nname: A\ndescription: d\nsystem_prompt: p\n\
             llm: {{provider: anthropic, model: m}}\ntools: {tools}\n"
        ))
        .unwrap()
        .tools
    };
    let denied = with_tools("{deny: [write_file, edit_file]}");
    assert!(!denied.permits("append_file"));
    assert!(denied.permits("read_file"));
    let allowed = with_tools("{allow: [read_file, write_file]}");
    assert!(allowed.permits("append_file"));
    assert!(!allowed.permits("edit_file"));
    let only_append = with_tools("{allow: [append_file]}");
    assert!(only_append.permits("append_file"));
    assert!(!only_append.permits("write_file"));
}

#[test]
fn a_minimal_definition_needs_only_the_required_fields() {
    let yaml = "version: 1\nid: a\nname: A\ndescription: d\nsystem_prompt: p\nllm: {provider: anthropic, model: m}\n";
    let definition = parse(yaml).unwrap();
    assert_eq!(definition.execution.max_steps, None);
    assert!(definition.tools.permits("anything"));
    assert!(matches!(definition.trace_retention(), TraceRetention::Full));
}

#[test]
fn a_definition_round_trips_through_yaml() {
    let definition = parse(VALID).unwrap();
    let again = parse(&definition.to_yaml().unwrap()).unwrap();
    assert_eq!(again, definition);
}

#[test]
fn error_messages_name_the_file_and_the_field() {
    let cases: Vec<(&str, String)> = vec![
        (
            "max_steps not an integer",
            VALID.replace("max_steps: 8", "max_steps: eight"),
        ),
        (
            "negative max_steps",
            VALID.replace("max_steps: 8", "max_steps: -3"),
        ),
        (
            "zero max_steps",
            VALID.replace("max_steps: 8", "max_steps: 0"),
        ),
        ("unknown root key", format!("{VALID}colour: blue\n")),
        (
            "unknown llm key",
            VALID.replace("  max_tokens: 512", "  max_output_tokens: 512"),
        ),
        (
            "unknown execution key",
            VALID.replace("  trace: separated", "  tracing: separated"),
        ),
        ("missing id", VALID.replace("id: helper\n", "")),
        (
            "missing llm model",
            VALID.replace("  model: gpt-4o-mini\n", ""),
        ),
        ("blank name", VALID.replace("name: Helper", "name: '   '")),
        (
            "blank system prompt",
            VALID.replace("  You are a careful assistant.", "  "),
        ),
        ("version 2", VALID.replace("version: 1", "version: 2")),
        (
            "version as text",
            VALID.replace("version: 1", "version: one"),
        ),
        (
            "unknown provider",
            VALID.replace("provider: openai", "provider: gemini"),
        ),
        (
            "unknown error policy",
            VALID.replace("retry_tool_errors", "retry_forever"),
        ),
        (
            "unknown trace mode",
            VALID.replace("trace: separated", "trace: verbose"),
        ),
        (
            "tools.deny not a list",
            VALID.replace("deny: [bash]", "deny: bash"),
        ),
        (
            "blank capability",
            VALID.replace("[files, bash]", "[files, '']"),
        ),
        (
            "temperature out of range",
            VALID.replace("temperature: 0.2", "temperature: 7"),
        ),
        (
            "base_url not a URL",
            VALID.replace("http://localhost:8080/v1", "localhost"),
        ),
        (
            "malformed YAML",
            "version: 1\nid: \"unterminated\n".to_owned(),
        ),
        ("id is a list", VALID.replace("id: helper", "id: [helper]")),
        ("not a mapping", "- just\n- a list\n".to_owned()),
        ("empty file", "\n".to_owned()),
    ];
    let mut report = String::new();
    for (case, yaml) in cases {
        let error = parse(&yaml).expect_err(case);
        report.push_str(&format!("{case}:\n  {error}\n"));
    }
    insta::assert_snapshot!(report);
}

#[test]
fn configure_applies_prompt_limits_and_trace_mode_to_the_builder() {
    let definition = parse(VALID).unwrap();
    let builder = definition.configure(AgentBuilder::new());
    assert!(matches!(builder.retention(), TraceRetention::Ephemeral));
    assert!(matches!(
        parse(&VALID.replace("trace: separated", "trace: digest"))
            .unwrap()
            .trace_retention(),
        TraceRetention::Digest(_)
    ));
    let masked = VALID.replace("trace: separated", "trace: masked");
    assert!(matches!(
        parse(&masked).unwrap().trace_retention(),
        TraceRetention::Masked { keep: 2 }
    ));
    let three = masked.replace("trace: masked", "trace: masked\n  masked_executions: 3");
    assert!(matches!(
        parse(&three).unwrap().trace_retention(),
        TraceRetention::Masked { keep: 3 }
    ));
}

#[test]
fn masked_executions_needs_the_masked_trace_and_a_positive_count() {
    let separated = VALID.replace(
        "trace: separated",
        "trace: separated\n  masked_executions: 3",
    );
    let error = parse(&separated).unwrap_err().to_string();
    assert!(
        error.contains("execution.masked_executions") && error.contains("trace: masked"),
        "{error}"
    );
    let zero = VALID.replace("trace: separated", "trace: masked\n  masked_executions: 0");
    let error = parse(&zero).unwrap_err().to_string();
    assert!(error.contains("must be greater than 0"), "{error}");
}

#[tokio::test]
async fn a_configured_agent_follows_the_definitions_prompt_and_step_limit() {
    let yaml = VALID
        .replace("max_steps: 8", "max_steps: 1")
        .replace("  max_tokens: 50000\n", "");
    let definition = parse(&yaml).unwrap();
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([ToolCall::new("c1", "nothing", json!({}))]),
        InferenceResponse::text("never reached"),
    ]);
    let agent = definition
        .configure(AgentBuilder::new().with_model(model.clone()))
        .build()
        .unwrap();
    let done = agent
        .execute(AgentState::new().with_user_message("hi"))
        .await
        .unwrap();
    assert_eq!(done.stop_reason(), Some(StopReason::StepsLimit));
    let request = &model.requests()[0];
    assert_eq!(
        request.messages.iter().next().unwrap().text(),
        "You are a careful assistant."
    );
    assert_eq!(request.model.as_deref(), Some("gpt-4o-mini"));
    assert_eq!(request.max_tokens, Some(512));
}

fn write(dir: &std::path::Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

#[test]
fn a_directory_loads_sorted_reports_invalid_files_and_later_paths_override() {
    let general = tempfile::tempdir().unwrap();
    let specific = tempfile::tempdir().unwrap();
    write(general.path(), "a_helper.yaml", VALID);
    write(
        general.path(),
        "b_broken.yml",
        &VALID.replace("max_steps: 8", "max_steps: many"),
    );
    write(
        general.path(),
        "c_reviewer.yml",
        &VALID.replace("id: helper", "id: reviewer"),
    );
    write(general.path(), "notes.txt", "not a definition");
    write(
        specific.path(),
        "helper.yaml",
        &VALID.replace("name: Helper", "name: Project Helper"),
    );

    let mut registry = AgentDefinitionRegistry::new();
    let loaded = registry
        .load_paths([general.path(), specific.path()])
        .unwrap();
    assert_eq!(loaded, 3);
    assert_eq!(registry.names(), ["helper", "reviewer"]);
    assert_eq!(registry.get("helper").unwrap().name, "Project Helper");
    assert_eq!(
        registry.source_of("helper"),
        Some(specific.path().join("helper.yaml").as_path())
    );

    assert_eq!(registry.errors().len(), 1);
    let error = registry.errors()[0].to_string();
    assert!(
        error.contains("b_broken.yml: `execution.max_steps`: expected an integer"),
        "{error}"
    );

    let missing = registry.get("planner").unwrap_err().to_string();
    assert_eq!(
        missing,
        "no agent definition with id `planner` (available: helper, reviewer)"
    );
}

#[test]
fn an_unreadable_directory_is_an_error() {
    let mut registry = AgentDefinitionRegistry::new();
    let error = registry.load_directory("/definitely/not/here").unwrap_err();
    assert!(matches!(error, DefinitionError::Io { .. }));
    assert!(error
        .to_string()
        .starts_with("/definitely/not/here: cannot read"));
}

type Settings = (
    Option<usize>,
    Option<u64>,
    Option<u64>,
    Option<TraceMode>,
    Option<ErrorPolicyName>,
);

fn settings() -> impl proptest::strategy::Strategy<Value = Settings> {
    use proptest::prelude::*;
    (
        proptest::option::of(1usize..1000),
        proptest::option::of(1u64..1_000_000),
        proptest::option::of(1u64..10_000),
        proptest::option::of(prop_oneof![
            Just(TraceMode::Legacy),
            Just(TraceMode::Separated),
            Just(TraceMode::Digest)
        ]),
        proptest::option::of(prop_oneof![
            Just(ErrorPolicyName::StopOnAnyError),
            Just(ErrorPolicyName::RetryToolErrors),
            Just(ErrorPolicyName::IgnoreToolErrors),
            Just(ErrorPolicyName::RetryAll)
        ]),
    )
}

proptest::proptest! {
    #[test]
    fn any_valid_definition_round_trips_through_yaml(
        id in "[a-z][a-z0-9-]{0,20}",
        name in "[A-Za-z][A-Za-z0-9 ]{0,20}[A-Za-z0-9]",
        prompt in "[a-zA-Z0-9][ -~\n]{0,80}[a-zA-Z0-9.:#'\"]",
        (max_steps, max_tokens, timeout_sec, trace, policy) in settings(),
        deny in proptest::collection::vec("[a-z_]{1,12}", 0..4),
    ) {
        let mut definition = parse(VALID).unwrap();
        definition.id = id;
        definition.name = name;
        definition.system_prompt = prompt;
        definition.execution.max_steps = max_steps;
        definition.execution.max_tokens = max_tokens;
        definition.execution.timeout_sec = timeout_sec;
        definition.execution.trace = trace;
        definition.execution.error_policy = policy;
        definition.tools.deny = deny;
        let yaml = definition.to_yaml().unwrap();
        let again = parse(&yaml).unwrap();
        proptest::prop_assert_eq!(again, definition);
    }
}

#[tokio::test]
async fn a_definitions_approval_section_suspends_on_the_tools_it_names() {
    let yaml = format!("{VALID}approval:\n  required: [delete_file]\n");
    let definition = parse(&yaml).unwrap();
    assert_eq!(definition.approval.required, ["delete_file"]);
    assert_eq!(parse(&definition.to_yaml().unwrap()).unwrap(), definition);
    let error = parse(&format!("{VALID}approval:\n  needed: [x]\n")).unwrap_err();
    assert!(error.to_string().contains("approval"), "{error}");

    let model = ScriptedModel::new([InferenceResponse::with_tool_calls([ToolCall::new(
        "c1",
        "delete_file",
        json!({}),
    )])]);
    let agent = definition
        .configure(AgentBuilder::new().with_model(model))
        .with_tool(FunctionTool::new(
            "delete_file",
            "Deletes",
            |_: serde_json::Value| async move { Ok::<_, ToolError>("deleted") },
        ))
        .build()
        .unwrap();
    let state = agent
        .execute(AgentState::new().with_user_message("clean up"))
        .await
        .unwrap();
    assert_eq!(state.status(), AgentStatus::Suspended);
    assert_eq!(state.pending_approvals()[0].tool_name(), "delete_file");
}

#[tokio::test]
async fn a_definitions_model_settings_reach_every_request_as_one_value() {
    let definition = parse(VALID).unwrap();
    let settings = definition.llm.model_settings();
    assert_eq!(
        settings,
        ModelSettings::new("gpt-4o-mini")
            .with_temperature(0.2)
            .with_max_tokens(512)
    );
    let model = ScriptedModel::new([InferenceResponse::text("Hello.")]);
    let agent = definition
        .configure(AgentBuilder::new().with_model(model.clone()))
        .build()
        .unwrap();
    let done = agent
        .execute(AgentState::new().with_user_message("Hi"))
        .await
        .unwrap();
    assert_eq!(done.final_response().unwrap().text(), "Hello.");
    let request = model.last_request().unwrap();
    assert_eq!(request.model.as_deref(), Some("gpt-4o-mini"));
    assert_eq!(request.temperature, Some(0.2));
    assert_eq!(request.max_tokens, Some(512));
}

#[tokio::test]
async fn builder_settings_given_at_once_or_field_by_field_send_the_same_request() {
    let at_once = ScriptedModel::new([InferenceResponse::text("a")]);
    let by_field = ScriptedModel::new([InferenceResponse::text("a")]);
    let settings = ModelSettings::new("qwen2.5").with_temperature(0.0);
    for (model, builder) in [
        (
            at_once.clone(),
            AgentBuilder::new().with_model_settings(settings.clone()),
        ),
        (
            by_field.clone(),
            AgentBuilder::new()
                .with_model_name("qwen2.5")
                .with_temperature(0.0),
        ),
    ] {
        let agent = builder.with_model(model).build().unwrap();
        agent
            .execute(AgentState::new().with_user_message("Hi"))
            .await
            .unwrap();
    }
    let (a, b) = (
        at_once.last_request().unwrap(),
        by_field.last_request().unwrap(),
    );
    assert_eq!(a.model.as_deref(), Some("qwen2.5"));
    assert_eq!(
        (a.model, a.temperature, a.max_tokens),
        (b.model, b.temperature, b.max_tokens)
    );
}
