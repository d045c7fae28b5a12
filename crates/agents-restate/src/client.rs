//! `SessionClient`: the session object's handlers over Restate's HTTP ingress, and
//! `register_deployment`, the admin API call that tells Restate where a service listens.
//!
//! Any process that reaches the ingress can use a session: the one that started it, another
//! machine, a person's approval tool hours later.

use std::time::Duration;

use reqwest::Url;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use agents_core::AgentState;

use crate::error::RestateError;
use crate::wire::{ApproveRequest, RejectRequest, SendReply, SendRequest, WaitingCall};

/// The name of the virtual object the sessions live in.
pub const OBJECT_NAME: &str = "AgentSession";

/// A client of the `AgentSession` object through Restate's ingress
/// (`http://127.0.0.1:8080` by default).
#[derive(Clone, Debug)]
pub struct SessionClient {
    http: reqwest::Client,
    ingress: Url,
    object: String,
}

impl SessionClient {
    /// A client of the ingress at `ingress`.
    ///
    /// # Errors
    /// [`RestateError::Url`] when `ingress` is not an http(s) URL.
    pub fn new(ingress: &str) -> Result<Self, RestateError> {
        let ingress = base_url(ingress)?;
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|source| RestateError::Unreachable {
                what: "building the HTTP client".into(),
                source,
            })?;
        Ok(Self {
            http,
            ingress,
            object: OBJECT_NAME.to_owned(),
        })
    }

    /// This client for the sessions served under `name` (see
    /// [`AgentSession::with_name`](crate::AgentSession::with_name)).
    pub fn with_object_name(mut self, name: impl Into<String>) -> Self {
        self.object = name.into();
        self
    }

    /// Sends a user message to `session` and waits until its execution ends (approvals
    /// included), like the `send` handler.
    ///
    /// # Errors
    /// A [`RestateError`]: unreachable, or the invocation failed or was cancelled (409).
    pub async fn send(&self, session: &str, message: &str) -> Result<SendReply, RestateError> {
        let body = SendRequest {
            message: message.to_owned(),
        };
        self.call(session, &["send"], Some(&body)).await
    }

    /// Sends a user message to `session` without waiting: answers the invocation id
    /// (see [`attach`](Self::attach)).
    ///
    /// # Errors
    /// A [`RestateError`].
    pub async fn send_later(&self, session: &str, message: &str) -> Result<String, RestateError> {
        let body = SendRequest {
            message: message.to_owned(),
        };
        let accepted: Value = self.call(session, &["send", "send"], Some(&body)).await?;
        accepted
            .get("invocationId")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| RestateError::Status {
                what: format!("sending to session `{session}`"),
                status: 200,
                body: format!("no invocationId in {accepted}"),
            })
    }

    /// Waits for the invocation `invocation_id` (from [`send_later`](Self::send_later)) and
    /// answers its reply.
    ///
    /// # Errors
    /// A [`RestateError`]: 409 when it was cancelled, 5xx when it failed.
    pub async fn attach(&self, invocation_id: &str) -> Result<SendReply, RestateError> {
        let mut url = self.ingress.clone();
        push_segments(
            &mut url,
            &["restate", "invocation", invocation_id, "attach"],
        );
        send_json(
            self.http.get(url),
            format!("attaching to invocation {invocation_id}"),
        )
        .await
    }

    /// The state of `session` (`None` before its first message).
    ///
    /// # Errors
    /// A [`RestateError`]; [`RestateError::Decode`] when the stored document is unreadable.
    pub async fn state(&self, session: &str) -> Result<Option<AgentState>, RestateError> {
        let document: Option<Value> = self.call::<(), _>(session, &["state"], None).await?;
        document
            .map(|document| {
                serde_json::from_value(document).map_err(|source| RestateError::Decode {
                    what: format!("the state of session `{session}`"),
                    source,
                })
            })
            .transpose()
    }

    /// The calls `session` waits on.
    ///
    /// # Errors
    /// A [`RestateError`].
    pub async fn pending_approvals(&self, session: &str) -> Result<Vec<WaitingCall>, RestateError> {
        self.call::<(), _>(session, &["pending_approvals"], None)
            .await
    }

    /// Approves the waiting call `call_id` of `session` (with other `arguments`, if given).
    ///
    /// # Errors
    /// A [`RestateError`]; 404 when no such call waits.
    pub async fn approve(
        &self,
        session: &str,
        call_id: &str,
        arguments: Option<Value>,
    ) -> Result<(), RestateError> {
        let body = ApproveRequest {
            call_id: call_id.to_owned(),
            arguments,
            fingerprint: None,
        };
        self.call::<_, Option<Value>>(session, &["approve"], Some(&body))
            .await
            .map(drop)
    }

    /// Approves the waiting call `call_id` of `session` only if it is the one whose
    /// `fingerprint` ([`WaitingCall::fingerprint`]) the person was shown.
    ///
    /// # Errors
    /// A [`RestateError`]: 409 when the waiting call changed (its fingerprint is another), 404
    /// when no such call waits.
    pub async fn approve_checked(
        &self,
        session: &str,
        call_id: &str,
        fingerprint: &str,
    ) -> Result<(), RestateError> {
        let body = ApproveRequest {
            call_id: call_id.to_owned(),
            arguments: None,
            fingerprint: Some(fingerprint.to_owned()),
        };
        self.call::<_, Option<Value>>(session, &["approve"], Some(&body))
            .await
            .map(drop)
    }

    /// Rejects the waiting call `call_id` of `session`; the model reads `reason`.
    ///
    /// # Errors
    /// A [`RestateError`]; 404 when no such call waits.
    pub async fn reject(
        &self,
        session: &str,
        call_id: &str,
        reason: &str,
    ) -> Result<(), RestateError> {
        let body = RejectRequest {
            call_id: call_id.to_owned(),
            reason: reason.to_owned(),
            fingerprint: None,
        };
        self.call::<_, Option<Value>>(session, &["reject"], Some(&body))
            .await
            .map(drop)
    }

    /// Cancels the running `send` of `session`; answers whether one was running.
    ///
    /// # Errors
    /// A [`RestateError`].
    pub async fn cancel(&self, session: &str) -> Result<bool, RestateError> {
        self.call::<(), _>(session, &["cancel"], None).await
    }

    /// POSTs `body` to `AgentSession/{session}/{path...}`.
    async fn call<B: Serialize, T: DeserializeOwned>(
        &self,
        session: &str,
        path: &[&str],
        body: Option<&B>,
    ) -> Result<T, RestateError> {
        let mut url = self.ingress.clone();
        let mut segments = vec![self.object.as_str(), session];
        segments.extend_from_slice(path);
        push_segments(&mut url, &segments);
        let mut request = self.http.post(url);
        if let Some(body) = body {
            request = request.json(body);
        }
        send_json(
            request,
            format!("{} of session `{session}`", path.join("/")),
        )
        .await
    }
}

/// Registers the service endpoint listening at `endpoint` (e.g. `http://127.0.0.1:9080`)
/// with the Restate server whose admin API is at `admin` (e.g. `http://127.0.0.1:9070`), so
/// the ingress routes the session object's invocations to it.
///
/// Restate sends a service's new invocations to its latest deployment, and an invocation
/// replays on the deployment it started on. A registration at a URI already registered
/// replaces that deployment (`force`), which suits development and tests; in production
/// register each version of the service at a URI of its own so runs in flight keep the code
/// they started with. Several instances of one version share one URI behind a load balancer
/// (docs/distributed.md).
///
/// # Errors
/// A [`RestateError`]: unreachable admin API, or Restate refused the endpoint (it could not
/// reach it, or it does not speak a protocol version Restate supports).
pub async fn register_deployment(admin: &str, endpoint: &str) -> Result<(), RestateError> {
    let mut url = base_url(admin)?;
    push_segments(&mut url, &["deployments"]);
    let request = reqwest::Client::new()
        .post(url)
        .timeout(Duration::from_secs(30))
        .json(&json!({ "uri": endpoint, "force": true }));
    send_json::<Value>(request, format!("registering the deployment {endpoint}"))
        .await
        .map(drop)
}

async fn send_json<T: DeserializeOwned>(
    request: reqwest::RequestBuilder,
    what: String,
) -> Result<T, RestateError> {
    let response = request
        .send()
        .await
        .map_err(|source| RestateError::Unreachable {
            what: what.clone(),
            source,
        })?;
    let status = response.status();
    let body = response
        .bytes()
        .await
        .map_err(|source| RestateError::Unreachable {
            what: what.clone(),
            source,
        })?;
    if !status.is_success() {
        return Err(RestateError::Status {
            what,
            status: status.as_u16(),
            body: String::from_utf8_lossy(&body).into_owned(),
        });
    }
    let body: &[u8] = if body.is_empty() { b"null" } else { &body };
    serde_json::from_slice(body).map_err(|source| RestateError::Decode { what, source })
}

fn base_url(url: &str) -> Result<Url, RestateError> {
    Url::parse(url)
        .ok()
        .filter(|url| matches!(url.scheme(), "http" | "https") && !url.cannot_be_a_base())
        .ok_or_else(|| RestateError::Url {
            url: url.to_owned(),
        })
}

/// Appends `segments` to `url`'s path, each percent-encoded (a session id with `/` or `?`
/// stays one segment).
fn push_segments(url: &mut Url, segments: &[&str]) {
    if let Ok(mut path) = url.path_segments_mut() {
        path.pop_if_empty().extend(segments);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_id_stays_one_path_segment_whatever_it_holds() {
        for id in [
            "../admin",
            "a/b",
            "x?handler=approve",
            "#frag",
            "%2F",
            "sp ace",
            "ü",
        ] {
            let mut url = base_url("http://127.0.0.1:8080/").unwrap();
            push_segments(&mut url, &[OBJECT_NAME, id, "state"]);
            let segments: Vec<&str> = url.path_segments().unwrap().collect();
            assert_eq!(segments.len(), 3, "{id} -> {url}");
            assert_eq!(segments[0], OBJECT_NAME);
            assert_eq!(segments[2], "state");
            assert!(
                url.query().is_none() && url.fragment().is_none(),
                "{id} -> {url}"
            );
        }
    }

    #[test]
    fn only_http_urls_are_accepted() {
        for bad in [
            "",
            "restate:8080",
            "file:///etc/passwd",
            "mailto:a@b",
            "ftp://x",
        ] {
            assert!(
                matches!(SessionClient::new(bad), Err(RestateError::Url { .. })),
                "{bad}"
            );
        }
        assert!(SessionClient::new("https://restate.internal:8080").is_ok());
    }
}
