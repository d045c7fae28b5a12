//! The middleware chain: onion order, `can_process`, and cutting the step off.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::{Arc, Mutex};

use agents_core::testing::ScriptedDriver;
use agents_core::{AgentError, AgentState, Next};
use agents_processing::{CallableProcessor, InlineProcessor, StateProcessor, StateProcessors};
use async_trait::async_trait;
use inference::InferenceResponse;

type Log = Arc<Mutex<Vec<String>>>;

struct Recorder {
    name: &'static str,
    log: Log,
    enabled: bool,
}

#[async_trait]
impl StateProcessor for Recorder {
    fn name(&self) -> &str {
        self.name
    }

    fn can_process(&self, _state: &AgentState) -> bool {
        self.enabled
    }

    async fn process(&self, state: AgentState, next: Next<'_>) -> Result<AgentState, AgentError> {
        self.log.lock().unwrap().push(format!("{} pre", self.name));
        let state = next.run(state).await?;
        self.log.lock().unwrap().push(format!("{} post", self.name));
        Ok(state)
    }
}

struct Gate;

#[async_trait]
impl StateProcessor for Gate {
    async fn process(&self, state: AgentState, _next: Next<'_>) -> Result<AgentState, AgentError> {
        Ok(state.with_metadata("gate", "closed"))
    }
}

fn recorder(name: &'static str, log: &Log, enabled: bool) -> Arc<dyn StateProcessor> {
    Arc::new(Recorder {
        name,
        log: Arc::clone(log),
        enabled,
    })
}

fn terminal(
    log: &Log,
) -> impl FnOnce(AgentState) -> futures::future::BoxFuture<'static, Result<AgentState, AgentError>> + Send
{
    let log = Arc::clone(log);
    move |state| {
        Box::pin(async move {
            log.lock().unwrap().push("step".into());
            Ok(state.with_metadata("stepped", true))
        })
    }
}

#[tokio::test]
async fn the_first_processor_is_the_outermost_layer() {
    let log = Log::default();
    let chain = StateProcessors::new([
        recorder("A", &log, true),
        recorder("B", &log, true),
        recorder("C", &log, true),
    ]);
    let state = chain
        .apply(AgentState::new(), terminal(&log))
        .await
        .unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        ["A pre", "B pre", "C pre", "step", "C post", "B post", "A post"]
    );
    assert!(state.metadata().contains_key("stepped"));
    assert_eq!(chain.names(), ["A", "B", "C"]);
}

/// An inline layer: logs before and after the step; refuses states marked `refuse`.
struct InlineRecorder {
    name: &'static str,
    log: Log,
}

impl InlineProcessor for InlineRecorder {
    fn name(&self) -> &str {
        self.name
    }

    fn before(&self, state: AgentState) -> Result<AgentState, AgentError> {
        if state.metadata().contains_key("refuse") {
            return Err(AgentError::InvalidState(format!("{} refused", self.name)));
        }
        self.log
            .lock()
            .unwrap()
            .push(format!("{} before", self.name));
        Ok(state)
    }

    fn after(&self, state: AgentState) -> Result<AgentState, AgentError> {
        if state.metadata().get("refuse_after") == Some(&serde_json::json!(self.name)) {
            return Err(AgentError::InvalidState(format!(
                "{} refused after",
                self.name
            )));
        }
        self.log
            .lock()
            .unwrap()
            .push(format!("{} after", self.name));
        Ok(state)
    }
}

fn inline(name: &'static str, log: &Log) -> Arc<dyn StateProcessor> {
    Arc::new(InlineRecorder {
        name,
        log: Arc::clone(log),
    })
}

#[tokio::test]
async fn inline_and_async_layers_keep_the_onion_order() {
    let log = Log::default();
    let chain = StateProcessors::new([
        inline("A", &log),
        recorder("B", &log, true),
        inline("C", &log),
        inline("D", &log),
    ]);
    chain
        .apply(AgentState::new(), terminal(&log))
        .await
        .unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        [
            "A before", "B pre", "C before", "D before", "step", "D after", "C after", "B post",
            "A after"
        ]
    );
}

#[tokio::test]
async fn an_inline_layer_that_fails_after_the_step_ends_the_chain_there() {
    // The inline layers' `after`s run innermost first; one that fails ends the chain: the
    // layers outside it do not run theirs, as when each layer's `process` used `?`.
    let log = Log::default();
    let chain = StateProcessors::new([inline("A", &log), inline("B", &log), inline("C", &log)]);
    let error = chain
        .apply(
            AgentState::new().with_metadata("refuse_after", "B"),
            terminal(&log),
        )
        .await
        .unwrap_err();
    assert!(error.to_string().contains("B refused after"), "{error}");
    assert_eq!(
        *log.lock().unwrap(),
        ["A before", "B before", "C before", "step", "C after"]
    );
}

#[tokio::test]
async fn an_inline_layer_that_fails_before_the_step_stops_it() {
    let log = Log::default();
    let chain = StateProcessors::new([
        recorder("A", &log, true),
        inline("B", &log),
        inline("C", &log),
    ]);
    let error = chain
        .apply(
            AgentState::new().with_metadata("refuse", true),
            terminal(&log),
        )
        .await
        .unwrap_err();
    assert!(error.to_string().contains("B refused"), "{error}");
    assert_eq!(*log.lock().unwrap(), ["A pre"]);
}

#[tokio::test]
async fn can_process_false_skips_only_that_layer() {
    let log = Log::default();
    let chain = StateProcessors::new([
        recorder("A", &log, true),
        recorder("B", &log, false),
        recorder("C", &log, true),
    ]);
    chain
        .apply(AgentState::new(), terminal(&log))
        .await
        .unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        ["A pre", "C pre", "step", "C post", "A post"]
    );
}

#[tokio::test]
async fn a_processor_that_does_not_call_next_cuts_the_step_off() {
    let log = Log::default();
    let chain = StateProcessors::new([
        recorder("A", &log, true),
        Arc::new(Gate),
        recorder("C", &log, true),
    ]);
    let state = chain
        .apply(AgentState::new(), terminal(&log))
        .await
        .unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        ["A pre", "A post"],
        "neither C nor the step ran"
    );
    assert_eq!(
        state.metadata().get("gate"),
        Some(&serde_json::json!("closed"))
    );
    assert!(!state.metadata().contains_key("stepped"));
}

#[tokio::test]
async fn callable_processors_run_before_or_after_the_step_inside_a_real_loop() {
    let log = Log::default();
    let before_log = Arc::clone(&log);
    let after_log = Arc::clone(&log);
    let chain = StateProcessors::default()
        .with(CallableProcessor::before(
            "before",
            move |state: AgentState| {
                let log = Arc::clone(&before_log);
                async move {
                    log.lock().unwrap().push(format!(
                        "before: step {:?}",
                        state.current_step().map(|s| s.id().len())
                    ));
                    Ok(state)
                }
            },
        ))
        .with(CallableProcessor::after(
            "after",
            move |state: AgentState| {
                let log = Arc::clone(&after_log);
                async move {
                    let text = state
                        .current_step()
                        .and_then(|s| s.final_response())
                        .map(|m| m.text());
                    log.lock()
                        .unwrap()
                        .push(format!("after: {}", text.unwrap_or_default()));
                    Ok(state)
                }
            },
        ));
    let agent = agents_core::Agent::new(ScriptedDriver::new([InferenceResponse::text("hi")]))
        .with_processors(chain);
    agent
        .execute(AgentState::new().with_user_message("hello"))
        .await
        .unwrap();
    assert_eq!(*log.lock().unwrap(), ["before: step None", "after: hi"]);
}

#[tokio::test]
async fn an_error_in_a_processor_reaches_the_loop_as_an_error() {
    let chain = StateProcessors::default()
        .with(CallableProcessor::before("broken", |_state| async {
            Err(AgentError::driver("processor failed on purpose"))
        }));
    let result = chain
        .apply(AgentState::new(), |s| async move { Ok(s) })
        .await;
    assert!(result
        .unwrap_err()
        .to_string()
        .contains("processor failed on purpose"));
}
