#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! `FunctionTool`: typed closures as tools, their schemas and argument errors.

use agents_core::tools::{
    DefaultToolExecutor, FunctionTool, Tool, ToolContext, ToolError, ToolExecutor, ToolFailureKind,
    Tools,
};
use messages::ToolCall;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct WeatherArgs {
    city: String,
}

/// Arguments of a forecast.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct ForecastArgs {
    /// The city to forecast.
    city: String,
    /// How many days ahead (1-7).
    days: u8,
    /// Temperature unit.
    unit: Option<Unit>,
    /// Where exactly.
    location: Option<Location>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Location {
    latitude: f64,
    longitude: f64,
}

fn weather() -> FunctionTool {
    FunctionTool::new(
        "get_weather",
        "Current weather for a city",
        |args: WeatherArgs| async move {
            Ok::<_, ToolError>(format!("22°C and sunny in {}", args.city))
        },
    )
}

fn forecast() -> FunctionTool {
    FunctionTool::new(
        "forecast",
        "Weather forecast",
        |args: ForecastArgs| async move {
            Ok::<_, ToolError>(format!("{} days of sun in {}", args.days, args.city))
        },
    )
}

fn call(name: &str, arguments: serde_json::Value) -> ToolCall {
    ToolCall::new("call_1", name, arguments)
}

#[tokio::test]
async fn a_typed_closure_receives_its_deserialized_arguments() {
    let output = weather()
        .call(json!({"city": "Paris"}), &ToolContext::new("agent"))
        .await
        .unwrap();
    assert_eq!(output.content(), "22°C and sunny in Paris");
    assert_eq!(output.value(), None);
}

#[tokio::test]
async fn a_closure_may_return_json_and_fail_with_a_string() {
    #[derive(Deserialize, JsonSchema)]
    struct DivideArgs {
        a: f64,
        b: f64,
    }
    let divide = FunctionTool::new("divide", "a / b", |args: DivideArgs| async move {
        if args.b == 0.0 {
            return Err("cannot divide by zero".to_owned());
        }
        Ok(json!({"quotient": args.a / args.b}))
    });
    let context = ToolContext::default();
    let output = divide
        .call(json!({"a": 6, "b": 3}), &context)
        .await
        .unwrap();
    assert_eq!(output.content(), r#"{"quotient":2.0}"#);
    assert_eq!(output.value(), Some(&json!({"quotient": 2.0})));

    let error = divide
        .call(json!({"a": 1, "b": 0}), &context)
        .await
        .unwrap_err();
    assert_eq!(error, ToolError::failed("cannot divide by zero"));
}

#[tokio::test]
async fn a_context_tool_sees_the_calling_agent() {
    let whoami = FunctionTool::with_context(
        "whoami",
        "The calling agent",
        |_args: serde_json::Map<String, serde_json::Value>, context: ToolContext| async move {
            Ok::<_, ToolError>(format!(
                "{} at step {}",
                context.agent_id, context.step_number
            ))
        },
    );
    let mut context = ToolContext::new("agent-7");
    context.step_number = 3;
    let output = whoami.call(json!({}), &context).await.unwrap();
    assert_eq!(output.content(), "agent-7 at step 3");
}

#[test]
fn the_schema_of_typed_arguments_is_provider_friendly() {
    insta::assert_json_snapshot!("forecast_schema", forecast().parameters());
}

#[test]
fn the_schema_of_the_readme_example() {
    let schema = weather().schema();
    assert_eq!(schema.name, "get_weather");
    assert_eq!(schema.description, "Current weather for a city");
    assert_eq!(
        schema.parameters,
        json!({
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"]
        })
    );
}

#[tokio::test]
async fn calling_the_tool_directly_with_bad_arguments_is_an_invalid_arguments_error() {
    let error = forecast()
        .call(
            json!({"city": "Paris", "days": 300}),
            &ToolContext::default(),
        )
        .await
        .unwrap_err();
    let ToolError::InvalidArguments(message) = error else {
        panic!("expected invalid arguments, got {error:?}");
    };
    assert!(message.contains("300"), "{message}");
}

#[tokio::test]
async fn the_executor_reports_missing_and_ill_typed_arguments_by_name() {
    let tools = Tools::new().with(forecast());
    let executor = DefaultToolExecutor::new();
    let context = ToolContext::default();
    let calls = [
        call("forecast", json!({"days": 3})),
        call("forecast", json!({"city": "Paris", "days": "three"})),
        call(
            "forecast",
            json!({"city": "Paris", "days": 3, "unit": "kelvin"}),
        ),
        call("forecast", json!({"city": "Paris", "days": 3, "weeks": 1})),
        // Passes the top-level checks, fails deserialization of the nested object.
        call(
            "forecast",
            json!({"city": "Paris", "days": 3, "location": {"latitude": "north"}}),
        ),
    ];
    let executions = executor.execute(&calls, &tools, &context, false).await;
    let messages: Vec<&str> = executions
        .iter()
        .map(|e| {
            assert_eq!(e.failure_kind(), Some(ToolFailureKind::InvalidArguments));
            e.error_message().unwrap()
        })
        .collect();
    insta::assert_json_snapshot!("forecast_invalid_argument_messages", messages);
}
