//! `A2aAgentTool`: a remote A2A agent as a tool. The model sends it a message (and, to
//! continue a conversation, the task id an earlier answer named); the tool posts
//! `SendMessage` to the agent's JSON-RPC endpoint (found on its agent card) and returns the
//! answer's text, cut to a maximum length, with the task's id and state.

use std::time::Duration;

use agents_core::{Tool, ToolContext, ToolError, ToolOutput};
use async_trait::async_trait;
use serde_json::{json, Value};
use tokio::sync::Mutex;

/// The default time a remote agent gets to answer.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// The default bound on the text returned to the model (characters).
pub const DEFAULT_MAX_CHARS: usize = 20_000;

/// How to reach a remote A2A agent.
#[derive(Clone, Debug)]
pub struct A2aRemote {
    /// The tool's name.
    pub name: String,
    /// The agent's base URL (its card is at `URL/.well-known/agent-card.json`).
    pub url: String,
    /// The bearer token, if the agent needs one.
    pub token: Option<String>,
    /// The tool's description (default: the card's).
    pub description: Option<String>,
    /// How long a call may take.
    pub timeout: Duration,
    /// The longest text returned to the model.
    pub max_chars: usize,
}

impl A2aRemote {
    /// The agent at `url`, as the tool `name`, with the default timeout and cap.
    pub fn new(name: impl Into<String>, url: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            url: url.into(),
            token: None,
            description: None,
            timeout: DEFAULT_TIMEOUT,
            max_chars: DEFAULT_MAX_CHARS,
        }
    }
}

/// What can go wrong setting up the tool.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum A2aClientError {
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
    /// The URL is not http(s).
    #[error("{url:?} is not an http:// or https:// URL")]
    Url {
        /// The URL.
        url: String,
    },
}

/// A remote A2A agent as a tool.
#[derive(Debug)]
pub struct A2aAgentTool {
    remote: A2aRemote,
    description: String,
    http: reqwest::Client,
    /// The JSON-RPC endpoint, once read from the card.
    endpoint: Mutex<Option<String>>,
}

impl A2aAgentTool {
    /// The tool for `remote` (nothing is fetched until the first call).
    ///
    /// # Errors
    /// [`A2aClientError`] for a URL that is not http(s), or a client that cannot be built.
    pub fn new(remote: A2aRemote) -> Result<Self, A2aClientError> {
        if !(remote.url.starts_with("http://") || remote.url.starts_with("https://")) {
            return Err(A2aClientError::Url {
                url: remote.url.clone(),
            });
        }
        // The call's timeout is the tool's (`tokio::time::timeout` around the whole exchange,
        // one message for the model); the client's own is a second later, a backstop that never
        // races it.
        let http = reqwest::Client::builder()
            .timeout(remote.timeout + Duration::from_secs(1))
            .build()
            .map_err(|e| A2aClientError::Client(e.to_string()))?;
        let description = remote.description.clone().unwrap_or_else(|| {
            format!(
                "Ask the remote agent `{}` (A2A). Give it a `message`; to continue the same \
                 conversation, pass the `task_id` its last answer named.",
                remote.name
            )
        });
        Ok(Self {
            remote,
            description,
            http,
            endpoint: Mutex::new(None),
        })
    }

    fn request(&self, builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        let builder = builder.header("A2A-Version", "1.0");
        match &self.remote.token {
            Some(token) => builder.bearer_auth(token),
            None => builder,
        }
    }

    /// The JSON-RPC endpoint the card names (the base URL when it names none for 1.0).
    async fn endpoint(&self) -> Result<String, ToolError> {
        let mut endpoint = self.endpoint.lock().await;
        if let Some(url) = endpoint.as_ref() {
            return Ok(url.clone());
        }
        let base = self.remote.url.trim_end_matches('/');
        let card_url = format!("{base}/.well-known/agent-card.json");
        let response = self
            .request(self.http.get(&card_url))
            .send()
            .await
            .map_err(|e| ToolError::failed(format!("cannot reach the agent's card: {e}")))?;
        if !response.status().is_success() {
            return Err(ToolError::failed(format!(
                "the agent's card answered {}",
                response.status()
            )));
        }
        let card: Value = response
            .json()
            .await
            .map_err(|e| ToolError::failed(format!("the agent's card is not JSON: {e}")))?;
        let url = card
            .get("supportedInterfaces")
            .and_then(Value::as_array)
            .and_then(|interfaces| {
                interfaces.iter().find(|i| {
                    i.get("protocolBinding").and_then(Value::as_str) == Some("JSONRPC")
                        && i.get("protocolVersion")
                            .and_then(Value::as_str)
                            .is_some_and(|v| v.starts_with("1."))
                })
            })
            .and_then(|i| i.get("url").and_then(Value::as_str))
            .map_or_else(|| format!("{base}/"), str::to_owned);
        *endpoint = Some(url.clone());
        Ok(url)
    }

    async fn send(&self, message: &str, task_id: Option<&str>) -> Result<String, ToolError> {
        let endpoint = self.endpoint().await?;
        let mut msg = json!({
            "messageId": uuid::Uuid::new_v4().to_string(),
            "role": "ROLE_USER",
            "parts": [{ "text": message }],
        });
        if let Some(task) = task_id {
            msg["taskId"] = json!(task);
        }
        let body = json!({
            "jsonrpc": "2.0",
            "id": uuid::Uuid::new_v4().to_string(),
            "method": "SendMessage",
            "params": { "message": msg },
        });
        let response = self
            .request(self.http.post(&endpoint))
            .json(&body)
            .send()
            .await
            .map_err(|e| {
                if e.is_timeout() {
                    ToolError::failed(format!(
                        "the agent did not answer within {} seconds",
                        self.remote.timeout.as_secs()
                    ))
                } else {
                    ToolError::failed(format!("the agent did not answer: {e}"))
                }
            })?;
        let status = response.status();
        let reply: Value = response.json().await.map_err(|e| {
            ToolError::failed(format!("the agent's answer ({status}) is not JSON: {e}"))
        })?;
        if let Some(error) = reply.get("error") {
            return Err(ToolError::failed(format!(
                "the agent refused: {} (code {})",
                error.get("message").and_then(Value::as_str).unwrap_or("?"),
                error.get("code").and_then(Value::as_i64).unwrap_or(0)
            )));
        }
        let result = reply
            .get("result")
            .ok_or_else(|| ToolError::failed("the agent's answer has no result"))?;
        Ok(render(result))
    }
}

/// The text of a `SendMessage` result: the task's artifacts (or its status message) with
/// its id and state, or a direct message's text.
fn render(result: &Value) -> String {
    if let Some(task) = result.get("task") {
        let id = task.get("id").and_then(Value::as_str).unwrap_or("?");
        let state = task
            .pointer("/status/state")
            .and_then(Value::as_str)
            .unwrap_or("?");
        let mut texts: Vec<String> = task
            .get("artifacts")
            .and_then(Value::as_array)
            .map(|artifacts| artifacts.iter().flat_map(parts_text).collect())
            .unwrap_or_default();
        if texts.is_empty() || state != "TASK_STATE_COMPLETED" {
            if let Some(message) = task.pointer("/status/message") {
                texts.extend(parts_text(message));
            }
        }
        let state = state
            .strip_prefix("TASK_STATE_")
            .unwrap_or(state)
            .to_ascii_lowercase();
        return format!("{}\n[task {id}: {state}]", texts.join("\n"));
    }
    if let Some(message) = result.get("message") {
        return parts_text(message).join("\n");
    }
    result.to_string()
}

fn parts_text(holder: &Value) -> Vec<String> {
    holder
        .get("parts")
        .and_then(Value::as_array)
        .map(|parts| {
            parts
                .iter()
                .filter_map(|part| {
                    part.get("text")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .or_else(|| part.get("data").map(Value::to_string))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn capped(text: String, max: usize) -> String {
    if text.chars().count() <= max {
        return text;
    }
    let mut cut: String = text.chars().take(max).collect();
    cut.push_str(&format!(
        "\n[cut: the answer is longer than {max} characters]"
    ));
    cut
}

#[async_trait]
impl Tool for A2aAgentTool {
    fn name(&self) -> &str {
        &self.remote.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "message": {"type": "string", "description": "What to ask or tell the agent."},
                "task_id": {"type": "string", "description": "To continue a conversation: the task id its last answer named."}
            },
            "required": ["message"]
        })
    }

    async fn call(&self, arguments: Value, context: &ToolContext) -> Result<ToolOutput, ToolError> {
        let message = arguments
            .get("message")
            .and_then(Value::as_str)
            .filter(|m| !m.trim().is_empty())
            .ok_or_else(|| {
                ToolError::invalid_arguments("`message` (a non-empty string) is required")
            })?;
        let task_id = arguments.get("task_id").and_then(Value::as_str);
        let call = tokio::time::timeout(self.remote.timeout, self.send(message, task_id));
        tokio::select! {
            result = call => match result {
                Ok(result) => Ok(ToolOutput::text(capped(result?, self.remote.max_chars))),
                Err(_) => Err(ToolError::failed(format!(
                    "the agent did not answer within {} seconds",
                    self.remote.timeout.as_secs()
                ))),
            },
            () = context.cancellation.cancelled() => Err(ToolError::failed("cancelled")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_renders_its_answer_id_and_state() {
        let result = json!({"task": {"id": "t1", "status": {"state": "TASK_STATE_COMPLETED"},
            "artifacts": [{"parts": [{"text": "sunny"}]}]}});
        assert_eq!(render(&result), "sunny\n[task t1: completed]");
        let waiting = json!({"task": {"id": "t2", "status": {"state": "TASK_STATE_INPUT_REQUIRED",
            "message": {"parts": [{"text": "waits for approval"}]}}}});
        assert_eq!(
            render(&waiting),
            "waits for approval\n[task t2: input_required]"
        );
        let message = json!({"message": {"parts": [{"text": "hi"}]}});
        assert_eq!(render(&message), "hi");
    }

    #[test]
    fn long_answers_are_cut_with_a_note() {
        let text = capped("x".repeat(50), 10);
        assert!(text.starts_with("xxxxxxxxxx\n[cut"), "{text}");
        assert_eq!(capped("short".into(), 10), "short");
    }

    #[test]
    fn only_http_urls_are_accepted() {
        assert!(A2aAgentTool::new(A2aRemote::new("a", "file:///etc/passwd")).is_err());
        assert!(A2aAgentTool::new(A2aRemote::new("a", "http://127.0.0.1:1")).is_ok());
    }
}
