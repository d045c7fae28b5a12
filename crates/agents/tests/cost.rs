//! What a run costs, as a user reads it: `state.cost()` and `execution_cost()`, the cost on
//! events, an unknown price for an unknown model, and the cost limit with its answer on stop.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::{Arc, Mutex};

use agents::prelude::*;
use proptest::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

/// $1 per million input tokens, $10 per million output tokens.
fn catalog() -> ModelCatalog {
    ModelCatalog::new().with_model(ModelInfo::new("cheap", "test", 1.0, 10.0))
}

#[derive(Deserialize, JsonSchema)]
struct Query {
    q: String,
}

fn search() -> FunctionTool {
    FunctionTool::new("search", "Searches", |a: Query| async move {
        Ok::<_, ToolError>(format!("results for {}", a.q))
    })
}

fn call(n: usize, model: &str, usage: Usage) -> InferenceResponse {
    InferenceResponse::with_tool_calls([ToolCall::new(
        format!("c{n}"),
        "search",
        json!({"q": format!("query {n}")}),
    )])
    .with_model(model)
    .with_usage(usage)
}

fn answer(model: &str, usage: Usage) -> InferenceResponse {
    InferenceResponse::text("done")
        .with_model(model)
        .with_usage(usage)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[tokio::test]
async fn the_state_sums_step_costs_over_the_execution_and_the_conversation() {
    // 1M input + 100k output at $1/$10 per million = $2 per inference.
    let usage = Usage::new(1_000_000, 100_000);
    let model = ScriptedModel::new([
        call(1, "cheap-2026-01-01", usage),
        answer("cheap", usage),
        answer("cheap", usage),
    ]);
    let steps = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&steps);
    let agent = AgentBuilder::new()
        .with_model(model)
        .with_tool(search())
        .with_model_catalog(catalog())
        .on_event(move |event| {
            if let AgentEvent::StepCompleted { cost, .. } = event {
                seen.lock().unwrap().push(*cost);
            }
        })
        .build()
        .unwrap();

    let state = agent
        .execute(AgentState::new().with_user_message("first"))
        .await
        .unwrap();
    assert_eq!(state.execution_cost().usd(), Some(4.0));
    assert_eq!(state.cost().usd(), Some(4.0));
    assert_eq!(state.execution_cost().to_string(), "$4.000000");

    let state = agent
        .execute(state.with_user_message("second"))
        .await
        .unwrap();
    assert!(close(state.execution_cost().usd().unwrap(), 2.0));
    assert!(close(state.cost().usd().unwrap(), 6.0));
    let events: Vec<Option<f64>> = steps.lock().unwrap().iter().map(RunCost::usd).collect();
    assert_eq!(events, [Some(2.0), Some(2.0), Some(2.0)]);

    // The cost survives a save and a load.
    let restored = AgentState::from_json(&state.to_json().unwrap()).unwrap();
    assert_eq!(restored.cost(), state.cost());
    assert_eq!(restored.execution_cost(), state.execution_cost());
}

#[tokio::test]
async fn an_unknown_model_gives_an_unknown_cost_not_a_number() {
    let usage = Usage::new(1_000, 100);
    let model = ScriptedModel::new([call(1, "cheap", usage), answer("mystery-model", usage)]);
    let state = AgentBuilder::new()
        .with_model(model)
        .with_tool(search())
        .with_model_catalog(catalog())
        .build()
        .unwrap()
        .execute(AgentState::new().with_user_message("go"))
        .await
        .unwrap();
    let cost = state.execution_cost();
    assert_eq!(cost.usd(), None);
    assert!(close(cost.priced_usd(), 0.002));
    assert_eq!(cost.unpriced_usage(), usage);
    assert_eq!(
        cost.to_string(),
        "unknown price ($0.002000 priced, 1100 tokens without a price)"
    );
}

#[tokio::test]
async fn the_cost_limit_stops_the_execution_and_answers_with_a_notice() {
    // $2 per step; a $5 limit is reached after the third step, never the fifth.
    let usage = Usage::new(1_000_000, 100_000);
    let model = ScriptedModel::new((1..=5).map(|n| call(n, "cheap", usage)));
    let state = AgentBuilder::new()
        .with_model(model)
        .with_tool(search())
        .with_model_catalog(catalog())
        .with_cost_limit(5.0)
        .with_answer_on_stop(AnswerOnStop::Notice)
        .build()
        .unwrap()
        .execute(AgentState::new().with_user_message("search forever"))
        .await
        .unwrap();
    assert_eq!(state.stop_reason(), Some(StopReason::CostLimit));
    assert_eq!(state.status(), AgentStatus::Completed);
    assert_eq!(state.step_count(), 3);
    assert!(close(state.execution_cost().usd().unwrap(), 6.0));
    let answer = state.final_response().unwrap();
    assert!(answer.text().contains("cost limit"), "{}", answer.text());
    assert_eq!(
        answer.metadata().get("stop_reason"),
        Some(&json!("cost_limit"))
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Over any run of steps, some priced and some not: the execution's cost is the sum of its
    /// steps', the conversation's the sum of its executions', and the total is unknown exactly
    /// when some step's model has no price.
    #[test]
    fn execution_cost_is_the_sum_of_step_costs(
        steps in proptest::collection::vec((0u64..2_000_000, 0u64..200_000, any::<bool>()), 1..6)
    ) {
        let replies: Vec<InferenceResponse> = steps
            .iter()
            .enumerate()
            .map(|(n, (input, output, known))| {
                let model = if *known { "cheap" } else { "unknown" };
                let usage = Usage::new(*input, *output);
                if n + 1 == steps.len() { answer(model, usage) } else { call(n, model, usage) }
            })
            .collect();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let agent = AgentBuilder::new()
            .with_model(ScriptedModel::new(replies.clone().into_iter().chain(replies)))
            .with_tool(search())
            .with_model_catalog(catalog())
            .build()
            .unwrap();
        let first = runtime
            .block_on(agent.execute(AgentState::new().with_user_message("one")))
            .unwrap();
        let second = runtime
            .block_on(agent.execute(first.clone().with_user_message("two")))
            .unwrap();

        let expected: f64 = steps
            .iter()
            .filter(|(_, _, known)| *known)
            .map(|(i, o, _)| *i as f64 / 1e6 + *o as f64 * 10.0 / 1e6)
            .sum();
        let unknown = steps.iter().any(|(i, o, known)| !known && i + o > 0);
        for state in [&first, &second] {
            let cost = state.execution_cost();
            let summed: RunCost = state.step_executions().steps().map(AgentStep::cost).sum();
            prop_assert_eq!(cost.unpriced_usage(), summed.unpriced_usage());
            prop_assert!((cost.priced_usd() - summed.priced_usd()).abs() < 1e-9);
            prop_assert!((cost.priced_usd() - expected).abs() < 1e-6);
            prop_assert_eq!(cost.usd().is_none(), unknown);
        }
        prop_assert!((second.cost().priced_usd() - 2.0 * expected).abs() < 1e-6);
        let both = first.execution_cost() + second.execution_cost();
        prop_assert!((second.cost().priced_usd() - both.priced_usd()).abs() < 1e-9);
        prop_assert_eq!(second.cost().unpriced_usage(), both.unpriced_usage());
    }
}

/// A model with a 10,000-token window.
fn small_window() -> ModelCatalog {
    ModelCatalog::new()
        .with_model(ModelInfo::new("tiny", "test", 1.0, 10.0).with_limits(10_000, 1_000))
}

#[tokio::test]
async fn a_request_over_80_percent_of_the_window_is_reported() {
    // The window from the catalog, or given for a model no catalog knows (a local server).
    let windows: [fn(AgentBuilder) -> AgentBuilder; 2] = [
        |builder| builder.with_model_catalog(small_window()),
        |builder| builder.with_context_window(10_000),
    ];
    for (case, window) in windows.into_iter().enumerate() {
        let model_name = if case == 0 { "tiny" } else { "local-model" };
        let warnings = report_of_two_requests(model_name, window).await;
        // 7,000 of 10,000 is under 80%: only the second step is reported.
        assert_eq!(warnings, [(2, model_name.to_owned(), 8_500, 10_000)]);
    }
}

#[tokio::test]
async fn the_warning_reads_the_largest_request_of_a_step_not_their_sum() {
    // An empty reply is asked again within its step: two requests of 5,000 and 6,000
    // tokens, each under 80% of the window, whose step costs 11,000 input tokens.
    let model = ScriptedModel::new([
        InferenceResponse::text("")
            .with_model("tiny")
            .with_usage(Usage::new(5_000, 1)),
        answer("tiny", Usage::new(6_000, 10)),
    ]);
    let warnings = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&warnings);
    let state = AgentBuilder::new()
        .with_model(model)
        .with_model_catalog(small_window())
        .on_event(move |event| {
            if let AgentEvent::ContextWindowNearlyFull { input_tokens, .. } = event {
                seen.lock().unwrap().push(*input_tokens);
            }
        })
        .build()
        .unwrap()
        .execute(AgentState::new().with_user_message("go"))
        .await
        .unwrap();
    assert_eq!(
        state.final_response().map(|m| m.text()).as_deref(),
        Some("done")
    );
    assert_eq!(
        state.usage().input_tokens,
        11_000,
        "the step's cost counts both"
    );
    assert!(
        warnings.lock().unwrap().is_empty(),
        "no single request used over 80% of the window"
    );
}

/// The `ContextWindowNearlyFull` reports of a run of two requests of 7,000 and 8,500
/// tokens through a model that calls itself `model_name`, on the agent `window` sets up.
async fn report_of_two_requests(
    model_name: &str,
    window: fn(AgentBuilder) -> AgentBuilder,
) -> Vec<(usize, String, u64, u64)> {
    let model = ScriptedModel::new([
        call(1, model_name, Usage::new(7_000, 10)),
        answer(model_name, Usage::new(8_500, 10)),
    ]);
    let warnings = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&warnings);
    window(AgentBuilder::new())
        .with_model(model)
        .with_tool(search())
        .on_event(move |event| {
            if let AgentEvent::ContextWindowNearlyFull {
                source,
                model,
                input_tokens,
                context_window,
            } = event
            {
                seen.lock().unwrap().push((
                    source.step_number,
                    model.clone(),
                    *input_tokens,
                    *context_window,
                ));
            }
        })
        .build()
        .unwrap()
        .execute(AgentState::new().with_user_message("go"))
        .await
        .unwrap();
    let reports = warnings.lock().unwrap().clone();
    reports
}

#[tokio::test]
async fn summarization_triggers_on_a_share_of_the_models_window() {
    let run = |fraction: f64| async move {
        let summarizer = ScriptedModel::new([InferenceResponse::text("They talked at length.")]);
        let agent = AgentBuilder::new()
            .with_model(ScriptedModel::new([answer("tiny", Usage::new(10, 1))]))
            .with_model_name("tiny")
            .with_model_catalog(small_window())
            .with_capability(UseSummarization::new(summarizer).with_window_fraction(fraction))
            .build()
            .unwrap();
        let mut state = AgentState::new();
        // About 1,500 tokens of conversation (estimated at four characters a token).
        for i in 0..30 {
            let messages = state
                .messages()
                .appended(Message::user(format!("{i} {}", "long text ".repeat(20))));
            state = state.with_messages(messages);
        }
        agent
            .execute(state.with_user_message("now?"))
            .await
            .unwrap()
    };
    // 10% of 10,000 = 1,000 tokens: 500 for messages, 500 for the buffer: summarized.
    let summarized = run(0.1).await;
    assert_eq!(summarized.store().section(SUMMARY_SECTION).len(), 1);
    // 80% of 10,000: everything fits, nothing is summarized.
    let kept = run(0.8).await;
    assert!(kept.store().section(SUMMARY_SECTION).is_empty());
    assert_eq!(kept.messages().len(), 32);
}

#[test]
fn a_window_fraction_needs_a_known_window() {
    let error = AgentBuilder::new()
        .with_model(ScriptedModel::new([]))
        .with_model_name("no-such-model")
        .with_model_catalog(small_window())
        .with_capability(UseSummarization::new(ScriptedModel::new([])).with_window_fraction(0.5))
        .build()
        .unwrap_err();
    assert!(error.to_string().contains("no context window"), "{error}");
}

#[tokio::test]
async fn a_durable_session_keeps_what_its_steps_cost() {
    let usage = Usage::new(1_000_000, 100_000);
    let agent = AgentBuilder::new()
        .with_model(ScriptedModel::new([
            call(1, "cheap", usage),
            answer("cheap", usage),
            answer("mystery", usage),
        ]))
        .with_tool(search())
        .with_model_catalog(catalog())
        .build()
        .unwrap();
    let store = SqliteSessionStore::in_memory().await.unwrap();
    let session = agent.session(&store, "s1");
    let sent = session.send("first").await.unwrap();
    assert_eq!(sent.cost().usd(), Some(4.0));
    let loaded = store.load("s1").await.unwrap().unwrap();
    assert_eq!(loaded.cost(), sent.cost());
    assert_eq!(loaded.execution_cost(), sent.execution_cost());

    // A second turn answered by a model without a price: the conversation's cost is unknown,
    // its priced part kept.
    session.send("second").await.unwrap();
    let loaded = store.load("s1").await.unwrap().unwrap();
    assert_eq!(loaded.cost().usd(), None);
    assert!(close(loaded.cost().priced_usd(), 4.0));
    assert_eq!(loaded.cost().unpriced_usage(), usage);
}
