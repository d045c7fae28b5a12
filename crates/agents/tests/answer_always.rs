#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! Every run ends with an answer: a stop without one appends a synthesized answer or a
//! notice; repeated calls are refused and then stop the run; tool output is capped;
//! cancellation and tool timeouts keep the history valid.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agents::core::{
    ToolEffects, ToolFailureKind, ANSWERED_BY_KEY, INCOMPLETE_KEY, STOP_REASON_KEY,
};
use agents::prelude::*;
use agents::AgentEvent;
use async_trait::async_trait;
use inference::{InferenceError, InferenceStream};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct PathArgs {
    path: String,
}

#[derive(Deserialize, JsonSchema)]
struct SleepArgs {
    millis: u64,
}

fn read_file() -> FunctionTool {
    FunctionTool::new("read_file", "Reads a file", |args: PathArgs| async move {
        Ok::<_, ToolError>(format!("contents of {}: 42", args.path))
    })
}

fn slow() -> FunctionTool {
    FunctionTool::new("slow", "Sleeps", |args: SleepArgs| async move {
        tokio::time::sleep(Duration::from_millis(args.millis)).await;
        Ok::<_, ToolError>("done sleeping".to_owned())
    })
}

fn read(id: &str, path: &str) -> InferenceResponse {
    InferenceResponse::with_tool_calls([ToolCall::new(id, "read_file", json!({ "path": path }))])
}

fn metadata_of(message: &Message) -> (Option<Value>, Option<Value>) {
    (
        message.metadata().get(INCOMPLETE_KEY).cloned(),
        message.metadata().get(STOP_REASON_KEY).cloned(),
    )
}

use serde_json::Value;

/// Every assistant tool call in `messages` has a tool result, in order (what providers demand).
fn every_call_has_a_result(messages: &Messages) -> bool {
    let mut open: Vec<String> = Vec::new();
    for message in messages.iter() {
        for call in message.tool_calls() {
            open.push(call.id().to_owned());
        }
        if let Some(id) = message.tool_call_id() {
            open.retain(|open| open != id);
        }
    }
    open.is_empty()
}

fn events() -> (
    Arc<Mutex<Vec<AgentEvent>>>,
    impl Fn(&AgentEvent) + Send + Sync + 'static,
) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    (seen, move |event: &AgentEvent| {
        sink.lock().unwrap().push(event.clone())
    })
}

#[tokio::test]
async fn a_step_limit_in_separated_mode_ends_with_a_synthesized_answer() {
    let model = ScriptedModel::new([
        read("c1", "a.txt"),
        read("c2", "b.txt"),
        InferenceResponse::text("From what I read: a.txt says 42."),
    ]);
    let (seen, listener) = events();
    let agent = AgentBuilder::new()
        .with_model(model.clone())
        .with_tool(read_file())
        .with_separated_tool_trace(true)
        .with_max_steps(2)
        .on_event(listener)
        .build()
        .unwrap();
    let done = agent
        .execute(AgentState::new().with_user_message("What is in a.txt and b.txt?"))
        .await
        .unwrap();
    assert_eq!(done.stop_reason(), Some(StopReason::StepsLimit));
    assert_eq!(done.status(), AgentStatus::Completed);
    let answer = done.final_response().unwrap();
    assert_eq!(answer.text(), "From what I read: a.txt says 42.");
    assert_eq!(
        metadata_of(&answer),
        (Some(json!(true)), Some(json!("steps_limit")))
    );
    assert_eq!(
        answer.metadata().get(ANSWERED_BY_KEY),
        Some(&json!("synthesize"))
    );
    // Persisted: the question and the answer, nothing of the trace.
    assert_eq!(done.messages().len(), 2);
    assert!(done.store().section(EXECUTION_BUFFER_SECTION).is_empty());
    // The synthesis request had no tools and saw the tool results.
    let synthesis = model.last_request().unwrap();
    assert!(synthesis.tools.is_empty());
    let transcript = synthesis.messages.to_transcript();
    assert!(transcript.contains("contents of b.txt: 42"), "{transcript}");
    assert!(transcript.contains("Do not call any tools"), "{transcript}");
    // Told as the user to the model: why the model stops, in the second person.
    assert!(
        transcript.contains("You have to stop now: you reached the maximum number of steps."),
        "{transcript}"
    );
    // The instruction ends with the request it answers: told only "answer my request", a
    // small model answered an earlier one.
    assert!(
        transcript.contains("My request was: What is in a.txt and b.txt?"),
        "{transcript}"
    );
    let path = seen.lock().unwrap().iter().find_map(|event| match event {
        AgentEvent::AnsweredOnStop {
            path, stop_reason, ..
        } => Some((*path, *stop_reason)),
        _ => None,
    });
    assert_eq!(
        path,
        Some((AnswerOnStop::Synthesize, StopReason::StepsLimit))
    );
}

/// One step of reading a.txt in separated mode, then the answer on stop (tool calling or
/// ReAct): the state it ends in.
async fn read_once_then_stop(builder: AgentBuilder) -> AgentState {
    builder
        .with_tool(read_file())
        .with_separated_tool_trace(true)
        .with_max_steps(1)
        .build()
        .unwrap()
        .execute(AgentState::new().with_user_message("read a.txt"))
        .await
        .unwrap()
}

#[tokio::test]
async fn a_failed_synthesis_falls_back_to_a_notice_naming_the_tools_called() {
    let model = ScriptedModel::from_results([
        Ok(read("c1", "a.txt")),
        Err(InferenceError::Http {
            status: 500,
            message: "down".into(),
        }),
    ]);
    let done = read_once_then_stop(AgentBuilder::new().with_model(model)).await;
    let answer = done.final_response().unwrap();
    assert!(
        answer
            .text()
            .starts_with("I could not finish this task: I reached the maximum number of steps."),
        "{}",
        answer.text()
    );
    assert!(
        answer.text().contains("What I did: read_file."),
        "{}",
        answer.text()
    );
    assert_eq!(metadata_of(&answer).1, Some(json!("steps_limit")));
    assert_eq!(
        answer.metadata().get(ANSWERED_BY_KEY),
        Some(&json!("notice"))
    );
}

#[tokio::test]
async fn a_synthesis_answered_with_a_tool_call_becomes_the_notice() {
    // What Qwen2.5-Coder-0.5B did in the eval: asked to answer without tools, it wrote the
    // call again; that was saved as its "answer".
    for reply in [
        r#"{"name": "read_file", "arguments": {"path": "a.txt"}}"#.to_owned(),
        "I'll read it:\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n```".to_owned(),
    ] {
        let model = ScriptedModel::new([
            read("c1", "a.txt"),
            InferenceResponse::text(&reply).with_usage(Usage::new(100, 7)),
        ]);
        let done = read_once_then_stop(AgentBuilder::new().with_model(model)).await;
        let answer = done.final_response().unwrap();
        assert!(
            answer.text().starts_with("I could not finish this task"),
            "{reply}: {}",
            answer.text()
        );
        assert_eq!(metadata_of(&answer).1, Some(json!("steps_limit")));
        // The synthesis request's tokens are still counted.
        assert!(done.usage().output_tokens >= 7, "{:?}", done.usage());
    }
}

/// Issue 36: the 0.5B model read `config.ini` to the step limit and, asked to answer with its
/// calls in view, wrote the call again. Asked once more on a clean page (the request and what
/// the calls returned, no calls, no tools), it answered from the file.
#[tokio::test]
async fn a_synthesis_that_is_a_call_is_asked_again_from_a_page_of_the_results() {
    let call = r#"{"name": "read_file", "arguments": {"path": "a.txt"}}"#;
    let model = ScriptedModel::new([
        read("c1", "a.txt"),
        InferenceResponse::text(call).with_usage(Usage::new(100, 7)),
        InferenceResponse::text("a.txt says 42.").with_usage(Usage::new(50, 5)),
    ]);
    let done = read_once_then_stop(AgentBuilder::new().with_model(model.clone())).await;
    let answer = done.final_response().unwrap();
    assert_eq!(answer.text(), "a.txt says 42.");
    assert_eq!(
        answer.metadata().get(ANSWERED_BY_KEY),
        Some(&json!("synthesize"))
    );
    // Both requests' tokens count.
    assert!(done.usage().output_tokens >= 12, "{:?}", done.usage());
    let page = model.last_request().unwrap();
    assert!(page.tools.is_empty());
    assert!(
        page.messages
            .iter()
            .all(|m| m.tool_calls().is_empty() && m.role() != Role::Tool),
        "no calls on the page: {}",
        page.messages.to_transcript()
    );
    let text = page.messages.last().unwrap().text();
    assert!(text.contains("My request was: read a.txt"), "{text}");
    assert!(
        text.contains("read_file {\"path\":\"a.txt\"}:\ncontents of a.txt: 42"),
        "{text}"
    );
    assert!(text.ends_with("say what is missing."), "{text}");

    // A page that gets no answer either (a call, a copy of the page's list, a copy of the
    // instruction: the 0.5B model wrote each): the notice.
    for (first, second) in [
        (call, call),
        (
            call,
            "The tool call returned:\n\nread_file {\"path\":\"a.txt\"}:\ncontents of a.txt: 42",
        ),
        (
            "The run stopped. My request was: read a.txt",
            "My request was: read a.txt",
        ),
    ] {
        let model = ScriptedModel::new([
            read("c1", "a.txt"),
            InferenceResponse::text(first),
            InferenceResponse::text(second),
        ]);
        let done = read_once_then_stop(AgentBuilder::new().with_model(model.clone())).await;
        let answer = done.final_response().unwrap().text();
        assert!(
            answer.starts_with("I could not finish this task"),
            "{second}: {answer}"
        );
        assert_eq!(model.requests().len(), 3, "{second}");
    }
}

/// The hint on how to call a tool goes with the requests that offer tools only: with it, the
/// 0.5B model asked for an answer on stop wrote a call (issue 36).
#[tokio::test]
async fn the_tool_call_hint_goes_only_with_requests_that_offer_tools() {
    let model = ScriptedModel::new([read("c1", "a.txt"), InferenceResponse::text("42.")]);
    let builder = AgentBuilder::new()
        .with_model(model.clone())
        .with_system_prompt("Be brief.")
        .with_tool_call_hint("Reply with only a JSON call.");
    let done = read_once_then_stop(builder).await;
    assert_eq!(done.final_response().unwrap().text(), "42.");
    let requests = model.requests();
    let system = |i: usize| requests[i].messages.first().unwrap().text();
    assert!(!requests[0].tools.is_empty());
    // After the system prompt and the notes the builder adds to it (separated mode's).
    assert!(system(0).starts_with("Be brief."), "{}", system(0));
    assert!(
        system(0).ends_with("tool results yourself.\nReply with only a JSON call."),
        "{}",
        system(0)
    );
    assert!(requests[1].tools.is_empty());
    assert_eq!(
        format!("{}\nReply with only a JSON call.", system(1)),
        system(0)
    );
}

#[tokio::test]
async fn a_react_synthesis_in_the_decision_format_gives_its_answer_or_the_notice() {
    let react_call = r#"{"thought": "read it", "type": "call_tool", "tool": "read_file", "args": {"path": "a.txt"}}"#;
    for (synthesis, expect) in [
        (
            r#"{"thought": "done", "type": "final_answer", "answer": "a.txt says 42."}"#,
            "a.txt says 42.",
        ),
        (react_call, "I could not finish this task"),
        ("a.txt says 42, plainly.", "a.txt says 42, plainly."),
    ] {
        let model = ScriptedModel::new([
            InferenceResponse::text(react_call),
            InferenceResponse::text(synthesis),
        ]);
        let done = read_once_then_stop(AgentBuilder::new().with_react(model.clone())).await;
        let answer = done.final_response().unwrap().text();
        assert!(answer.starts_with(expect), "{synthesis}: {answer}");
        // The request quoted is the person's, not the trace's last user message (ReAct's
        // "Observation: ...").
        let instruction = model.requests()[1].messages.last().unwrap().text();
        assert!(
            instruction.ends_with("My request was: read a.txt"),
            "{instruction}"
        );
    }
}

#[tokio::test]
async fn each_mode_and_driver_persists_the_answer_it_promises() {
    for react in [false, true] {
        for (retention, mode, expect) in [
            (TraceRetention::Ephemeral, None, Some("synthesized")),
            (
                TraceRetention::Ephemeral,
                Some(AnswerOnStop::Notice),
                Some("notice"),
            ),
            (TraceRetention::Ephemeral, Some(AnswerOnStop::Nothing), None),
            (TraceRetention::digest(500), None, Some("synthesized")),
            // Observation masking keeps the calls, but not an answer: a stop before any
            // call would leave the request unanswered (issue 32).
            (TraceRetention::masked(1), None, Some("synthesized")),
            (TraceRetention::masked(2), Some(AnswerOnStop::Nothing), None),
            (TraceRetention::Full, None, None),
            (
                TraceRetention::Full,
                Some(AnswerOnStop::Synthesize),
                Some("synthesized"),
            ),
        ] {
            let call = if react {
                InferenceResponse::text(
                    r#"{"thought": "read it", "type": "call_tool", "tool": "read_file", "args": {"path": "a.txt"}}"#,
                )
            } else {
                read("c1", "a.txt")
            };
            let model = ScriptedModel::new([call, InferenceResponse::text("synthesized")]);
            let mut builder = if react {
                AgentBuilder::new().with_react(model)
            } else {
                AgentBuilder::new().with_model(model)
            };
            builder = builder
                .with_tool(read_file())
                .with_trace_retention(retention.clone())
                .with_max_steps(1);
            if let Some(mode) = mode {
                builder = builder.with_answer_on_stop(mode);
            }
            let agent = builder.build().unwrap();
            let done = agent
                .execute(AgentState::new().with_user_message("read a.txt"))
                .await
                .unwrap();
            let case = format!("react={react} retention={retention:?} mode={mode:?}");
            assert_eq!(done.stop_reason(), Some(StopReason::StepsLimit), "{case}");
            let last = done.messages().last().cloned().unwrap();
            match expect {
                Some("synthesized") => {
                    assert_eq!(last.text(), "synthesized", "{case}");
                    assert_eq!(metadata_of(&last).0, Some(json!(true)), "{case}");
                }
                Some(_) => {
                    assert!(
                        last.text().starts_with("I could not finish"),
                        "{case}: {}",
                        last.text()
                    );
                    assert_eq!(metadata_of(&last).0, Some(json!(true)), "{case}");
                }
                None => assert!(last.metadata().get(INCOMPLETE_KEY).is_none(), "{case}"),
            }
        }
    }
}

#[tokio::test]
async fn the_same_call_in_any_argument_order_is_refused_then_stops_the_run() {
    let call = |id: &str, args: Value| {
        InferenceResponse::with_tool_calls([ToolCall::new(id, "lookup", args)])
    };
    #[derive(Deserialize, JsonSchema)]
    struct LookupArgs {
        #[allow(dead_code)]
        key: String,
        #[allow(dead_code)]
        depth: u32,
    }
    let runs = Arc::new(Mutex::new(0));
    let counter = Arc::clone(&runs);
    let lookup = FunctionTool::new("lookup", "Looks up", move |_: LookupArgs| {
        let counter = Arc::clone(&counter);
        async move {
            *counter.lock().unwrap() += 1;
            Ok::<_, ToolError>("value: 7".to_owned())
        }
    });
    let model = ScriptedModel::new([
        call("c1", json!({"key": "k", "depth": 1})),
        call("c2", json!({"depth": 1, "key": "k"})),
        call("c3", json!({"key": "k", "depth": 1})),
        call("c4", json!({"depth": 1, "key": "k"})),
        InferenceResponse::text("It is 7."),
    ]);
    let agent = AgentBuilder::new()
        .with_model(model.clone())
        .with_tool(lookup)
        .with_separated_tool_trace(true)
        .with_answer_on_stop(AnswerOnStop::Notice)
        .with_max_steps(10)
        .build()
        .unwrap();
    let done = agent
        .execute(AgentState::new().with_user_message("what is k?"))
        .await
        .unwrap();
    assert_eq!(
        *runs.lock().unwrap(),
        2,
        "the third and fourth identical calls did not run"
    );
    let third = done.step_executions().get(2).unwrap().step();
    let refused = third.tool_executions().iter().next().unwrap();
    assert_eq!(refused.failure_kind(), Some(ToolFailureKind::Repeated));
    let message = refused.error_message().unwrap();
    assert!(
        message.contains("already made this exact call 2 time(s)"),
        "{message}"
    );
    assert!(
        message.contains("value: 7"),
        "the earlier result is quoted: {message}"
    );
    assert_eq!(done.stop_reason(), Some(StopReason::RepeatedToolCalls));
    assert_eq!(done.step_count(), 4);
    let answer = done.final_response().unwrap();
    assert!(
        answer
            .text()
            .contains("I kept repeating the same tool call"),
        "{}",
        answer.text()
    );
    assert_eq!(metadata_of(&answer).1, Some(json!("repeated_tool_calls")));
}

#[tokio::test]
async fn a_huge_tool_result_is_cut_for_the_model_but_whole_in_events() {
    let big = FunctionTool::new("big", "Big output", |_: PathArgs| async move {
        Ok::<_, ToolError>("é".repeat(50))
    });
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([ToolCall::new("c1", "big", json!({"path": "x"}))]),
        InferenceResponse::text("done"),
    ]);
    let (seen, listener) = events();
    let agent = AgentBuilder::new()
        .with_model(model.clone())
        .with_tool(big)
        .with_tool_output_limit(20)
        .on_event(listener)
        .build()
        .unwrap();
    agent
        .execute(AgentState::new().with_user_message("go"))
        .await
        .unwrap();
    let seen_by_model = model.requests()[1]
        .messages
        .iter()
        .find(|message| message.tool_call_id() == Some("c1"))
        .map(Message::text)
        .unwrap();
    assert!(
        seen_by_model.starts_with(&format!(
            "{}\n[output cut: 30 of 50 characters left out",
            "é".repeat(20)
        )),
        "{seen_by_model}"
    );
    let full = seen.lock().unwrap().iter().find_map(|event| match event {
        AgentEvent::ToolCallCompleted { execution, .. } => Some(execution.result_text()),
        _ => None,
    });
    assert_eq!(full, Some("é".repeat(50)));
}

#[tokio::test(start_paused = true)]
async fn a_slow_tool_past_its_timeout_gets_a_tool_error_and_the_run_goes_on() {
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([ToolCall::new("c1", "slow", json!({"millis": 5_000}))]),
        InferenceResponse::text("It timed out, sorry."),
    ]);
    let agent = AgentBuilder::new()
        .with_model(model.clone())
        .with_tool(slow())
        .with_tool_timeout(Duration::from_secs(1))
        .with_separated_tool_trace(true)
        .build()
        .unwrap();
    let done = agent
        .execute(AgentState::new().with_user_message("sleep"))
        .await
        .unwrap();
    let execution = done
        .steps()
        .next()
        .unwrap()
        .tool_executions()
        .iter()
        .next()
        .cloned()
        .unwrap();
    assert_eq!(execution.failure_kind(), Some(ToolFailureKind::TimedOut));
    assert_eq!(
        done.final_response().unwrap().text(),
        "It timed out, sorry."
    );
    assert_eq!(done.status(), AgentStatus::Completed);
}

#[tokio::test(start_paused = true)]
async fn cancelling_during_a_slow_tool_gives_every_call_a_result_and_a_notice() {
    for separated in [true, false] {
        let model = ScriptedModel::new([
            InferenceResponse::with_tool_calls([
                ToolCall::new("c1", "read_file", json!({"path": "a"})),
                ToolCall::new("c2", "slow", json!({"millis": 60_000})),
            ]),
            InferenceResponse::text("never"),
            InferenceResponse::text("Fine, here is the rest."),
        ]);
        let agent = AgentBuilder::new()
            .with_model(model.clone())
            .with_tool(read_file())
            .with_tool(slow())
            .with_separated_tool_trace(separated)
            .build()
            .unwrap();
        let token = CancellationToken::new();
        let canceller = token.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(2)).await;
            canceller.cancel();
        });
        let done = agent
            .execute_with(
                AgentState::new().with_user_message("go"),
                &StepOptions::new().with_cancellation(token),
            )
            .await
            .unwrap();
        assert_eq!(done.status(), AgentStatus::Failed);
        assert_eq!(done.stop_reason(), Some(StopReason::UserRequested));
        let step = done.steps().next().unwrap();
        let kinds: Vec<_> = step
            .tool_executions()
            .iter()
            .map(|e| e.failure_kind())
            .collect();
        assert_eq!(kinds, [None, Some(ToolFailureKind::Cancelled)]);
        assert!(every_call_has_a_result(&done.messages_for_inference()));
        let answer = done.final_response().unwrap();
        assert!(
            answer.text().contains("the run was cancelled"),
            "{}",
            answer.text()
        );
        assert_eq!(metadata_of(&answer).1, Some(json!("user_requested")));
        // The conversation goes on normally.
        let next = agent
            .execute(done.with_user_message("continue"))
            .await
            .unwrap();
        assert_eq!(
            next.status(),
            AgentStatus::Completed,
            "separated={separated}"
        );
        assert_eq!(next.final_response().unwrap().text(), "never");
        assert!(every_call_has_a_result(
            &model.last_request().unwrap().messages
        ));
    }
}

/// A model whose answer takes a minute, for cancelling a request in flight.
#[derive(Clone)]
struct SlowModel;

#[async_trait]
impl LanguageModel for SlowModel {
    async fn complete(
        &self,
        _request: InferenceRequest,
    ) -> Result<InferenceResponse, InferenceError> {
        tokio::time::sleep(Duration::from_secs(60)).await;
        Ok(InferenceResponse::text("too late"))
    }

    async fn stream(&self, request: InferenceRequest) -> Result<InferenceStream, InferenceError> {
        let response = self.complete(request).await?;
        inference::ScriptedModel::new([response])
            .stream(InferenceRequest::default())
            .await
    }
}

#[tokio::test(start_paused = true)]
async fn cancelling_a_slow_model_request_stops_at_once_with_a_notice() {
    let agent = AgentBuilder::new()
        .with_model(SlowModel)
        .with_separated_tool_trace(true)
        .build()
        .unwrap();
    let token = CancellationToken::new();
    let canceller = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        canceller.cancel();
    });
    let started = tokio::time::Instant::now();
    let done = agent
        .execute_with(
            AgentState::new().with_user_message("hi"),
            &StepOptions::new().with_cancellation(token),
        )
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the request was dropped"
    );
    assert_eq!(done.stop_reason(), Some(StopReason::UserRequested));
    assert_eq!(done.status(), AgentStatus::Failed);
    assert_eq!(done.messages().len(), 2, "the question and the notice");
    assert!(done.final_response().unwrap().text().contains("cancelled"));
}

/// The held-out 1.5B answers of issue 28: a call the model announces and that does not run
/// (refused as a repeat, or written where it is not run) is never the saved answer; the run
/// answers through answer-on-stop (synthesize, in separated mode).
#[tokio::test]
async fn a_call_that_does_not_run_is_never_the_answer() {
    let announced = "To use the `read_file` function, you can make a tool call like this:\n\
        ```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"todo.txt\"}}\n```";
    let inline = r#"Here's the result: {"name": "read_file", "arguments": {"path": "todo.txt"}}"#;
    for replies in [
        // the same announced call again and again: the third is refused as a repeat
        vec![announced; 6],
        // inline call JSON after prose, every time
        vec![inline; 6],
    ] {
        let mut script: Vec<InferenceResponse> =
            replies.into_iter().map(InferenceResponse::text).collect();
        script.push(InferenceResponse::text("todo.txt holds 42."));
        let model = ScriptedModel::new(script);
        let agent = AgentBuilder::new()
            .with_model(model)
            .with_tool(read_file())
            .with_separated_tool_trace(true)
            .with_max_steps(5)
            .build()
            .unwrap();
        let done = agent
            .execute(AgentState::new().with_user_message("What does todo.txt hold?"))
            .await
            .unwrap();
        let saved = done.messages();
        let last = saved.iter().last().unwrap();
        assert_eq!(last.role(), Role::Assistant);
        let text = last.text();
        assert!(
            !text.contains("\"name\"") && !text.contains("tool call like this"),
            "the saved answer is a call that never ran: {text}"
        );
        assert!(every_call_has_a_result(&done.messages()));
    }
}

#[derive(Deserialize, JsonSchema)]
struct MoveArgs {
    from: String,
    to: String,
}

/// `rename`, a tool that changes things: "renamed `from` to `to`".
fn rename() -> FunctionTool {
    FunctionTool::new("rename", "Renames a file", |args: MoveArgs| async move {
        Ok::<_, ToolError>(format!("renamed `{}` to `{}`", args.from, args.to))
    })
    .with_effects(ToolEffects::SideEffecting)
}

#[tokio::test]
async fn a_synthesized_answer_is_told_what_the_calls_changed() {
    // The 1.5B model renamed a file, then wrote the same call again until the step limit;
    // asked to answer, it said it needed the file's name. The synthesis request now lists
    // the changes made (tools that can change things, successful calls, each once), and not
    // what was only read.
    let rename = rename();
    let call = |id: &str| {
        InferenceResponse::with_tool_calls([ToolCall::new(
            id,
            "rename",
            json!({"from": "draft.txt", "to": "final.txt"}),
        )])
    };
    let model = ScriptedModel::new([
        call("c1"),
        read("c2", "final.txt"),
        InferenceResponse::text("I renamed draft.txt to final.txt."),
    ]);
    let agent = AgentBuilder::new()
        .with_model(model.clone())
        .with_tool(rename)
        .with_tool(read_file().with_effects(ToolEffects::ReadOnly))
        .with_separated_tool_trace(true)
        .with_max_steps(2)
        .build()
        .unwrap();
    let done = agent
        .execute(AgentState::new().with_user_message("Rename draft.txt to final.txt."))
        .await
        .unwrap();
    assert_eq!(done.stop_reason(), Some(StopReason::StepsLimit));
    let transcript = model.last_request().unwrap().messages.to_transcript();
    assert!(
        transcript.contains("These calls of yours ran and succeeded, so their changes are made")
            && transcript.contains(
                r#"- rename({"from":"draft.txt","to":"final.txt"}): renamed `draft.txt` to `final.txt`"#
            ),
        "{transcript}"
    );
    let listed = transcript.split("their changes are made").nth(1).unwrap();
    assert!(!listed.contains("read_file("), "{transcript}");
}

#[tokio::test]
async fn a_notice_says_what_changed_and_not_that_a_done_call_failed() {
    // The notice after a run that renamed a file and then asked for the same rename again
    // (refused: its work was done) says what changed, not "the last error was: ... not run
    // again".
    let rename = rename();
    let call = r#"{"name": "rename", "arguments": {"from": "draft.txt", "to": "final.txt"}}"#;
    let again = format!("To rename it, you can use the `rename` function:\n```json\n{call}\n```");
    let model = ScriptedModel::new([
        InferenceResponse::text(call),
        InferenceResponse::text(again.clone()),
        InferenceResponse::text(again.clone()),
        InferenceResponse::text(again),
    ]);
    let agent = AgentBuilder::new()
        .with_model(model)
        .with_tool(rename)
        .with_separated_tool_trace(true)
        .with_content_tool_call_recovery(true)
        .with_answer_on_stop(AnswerOnStop::Notice)
        .with_max_steps(2)
        .build()
        .unwrap();
    let done = agent
        .execute(AgentState::new().with_user_message("Rename draft.txt to final.txt."))
        .await
        .unwrap();
    let notice = done.final_response().unwrap().text();
    assert!(
        notice.contains("What changed: renamed `draft.txt` to `final.txt` (rename)."),
        "{notice}"
    );
    assert!(!notice.contains("not run again"), "{notice}");
}

/// What the model saw of the result of the call `c1` to a tool returning 20,000 characters,
/// from an agent `configure` sets up.
async fn seen_of_a_big_result(configure: impl FnOnce(AgentBuilder) -> AgentBuilder) -> String {
    let big = FunctionTool::new("big", "Big output", |_: PathArgs| async move {
        Ok::<_, ToolError>("x".repeat(20_000))
    });
    let model = ScriptedModel::new([
        InferenceResponse::with_tool_calls([ToolCall::new("c1", "big", json!({"path": "x"}))]),
        InferenceResponse::text("done"),
    ]);
    let agent = configure(AgentBuilder::new().with_model(model.clone()).with_tool(big))
        .build()
        .unwrap();
    agent
        .execute(AgentState::new().with_user_message("go"))
        .await
        .unwrap();
    model.requests()[1]
        .messages
        .iter()
        .find(|message| message.tool_call_id() == Some("c1"))
        .map(Message::text)
        .unwrap()
}

#[tokio::test]
async fn a_small_context_window_bounds_each_tool_result_unless_a_limit_is_chosen() {
    // Unknown window: the default 30,000 characters, the whole result.
    assert_eq!(seen_of_a_big_result(|b| b).await, "x".repeat(20_000));
    // An 8,000-token window: a quarter of it, 2,000 characters.
    let seen = seen_of_a_big_result(|b| b.with_context_window(8_000)).await;
    assert!(
        seen.starts_with(&format!(
            "{}\n[output cut: 18000 of 20000 characters left out",
            "x".repeat(2_000)
        )),
        "{seen}"
    );
    // A chosen limit wins, whichever was set first.
    for seen in [
        seen_of_a_big_result(|b| b.with_context_window(8_000).with_tool_output_limit(5_000)).await,
        seen_of_a_big_result(|b| b.with_tool_output_limit(5_000).with_context_window(8_000)).await,
    ] {
        assert!(
            seen.starts_with(&format!("{}\n[output cut: 15000", "x".repeat(5_000))),
            "{}",
            &seen[4_990..5_050]
        );
    }
}
