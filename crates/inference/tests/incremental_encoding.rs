//! Incremental request encoding: whatever a model encoded before (histories extended,
//! branched, summarized in the middle, cut back), the body it sends is byte for byte a fresh
//! `serde_json` encoding of the provider's public body function. Also on the wire: the mock
//! server receives those bytes with a `Content-Length`, never chunked, and a retry sends them
//! again.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::sync::Arc;

use common::*;
use inference::providers::{anthropic, openai};
use inference::{
    Anthropic, InferenceRequest, LanguageModel, Message, Messages, ModelSettings, OpenAiCompatible,
    ResponseFormat, ToolChoice, ToolSchema,
};
use messages::testing;
use proptest::prelude::*;
use serde_json::json;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

/// One change to the history between two requests.
#[derive(Clone, Debug)]
enum Change {
    /// A step: new messages at the end.
    Append(Vec<Message>),
    /// Summarization: the messages from `at` (a fraction of the length) for `len` messages
    /// become one summary; what follows is kept (the same shared messages).
    Summarize { at: f64, len: usize },
    /// Back to the first `at` (fraction) messages, as a rolled-back or resumed run.
    Truncate(f64),
    /// Another execution's history: an earlier one (by index) goes on from there.
    Resume(usize),
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        6 => proptest::collection::vec(testing::message(), 1..5).prop_map(Change::Append),
        1 => (0.0..1.0f64, 1usize..6).prop_map(|(at, len)| Change::Summarize { at, len }),
        1 => (0.0..1.0f64).prop_map(Change::Truncate),
        1 => (0usize..8).prop_map(Change::Resume),
    ]
}

/// How one request differs besides its messages.
#[derive(Clone, Debug)]
struct Shape {
    breakpoint: Option<f64>,
    stream: bool,
    new_tools: bool,
    tool_choice: bool,
    json: bool,
    sampling: bool,
    replace_messages: bool,
}

fn shape() -> impl Strategy<Value = Shape> {
    (
        proptest::option::of(0.0..1.2f64),
        any::<bool>(),
        proptest::bool::weighted(0.2),
        any::<bool>(),
        proptest::bool::weighted(0.2),
        any::<bool>(),
        proptest::bool::weighted(0.05),
    )
        .prop_map(
            |(breakpoint, stream, new_tools, tool_choice, json, sampling, replace_messages)| {
                Shape {
                    breakpoint,
                    stream,
                    new_tools,
                    tool_choice,
                    json,
                    sampling,
                    replace_messages,
                }
            },
        )
}

fn tools(tag: usize) -> Arc<[ToolSchema]> {
    vec![
        ToolSchema::new(
            "search",
            format!("Search ({tag})"),
            json!({"type": "object", "properties": {"q": {"type": "string"}}}),
        ),
        ToolSchema::new("read", "Read a file", json!({"type": "object"})),
    ]
    .into()
}

fn fraction(len: usize, f: f64) -> usize {
    ((len as f64) * f).floor() as usize
}

/// The histories a sequence of changes goes through, each sharing what it kept of the one
/// before (the same `Arc`s, as an agent's states do).
fn histories(start: Messages, changes: &[Change]) -> Vec<Messages> {
    let mut seen = vec![start.clone()];
    let mut current = start;
    for change in changes {
        current = match change {
            Change::Append(messages) => current.extended(messages.iter().cloned()),
            Change::Summarize { at, len } => {
                let at = fraction(current.len(), *at);
                let head: Messages = current.iter_shared().take(at).cloned().collect();
                let tail: Messages = current.iter_shared().skip(at + len).cloned().collect();
                head.appended(Message::user("Summary of what came before."))
                    .concat(&tail)
            }
            Change::Truncate(at) => current
                .iter_shared()
                .take(fraction(current.len(), *at))
                .cloned()
                .collect(),
            Change::Resume(index) => seen[index % seen.len()].clone(),
        };
        seen.push(current.clone());
    }
    seen
}

fn request(messages: Messages, shape: &Shape, tools: &Arc<[ToolSchema]>) -> InferenceRequest {
    let mut request = InferenceRequest::new(messages.clone()).with_shared_tools(Arc::clone(tools));
    if let Some(at) = shape.breakpoint {
        request = request.with_cache_breakpoint(fraction(messages.len(), at));
    }
    if shape.tool_choice {
        request = request
            .with_tool_choice(ToolChoice::Required)
            .with_parallel_tool_calls(false);
    }
    if shape.json {
        request = request.with_response_format(ResponseFormat::JsonObject);
    }
    if shape.sampling {
        request = request.with_temperature(0.25).with_max_tokens(77);
    }
    if shape.replace_messages {
        request = request.with_option("messages", json!([{"role": "user", "content": "x"}]));
    }
    request.with_option("seed", 7)
}

fn settings() -> ModelSettings {
    ModelSettings::new("m")
        .with_temperature(0.5)
        .with_max_tokens(300)
}

fn check_all(
    changes: &[Change],
    shapes: &[Shape],
    start: Messages,
    openai_model: &OpenAiCompatible,
    options: openai::BodyOptions,
    anthropic_model: &Anthropic,
    caching: bool,
) -> Result<(), TestCaseError> {
    let mut tool_list = tools(0);
    for (step, messages) in histories(start, changes).into_iter().enumerate() {
        let shape = &shapes[step % shapes.len()];
        if shape.new_tools {
            tool_list = tools(step);
        }
        let request = request(messages, shape, &tool_list);
        let applied = settings().apply_to(request.clone());

        let sent = openai_model.encode_request(&request, shape.stream).unwrap();
        let mut expected = openai::request_body_with(&applied, "m", shape.stream, options);
        expected
            .as_object_mut()
            .unwrap()
            .entry("prompt_cache_key")
            .or_insert(json!("k"));
        let expected = serde_json::to_vec(&expected).unwrap();
        prop_assert_eq!(sent.len(), expected.len());
        prop_assert_eq!(
            String::from_utf8(sent.to_vec()).unwrap(),
            String::from_utf8(expected).unwrap(),
            "openai, step {}",
            step
        );

        let sent = anthropic_model
            .encode_request(&request, shape.stream)
            .unwrap();
        let expected = anthropic::request_body(
            &applied,
            "m",
            anthropic::DEFAULT_MAX_TOKENS,
            shape.stream,
            caching,
        );
        let expected = serde_json::to_vec(&expected).unwrap();
        prop_assert_eq!(
            String::from_utf8(sent.to_vec()).unwrap(),
            String::from_utf8(expected).unwrap(),
            "anthropic, step {}",
            step
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Byte for byte a fresh encoding, request after request, for both providers and every
    /// option that changes how messages are written.
    #[test]
    fn incremental_bodies_equal_fresh_encodings(
        start in testing::messages(12),
        changes in proptest::collection::vec(change(), 1..14),
        shapes in proptest::collection::vec(shape(), 1..5),
        developer_role in any::<bool>(),
        tool_result_images in any::<bool>(),
        caching in any::<bool>(),
        slots in prop_oneof![Just(8usize), Just(1), Just(0)],
    ) {
        let options = openai::BodyOptions { developer_role, tool_result_images };
        let openai_model = OpenAiCompatible::builder()
            .base_url("http://127.0.0.1:9/v1")
            .settings(settings())
            .developer_role(developer_role)
            .tool_result_images(tool_result_images)
            .prompt_cache_key("k")
            .encoding_cache(slots)
            .build()
            .unwrap();
        let anthropic_model = Anthropic::builder()
            .base_url("http://127.0.0.1:9")
            .settings(settings())
            .prompt_caching(caching)
            .encoding_cache(slots)
            .build()
            .unwrap();
        check_all(&changes, &shapes, start, &openai_model, options, &anthropic_model, caching)?;
    }
}

/// A long history grown a step at a time, in the shape an agent's requests have: every
/// request is checked against a fresh encoding, and the body stays a short chain of chunks.
#[test]
fn a_long_conversation_is_sent_as_a_short_chain_of_chunks() {
    let model = Anthropic::builder()
        .base_url("http://127.0.0.1:9")
        .model("m")
        .build()
        .unwrap();
    let mut history = Messages::from(vec![Message::system("Be brief.")]);
    for turn in 0..300 {
        history = history.extended([
            Message::user(format!("question {turn}")),
            Message::assistant_tool_calls([messages::ToolCall::new(
                format!("c{turn}"),
                "search",
                json!({"q": turn}),
            )]),
            Message::tool_result(format!("c{turn}"), "search", "found"),
        ]);
        let stable = history.len() - 3;
        let request = InferenceRequest::new(history.clone())
            .with_shared_tools(tools(0))
            .with_cache_breakpoint(stable);
        let body = model.encode_request(&request, true).unwrap();
        let fresh = anthropic::request_body(&request, "m", 4096, true, true);
        assert_eq!(
            body.to_vec(),
            serde_json::to_vec(&fresh).unwrap(),
            "turn {turn}"
        );
        assert!(
            body.chunks().len() <= 40,
            "turn {turn}: {} chunks",
            body.chunks().len()
        );
    }
}

/// On the wire: the exact bytes, a `Content-Length`, no chunked upload, and the same bytes
/// again on a retry.
#[tokio::test]
async fn the_server_receives_the_same_bytes_with_a_content_length_on_every_attempt() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(json_fixture("openai_text.json"))
        .mount(&server)
        .await;
    let model = openai(&server, Some("sk-test"));
    let mut history = Messages::from(vec![Message::system("Be brief.")]);
    for turn in 0..3 {
        history = history.extended([
            Message::user(format!("question {turn}")),
            Message::assistant(format!("answer {turn}")),
        ]);
        model
            .complete(InferenceRequest::new(history.clone()).with_shared_tools(tools(1)))
            .await
            .unwrap();
    }
    let received = server.received_requests().await.unwrap();
    assert_eq!(received.len(), 4, "one retry, then one request per turn");
    assert_eq!(
        received[0].body, received[1].body,
        "the retry sends the same bytes"
    );
    let last = InferenceRequest::new(history).with_shared_tools(tools(1));
    let fresh = openai::request_body(&last, "gpt-4o-mini", false, false);
    assert_eq!(received[3].body, serde_json::to_vec(&fresh).unwrap());
    for request in &received {
        let length = request.headers.get("content-length").unwrap();
        assert_eq!(length.to_str().unwrap(), request.body.len().to_string());
        assert!(request.headers.get("transfer-encoding").is_none());
    }
}
