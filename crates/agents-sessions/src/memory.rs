//! `MemorySessionStore`: sessions in this process's memory, for tests.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::store::{checksum, verified};
use crate::{
    Commit, ExecutionVersions, Lease, LeaseHolder, LeaseRequest, ListPage, Prune, SessionError,
    SessionStore, SessionSummary, VersionRows,
};

/// Sessions kept in memory (lost with the store): the same behaviour as the databases (the
/// conformance suite runs against it), for unit tests.
/// Clones share the sessions.
#[derive(Clone, Debug, Default)]
pub struct MemorySessionStore {
    sessions: Arc<Mutex<HashMap<String, Stored>>>,
    /// Leases live apart from sessions: a session that does not exist yet can be leased, and
    /// deleting a session keeps its lease's token counting up.
    leases: Arc<Mutex<HashMap<String, StoredLease>>>,
}

#[derive(Debug)]
struct StoredLease {
    token: u64,
    holder: LeaseHolder,
    /// Expired or released (released: `expires_at` is the epoch).
    expires_at: DateTime<Utc>,
}

#[derive(Debug, Default)]
struct Stored {
    version: u64,
    title: String,
    message_count: u64,
    updated_at: DateTime<Utc>,
    status: Option<agents_core::AgentStatus>,
    step_count: u64,
    usage: inference::Usage,
    cost_usd: Option<f64>,
    /// version -> (commit id, step count, head, checksum, committed at)
    heads: BTreeMap<u64, Head>,
    /// (body, checksum, version), by position
    messages: Vec<(String, String, u64)>,
    /// (index, version) -> (body, checksum)
    steps: BTreeMap<(usize, u64), (String, String)>,
    journal: HashMap<(u64, String), (String, String)>,
}

#[derive(Debug)]
struct Head {
    commit_id: String,
    step_count: usize,
    body: String,
    checksum: String,
    committed_at: DateTime<Utc>,
    execution_id: Option<String>,
}

impl MemorySessionStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn sessions(&self) -> MutexGuard<'_, HashMap<String, Stored>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn leases(&self) -> MutexGuard<'_, HashMap<String, StoredLease>> {
        self.leases.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `Ok` when the lease of `id` in `leases` has `token` and was not released.
    fn fence(
        leases: &HashMap<String, StoredLease>,
        id: &str,
        token: Option<u64>,
    ) -> Result<(), SessionError> {
        let Some(token) = token else { return Ok(()) };
        let held = leases
            .get(id)
            .is_some_and(|l| l.token == token && l.expires_at > DateTime::UNIX_EPOCH);
        if held {
            Ok(())
        } else {
            Err(SessionError::LeaseLost {
                session: id.to_owned(),
                token,
            })
        }
    }
}

#[async_trait]
impl SessionStore for MemorySessionStore {
    fn describe(&self) -> String {
        "memory".into()
    }

    async fn read_rows(
        &self,
        id: &str,
        version: Option<u64>,
    ) -> Result<Option<VersionRows>, SessionError> {
        let sessions = self.sessions();
        let Some(stored) = sessions.get(id) else {
            return Ok(None);
        };
        let version = version.unwrap_or(stored.version);
        let Some(head) = stored.heads.get(&version) else {
            return Ok(None);
        };
        let messages = stored
            .messages
            .iter()
            .enumerate()
            .filter(|(_, (_, _, v))| *v <= version)
            .map(|(i, (body, sum, _))| {
                verified(body.clone(), sum, id, version, || format!("message {i}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut steps = Vec::with_capacity(head.step_count);
        for index in 0..head.step_count {
            let Some(((_, _), (body, sum))) = stored
                .steps
                .range((index, 0)..=(index, version))
                .next_back()
            else {
                return Err(crate::store::missing(id, version, "step record", index));
            };
            steps.push(verified(body.clone(), sum, id, version, || {
                format!("step record {index}")
            })?);
        }
        let head_body = verified(head.body.clone(), &head.checksum, id, version, || {
            "the head".into()
        })?;
        Ok(Some(VersionRows {
            version,
            messages,
            steps,
            head: head_body,
        }))
    }

    async fn write(&self, id: &str, expected: u64, commit: &Commit) -> Result<u64, SessionError> {
        crate::validate_name(id)?;
        // The lease lock is held to the end, as the databases hold the lease row's lock.
        let leases = self.leases();
        Self::fence(&leases, id, commit.lease)?;
        let mut sessions = self.sessions();
        let found = sessions.get(id).map_or(0, |s| s.version);
        if found != expected {
            return Err(SessionError::Conflict {
                session: id.to_owned(),
                expected,
                found,
            });
        }
        let stored = sessions.entry(id.to_owned()).or_default();
        let next = expected + 1;
        let delta = &commit.delta;
        stored.version = next;
        stored.title.clone_from(&commit.title);
        stored.message_count = commit.message_count;
        stored.updated_at = commit.committed_at;
        stored.status = Some(commit.status);
        stored.step_count = delta.step_count as u64;
        stored.usage = inference::Usage {
            input_tokens: commit.usage.input_tokens,
            output_tokens: commit.usage.output_tokens,
            cache_read_tokens: commit.usage.cache_read_tokens,
            ..inference::Usage::default()
        };
        stored.cost_usd = commit.cost_usd;
        stored.heads.insert(
            next,
            Head {
                commit_id: commit.commit_id.clone(),
                step_count: delta.step_count,
                body: delta.head.clone(),
                checksum: checksum(&delta.head),
                committed_at: commit.committed_at,
                execution_id: commit.execution_id.clone(),
            },
        );
        stored.messages.truncate(delta.first_message);
        for body in &delta.messages {
            stored.messages.push((body.clone(), checksum(body), next));
        }
        for (index, body) in &delta.steps {
            stored
                .steps
                .insert((*index, next), (body.clone(), checksum(body)));
        }
        stored.journal.retain(|(version, _), _| *version > next);
        Ok(next)
    }

    async fn commit_id(&self, id: &str, version: u64) -> Result<Option<String>, SessionError> {
        Ok(self
            .sessions()
            .get(id)
            .and_then(|s| s.heads.get(&version))
            .map(|head| head.commit_id.clone()))
    }

    async fn list(&self, page: ListPage) -> Result<Vec<SessionSummary>, SessionError> {
        let sessions = self.sessions();
        let needle = page.title_contains.as_deref().map(str::to_ascii_lowercase);
        let mut all: Vec<SessionSummary> = sessions
            .iter()
            .filter(|(_, s)| s.version > 0)
            .filter(|(_, s)| {
                needle
                    .as_deref()
                    .is_none_or(|needle| s.title.to_ascii_lowercase().contains(needle))
            })
            .map(|(id, s)| SessionSummary {
                id: id.clone(),
                version: s.version,
                title: s.title.clone(),
                message_count: s.message_count,
                updated_at: s.updated_at,
                status: s.status,
                step_count: s.step_count,
                usage: s.usage,
                cost_usd: s.cost_usd,
            })
            .collect();
        all.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then(a.id.cmp(&b.id)));
        Ok(all
            .into_iter()
            .skip(usize::try_from(page.offset).unwrap_or(usize::MAX))
            .take(usize::try_from(page.limit).unwrap_or(usize::MAX))
            .collect())
    }

    async fn executions(&self, id: &str) -> Result<Vec<ExecutionVersions>, SessionError> {
        let sessions = self.sessions();
        let Some(stored) = sessions.get(id) else {
            return Ok(Vec::new());
        };
        let mut executions: Vec<ExecutionVersions> = Vec::new();
        let mut positions: HashMap<&str, usize> = HashMap::new();
        for (version, head) in &stored.heads {
            let Some(execution_id) = head.execution_id.as_deref() else {
                continue;
            };
            match positions.get(execution_id) {
                Some(&at) => executions[at].last_version = *version,
                None => {
                    positions.insert(execution_id, executions.len());
                    executions.push(ExecutionVersions {
                        execution_id: execution_id.to_owned(),
                        first_version: *version,
                        last_version: *version,
                    });
                }
            }
        }
        Ok(executions)
    }

    async fn delete(&self, id: &str) -> Result<bool, SessionError> {
        crate::validate_name(id)?;
        Ok(self.sessions().remove(id).is_some())
    }

    async fn prune(&self, id: &str, keep: Prune) -> Result<u64, SessionError> {
        crate::validate_name(id)?;
        let mut sessions = self.sessions();
        let Some(stored) = sessions.get_mut(id) else {
            return Ok(0);
        };
        let latest = stored.version;
        let cutoff = match keep {
            Prune::KeepLast(n) => latest.saturating_sub(n.max(1)),
            Prune::KeepSince(since) => stored
                .heads
                .iter()
                .filter(|(_, head)| head.committed_at < since)
                .map(|(version, _)| *version)
                .max()
                .unwrap_or(0)
                .min(latest.saturating_sub(1)),
        };
        let before = stored.heads.len();
        stored.heads.retain(|version, _| *version > cutoff);
        let removed = (before - stored.heads.len()) as u64;
        let keys: Vec<(usize, u64)> = stored.steps.keys().copied().collect();
        for (index, version) in keys {
            let superseded = version <= cutoff
                && stored
                    .steps
                    .range((index, version + 1)..=(index, cutoff))
                    .next()
                    .is_some();
            if superseded {
                stored.steps.remove(&(index, version));
            }
        }
        Ok(removed)
    }

    async fn journal_get(
        &self,
        id: &str,
        version: u64,
        key: &str,
    ) -> Result<Option<String>, SessionError> {
        let sessions = self.sessions();
        let Some((body, sum)) = sessions
            .get(id)
            .and_then(|s| s.journal.get(&(version, key.to_owned())))
        else {
            return Ok(None);
        };
        verified(body.clone(), sum, id, version, || {
            format!("journal entry {key}")
        })
        .map(Some)
    }

    async fn journal_put(
        &self,
        id: &str,
        version: u64,
        key: &str,
        body: &str,
        lease: Option<u64>,
    ) -> Result<(), SessionError> {
        let leases = self.leases();
        Self::fence(&leases, id, lease)?;
        self.sessions()
            .entry(id.to_owned())
            .or_default()
            .journal
            .insert((version, key.to_owned()), (body.to_owned(), checksum(body)));
        Ok(())
    }

    async fn acquire_lease(&self, id: &str, request: &LeaseRequest) -> Result<Lease, SessionError> {
        crate::validate_name(id)?;
        let mut leases = self.leases();
        let expires_at = crate::lease::expiry(request.now, request.ttl);
        let token = match leases.get(id) {
            None => 1,
            Some(held)
                if held.expires_at <= request.now || request.take_over == Some(held.token) =>
            {
                held.token + 1
            }
            Some(held) => {
                return Err(SessionError::Busy {
                    session: id.to_owned(),
                    holder: held.holder.clone(),
                })
            }
        };
        leases.insert(
            id.to_owned(),
            StoredLease {
                token,
                holder: LeaseHolder {
                    pid: request.pid,
                    host: request.host.clone(),
                    since: request.now,
                    expires_at,
                    token,
                },
                expires_at,
            },
        );
        Ok(Lease {
            token,
            owner: request.owner.clone(),
            expires_at,
        })
    }

    async fn renew_lease(
        &self,
        id: &str,
        lease: &Lease,
        expires_at: DateTime<Utc>,
    ) -> Result<Lease, SessionError> {
        let mut leases = self.leases();
        match leases.get_mut(id) {
            Some(held) if held.token == lease.token && held.expires_at > DateTime::UNIX_EPOCH => {
                held.expires_at = expires_at;
                held.holder.expires_at = expires_at;
                Ok(Lease {
                    expires_at,
                    ..lease.clone()
                })
            }
            _ => Err(SessionError::LeaseLost {
                session: id.to_owned(),
                token: lease.token,
            }),
        }
    }

    async fn release_lease(&self, id: &str, lease: &Lease) -> Result<(), SessionError> {
        if let Some(held) = self.leases().get_mut(id) {
            if held.token == lease.token {
                held.expires_at = DateTime::UNIX_EPOCH;
                held.holder.expires_at = DateTime::UNIX_EPOCH;
            }
        }
        Ok(())
    }

    async fn lease_holder(
        &self,
        id: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<LeaseHolder>, SessionError> {
        Ok(self
            .leases()
            .get(id)
            .filter(|held| held.expires_at > now)
            .map(|held| held.holder.clone()))
    }
}
