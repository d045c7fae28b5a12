//! The session's lease as a runner holds it: taken before a step, renewed in the background
//! while the step runs (each renewal a short transaction of its own, never one held across a
//! model call), given back after. The store's side (the lease row, the fencing token checked by
//! every journal entry and commit) is [`SessionStore::acquire_lease`] and its siblings.

use std::sync::Arc;
use std::time::Duration;

use agents_core::Clock;
use chrono::{DateTime, Utc};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::{Lease, LeaseHolder, LeaseRequest, SessionError, SessionStore};

/// How long a lease lasts unless renewed, by default. A runner that dies is taken over after
/// this long (at once by a runner on the same host, which sees that its process is gone).
pub const DEFAULT_LEASE_TTL: Duration = Duration::from_secs(30);

/// How often a runner that waits for a busy session asks again, at most.
const WAIT_POLL_MAX: Duration = Duration::from_secs(2);

/// `now + ttl` (saturating).
pub(crate) fn expiry(now: DateTime<Utc>, ttl: Duration) -> DateTime<Utc> {
    chrono::Duration::from_std(ttl)
        .ok()
        .and_then(|ttl| now.checked_add_signed(ttl))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// This machine's host name (what a refused runner is told, and how a runner recognises a dead
/// holder on its own host).
pub fn this_host() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

/// Whether the process `pid` of this host is gone (so its lease can be taken over at once).
/// A process that exists but belongs to another user counts as alive.
fn is_dead(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    matches!(
        rustix::process::test_kill_process(pid),
        Err(rustix::io::Errno::SRCH)
    )
}

/// How a [`Session`](crate::Session) takes its lease.
#[derive(Clone, Debug)]
pub(crate) struct LeasePolicy {
    /// How long a lease lasts unless renewed (renewed every third of it).
    pub ttl: Duration,
    /// Wait for a busy session instead of failing with [`SessionError::Busy`].
    pub wait: bool,
}

impl Default for LeasePolicy {
    fn default() -> Self {
        Self {
            ttl: DEFAULT_LEASE_TTL,
            wait: false,
        }
    }
}

/// A lease this runner holds, with the task renewing it.
#[derive(Debug)]
pub(crate) struct HeldLease<S: SessionStore + Clone + 'static> {
    store: S,
    id: String,
    lease: Lease,
    /// Cancelled when a renewal found the lease taken over.
    lost: CancellationToken,
    renewal: JoinHandle<()>,
}

impl<S: SessionStore + Clone + 'static> HeldLease<S> {
    /// Takes the lease of session `id` (waiting for it when the policy says so) and starts
    /// renewing it.
    ///
    /// # Errors
    /// [`SessionError::Busy`] when another live runner holds it (and the policy does not
    /// wait); the store's errors.
    pub(crate) async fn take(
        store: &S,
        id: &str,
        clock: &Arc<dyn Clock>,
        policy: &LeasePolicy,
    ) -> Result<Self, SessionError> {
        let host = this_host();
        let mut request = LeaseRequest {
            owner: uuid::Uuid::now_v7().to_string(),
            pid: std::process::id(),
            host,
            now: clock.now(),
            ttl: policy.ttl,
            take_over: None,
        };
        let mut pause = Duration::from_millis(100);
        let lease = loop {
            request.now = clock.now();
            match store.acquire_lease(id, &request).await {
                Ok(lease) => break lease,
                Err(SessionError::Busy { holder, .. })
                    if request.take_over.is_none() && dead_here(&holder, &request.host) =>
                {
                    tracing::info!(
                        session = id,
                        pid = holder.pid,
                        "the session's lease is held by a process of this host that is gone: \
                         taking it over"
                    );
                    request.take_over = Some(holder.token);
                }
                Err(SessionError::Busy { .. }) if policy.wait => {
                    request.take_over = None;
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(WAIT_POLL_MAX);
                }
                Err(error) => return Err(error),
            }
        };
        let lost = CancellationToken::new();
        let renewal = tokio::spawn(renew(
            store.clone(),
            id.to_owned(),
            lease.clone(),
            Arc::clone(clock),
            policy.ttl,
            lost.clone(),
        ));
        Ok(Self {
            store: store.clone(),
            id: id.to_owned(),
            lease,
            lost,
            renewal,
        })
    }

    /// The fencing token every journal entry and commit carries.
    pub(crate) fn token(&self) -> u64 {
        self.lease.token
    }

    /// Runs `work` under the lease, stops it if the lease is lost meanwhile, and gives the
    /// lease back.
    ///
    /// # Errors
    /// `work`'s error, or [`SessionError::LeaseLost`] when a renewal found the lease taken
    /// over (the step in progress is dropped: its next journal entry or commit would be
    /// refused anyway).
    pub(crate) async fn run<T>(
        self,
        work: impl std::future::Future<Output = Result<T, SessionError>>,
    ) -> Result<T, SessionError> {
        let result = tokio::select! {
            result = work => result,
            () = self.lost.cancelled() => Err(SessionError::LeaseLost {
                session: self.id.clone(),
                token: self.lease.token,
            }),
        };
        self.renewal.abort();
        if let Err(error) = self.store.release_lease(&self.id, &self.lease).await {
            // It expires on its own; the next runner waits for that.
            tracing::warn!(session = %self.id, %error, "the session's lease could not be released");
        }
        result
    }
}

impl<S: SessionStore + Clone + 'static> Drop for HeldLease<S> {
    fn drop(&mut self) {
        // A runner dropped mid-step (its future cancelled) stops renewing; the lease expires.
        self.renewal.abort();
    }
}

impl LeaseHolder {
    /// Whether this holder is another process of this host that no longer exists: a runner
    /// here takes such a lease over at once instead of being refused (what a server checking
    /// a session before it runs one needs to know).
    pub fn is_gone(&self) -> bool {
        dead_here(self, &this_host())
    }
}

/// Whether `holder` is a process of this host that no longer exists.
fn dead_here(holder: &LeaseHolder, host: &str) -> bool {
    holder.host == host && holder.pid != std::process::id() && is_dead(holder.pid)
}

/// Renews the lease every third of its time to live until aborted; cancels `lost` when it
/// was taken over. A failed renewal (the database is away) is tried again at the next tick.
async fn renew<S: SessionStore>(
    store: S,
    id: String,
    mut lease: Lease,
    clock: Arc<dyn Clock>,
    ttl: Duration,
    lost: CancellationToken,
) {
    let every = (ttl / 3).max(Duration::from_millis(10));
    loop {
        tokio::time::sleep(every).await;
        match store
            .renew_lease(&id, &lease, expiry(clock.now(), ttl))
            .await
        {
            Ok(renewed) => lease = renewed,
            Err(SessionError::LeaseLost { .. }) => {
                tracing::warn!(session = %id, token = lease.token, "the session's lease was taken over");
                lost.cancel();
                return;
            }
            Err(error) => {
                tracing::warn!(session = %id, %error, "the session's lease could not be renewed");
            }
        }
    }
}
