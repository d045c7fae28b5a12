//! Test support (feature `testing`): a scripted agent with a file-writing tool that needs
//! approval, a model that streams its text a word at a time, and a store seeded with the
//! sessions the console's tests, browser tests and benchmarks look at.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agents_core::{
    Agent, ContinuationCriteria, ErrorPolicy, FunctionTool, StepsLimit, ToolCallPresenceCheck,
    ToolError,
};
use agents_processing::{standard_processors, TraceRetention};
use agents_sessions::{AgentSessionExt, Lease, LeaseRequest, SessionError, SessionStore};
use async_trait::async_trait;
use drivers_toolcalling::ToolCallingDriver;
use futures::StreamExt;
use inference::{
    InferenceError, InferenceEvent, InferenceRequest, InferenceResponse, InferenceStream,
    LanguageModel, ScriptedModel, Usage,
};
use messages::ToolCall;
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::sync::Notify;

/// The text of a model answer that tries to run script in the page.
pub const HOSTILE_ANSWER: &str = "Here you go: <script>window.__pwned = 'script'</script>\
<img src=x onerror=\"window.__pwned = 'img'\"> and <a href=\"javascript:alert(1)\">a link</a>";

/// A model that streams each text delta of `inner` a word at a time, `pause` apart (so a
/// page can be seen receiving it).
#[derive(Debug)]
pub struct Paced<M> {
    inner: M,
    pause: Duration,
}

impl<M> Paced<M> {
    /// `inner`, its text streamed a word every `pause`.
    pub fn new(inner: M, pause: Duration) -> Self {
        Self { inner, pause }
    }
}

#[async_trait]
impl<M: LanguageModel> LanguageModel for Paced<M> {
    async fn complete(
        &self,
        request: InferenceRequest,
    ) -> Result<InferenceResponse, InferenceError> {
        self.inner.complete(request).await
    }

    async fn stream(&self, request: InferenceRequest) -> Result<InferenceStream, InferenceError> {
        let pause = self.pause;
        let events = self.inner.stream(request).await?;
        let split = events.flat_map(move |event| {
            let pieces: Vec<Result<InferenceEvent, InferenceError>> = match event {
                Ok(InferenceEvent::TextDelta { text }) => text
                    .split_inclusive(' ')
                    .map(|word| {
                        Ok(InferenceEvent::TextDelta {
                            text: word.to_owned(),
                        })
                    })
                    .collect(),
                other => vec![other],
            };
            futures::stream::iter(pieces).then(move |piece| async move {
                tokio::time::sleep(pause).await;
                piece
            })
        });
        Ok(Box::pin(split))
    }

    fn name(&self) -> String {
        self.inner.name()
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
struct WriteArgs {
    /// The file name (no directories).
    name: String,
    /// What to write.
    text: String,
}

/// The tool `write_note`: writes `text` into the file `name` under `dir`.
pub fn write_note_tool(dir: &Path) -> FunctionTool {
    let dir = dir.to_path_buf();
    FunctionTool::new(
        "write_note",
        "Writes a note file",
        move |args: WriteArgs| {
            let dir = dir.clone();
            async move {
                if args.name.contains(['/', '\\']) || args.name.starts_with('.') {
                    return Err(ToolError::failed("a plain file name, please"));
                }
                tokio::fs::write(dir.join(&args.name), &args.text)
                    .await
                    .map_err(|e| ToolError::failed(e.to_string()))?;
                Ok::<_, ToolError>(format!("wrote {}", args.name))
            }
        },
    )
}

/// An agent answering with `responses` in order (streamed a word every `pause`), with the
/// tool `write_note` (into `dir`) whose calls wait for approval, in separated mode (tool calls
/// and results live in the execution buffer), running until a reply has no tool call (at most
/// 10 steps; tool errors go back to the model, as the facade's builder does). Every reply reports the model `gpt-4o-mini` and some usage, so steps have
/// tokens and a price.
pub fn scripted_agent(
    responses: impl IntoIterator<Item = InferenceResponse>,
    dir: &Path,
    pause: Duration,
) -> Agent {
    let responses: Vec<InferenceResponse> = responses.into_iter().map(priced).collect();
    let model = Paced::new(ScriptedModel::new(responses), pause);
    let driver = ToolCallingDriver::new(model)
        .with_streaming(true)
        .with_model_name("gpt-4o-mini");
    Agent::new(driver)
        .with_name("console-test")
        .with_processors(standard_processors(TraceRetention::Ephemeral))
        .with_error_policy(ErrorPolicy::retry_tool_errors(3))
        .with_model_catalog(inference::ModelCatalog::builtin())
        .with_criteria(
            ContinuationCriteria::new()
                .with(StepsLimit::new(10))
                .with(ToolCallPresenceCheck::new()),
        )
        .with_tool(write_note_tool(dir))
        .with_approval_required(["write_note"])
}

/// `response` reporting model `gpt-4o-mini` and some usage (unless it has its own).
pub fn priced(response: InferenceResponse) -> InferenceResponse {
    let response = if response.model().is_none() {
        response.with_model("gpt-4o-mini")
    } else {
        response
    };
    if response.usage().is_empty() {
        let text = response.content().len() as u64;
        response.with_usage(Usage {
            input_tokens: 1200 + text,
            output_tokens: 40 + text / 4,
            cache_read_tokens: 600,
            ..Usage::default()
        })
    } else {
        response
    }
}

/// A call of `write_note`.
pub fn write_call(id: &str, name: &str, text: &str) -> ToolCall {
    ToolCall::new(
        id,
        "write_note",
        serde_json::json!({ "name": name, "text": text }),
    )
}

/// The sessions of [`seed`].
#[derive(Clone, Debug)]
pub struct Seeded {
    /// A finished two-turn session whose second answer is [`HOSTILE_ANSWER`].
    pub finished: String,
    /// A session waiting for approval of a `write_note` call (writing `approved.txt`).
    pub waiting: String,
    /// Where the agent's tool writes.
    pub dir: PathBuf,
}

/// Seeds `store` with the sessions of [`Seeded`]: run by scripted agents whose tool writes
/// into `dir`.
///
/// # Errors
/// The store's errors.
pub async fn seed<S: SessionStore + Clone + std::fmt::Debug + 'static>(
    store: &S,
    dir: &Path,
) -> Result<Seeded, SessionError> {
    let finished = "weather-report".to_owned();
    let agent = scripted_agent(
        [
            InferenceResponse::text("Let me think.").with_calls([ToolCall::new(
                "call_lookup",
                "lookup",
                serde_json::json!({"city": "Paris"}),
            )]),
            InferenceResponse::text("It is sunny in Paris."),
            InferenceResponse::text(HOSTILE_ANSWER),
        ],
        dir,
        Duration::ZERO,
    )
    .with_tool(FunctionTool::new(
        "lookup",
        "Looks up the weather",
        |args: serde_json::Value| async move {
            Ok::<_, ToolError>(format!("sunny in {}", args["city"].as_str().unwrap_or("?")))
        },
    ));
    let chat = agent.session(store, finished.clone());
    chat.send("What is the weather in Paris?").await?;
    chat.send("Show me something <b>bold</b>").await?;

    let waiting = "notes-to-approve".to_owned();
    let agent = scripted_agent(
        [
            InferenceResponse::with_tool_calls([write_call(
                "call_write",
                "approved.txt",
                "written after approval",
            )]),
            InferenceResponse::text("The note is written."),
        ],
        dir,
        Duration::ZERO,
    );
    agent
        .session(store, waiting.clone())
        .send("Write a note, please")
        .await?;
    Ok(Seeded {
        finished,
        waiting,
        dir: dir.to_path_buf(),
    })
}

/// An agent that answers every message with `answer` (streamed a word every `pause`), for
/// chat tests; it holds `count` answers.
pub fn chatty_agent(answer: &str, count: usize, dir: &Path, pause: Duration) -> Agent {
    scripted_agent(
        std::iter::repeat_with(|| InferenceResponse::text(answer)).take(count),
        dir,
        pause,
    )
}

/// A slow tool call a test controls: the tool ([`Gate::tool`]) says when a call has begun
/// ([`Gate::entered`]) and holds it until the test lets it go ([`Gate::open`]), so a test can
/// look at what holds meanwhile (the session's lease, a shutdown waiting for the turn).
#[derive(Clone, Debug, Default)]
pub struct Gate {
    entered: Arc<Notify>,
    open: Arc<Notify>,
}

impl Gate {
    /// A closed gate.
    pub fn new() -> Self {
        Self::default()
    }

    /// The tool `name` (any arguments): each call waits at the gate, then returns `"let go"`.
    pub fn tool(&self, name: &str) -> FunctionTool {
        let gate = self.clone();
        FunctionTool::new(
            name,
            "Waits until the test lets it go",
            move |_: serde_json::Value| {
                let gate = gate.clone();
                async move {
                    gate.entered.notify_one();
                    gate.open.notified().await;
                    Ok::<_, ToolError>("let go".to_owned())
                }
            },
        )
    }

    /// Waits until a call of the tool has begun.
    pub async fn entered(&self) {
        self.entered.notified().await;
    }

    /// Lets the call at the gate (or the next one) go.
    pub fn open(&self) {
        self.open.notify_one();
    }
}

/// Takes the lease of session `id` for a minute as another runner would (`agents run` on the
/// host `elsewhere`, pid 4242), so a test can see what a server does with a session it may
/// not run.
///
/// # Errors
/// The store's ([`SessionError::Busy`] when another runner holds it already).
pub async fn lease_elsewhere<S: SessionStore>(store: &S, id: &str) -> Result<Lease, SessionError> {
    store
        .acquire_lease(
            id,
            &LeaseRequest {
                owner: "another-runner".into(),
                pid: 4242,
                host: "elsewhere".into(),
                now: chrono::Utc::now(),
                ttl: Duration::from_secs(60),
                take_over: None,
            },
        )
        .await
}
