//! The `SessionStore` contract and what every store shares: rows, checksums, decoding.

use agents_core::incremental::{self, StateDelta, StateEncoder};
use agents_core::{AgentState, AgentStatus, StateError};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use inference::Usage;
use sha2::{Digest, Sha256};

use crate::SessionError;

/// The rows of one committed version, as a store read them (checksums already verified).
#[derive(Clone, Debug, Default)]
pub struct VersionRows {
    /// The version.
    pub version: u64,
    /// Every message row written up to this version, in position order.
    pub messages: Vec<String>,
    /// For each step index below the head's step count, the newest record up to this version.
    pub steps: Vec<String>,
    /// The version's head.
    pub head: String,
}

/// What one commit writes.
#[derive(Clone, Debug)]
pub struct Commit {
    /// The rows: new messages, new or changed step records, the head.
    pub delta: StateDelta,
    /// An id unique to this commit (so a writer whose acknowledgement was lost can tell its own
    /// commit from another writer's).
    pub commit_id: String,
    /// A title for listings (the first user message, shortened).
    pub title: String,
    /// How many messages the state holds.
    pub message_count: u64,
    /// When it was committed.
    pub committed_at: DateTime<Utc>,
    /// The run's status after this commit.
    pub status: AgentStatus,
    /// Tokens used over all the session's executions.
    pub usage: Usage,
    /// What all its executions cost in US dollars; `None` when some model had no price.
    pub cost_usd: Option<f64>,
    /// The execution this commit belongs to (`None` before the first step).
    pub execution_id: Option<String>,
    /// The fencing token of the lease the writer holds ([`SessionStore::acquire_lease`]):
    /// the commit fails with [`SessionError::LeaseLost`] unless the session's lease still has
    /// this token and was not released. `None` writes without a lease (importing, tests, a
    /// single-writer tool of your own); [`Session`](crate::Session) always passes its token.
    pub lease: Option<u64>,
}

impl Commit {
    /// The commit of `state` as `delta` (from the session's encoder) writes it: its listing
    /// fields read from the state, a fresh commit id, committed now.
    pub fn new(state: &AgentState, delta: StateDelta) -> Self {
        Self {
            delta,
            commit_id: uuid::Uuid::now_v7().to_string(),
            title: title_of(state),
            message_count: state.messages().len() as u64,
            committed_at: Utc::now(),
            status: state.status(),
            usage: state.usage(),
            cost_usd: state.cost().usd(),
            execution_id: state.execution().map(|execution| execution.id().to_owned()),
            lease: None,
        }
    }
}

/// A session in a listing.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionSummary {
    /// The session's name.
    pub id: String,
    /// Its latest version (one per committed step).
    pub version: u64,
    /// The first user message, shortened.
    pub title: String,
    /// How many messages its latest state holds.
    pub message_count: u64,
    /// When it was last committed.
    pub updated_at: DateTime<Utc>,
    /// The run's status (`None` for a session last committed before the store kept it).
    pub status: Option<AgentStatus>,
    /// How many steps its latest execution recorded.
    pub step_count: u64,
    /// Tokens used over all its executions (input, output and cache-read counts).
    pub usage: Usage,
    /// What all its executions cost in US dollars; `None` when unknown (a model without a
    /// price, or a session last committed before the store kept it).
    pub cost_usd: Option<f64>,
}

/// Which page of [`SessionStore::list`]: newest first, optionally only the sessions whose
/// title contains some text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListPage {
    /// How many sessions to skip.
    pub offset: u64,
    /// At most how many to return.
    pub limit: u64,
    /// Only sessions whose title contains this text (ignoring ASCII case); `None` for all.
    pub title_contains: Option<String>,
}

impl Default for ListPage {
    fn default() -> Self {
        Self {
            offset: 0,
            limit: 50,
            title_contains: None,
        }
    }
}

impl ListPage {
    /// `limit` sessions after the first `offset`.
    pub fn new(offset: u64, limit: u64) -> Self {
        Self {
            offset,
            limit,
            title_contains: None,
        }
    }

    /// Only the sessions whose title contains `text` (ignoring ASCII case).
    pub fn matching(mut self, text: impl Into<String>) -> Self {
        let text = text.into();
        self.title_contains = (!text.is_empty()).then_some(text);
        self
    }
}

/// The versions of one execution of a session (see [`SessionStore::executions`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecutionVersions {
    /// The execution's id.
    pub execution_id: String,
    /// The first stored version that belongs to it.
    pub first_version: u64,
    /// The last stored version that belongs to it: its state holds all the execution's steps.
    pub last_version: u64,
}

/// Which versions [`SessionStore::prune`] keeps (the latest version is always kept).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prune {
    /// The last `n` versions (at least 1).
    KeepLast(u64),
    /// The versions committed at or after this time.
    KeepSince(DateTime<Utc>),
}

/// A state loaded with what it takes to commit after it.
#[derive(Debug)]
pub struct Loaded {
    /// The state.
    pub state: AgentState,
    /// Its version.
    pub version: u64,
    /// The encoder that continues from it.
    pub encoder: StateEncoder,
}

/// What a runner asks for when it takes a session's lease ([`SessionStore::acquire_lease`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseRequest {
    /// Who asks: unique to this runner and this run (a uuid).
    pub owner: String,
    /// The runner's process id (shown to a runner that is refused).
    pub pid: u32,
    /// The runner's host name (shown to a runner that is refused).
    pub host: String,
    /// Now, by the runner's clock.
    pub now: DateTime<Utc>,
    /// How long the lease lasts unless renewed.
    pub ttl: std::time::Duration,
    /// Take the lease even though it is held, if its token is this one: the runner found its
    /// holder dead (a process of this host that no longer exists).
    pub take_over: Option<u64>,
}

/// A lease held on a session: while it is held, no other runner can take it, and every commit
/// and journal entry of the holder carries its fencing `token`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    /// The fencing token: larger than every token the session's lease had before.
    pub token: u64,
    /// Who holds it (the request's owner).
    pub owner: String,
    /// When it expires unless renewed.
    pub expires_at: DateTime<Utc>,
}

/// Who holds a session's lease (what a refused runner is told).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseHolder {
    /// The holder's process id.
    pub pid: u32,
    /// The holder's host name.
    pub host: String,
    /// When it took the lease.
    pub since: DateTime<Utc>,
    /// When its lease expires unless renewed.
    pub expires_at: DateTime<Utc>,
    /// The lease's fencing token.
    pub token: u64,
}

/// Where sessions live. Every implementation passes the crate's conformance suite.
///
/// A session is a sequence of versions, one per commit; each commit carries the version it
/// expects and writes only what the step added. The low-level methods (`read_rows`, `write`,
/// the journal) are what a store implements; `load`, `load_version` and `load_latest` decode.
#[async_trait]
pub trait SessionStore: Send + Sync {
    /// Where the store keeps its data (the URL with its password removed, or the path), for
    /// messages.
    fn describe(&self) -> String;

    /// The rows of `version` of session `id` (the latest when `None`); `Ok(None)` when there is
    /// no such session or version.
    ///
    /// # Errors
    /// [`SessionError::Corrupt`] for a row whose checksum does not match;
    /// [`SessionError::Database`] when the query fails.
    async fn read_rows(
        &self,
        id: &str,
        version: Option<u64>,
    ) -> Result<Option<VersionRows>, SessionError>;

    /// Commits `commit` as version `expected + 1` of session `id` (creating it when `expected`
    /// is 0), in one transaction, and forgets the session's journal. Returns the new version.
    ///
    /// # Errors
    /// [`SessionError::Conflict`] when the session is not at `expected` (nothing is written);
    /// [`SessionError::LeaseLost`] when `commit.lease` is not the session's lease token
    /// (nothing is written).
    async fn write(&self, id: &str, expected: u64, commit: &Commit) -> Result<u64, SessionError>;

    /// The commit id of `version` of session `id`, if that version exists.
    ///
    /// # Errors
    /// [`SessionError::Database`] when the query fails.
    async fn commit_id(&self, id: &str, version: u64) -> Result<Option<String>, SessionError>;

    /// Sessions, newest first (only those whose title matches `page.title_contains`).
    ///
    /// # Errors
    /// [`SessionError::Database`] when the query fails.
    async fn list(&self, page: ListPage) -> Result<Vec<SessionSummary>, SessionError>;

    /// The executions of session `id` whose versions are still stored, oldest first: the last
    /// version of each holds that execution's steps (a state holds only its latest
    /// execution's), so `load_version(id, last_version)` shows any earlier turn in full.
    /// Versions committed before the store recorded executions are not listed.
    ///
    /// # Errors
    /// [`SessionError::Database`] when the query fails.
    async fn executions(&self, id: &str) -> Result<Vec<ExecutionVersions>, SessionError>;

    /// Deletes session `id` and all its versions; `false` when there was none.
    ///
    /// # Errors
    /// [`SessionError::Database`] when the query fails.
    async fn delete(&self, id: &str) -> Result<bool, SessionError>;

    /// Removes the versions of session `id` that `keep` does not keep (never the latest) and
    /// the rows only they used; returns how many versions were removed.
    ///
    /// # Errors
    /// [`SessionError::Database`] when the query fails.
    async fn prune(&self, id: &str, keep: Prune) -> Result<u64, SessionError>;

    /// The journal entry `key` of the step that will become `version` of session `id`.
    ///
    /// # Errors
    /// [`SessionError::Database`] when the query fails; [`SessionError::Corrupt`] on a
    /// checksum mismatch.
    async fn journal_get(
        &self,
        id: &str,
        version: u64,
        key: &str,
    ) -> Result<Option<String>, SessionError>;

    /// Records the journal entry `key` of the step that will become `version` of session
    /// `id` (durably, before returning). With a `lease` token, only while the session's lease
    /// still has that token (checked and written in one transaction).
    ///
    /// # Errors
    /// [`SessionError::LeaseLost`] when the lease has another token or was released (nothing
    /// is written); [`SessionError::Database`] when the write fails.
    async fn journal_put(
        &self,
        id: &str,
        version: u64,
        key: &str,
        body: &str,
        lease: Option<u64>,
    ) -> Result<(), SessionError>;

    /// Takes the lease of session `id` for `request.ttl` (the session need not exist yet), in a
    /// short transaction of its own: granted when nobody holds it, when the holder's lease
    /// expired or was released, or when `request.take_over` names the holder's token. Each
    /// grant has a larger fencing token than the one before.
    ///
    /// # Errors
    /// [`SessionError::Busy`] naming the holder when another runner holds it;
    /// [`SessionError::Database`] when the query fails.
    async fn acquire_lease(&self, id: &str, request: &LeaseRequest) -> Result<Lease, SessionError>;

    /// Extends a held lease to `expires_at` (a short transaction of its own). A lease that
    /// expired but that nobody took over is renewed.
    ///
    /// # Errors
    /// [`SessionError::LeaseLost`] when another runner took the lease over (or it was
    /// released); [`SessionError::Database`].
    async fn renew_lease(
        &self,
        id: &str,
        lease: &Lease,
        expires_at: DateTime<Utc>,
    ) -> Result<Lease, SessionError>;

    /// Gives a held lease back, so the next runner need not wait for it to expire. Releasing
    /// a lease that was taken over does nothing.
    ///
    /// # Errors
    /// [`SessionError::Database`] when the query fails.
    async fn release_lease(&self, id: &str, lease: &Lease) -> Result<(), SessionError>;

    /// Who holds the lease of session `id` now, if anyone (an expired or released lease is
    /// held by nobody; `now` is the asker's clock).
    ///
    /// # Errors
    /// [`SessionError::Database`] when the query fails.
    async fn lease_holder(
        &self,
        id: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<LeaseHolder>, SessionError>;

    /// The latest state of session `id`; `Ok(None)` when there is no such session.
    ///
    /// # Errors
    /// [`SessionError::InvalidName`], [`SessionError::Corrupt`] (naming session and version),
    /// [`SessionError::UnsupportedFormat`], [`SessionError::Database`].
    async fn load(&self, id: &str) -> Result<Option<AgentState>, SessionError> {
        Ok(self.load_latest(id).await?.map(|loaded| loaded.state))
    }

    /// The state of session `id` as `version` committed it (time travel); `Ok(None)` when
    /// there is no such session or version (or it was pruned).
    ///
    /// # Errors
    /// As [`SessionStore::load`].
    async fn load_version(
        &self,
        id: &str,
        version: u64,
    ) -> Result<Option<AgentState>, SessionError> {
        crate::validate_name(id)?;
        match self.read_rows(id, Some(version)).await? {
            Some(rows) => Ok(Some(decode_rows(id, rows)?.state)),
            None => Ok(None),
        }
    }

    /// The latest state with its version and encoder (what a writer starts from).
    ///
    /// # Errors
    /// As [`SessionStore::load`].
    async fn load_latest(&self, id: &str) -> Result<Option<Loaded>, SessionError> {
        crate::validate_name(id)?;
        match self.read_rows(id, None).await? {
            Some(rows) => Ok(Some(decode_rows(id, rows)?)),
            None => Ok(None),
        }
    }
}

/// The state `rows` describe.
///
/// # Errors
/// [`SessionError::UnsupportedFormat`] for a head of another format, [`SessionError::Corrupt`]
/// for anything else that does not decode.
pub fn decode_rows(id: &str, rows: VersionRows) -> Result<Loaded, SessionError> {
    let messages: Vec<&str> = rows.messages.iter().map(String::as_str).collect();
    let steps: Vec<&str> = rows.steps.iter().map(String::as_str).collect();
    match incremental::decode(&messages, &steps, &rows.head) {
        Ok((state, encoder)) => Ok(Loaded {
            state,
            version: rows.version,
            encoder,
        }),
        Err(StateError::UnsupportedVersion { found, expected }) => {
            Err(SessionError::UnsupportedFormat {
                session: id.to_owned(),
                version: rows.version,
                found,
                supported: expected,
            })
        }
        Err(error) => Err(SessionError::Corrupt {
            session: id.to_owned(),
            version: rows.version,
            what: "a row does not decode".into(),
            source: Some(error),
        }),
    }
}

/// The checksum stored beside every row: the SHA-256 of its text, in hex.
pub fn checksum(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// `text` after checking it against `stored`; a [`SessionError::Corrupt`] naming the row
/// otherwise.
pub(crate) fn verified(
    text: String,
    stored: &str,
    id: &str,
    version: u64,
    row: impl FnOnce() -> String,
) -> Result<String, SessionError> {
    if checksum(&text) == stored {
        return Ok(text);
    }
    Err(SessionError::Corrupt {
        session: id.to_owned(),
        version,
        what: format!("checksum mismatch in {}", row()),
        source: None,
    })
}

/// A title for a listing: the first user message, at most 80 characters.
pub(crate) fn title_of(state: &AgentState) -> String {
    let first = state
        .messages()
        .iter()
        .find(|m| m.role() == messages::Role::User)
        .map(|m| m.text())
        .unwrap_or_default();
    let mut title: String = first.chars().take(80).collect();
    if first.chars().count() > 80 {
        title.push('…');
    }
    title.replace(['\n', '\r'], " ")
}

/// A [`SessionError::Corrupt`] for rows missing from a version (a truncated table).
/// The texts of rows read as `(position, text, checksum)`, each checked against its checksum;
/// the positions must run 0, 1, 2, .. (a gap is a missing `what`).
pub(crate) fn numbered_rows(
    rows: Vec<(i64, String, String)>,
    id: &str,
    version: u64,
    what: &str,
) -> Result<Vec<String>, SessionError> {
    let mut texts = Vec::with_capacity(rows.len());
    for (position, text, stored) in rows {
        if u64::try_from(position).ok() != Some(texts.len() as u64) {
            return Err(missing(id, version, what, texts.len()));
        }
        texts.push(verified(text, &stored, id, version, || {
            format!("{what} {position}")
        })?);
    }
    Ok(texts)
}

pub(crate) fn missing(id: &str, version: u64, row: &str, at: usize) -> SessionError {
    SessionError::Corrupt {
        session: id.to_owned(),
        version,
        what: format!("{row} {at} is missing"),
        source: None,
    }
}
