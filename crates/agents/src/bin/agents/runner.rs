//! Runs a user's turn to its end: the run itself (in a `--session`, or on a conversation held
//! in memory, a `--state` file's or a chat's), the calls that wait for approval (the approver
//! decides, the run resumes, as often as it suspends), and Ctrl-C and SIGTERM while it runs.
//! `agents run` and `agents chat` hand their agent to a [`Runner`]; what the turn prints, as it
//! goes and when it ends, is `render.rs`'s.

use agents::prelude::*;

use crate::approve::{ApprovalArgs, Approver};
use crate::sessions::SessionArgs;

type Error = Box<dyn std::error::Error>;

/// Runs the turns of one conversation; one approver serves all of them, so that "always"
/// holds for the rest of a chat.
pub struct Runner<'a> {
    /// The session the conversation lives in (`session: None`: it lives in memory).
    session: &'a SessionArgs,
    /// `--approve`.
    approval: &'a ApprovalArgs,
    /// Who decides, from the first call that waits on.
    approver: Option<Approver>,
}

/// How a turn failed.
#[derive(Debug)]
pub enum TurnError {
    /// A run without a session failed at its start.
    Start(AgentError),
    /// The session, an approval, or a run resumed after one failed.
    Other(Error),
}

impl TurnError {
    /// The error itself.
    pub fn into_error(self) -> Error {
        match self {
            TurnError::Start(error) => error.into(),
            TurnError::Other(error) => error,
        }
    }
}

impl From<Error> for TurnError {
    fn from(error: Error) -> Self {
        TurnError::Other(error)
    }
}

impl<'a> Runner<'a> {
    /// A runner for the conversation in `session` (or in memory), deciding as `approval` says.
    pub fn new(session: &'a SessionArgs, approval: &'a ApprovalArgs) -> Self {
        Self {
            session,
            approval,
            approver: None,
        }
    }

    /// Runs `prompt` (none: a session's `--resume`) on the conversation, `state` when it lives
    /// in memory, to its end: as often as the run suspends on calls waiting for approval, the
    /// approver decides what it can and the run resumes. Returns the final state, or the
    /// state still waiting for a decision made elsewhere (a session run; `agents run` exits
    /// 3). Ctrl-C and SIGTERM stop it as [`until_ctrl_c`] says.
    pub async fn turn(
        &mut self,
        agent: &Agent,
        state: AgentState,
        prompt: Option<&str>,
    ) -> Result<AgentState, TurnError> {
        let token = CancellationToken::new();
        let terminate = self.session.graceful_stop.clone();
        let graceful = self.session.session.is_some();
        until_ctrl_c(
            &token,
            (&terminate, graceful),
            self.settle(agent, state, prompt, &token),
        )
        .await
    }

    /// Runs the agent once per round: first the prompt, then, after each suspension, the run
    /// resumed with the approver's decisions (recorded in the session, or applied to the
    /// state); a round that ends with calls nobody here decides on ends the turn.
    async fn settle(
        &mut self,
        agent: &Agent,
        mut done: AgentState,
        prompt: Option<&str>,
        token: &CancellationToken,
    ) -> Result<AgentState, TurnError> {
        let in_session = self.session.session.is_some();
        let options = StepOptions::new().with_cancellation(token.clone());
        let mut next = Round::Start;
        loop {
            let resumed = matches!(next, Round::Resume(_));
            done = match next {
                Round::Start if in_session => {
                    crate::sessions::run(agent, self.session, prompt, token.clone()).await?
                }
                Round::Start => agent
                    .execute_with(done.with_user_message(prompt.unwrap_or_default()), &options)
                    .await
                    .map_err(TurnError::Start)?,
                Round::Resume(decisions) if in_session => {
                    for decision in decisions {
                        let call_id = decision.call_id().to_owned();
                        crate::sessions::decide(self.session, &call_id, None, move |_| {
                            decision.clone()
                        })
                        .await?;
                    }
                    let resume = self.session.resuming();
                    crate::sessions::run(agent, &resume, None, token.clone()).await?
                }
                Round::Resume(decisions) => {
                    let mut state = done;
                    for decision in decisions {
                        state = state.decide(decision).map_err(Error::from)?;
                    }
                    agent
                        .execute_with(state, &options)
                        .await
                        .map_err(Error::from)?
                }
            };
            if done.status() != AgentStatus::Suspended {
                return Ok(done);
            }
            if resumed && done.approvals_decided() {
                // Every call was decided, yet the run did not go on: stop rather than loop.
                return Err(
                    Error::from("the run did not resume after its calls were decided").into(),
                );
            }
            let approval = self.approval;
            let approver = self.approver.get_or_insert_with(|| Approver::new(approval));
            let decisions = approver.decisions(&done, in_session)?;
            if decisions.is_empty() && !done.approvals_decided() {
                return Ok(done);
            }
            next = Round::Resume(decisions);
        }
    }
}

/// What a turn's next round runs.
enum Round {
    /// The prompt (or a session's `--resume`).
    Start,
    /// The suspended run, with these decisions on its waiting calls.
    Resume(Vec<ApprovalDecision>),
}

/// Whether Ctrl-C (or another cancellation) stopped the run.
pub fn cancelled(state: &AgentState) -> bool {
    state.stop_reason() == Some(StopReason::UserRequested)
}

/// Awaits `turn`; the first Ctrl-C cancels `token` (the turn then ends with every tool call
/// answered and a notice in the conversation), a second one exits the process with 130 at
/// once. The first SIGTERM cancels `terminate`: a session run (`graceful`) finishes and
/// commits its step and stops, anything else is cancelled as by Ctrl-C; a second signal exits
/// with 143 at once (a session's journal keeps what the step did). Without signal handlers
/// (they could not be installed) the turn just runs.
pub async fn until_ctrl_c<F: std::future::Future>(
    token: &CancellationToken,
    (terminate, graceful): (&CancellationToken, bool),
    turn: F,
) -> F::Output {
    use tokio::signal::unix::{signal, SignalKind};
    let mut turn = std::pin::pin!(turn);
    let (Ok(mut interrupts), Ok(mut terms)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return turn.await;
    };
    loop {
        tokio::select! {
            done = &mut turn => return done,
            Some(()) = interrupts.recv() => {
                if token.is_cancelled() || terminate.is_cancelled() {
                    eprintln!("\ninterrupted again: exiting");
                    std::process::exit(130);
                }
                eprintln!("\ncancelling (Ctrl-C again to exit at once)...");
                token.cancel();
            }
            Some(()) = terms.recv() => {
                if token.is_cancelled() || terminate.is_cancelled() {
                    eprintln!("\nterminated again: exiting");
                    std::process::exit(143);
                }
                if graceful {
                    eprintln!("\nSIGTERM: finishing the step in progress, then stopping...");
                } else {
                    eprintln!("\nSIGTERM: cancelling...");
                    token.cancel();
                }
                terminate.cancel();
            }
        }
    }
}
