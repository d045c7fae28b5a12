//! The session as a Restate virtual object: `AgentSession/{session id}/{handler}`.
//!
//! Restate runs at most one exclusive invocation per key at a time, on whichever service
//! instance it picks, so a session never runs on two instances at once. `send` (exclusive)
//! runs the execution to its end; `state`, `pending_approvals`, `approve`, `reject`, `cancel`
//! and `expire_approvals` are shared handlers: they never queue behind a `send` that waits
//! for a person.
//!
//! The conversation lives in the object's durable state (key `state`, the state document):
//! Restate keeps it beside the journal, the invocation reads it eagerly, and no second store
//! has to agree with Restate about which step is the last. Each step's resulting state is
//! first a journal entry (`ctx.run`) and then the object's state, so a replay reuses the
//! first attempt's state (its execution id, its timestamps) instead of making a new one.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use restate_sdk::context::{
    ContextAwakeables, ContextClient, ContextReadState, ContextSideEffects, ContextWriteState,
    DurableFuturesUnordered, ObjectContext, RequestTarget, RunFuture, RunRetryPolicy,
    SharedObjectContext,
};
use restate_sdk::errors::{HandlerError, HandlerResult, TerminalError};
use restate_sdk::serde::Json;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use agents_core::{Agent, AgentState, AgentStatus, StepOptions};
use messages::Message;

use crate::journal::{drive, journal_channel};
use crate::wire::{
    ApproveRequest, Decision, ExpireRequest, RejectRequest, SendReply, SendRequest, WaitingCall,
};

/// The object's state key holding the state document.
const STATE: &str = "state";
/// The object's state key mapping each waiting call id to its awakeable.
const WAITING: &str = "waiting";
/// The object's state key holding the invocation id of the running `send`.
const RUNNING: &str = "running";

/// The status code of a cancelled invocation's futures.
const CANCELLED: u16 = 409;

/// An agent served as the Restate virtual object `AgentSession`, one object per session id.
///
/// Build it from an [`Agent`], bind it to an endpoint
/// ([`endpoint`](crate::endpoint) / [`serve`](crate::serve)), and register the endpoint with
/// Restate's admin API ([`register_deployment`](crate::register_deployment)).
pub struct AgentSession {
    name: String,
    agent: Arc<Agent>,
    approval_timeout: Option<Duration>,
    model_retry: RunRetryPolicy,
    identity_keys: Vec<String>,
}

impl AgentSession {
    /// Serves `agent`. Approvals wait 24 hours before they count as rejected; no tool is
    /// retry-safe (an interrupted call is reported, never run again); retryable model errors
    /// are retried by Restate, 5 attempts over at most 2 minutes.
    pub fn new(agent: Arc<Agent>) -> Self {
        Self {
            name: crate::client::OBJECT_NAME.to_owned(),
            agent,
            approval_timeout: Some(Duration::from_secs(24 * 60 * 60)),
            model_retry: RunRetryPolicy::new()
                .initial_delay(Duration::from_millis(500))
                .exponentiation_factor(2.0)
                .max_delay(Duration::from_secs(30))
                .max_attempts(5)
                .max_duration(Duration::from_secs(120)),
            identity_keys: Vec::new(),
        }
    }

    /// Accepts only requests signed by the Restate server holding the private half of `key`
    /// (`publickeyv1_...`, the key Restate's `request-identity-private-key-pem-file` names);
    /// any other request gets 401, so reaching the service's port is not enough to invoke
    /// it. Give several keys while rotating.
    pub fn with_identity_key(mut self, key: impl Into<String>) -> Self {
        self.identity_keys.push(key.into());
        self
    }

    /// The public keys of the Restate servers whose requests are accepted (none: any).
    pub fn identity_keys(&self) -> &[String] {
        &self.identity_keys
    }

    /// Serves the sessions as the virtual object `name` instead of `AgentSession` (one name
    /// per agent on a Restate cluster; the client must use the same name:
    /// [`SessionClient::with_object_name`](crate::SessionClient::with_object_name)).
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The virtual object's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How long a suspended run waits for decisions before every undecided call counts as
    /// rejected (`None`: forever).
    pub fn with_approval_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.approval_timeout = timeout;
        self
    }

    /// How Restate retries a model call that failed with a retryable error (rate limit,
    /// timeout, transport, 5xx). When it gives up, the step records the failure and the
    /// agent's error policy decides. Give the provider itself no retries of its own
    /// (`RetryPolicy { max_attempts: 1, .. }`) so the two do not multiply.
    pub fn with_model_retry(mut self, policy: RunRetryPolicy) -> Self {
        self.model_retry = policy;
        self
    }
}

impl std::fmt::Debug for AgentSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentSession")
            .field("name", &self.name)
            .field("agent", &self.agent.name())
            .field("approval_timeout", &self.approval_timeout)
            .field("model_retry", &self.model_retry)
            .field("identity_keys", &self.identity_keys.len())
            .finish_non_exhaustive()
    }
}

#[restate_sdk::object(name = "AgentSession")]
impl AgentSession {
    /// Appends the user message and runs the execution to its end, waiting for decisions
    /// when the run suspends. Answers what the run ended with.
    #[handler]
    pub(crate) async fn send(
        &self,
        ctx: ObjectContext<'_>,
        request: Json<SendRequest>,
    ) -> HandlerResult<Json<SendReply>> {
        let Json(request) = request;
        ctx.set(RUNNING, ctx.invocation_id().to_owned());
        let state = match ctx.get::<Json<Value>>(STATE).await? {
            Some(Json(document)) => decode_state(document)?,
            None => self.agent.new_state(),
        };
        let state = checkpoint(
            &ctx,
            "user message",
            state.with_user_message(Message::user(request.message)),
        )
        .await;
        let state = match state {
            Ok(state) => self.run(&ctx, state).await?,
            Err(Interrupted::Cancelled(state)) => self.finish_cancelled(&ctx, state).await?,
            Err(Interrupted::Failed(error)) => return Err(error),
        };
        ctx.clear(RUNNING);
        Ok(Json(SendReply::of(&state)))
    }

    /// The session's state document (`null` before the first message).
    #[handler]
    pub(crate) async fn state(
        &self,
        ctx: SharedObjectContext<'_>,
    ) -> HandlerResult<Json<Option<Value>>> {
        Ok(Json(
            ctx.get::<Json<Value>>(STATE).await?.map(Json::into_inner),
        ))
    }

    /// The calls the session waits on, undecided ones only.
    #[handler]
    pub(crate) async fn pending_approvals(
        &self,
        ctx: SharedObjectContext<'_>,
    ) -> HandlerResult<Json<Vec<WaitingCall>>> {
        let Some(Json(document)) = ctx.get::<Json<Value>>(STATE).await? else {
            return Ok(Json(Vec::new()));
        };
        let state = decode_state(document)?;
        let execution = state.execution().map(|e| e.id()).unwrap_or_default();
        Ok(Json(
            state
                .pending_approvals()
                .iter()
                .filter(|pending| !pending.is_decided())
                .map(|pending| WaitingCall {
                    call_id: pending.call_id().to_owned(),
                    tool_name: pending.tool_name().to_owned(),
                    arguments: pending.arguments().clone(),
                    arguments_hash: pending.arguments_hash().to_owned(),
                    fingerprint: pending.fingerprint(execution),
                })
                .collect(),
        ))
    }

    /// Approves a waiting call (optionally with other arguments); the suspended `send`
    /// resumes once every waiting call is decided.
    #[handler]
    pub(crate) async fn approve(
        &self,
        ctx: SharedObjectContext<'_>,
        request: Json<ApproveRequest>,
    ) -> HandlerResult<()> {
        let Json(request) = request;
        resolve_decision(
            &ctx,
            &request.call_id,
            request.fingerprint.as_deref(),
            Decision::Approve {
                arguments: request.arguments,
            },
        )
        .await
    }

    /// Rejects a waiting call; the model reads the reason.
    #[handler]
    pub(crate) async fn reject(
        &self,
        ctx: SharedObjectContext<'_>,
        request: Json<RejectRequest>,
    ) -> HandlerResult<()> {
        let Json(request) = request;
        resolve_decision(
            &ctx,
            &request.call_id,
            request.fingerprint.as_deref(),
            Decision::Reject {
                reason: request.reason,
            },
        )
        .await
    }

    /// Cancels the running `send`, if any (the same as cancelling its invocation through
    /// Restate): the step in flight is dropped, waiting calls get "not approved" results, and
    /// the execution finishes `failed` with stop reason `user_requested`. Answers whether a
    /// `send` was running.
    #[handler]
    pub(crate) async fn cancel(&self, ctx: SharedObjectContext<'_>) -> HandlerResult<bool> {
        let Some(invocation) = ctx.get::<String>(RUNNING).await? else {
            return Ok(false);
        };
        ctx.invocation_handle(invocation).cancel();
        Ok(true)
    }

    /// The approval timeout firing: every call of that suspension still undecided is
    /// rejected with the given reason (a call decided already keeps its decision).
    #[handler]
    pub(crate) async fn expire_approvals(
        &self,
        ctx: SharedObjectContext<'_>,
        request: Json<ExpireRequest>,
    ) -> HandlerResult<()> {
        let Json(request) = request;
        for awakeable in &request.awakeables {
            ctx.resolve_awakeable(
                awakeable,
                Json(Decision::Reject {
                    reason: request.reason.clone(),
                }),
            );
        }
        Ok(())
    }
}

/// Why the run loop stopped early.
enum Interrupted {
    /// The invocation was cancelled; the state to finish as cancelled.
    Cancelled(AgentState),
    /// Anything else: the invocation fails with it (Restate retries a retryable one).
    Failed(HandlerError),
}

impl AgentSession {
    /// Steps `state` while it can run, waiting for decisions whenever it suspends.
    async fn run(
        &self,
        ctx: &ObjectContext<'_>,
        mut state: AgentState,
    ) -> HandlerResult<AgentState> {
        loop {
            let next = if state.status() == AgentStatus::Suspended && !state.approvals_decided() {
                self.await_decisions(ctx, state).await
            } else if state.is_runnable() {
                self.step(ctx, state).await
            } else {
                return Ok(state);
            };
            state = match next {
                Ok(state) => state,
                Err(Interrupted::Cancelled(state)) => {
                    return self.finish_cancelled(ctx, state).await
                }
                Err(Interrupted::Failed(error)) => return Err(error),
            };
        }
    }

    /// One step of the agent, its model and tool calls journaled, its result checkpointed.
    async fn step(
        &self,
        ctx: &ObjectContext<'_>,
        state: AgentState,
    ) -> Result<AgentState, Interrupted> {
        let number = state.next_step_number();
        // A step that starts an execution makes its id: journaled once, so a replay of the
        // step gets the same execution id, and every tool the same idempotency key.
        let execution_id = if state.execution().is_none() {
            Some(journaled_id(ctx, &format!("execution id at step {number}")).await?)
        } else {
            None
        };
        let (journal, requests) = journal_channel(self.model_retry.clone());
        let token = CancellationToken::new();
        let mut options = StepOptions::new()
            .with_journal(Arc::new(journal))
            .with_cancellation(token.clone());
        if let Some(id) = execution_id {
            options = options.with_execution_id(id);
        }
        let stepped = drive(
            ctx,
            requests,
            &token,
            self.agent.step_with(state.clone(), &options),
        )
        .await
        .map_err(|error| {
            Interrupted::Failed(TerminalError::new(agents_core::error_chain(&error)).into())
        })?;
        checkpoint(ctx, &format!("state after step {number}"), stepped).await
    }

    /// Waits for a decision on every undecided call of a suspended state (a person through
    /// `approve`/`reject`, or the approval timeout), then checkpoints the decided state.
    async fn await_decisions(
        &self,
        ctx: &ObjectContext<'_>,
        mut state: AgentState,
    ) -> Result<AgentState, Interrupted> {
        let undecided: Vec<String> = state
            .pending_approvals()
            .iter()
            .filter(|pending| !pending.is_decided())
            .map(|pending| pending.call_id().to_owned())
            .collect();
        let mut waiting = BTreeMap::new();
        let mut awakeables = Vec::with_capacity(undecided.len());
        let mut decisions = DurableFuturesUnordered::new();
        for call_id in &undecided {
            let (id, decision) = ctx.awakeable::<Json<Decision>>();
            waiting.insert(call_id.clone(), id.clone());
            awakeables.push(id);
            decisions.push(decision);
        }
        ctx.set(WAITING, Json(waiting));
        if let Some(timeout) = self.approval_timeout {
            let expire = ExpireRequest {
                awakeables,
                reason: format!(
                    "no decision within the approval timeout ({}s)",
                    timeout.as_secs()
                ),
            };
            ctx.request::<_, ()>(
                RequestTarget::object(&self.name, ctx.key(), "expire_approvals"),
                Json(expire),
            )
            .send_after(timeout);
        }
        loop {
            let next = match decisions.next().await {
                Ok(next) => next,
                Err(error) if error.code() == CANCELLED => {
                    ctx.clear(WAITING);
                    return Err(Interrupted::Cancelled(state));
                }
                Err(error) => return Err(Interrupted::Failed(error.into())),
            };
            let Some((index, decision)) = next else { break };
            let call_id = &undecided[index];
            let Json(decision) = decision.map_err(|e| Interrupted::Failed(e.into()))?;
            state = decide(state, call_id, decision)?;
        }
        ctx.clear(WAITING);
        checkpoint(ctx, "decisions", state).await
    }

    /// Finishes a cancelled run: waiting calls get "not approved" results, a run in progress
    /// finishes `failed`/`user_requested` (a step with a cancelled token: no model call).
    async fn finish_cancelled(
        &self,
        ctx: &ObjectContext<'_>,
        state: AgentState,
    ) -> HandlerResult<AgentState> {
        ctx.clear(WAITING);
        let state = if state.status() == AgentStatus::Suspended {
            state.cancel_pending()
        } else {
            let token = CancellationToken::new();
            token.cancel();
            self.agent
                .step_with(state, &StepOptions::new().with_cancellation(token))
                .await
                .map_err(|error| TerminalError::new(agents_core::error_chain(&error)))?
        };
        match checkpoint(ctx, "cancelled", state).await {
            Ok(state) | Err(Interrupted::Cancelled(state)) => {
                ctx.clear(RUNNING);
                Ok(state)
            }
            Err(Interrupted::Failed(error)) => Err(error),
        }
    }
}

/// Applies one decision to `state`.
fn decide(state: AgentState, call_id: &str, decision: Decision) -> Result<AgentState, Interrupted> {
    let decided = match decision {
        Decision::Approve { arguments: None } => state.approve(call_id),
        Decision::Approve {
            arguments: Some(arguments),
        } => state.approve_with(call_id, arguments),
        Decision::Reject { reason } => state.reject(call_id, reason),
    };
    decided.map_err(|error| Interrupted::Failed(TerminalError::new(error.to_string()).into()))
}

/// Journals `state` (a replay gets the first attempt's document back instead of the one it
/// computed) and makes it the object's state.
/// A fresh uuid v7, journaled under `name`: a replay gets the one the first attempt made.
async fn journaled_id(ctx: &ObjectContext<'_>, name: &str) -> Result<String, Interrupted> {
    let journaled = ctx
        .run(|| async { Ok(uuid::Uuid::now_v7().to_string()) })
        .name(name.to_owned())
        .await;
    match journaled {
        Ok(id) => Ok(id),
        Err(error) => Err(Interrupted::Failed(error.into())),
    }
}

async fn checkpoint(
    ctx: &ObjectContext<'_>,
    name: &str,
    state: AgentState,
) -> Result<AgentState, Interrupted> {
    let document = serde_json::to_value(&state)
        .map_err(|error| Interrupted::Failed(TerminalError::new(error.to_string()).into()))?;
    let ran = Arc::new(AtomicBool::new(false));
    let ran_in_closure = Arc::clone(&ran);
    let journaled = ctx
        .run(move || async move {
            ran_in_closure.store(true, Ordering::SeqCst);
            Ok(Json(document))
        })
        .name(name.to_owned())
        .await;
    let Json(document) = match journaled {
        Ok(document) => document,
        Err(error) if error.code() == CANCELLED => return Err(Interrupted::Cancelled(state)),
        Err(error) => return Err(Interrupted::Failed(error.into())),
    };
    let state = if ran.load(Ordering::SeqCst) {
        state
    } else {
        decode_state(document.clone()).map_err(Interrupted::Failed)?
    };
    ctx.set(STATE, Json(document));
    Ok(state)
}

/// Sends `decision` to the waiting call `call_id` through its awakeable, after checking that
/// the call still has the `fingerprint` the person was shown (when given): what `approve` and
/// `reject` share.
async fn resolve_decision(
    ctx: &SharedObjectContext<'_>,
    call_id: &str,
    fingerprint: Option<&str>,
    decision: Decision,
) -> HandlerResult<()> {
    check_shown(ctx, call_id, fingerprint).await?;
    let awakeable = waiting_awakeable(ctx, call_id).await?;
    ctx.resolve_awakeable(&awakeable, Json(decision));
    Ok(())
}

/// With `fingerprint` (the one a person was shown), a terminal error (409) unless the call
/// waiting as `call_id` in the stored state still has it: a decision binds to what was shown.
async fn check_shown(
    ctx: &SharedObjectContext<'_>,
    call_id: &str,
    fingerprint: Option<&str>,
) -> HandlerResult<()> {
    let Some(fingerprint) = fingerprint else {
        return Ok(());
    };
    let Some(Json(document)) = ctx.get::<Json<Value>>(STATE).await? else {
        return Err(TerminalError::new_with_code(
            404,
            format!("no call `{call_id}` waits for a decision: the session has no state"),
        )
        .into());
    };
    let state = decode_state(document)?;
    state
        .check_fingerprint(call_id, fingerprint)
        .map_err(|error| {
            let code = match error {
                agents_core::ApprovalError::UnknownCall { .. } => 404,
                _ => 409,
            };
            TerminalError::new_with_code(code, error.to_string()).into()
        })
}

/// The awakeable of the waiting call `call_id`, or a terminal error saying no such call waits.
async fn waiting_awakeable(ctx: &SharedObjectContext<'_>, call_id: &str) -> HandlerResult<String> {
    let waiting = ctx
        .get::<Json<BTreeMap<String, String>>>(WAITING)
        .await?
        .map(Json::into_inner)
        .unwrap_or_default();
    waiting.get(call_id).cloned().ok_or_else(|| {
        TerminalError::new_with_code(
            404,
            format!(
                "no call `{call_id}` waits for a decision in session `{}`",
                ctx.key()
            ),
        )
        .into()
    })
}

fn decode_state(document: Value) -> HandlerResult<AgentState> {
    serde_json::from_value(document).map_err(|error| {
        TerminalError::new(format!("the stored session state cannot be read: {error}")).into()
    })
}
