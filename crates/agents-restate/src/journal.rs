//! The step journal on Restate: every model call and tool call of a step is a journaled
//! action (`ctx.run`), so a replay after a crash returns what the first attempt got instead of
//! doing it again.
//!
//! The step runs in the handler's task beside the Restate context, not inside a `ctx.run`
//! closure (the closure may not touch the context, and the step needs several journal
//! entries). [`RestateJournal`] is the step's side: for each action it sends an
//! [`ActionRequest`] to [`drive`], which runs a `ctx.run` whose closure only says "go" and
//! waits for the step's outcome. When Restate replays a journaled entry it never calls the
//! closure: the step gets the journaled value and does not act. Actions enter the journal one
//! at a time, in the order the step asks for them, so a replay meets them in the same order.
//!
//! Tool calls take two entries: an intent (call id, tool, argument signature) and then the
//! result. A replay that finds the intent but no result knows the call was interrupted in
//! flight, and applies the rule the tool-call onion's `JournalCalls` layer gives
//! ([`OnInterrupted`]: a read-only or idempotent tool runs again, a call that ran on a person's
//! approval is asked for again, any other gets [`INTERRUPTED_MESSAGE`]), the same rule as the
//! session store's journal, so nothing runs twice silently.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;

use async_trait::async_trait;
use futures::future::OptionFuture;
use inference::InferenceResponse;
use restate_sdk::context::{
    ContextAwakeables, ContextSideEffects, ObjectContext, RunFuture, RunRetryPolicy,
};
use restate_sdk::errors::{HandlerError, TerminalError};
use restate_sdk::serde::Json;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

#[cfg(doc)]
use agents_core::INTERRUPTED_MESSAGE;
use agents_core::{
    AgentError, CallIntent, InferenceAction, JournalError, JournaledCall, OnInterrupted,
    StepJournal, ToolCallAction, ToolExecution,
};

/// The status code Restate gives a cancelled invocation's awaited futures.
const CANCELLED: u16 = 409;

/// One durable action the step asks [`drive`] to put in Restate's journal.
pub(crate) struct ActionRequest {
    /// The entry's name (observability only: Restate journals by position).
    name: String,
    /// How a retryable failure is retried (model calls); `None`: the service's policy.
    retry: Option<RunRetryPolicy>,
    /// Told when the action must run (the entry is not in the journal yet).
    run_now: oneshot::Sender<()>,
    /// The action's outcome, from the step.
    outcome: oneshot::Receiver<Outcome>,
    /// The journaled result: the outcome just recorded, or the one a replay found.
    done: oneshot::Sender<Result<Value, TerminalError>>,
}

/// How an action ended, as the step hands it to the `ctx.run` closure.
enum Outcome {
    Value(Value),
    /// Worth trying again (rate limit, timeout, transport): Restate retries it.
    Retryable(String),
    /// Recorded as a failure; a replay gets the same failure.
    Terminal(String),
}

/// A [`StepJournal`] whose entries are Restate journal entries of the running invocation.
/// Made per invocation by the session object ([`journal_channel`]).
pub(crate) struct RestateJournal {
    requests: mpsc::UnboundedSender<ActionRequest>,
    model_retry: RunRetryPolicy,
}

impl std::fmt::Debug for RestateJournal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RestateJournal").finish_non_exhaustive()
    }
}

/// A journal for one invocation and the receiving end [`drive`] serves.
pub(crate) fn journal_channel(
    model_retry: RunRetryPolicy,
) -> (RestateJournal, mpsc::UnboundedReceiver<ActionRequest>) {
    let (requests, receiver) = mpsc::unbounded_channel();
    let journal = RestateJournal {
        requests,
        model_retry,
    };
    (journal, receiver)
}

/// The result of an action: its value and whether it ran now (`false`: replayed).
struct Acted<T> {
    value: T,
    ran_now: bool,
}

impl RestateJournal {
    /// Runs `action` as one journal entry named `name`, or returns the entry a replay found.
    async fn act<T, F>(
        &self,
        name: String,
        retry: Option<RunRetryPolicy>,
        action: F,
    ) -> Result<Acted<T>, AgentError>
    where
        T: Serialize + DeserializeOwned,
        F: Future<Output = Result<T, AgentError>>,
    {
        let (run_now, mut run_now_rx) = oneshot::channel();
        let (outcome_tx, outcome) = oneshot::channel();
        let (done, mut done_rx) = oneshot::channel();
        self.requests
            .send(ActionRequest {
                name,
                retry,
                run_now,
                outcome,
                done,
            })
            .map_err(|_| JournalError::write(BridgeGone))?;
        let ran = tokio::select! {
            biased;
            go = &mut run_now_rx => go.is_ok(),
            done = &mut done_rx => return replayed(done),
        };
        if !ran {
            // The closure was dropped without running: the entry was replayed.
            return replayed(done_rx.await);
        }
        let (outcome, kept) = match action.await {
            Ok(value) => match serde_json::to_value(&value) {
                Ok(json) => (Outcome::Value(json), Some(value)),
                Err(error) => (
                    Outcome::Terminal(format!("the result could not be journaled: {error}")),
                    None,
                ),
            },
            Err(error) if error.is_retryable() => {
                (Outcome::Retryable(agents_core::error_chain(&error)), None)
            }
            Err(error) => (Outcome::Terminal(agents_core::error_chain(&error)), None),
        };
        // A closed receiver means the invocation is going away; `done` says how.
        let _ = outcome_tx.send(outcome);
        let journaled = done_rx
            .await
            .map_err(|_| JournalError::write(BridgeGone))?
            .map_err(terminal_to_agent_error)?;
        let value = match kept {
            Some(value) => value,
            None => decode(journaled)?,
        };
        Ok(Acted {
            value,
            ran_now: true,
        })
    }
}

/// The value of an entry a replay found.
fn replayed<T: DeserializeOwned>(
    done: Result<Result<Value, TerminalError>, oneshot::error::RecvError>,
) -> Result<Acted<T>, AgentError> {
    let journaled = done
        .map_err(|_| JournalError::read(BridgeGone))?
        .map_err(terminal_to_agent_error)?;
    Ok(Acted {
        value: decode(journaled)?,
        ran_now: false,
    })
}

fn decode<T: DeserializeOwned>(value: Value) -> Result<T, AgentError> {
    serde_json::from_value(value).map_err(|error| AgentError::from(JournalError::read(error)))
}

fn terminal_to_agent_error(error: TerminalError) -> AgentError {
    if error.code() == CANCELLED {
        AgentError::Cancelled
    } else {
        AgentError::driver(error.message().to_owned())
    }
}

#[async_trait]
impl StepJournal for RestateJournal {
    async fn recorded_reply(&self, _key: &str) -> Result<Option<InferenceResponse>, JournalError> {
        Err(JournalError::read(WholeActionsOnly))
    }

    async fn record_reply(
        &self,
        _key: &str,
        _reply: &InferenceResponse,
    ) -> Result<(), JournalError> {
        Err(JournalError::write(WholeActionsOnly))
    }

    async fn recorded_intent(&self, _key: &str) -> Result<Option<CallIntent>, JournalError> {
        Err(JournalError::read(WholeActionsOnly))
    }

    async fn record_intent(&self, _intent: &CallIntent) -> Result<(), JournalError> {
        Err(JournalError::write(WholeActionsOnly))
    }

    async fn recorded_tool_result(
        &self,
        _key: &str,
    ) -> Result<Option<ToolExecution>, JournalError> {
        Err(JournalError::read(WholeActionsOnly))
    }

    async fn record_tool_result(
        &self,
        _key: &str,
        _execution: &ToolExecution,
    ) -> Result<(), JournalError> {
        Err(JournalError::write(WholeActionsOnly))
    }

    async fn journaled_reply(
        &self,
        key: &str,
        infer: InferenceAction<'_>,
    ) -> Result<InferenceResponse, AgentError> {
        let acted = self
            .act(
                format!("model {key}"),
                Some(self.model_retry.clone()),
                infer,
            )
            .await?;
        if !acted.ran_now {
            tracing::debug!(key, "model reply replayed from the Restate journal");
        }
        Ok(acted.value)
    }

    async fn journaled_tool_call(
        &self,
        intent: &CallIntent,
        on_interrupted: OnInterrupted,
        run: ToolCallAction<'_>,
    ) -> Result<JournaledCall, AgentError> {
        let expected = json!({
            "index": intent.index,
            "call_id": intent.call_id,
            "tool": intent.name,
            "signature": intent.signature,
        });
        let recorded = self
            .act(format!("intent {}", intent.key()), None, async {
                Ok(expected.clone())
            })
            .await?;
        if recorded.value != expected {
            // The journal holds another call at this position: the step is not the one that
            // wrote it (a changed agent or a non-deterministic driver). Going on could pair a
            // result with the wrong call.
            return Err(JournalError::read(Mismatch {
                expected,
                found: recorded.value,
            })
            .into());
        }
        let interrupted = !recorded.ran_now;
        let call_id = intent.call_id.clone();
        let tool = intent.name.clone();
        let acted = self
            .act(format!("tool {tool} {}", intent.key()), None, async move {
                if !interrupted {
                    return run.await;
                }
                match on_interrupted {
                    OnInterrupted::RunAgain => {
                        tracing::info!(
                            call_id,
                            tool,
                            "a retry-safe call interrupted in flight runs again"
                        );
                        run.await
                    }
                    // Journaled either way: a replay meets its entries in the same order.
                    OnInterrupted::Answer { execution, .. } => {
                        tracing::warn!(
                            call_id,
                            tool,
                            "a call interrupted in flight is not run again"
                        );
                        Ok(execution)
                    }
                }
            })
            .await?;
        Ok(JournaledCall {
            execution: acted.value,
            interrupted,
        })
    }
}

/// Runs `stepping` (a step of the agent, holding a [`RestateJournal`]) while putting the
/// actions it asks for into Restate's journal through `ctx`, one at a time in the order asked.
///
/// A Restate cancellation of the invocation surfaces while an action is awaited: `token` is
/// cancelled first (the step drops what it was doing and finishes as cancelled), then the
/// action gets the cancellation.
pub(crate) async fn drive<'a, 'ctx: 'a, R>(
    ctx: &'a ObjectContext<'ctx>,
    mut requests: mpsc::UnboundedReceiver<ActionRequest>,
    token: &CancellationToken,
    stepping: impl Future<Output = R>,
) -> R {
    tokio::pin!(stepping);
    // Restate tells a handler about a cancellation only when it awaits a journal entry, and
    // a `ctx.run` does not look while its closure runs. A never-resolved awakeable, awaited
    // beside each action, lets a cancellation reach a tool (or a model call) in flight.
    let (_, watcher) = ctx.awakeable::<()>();
    tokio::pin!(watcher);
    let mut watching = true;
    let mut queue: VecDeque<ActionRequest> = VecDeque::new();
    let mut current: Option<Pin<Box<dyn Future<Output = ()> + Send + 'a>>> = None;
    loop {
        if current.is_none() {
            if let Some(request) = queue.pop_front() {
                current = Some(journal_action(ctx, request, token.clone()));
            }
        }
        tokio::select! {
            biased;
            result = &mut stepping => return result,
            Some(request) = requests.recv() => queue.push_back(request),
            Some(()) = OptionFuture::from(current.as_mut()) => current = None,
            cancelled = &mut watcher, if watching && current.is_some() => {
                watching = false;
                if matches!(&cancelled, Err(error) if error.code() == CANCELLED) {
                    token.cancel();
                }
            }
        }
    }
}

/// One `ctx.run`: the closure tells the step to act and hands Restate the outcome.
fn journal_action<'a, 'ctx: 'a>(
    ctx: &'a ObjectContext<'ctx>,
    request: ActionRequest,
    token: CancellationToken,
) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
    let ActionRequest {
        name,
        retry,
        run_now,
        outcome,
        done,
    } = request;
    let mut run = ctx
        .run(move || async move {
            let _ = run_now.send(());
            match outcome.await {
                Ok(Outcome::Value(value)) => Ok(Json(value)),
                Ok(Outcome::Retryable(message)) => Err(HandlerError::from(Retry(message))),
                Ok(Outcome::Terminal(message)) => Err(TerminalError::new(message).into()),
                // The step dropped the action (cancelled): nothing is journaled for it.
                Err(_) => std::future::pending().await,
            }
        })
        .name(name);
    if let Some(policy) = retry {
        run = run.retry_policy(policy);
    }
    Box::pin(async move {
        let result = run.await.map(Json::into_inner);
        if matches!(&result, Err(error) if error.code() == CANCELLED) {
            token.cancel();
        }
        let _ = done.send(result);
    })
}

/// A retryable action failure, handed to Restate's retry policy.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Retry(String);

#[derive(Debug, thiserror::Error)]
#[error("the invocation that serves this journal has ended")]
struct BridgeGone;

#[derive(Debug, thiserror::Error)]
#[error("a Restate journal records whole actions (journaled_reply, journaled_tool_call), not separate records")]
struct WholeActionsOnly;

#[derive(Debug, thiserror::Error)]
#[error(
    "the Restate journal holds another call at this position: expected {expected}, found {found}"
)]
struct Mismatch {
    expected: Value,
    found: Value,
}
