//! The turns the console runs: at most one per session and `max` in all, each with a
//! cancellation token and a log of its events that late subscribers replay before following
//! the live ones (so an event stream opened after the turn began misses nothing).

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use agents_core::{Agent, AgentEvent, AgentState};
use agents_sessions::{AgentSessionExt, SessionError, SessionStore};
use serde::Serialize;
use tokio::sync::{broadcast, Notify};
use tokio_util::sync::CancellationToken;

/// The longest event log a turn keeps for late subscribers; beyond it text deltas are
/// dropped from the log (live subscribers still get them, and the page shows the answer).
const MAX_LOGGED_EVENTS: usize = 20_000;
/// The longest tool result an event carries (the page shows the whole one).
const MAX_EVENT_RESULT_CHARS: usize = 2_000;

/// What an event stream tells the page.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum RunEvent {
    /// Text the model streamed.
    Text { text: String },
    /// The text streamed since the last tool call is not the answer (a plan, a claim of a
    /// call no tool made, a guess about a file): the model is asked again. With
    /// `earlier_stands`, the text is a reply to a nudge that was dropped, and the reply set
    /// aside before it is the answer after all.
    SetAside {
        reason: String,
        earlier_stands: bool,
    },
    /// A tool call starts.
    ToolStarted {
        id: String,
        name: String,
        arguments: String,
    },
    /// A tool call ended.
    ToolCompleted {
        id: String,
        name: String,
        result: String,
        error: bool,
    },
    /// The run waits for approvals.
    Suspended,
    /// The turn ended; `status` is the run's status.
    Done { status: String },
    /// The turn failed before finishing.
    Failed { message: String },
}

impl RunEvent {
    fn is_last(&self) -> bool {
        matches!(self, Self::Done { .. } | Self::Failed { .. })
    }

    fn of(event: &AgentEvent) -> Option<Self> {
        match event {
            AgentEvent::TextDelta { delta, .. } => Some(Self::Text {
                text: delta.clone(),
            }),
            AgentEvent::ToolCallStarted { call, .. } => Some(Self::ToolStarted {
                id: call.id().to_owned(),
                name: call.name().to_owned(),
                arguments: call.arguments().to_string(),
            }),
            AgentEvent::ToolCallCompleted { execution, .. } => Some(Self::ToolCompleted {
                id: execution.id().to_owned(),
                name: execution.name().to_owned(),
                result: execution
                    .error_message()
                    .map_or_else(|| execution.result_text(), str::to_owned)
                    .chars()
                    .take(MAX_EVENT_RESULT_CHARS)
                    .collect(),
                error: execution.has_error(),
            }),
            AgentEvent::ReplySetAside {
                reason,
                earlier_reply_stands,
                ..
            } => Some(Self::SetAside {
                reason: reason.clone(),
                earlier_stands: *earlier_reply_stands,
            }),
            AgentEvent::ApprovalRequested { .. } => Some(Self::Suspended),
            _ => None,
        }
    }
}

/// What a turn does.
#[derive(Clone, Debug)]
pub(crate) enum Turn {
    /// Append a user message and run.
    Send(String),
    /// Run a state whose waiting calls were decided.
    Resume,
}

/// Why a turn did not start.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NotStarted {
    /// This session already runs a turn.
    AlreadyRunning,
    /// As many turns run as may.
    Busy,
    /// The server is shutting down.
    ShuttingDown,
}

/// One running turn.
#[derive(Debug)]
pub(crate) struct Run {
    cancel: CancellationToken,
    log: Mutex<Vec<RunEvent>>,
    live: broadcast::Sender<RunEvent>,
}

impl Run {
    fn new() -> Self {
        Self {
            cancel: CancellationToken::new(),
            log: Mutex::new(Vec::new()),
            live: broadcast::channel(1024).0,
        }
    }

    fn log(&self) -> MutexGuard<'_, Vec<RunEvent>> {
        self.log.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn emit(&self, event: RunEvent) {
        let mut log = self.log();
        if log.len() < MAX_LOGGED_EVENTS || !matches!(event, RunEvent::Text { .. }) {
            log.push(event.clone());
        }
        // Nobody listening is fine: the log keeps it.
        let _ = self.live.send(event);
    }

    /// The events so far and a receiver of the ones after (taken under one lock, so none is
    /// missed or seen twice).
    pub(crate) fn subscribe(&self) -> (Vec<RunEvent>, broadcast::Receiver<RunEvent>) {
        let log = self.log();
        (log.clone(), self.live.subscribe())
    }

    /// Asks the turn to stop (its tool calls get results, the state is committed).
    pub(crate) fn cancel(&self) {
        self.cancel.cancel();
    }

    /// Whether `event` ends a stream.
    pub(crate) fn is_last(event: &RunEvent) -> bool {
        event.is_last()
    }
}

/// The console's running turns.
#[derive(Clone, Debug)]
pub(crate) struct Runs {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    max: usize,
    running: Mutex<HashMap<String, Arc<Run>>>,
    changed: Notify,
}

impl Runs {
    pub(crate) fn new(max: usize) -> Self {
        Self {
            inner: Arc::new(Inner {
                max,
                running: Mutex::new(HashMap::new()),
                changed: Notify::new(),
            }),
        }
    }

    fn running(&self) -> MutexGuard<'_, HashMap<String, Arc<Run>>> {
        self.inner
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn get(&self, id: &str) -> Option<Arc<Run>> {
        self.running().get(id).cloned()
    }

    pub(crate) fn is_running(&self, id: &str) -> bool {
        self.running().contains_key(id)
    }

    pub(crate) fn count(&self) -> usize {
        self.running().len()
    }

    pub(crate) fn cancel_all(&self) {
        for run in self.running().values() {
            run.cancel();
        }
    }

    /// Waits until no turn runs.
    pub(crate) async fn all_done(&self) {
        loop {
            let changed = self.inner.changed.notified();
            if self.count() == 0 {
                return;
            }
            changed.await;
        }
    }

    /// Waits until session `id` runs no turn, for at most `limit`; true when it runs none.
    pub(crate) async fn ended(&self, id: &str, limit: Duration) -> bool {
        tokio::time::timeout(limit, async {
            loop {
                let changed = self.inner.changed.notified();
                if !self.is_running(id) {
                    return;
                }
                changed.await;
            }
        })
        .await
        .is_ok()
    }

    /// Starts `turn` on session `id` with `agent`, in a task of its own.
    pub(crate) fn start<S: SessionStore + Clone + Debug + 'static>(
        &self,
        agent: &Agent,
        store: &S,
        id: &str,
        turn: Turn,
        shutdown: &CancellationToken,
    ) -> Result<Arc<Run>, NotStarted> {
        if shutdown.is_cancelled() {
            return Err(NotStarted::ShuttingDown);
        }
        let run = {
            let mut running = self.running();
            if running.contains_key(id) {
                return Err(NotStarted::AlreadyRunning);
            }
            if running.len() >= self.inner.max {
                return Err(NotStarted::Busy);
            }
            let run = Arc::new(Run::new());
            running.insert(id.to_owned(), run.clone());
            run
        };
        let observer = run.clone();
        let agent = agent.clone().on_event(move |event| {
            if let Some(event) = RunEvent::of(event) {
                observer.emit(event);
            }
        });
        let session = agent
            .session(store, id.to_owned())
            .with_cancellation(run.cancel.clone());
        let runs = self.clone();
        let id = id.to_owned();
        let task_run = run.clone();
        tokio::spawn(async move {
            let result = match turn {
                Turn::Send(text) => session.send(text).await,
                Turn::Resume => session.resume().await,
            };
            task_run.emit(finished(&id, result));
            runs.running().remove(&id);
            runs.inner.changed.notify_waiters();
        });
        Ok(run)
    }
}

fn finished(id: &str, result: Result<AgentState, SessionError>) -> RunEvent {
    match result {
        Ok(state) => RunEvent::Done {
            status: format!("{:?}", state.status()),
        },
        Err(error) => {
            tracing::warn!(session = %id, %error, "a console turn failed");
            RunEvent::Failed {
                message: error.to_string(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agents_core::EventSource;

    #[tokio::test]
    async fn a_decision_waits_for_the_suspending_turn_to_leave_the_running_list() {
        let runs = Runs::new(4);
        runs.running().insert("s".to_owned(), Arc::new(Run::new()));
        // Still running after the limit: the decision says so rather than resume beside it.
        assert!(!runs.ended("s", Duration::from_millis(20)).await);
        let ending = runs.clone();
        let task = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            ending.running().remove("s");
            ending.inner.changed.notify_waiters();
        });
        assert!(runs.ended("s", Duration::from_secs(5)).await);
        assert!(!runs.is_running("s"));
        assert!(runs.ended("other", Duration::ZERO).await);
        task.await.unwrap();
    }

    #[test]
    fn a_reply_set_aside_reaches_the_page_with_its_reason() {
        let source = EventSource {
            agent_id: "a".into(),
            parent_agent_id: None,
            step_number: 1,
        };
        let event = RunEvent::of(&AgentEvent::ReplySetAside {
            source,
            reason: "the model described a call instead of making it".into(),
            earlier_reply_stands: false,
        });
        let json = serde_json::to_string(&event).unwrap_or_default();
        assert_eq!(
            json,
            r#"{"type":"set_aside","reason":"the model described a call instead of making it","earlier_stands":false}"#
        );
    }
}
