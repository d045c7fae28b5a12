//! The SQL both databases run: the schema and its migrations, and the [`SessionStore`]
//! implementation, written once and instantiated for SQLite and Postgres (the statements are
//! the same text in both; `$n` parameters, `ON CONFLICT`, BIGINT millisecond timestamps).
//!
//! Compare-and-set: a commit updates the session row `WHERE version = expected` (or inserts
//! it `ON CONFLICT DO NOTHING` for a new session) and writes nothing else when no row changed.
//! Postgres's row lock and SQLite's `BEGIN IMMEDIATE` make racing writers wait for each other;
//! the loser then finds the new version and gets [`SessionError::Conflict`].

/// The newest schema this library writes.
pub const SCHEMA_VERSION: i64 = 4;

/// The migrations, in order: `MIGRATIONS[i]` takes a database from schema `i` to `i + 1`.
pub(crate) const MIGRATIONS: [&[&str]; 4] = [
    // 1: sessions, their heads, message table and step records.
    &[
        "CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            version BIGINT NOT NULL,
            created_at BIGINT NOT NULL,
            updated_at BIGINT NOT NULL)",
        "CREATE TABLE session_heads (
            session_id TEXT NOT NULL,
            version BIGINT NOT NULL,
            commit_id TEXT NOT NULL,
            step_count BIGINT NOT NULL,
            body TEXT NOT NULL,
            checksum TEXT NOT NULL,
            committed_at BIGINT NOT NULL,
            PRIMARY KEY (session_id, version))",
        "CREATE TABLE session_messages (
            session_id TEXT NOT NULL,
            position BIGINT NOT NULL,
            version BIGINT NOT NULL,
            body TEXT NOT NULL,
            checksum TEXT NOT NULL,
            PRIMARY KEY (session_id, position))",
        "CREATE TABLE session_steps (
            session_id TEXT NOT NULL,
            idx BIGINT NOT NULL,
            version BIGINT NOT NULL,
            body TEXT NOT NULL,
            checksum TEXT NOT NULL,
            PRIMARY KEY (session_id, idx, version))",
    ],
    // 2: listing columns and the step journal (exactly-once tools).
    &[
        "ALTER TABLE sessions ADD COLUMN title TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE sessions ADD COLUMN message_count BIGINT NOT NULL DEFAULT 0",
        "CREATE INDEX sessions_updated ON sessions (updated_at)",
        "CREATE TABLE session_journal (
            session_id TEXT NOT NULL,
            version BIGINT NOT NULL,
            key TEXT NOT NULL,
            body TEXT NOT NULL,
            checksum TEXT NOT NULL,
            PRIMARY KEY (session_id, version, key))",
    ],
    // 3: what the console lists (status, steps, tokens, cost; NULL cost = unknown) and the
    // execution of each version (so earlier turns can be found and shown in full).
    &[
        "ALTER TABLE sessions ADD COLUMN status TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE sessions ADD COLUMN step_count BIGINT NOT NULL DEFAULT 0",
        "ALTER TABLE sessions ADD COLUMN input_tokens BIGINT NOT NULL DEFAULT 0",
        "ALTER TABLE sessions ADD COLUMN output_tokens BIGINT NOT NULL DEFAULT 0",
        "ALTER TABLE sessions ADD COLUMN cache_read_tokens BIGINT NOT NULL DEFAULT 0",
        "ALTER TABLE sessions ADD COLUMN cost_usd DOUBLE PRECISION",
        "ALTER TABLE session_heads ADD COLUMN execution_id TEXT NOT NULL DEFAULT ''",
    ],
    // 4: one runner per session (a lease with a fencing token; expires_at 0 = released).
    &["CREATE TABLE session_leases (
            session_id TEXT PRIMARY KEY,
            token BIGINT NOT NULL,
            owner TEXT NOT NULL,
            pid BIGINT NOT NULL,
            host TEXT NOT NULL,
            acquired_at BIGINT NOT NULL,
            expires_at BIGINT NOT NULL)"],
];

pub(crate) const CREATE_SCHEMA_TABLE: &str = "CREATE TABLE IF NOT EXISTS agents_sessions_schema (
    version BIGINT PRIMARY KEY,
    applied_at BIGINT NOT NULL)";
pub(crate) const SCHEMA_VERSION_QUERY: &str =
    "SELECT COALESCE(MAX(version), 0) FROM agents_sessions_schema";
pub(crate) const RECORD_MIGRATION: &str =
    "INSERT INTO agents_sessions_schema (version, applied_at) VALUES ($1, $2)";

pub(crate) const LATEST_VERSION: &str = "SELECT version FROM sessions WHERE id = $1";
pub(crate) const HEAD: &str =
    "SELECT step_count, body, checksum FROM session_heads WHERE session_id = $1 AND version = $2";
pub(crate) const MESSAGES: &str = "SELECT position, body, checksum FROM session_messages
    WHERE session_id = $1 AND version <= $2 ORDER BY position";
pub(crate) const STEPS: &str = "SELECT s.idx, s.body, s.checksum FROM session_steps s
    WHERE s.session_id = $1 AND s.idx < $3 AND s.version = (
        SELECT MAX(t.version) FROM session_steps t
        WHERE t.session_id = s.session_id AND t.idx = s.idx AND t.version <= $2)
    ORDER BY s.idx";
pub(crate) const INSERT_SESSION: &str = "INSERT INTO sessions
    (id, version, title, message_count, created_at, updated_at, status, step_count,
     input_tokens, output_tokens, cache_read_tokens, cost_usd)
    VALUES ($1, 1, $2, $3, $4, $4, $5, $6, $7, $8, $9, $10)
    ON CONFLICT (id) DO NOTHING";
pub(crate) const ADVANCE_SESSION: &str = "UPDATE sessions
    SET version = $11, title = $2, message_count = $3, updated_at = $4, status = $5,
        step_count = $6, input_tokens = $7, output_tokens = $8, cache_read_tokens = $9,
        cost_usd = $10
    WHERE id = $1 AND version = $12";
pub(crate) const INSERT_HEAD: &str = "INSERT INTO session_heads
    (session_id, version, commit_id, step_count, body, checksum, committed_at, execution_id)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
pub(crate) const INSERT_MESSAGE: &str = "INSERT INTO session_messages
    (session_id, position, version, body, checksum) VALUES ($1, $2, $3, $4, $5)";
pub(crate) const INSERT_STEP: &str = "INSERT INTO session_steps
    (session_id, idx, version, body, checksum) VALUES ($1, $2, $3, $4, $5)";
pub(crate) const CLEAR_JOURNAL: &str =
    "DELETE FROM session_journal WHERE session_id = $1 AND version <= $2";
pub(crate) const COMMIT_ID: &str =
    "SELECT commit_id FROM session_heads WHERE session_id = $1 AND version = $2";
pub(crate) const LIST: &str = "SELECT id, version, title, message_count, updated_at, status,
    step_count, input_tokens, output_tokens, cache_read_tokens, cost_usd FROM sessions
    ORDER BY updated_at DESC, id LIMIT $1 OFFSET $2";
/// `LIST` of the sessions whose lower-cased title is `LIKE $3` (`%text%`, `\` escaping).
pub(crate) const LIST_MATCHING: &str = "SELECT id, version, title, message_count, updated_at,
    status, step_count, input_tokens, output_tokens, cache_read_tokens, cost_usd FROM sessions
    WHERE LOWER(title) LIKE $3 ESCAPE '\\'
    ORDER BY updated_at DESC, id LIMIT $1 OFFSET $2";
pub(crate) const EXECUTIONS: &str = "SELECT execution_id, MIN(version), MAX(version)
    FROM session_heads WHERE session_id = $1 AND execution_id <> ''
    GROUP BY execution_id ORDER BY MIN(version)";
pub(crate) const DELETE: [&str; 5] = [
    "DELETE FROM session_journal WHERE session_id = $1",
    "DELETE FROM session_steps WHERE session_id = $1",
    "DELETE FROM session_messages WHERE session_id = $1",
    "DELETE FROM session_heads WHERE session_id = $1",
    "DELETE FROM sessions WHERE id = $1",
];
pub(crate) const PRUNE_CUTOFF_SINCE: &str = "SELECT COALESCE(MAX(version), 0) FROM session_heads
    WHERE session_id = $1 AND committed_at < $2";
pub(crate) const PRUNE_HEADS: &str =
    "DELETE FROM session_heads WHERE session_id = $1 AND version <= $2";
pub(crate) const PRUNE_STEPS: &str = "DELETE FROM session_steps
    WHERE session_id = $1 AND version <= $2 AND EXISTS (
        SELECT 1 FROM session_steps t
        WHERE t.session_id = session_steps.session_id AND t.idx = session_steps.idx
          AND t.version > session_steps.version AND t.version <= $2)";
pub(crate) const JOURNAL_GET: &str = "SELECT body, checksum FROM session_journal
    WHERE session_id = $1 AND version = $2 AND key = $3";
/// Grants the lease when it is free, expired or released (`expires_at <= now`), or its token
/// is the one the asker found dead ($7); returns the new token, or no row when it is held.
/// One statement: the conflicting row is locked while its condition is judged.
pub(crate) const ACQUIRE_LEASE: &str = "INSERT INTO session_leases
    (session_id, token, owner, pid, host, acquired_at, expires_at)
    VALUES ($1, 1, $2, $3, $4, $5, $6)
    ON CONFLICT (session_id) DO UPDATE SET token = session_leases.token + 1,
        owner = excluded.owner, pid = excluded.pid, host = excluded.host,
        acquired_at = excluded.acquired_at, expires_at = excluded.expires_at
    WHERE session_leases.expires_at <= excluded.acquired_at OR session_leases.token = $7
    RETURNING token";
pub(crate) const LEASE_HOLDER: &str = "SELECT pid, host, acquired_at, expires_at, token
    FROM session_leases WHERE session_id = $1 AND expires_at > $2";
pub(crate) const RENEW_LEASE: &str = "UPDATE session_leases SET expires_at = $3
    WHERE session_id = $1 AND token = $2 AND expires_at > 0";
pub(crate) const RELEASE_LEASE: &str = "UPDATE session_leases SET expires_at = 0
    WHERE session_id = $1 AND token = $2";
/// The fence: matches (and locks, until the transaction ends) the lease row only while it
/// has the writer's token and was not released.
pub(crate) const FENCE: &str = "UPDATE session_leases SET expires_at = expires_at
    WHERE session_id = $1 AND token = $2 AND expires_at > 0";
pub(crate) const JOURNAL_PUT: &str = "INSERT INTO session_journal
    (session_id, version, key, body, checksum) VALUES ($1, $2, $3, $4, $5)
    ON CONFLICT (session_id, version, key) DO UPDATE SET body = excluded.body,
    checksum = excluded.checksum";

/// How many writers a database lets in at once, which decides how a write checks the lease.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Writers {
    /// One at a time (SQLite: `BEGIN IMMEDIATE`, or a write statement on its own, holds the
    /// whole database until it ends), so a write statement's own `WHERE` can check the
    /// lease: nothing can take the lease over between the check and the write. A commit is
    /// one call of several statements (see [`batch`](crate::batch)).
    One,
    /// Many (Postgres): the [`FENCE`] locks the lease row until the transaction ends, and
    /// each statement is its own call.
    Many,
}

/// [`JOURNAL_PUT`] written only while the lease has the token `$6` ([`Writers::One`]):
/// no row changes when it does not.
pub(crate) const FENCED_JOURNAL_PUT: &str = "INSERT INTO session_journal
    (session_id, version, key, body, checksum)
    SELECT $1, $2, $3, $4, $5 WHERE EXISTS (SELECT 1 FROM session_leases
        WHERE session_id = $1 AND token = $6 AND expires_at > 0)
    ON CONFLICT (session_id, version, key) DO UPDATE SET body = excluded.body,
    checksum = excluded.checksum";

/// `u64` as the `BIGINT` the databases store (versions and counts never reach 2^63).
pub(crate) fn int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// The `LIKE` pattern that finds `text` anywhere in a lower-cased title.
pub(crate) fn contains_pattern(text: &str) -> String {
    let mut pattern = String::with_capacity(text.len() + 2);
    pattern.push('%');
    for c in text.to_ascii_lowercase().chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

/// A status as the `status` column holds it (`in_progress`, `completed`, ..).
pub(crate) fn status_text(status: agents_core::AgentStatus) -> String {
    serde_json::to_value(status)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The status a `status` column holds (`None` for rows written before it was kept).
pub(crate) fn status_of(text: &str) -> Option<agents_core::AgentStatus> {
    serde_json::from_value(serde_json::Value::String(text.to_owned())).ok()
}

/// A stored `BIGINT` as `u64` (negative values, which the library never writes, read as 0).
pub(crate) fn uint(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

/// Implements the schema migrations and [`SessionStore`](crate::SessionStore) for a store type
/// with fields `pool: sqlx::Pool<$db>` and `database: String`. `$begin` opens a write
/// transaction; `$migration_lock` serializes migrations between processes; `$writers` is the
/// database's [`Writers`].
macro_rules! sql_store {
    ($store:ty, $db:ty, $begin:expr, $migration_lock:expr, $writers:expr) => {
        impl $store {
            /// Brings the schema to [`SCHEMA_VERSION`](crate::SCHEMA_VERSION) (forward only);
            /// refuses a database written by a newer schema.
            async fn migrate(&self) -> Result<(), $crate::SessionError> {
                use sqlx::Row;
                let failed = |source| $crate::SessionError::Database {
                    operation: "migrating the schema of",
                    session: String::new(),
                    source,
                };
                let mut tx = self.begin().await.map_err(failed)?;
                if let Some(lock) = $migration_lock {
                    sqlx::query(lock).execute(&mut *tx).await.map_err(failed)?;
                }
                sqlx::query($crate::sql::CREATE_SCHEMA_TABLE)
                    .execute(&mut *tx)
                    .await
                    .map_err(failed)?;
                let found: i64 = sqlx::query($crate::sql::SCHEMA_VERSION_QUERY)
                    .fetch_one(&mut *tx)
                    .await
                    .and_then(|row| row.try_get(0))
                    .map_err(failed)?;
                if found > $crate::sql::SCHEMA_VERSION {
                    return Err($crate::SessionError::SchemaTooNew {
                        database: self.database.clone(),
                        found,
                        supported: $crate::sql::SCHEMA_VERSION,
                    });
                }
                let now = chrono::Utc::now().timestamp_millis();
                for (index, statements) in $crate::sql::MIGRATIONS.iter().enumerate() {
                    let version = index as i64 + 1;
                    if version <= found {
                        continue;
                    }
                    for statement in *statements {
                        sqlx::query(*statement)
                            .execute(&mut *tx)
                            .await
                            .map_err(failed)?;
                    }
                    sqlx::query($crate::sql::RECORD_MIGRATION)
                        .bind(version)
                        .bind(now)
                        .execute(&mut *tx)
                        .await
                        .map_err(failed)?;
                    tracing::info!(database = %self.database, version, "session schema migrated");
                }
                tx.commit().await.map_err(failed)
            }

            /// Whether the session's lease still has `token` (and was not released); locks
            /// the lease row until `tx` ends, so a runner taking it over waits for it.
            async fn fenced(
                tx: &mut sqlx::Transaction<'static, $db>,
                id: &str,
                token: u64,
            ) -> Result<bool, sqlx::Error> {
                let fenced = sqlx::query($crate::sql::FENCE)
                    .bind(id)
                    .bind($crate::sql::int(token))
                    .execute(&mut **tx)
                    .await?;
                Ok(fenced.rows_affected() == 1)
            }

            /// Why a commit did not take, found in its transaction `tx`, which is then rolled
            /// back: the lease is lost, or the session is not at the `expected` version
            /// ([`Conflict`](crate::SessionError::Conflict)); `error` is what stopped the
            /// commit, when neither explains it.
            async fn refused(
                mut tx: sqlx::Transaction<'static, $db>,
                id: &str,
                expected: u64,
                lease: Option<u64>,
                error: Option<sqlx::Error>,
            ) -> $crate::SessionError {
                use sqlx::Row;
                let failed = |source| $crate::SessionError::Database {
                    operation: "committing",
                    session: id.to_owned(),
                    source,
                };
                if let Some(token) = lease {
                    match Self::fenced(&mut tx, id, token).await {
                        Ok(true) => {}
                        Ok(false) => {
                            return match tx.rollback().await {
                                Ok(()) => $crate::SessionError::LeaseLost {
                                    session: id.to_owned(),
                                    token,
                                },
                                Err(error) => failed(error),
                            }
                        }
                        Err(error) => return failed(error),
                    }
                }
                let found = sqlx::query($crate::sql::LATEST_VERSION)
                    .bind(id)
                    .fetch_optional(&mut *tx)
                    .await
                    .and_then(|row| row.map(|row| row.try_get::<i64, _>(0)).transpose());
                let found = match found {
                    Ok(found) => found.map_or(0, $crate::sql::uint),
                    Err(error) => return failed(error),
                };
                if let Err(error) = tx.rollback().await {
                    return failed(error);
                }
                match error {
                    Some(error) if found == expected => failed(error),
                    _ => $crate::SessionError::Conflict {
                        session: id.to_owned(),
                        expected,
                        found,
                    },
                }
            }

            /// The commit for a database with one writer ([`Writers::One`](crate::sql::Writers)):
            /// the statements of the transaction `tx` in one call (see [`batch`](crate::batch)).
            async fn write_batched(
                &self,
                mut tx: sqlx::Transaction<'static, $db>,
                id: &str,
                expected: u64,
                commit: &$crate::Commit,
            ) -> Result<u64, $crate::SessionError> {
                use sqlx::Row;
                use $crate::batch::Value;
                use $crate::sql::int;
                let next = expected + 1;
                let delta = &commit.delta;
                let rows = $crate::batch::CommitRows {
                    key: [
                        Value::Text(id),
                        Value::Int(int(next)),
                        Value::Text(&commit.commit_id),
                    ],
                    session: [
                        Value::Text(&commit.title),
                        Value::Int(int(commit.message_count)),
                        Value::Int(commit.committed_at.timestamp_millis()),
                        Value::Owned($crate::sql::status_text(commit.status)),
                        Value::Int(int(delta.step_count as u64)),
                        Value::Int(int(commit.usage.input_tokens)),
                        Value::Int(int(commit.usage.output_tokens)),
                        Value::Int(int(commit.usage.cache_read_tokens)),
                        Value::MaybeReal(commit.cost_usd),
                        Value::Int(int(expected)),
                        Value::MaybeInt(commit.lease.map(int)),
                        Value::Text(&delta.head),
                        Value::Owned($crate::checksum(&delta.head)),
                        Value::Text(commit.execution_id.as_deref().unwrap_or("")),
                    ],
                    new_session: expected == 0,
                    messages: delta
                        .messages
                        .iter()
                        .enumerate()
                        .map(|(offset, body)| {
                            (int((delta.first_message + offset) as u64), body.as_str())
                        })
                        .collect(),
                    steps: delta
                        .steps
                        .iter()
                        .map(|(index, body)| (int(*index as u64), body.as_str()))
                        .collect(),
                };
                for (n, batch) in rows.batches().into_iter().enumerate() {
                    let mut query = sqlx::query(sqlx::AssertSqlSafe(batch.sql));
                    for value in batch.values {
                        query = match value {
                            Value::Text(text) => query.bind(text),
                            Value::Owned(text) => query.bind(text),
                            Value::Int(number) => query.bind(number),
                            Value::MaybeInt(number) => query.bind(number),
                            Value::MaybeReal(number) => query.bind(number),
                        };
                    }
                    let took = match query.fetch_all(&mut *tx).await {
                        // The first batch answers whether the commit took.
                        Ok(answer) if n == 0 => answer
                            .first()
                            .and_then(|row| row.try_get::<i64, _>(0).ok())
                            .is_some_and(|count| count == 1),
                        Ok(_) => true,
                        Err(error) => {
                            return Err(
                                Self::refused(tx, id, expected, commit.lease, Some(error)).await
                            )
                        }
                    };
                    if !took {
                        return Err(Self::refused(tx, id, expected, commit.lease, None).await);
                    }
                }
                tx.commit().await.map_err(|source| $crate::SessionError::Database {
                    operation: "committing",
                    session: id.to_owned(),
                    source,
                })?;
                Ok(next)
            }

            async fn begin(&self) -> Result<sqlx::Transaction<'static, $db>, sqlx::Error> {
                $begin(&self.pool).await
            }

            /// The connection pool, for queries of your own (and tests that damage rows).
            pub fn pool(&self) -> &sqlx::Pool<$db> {
                &self.pool
            }
        }

        #[async_trait::async_trait]
        impl $crate::SessionStore for $store {
            fn describe(&self) -> String {
                self.database.clone()
            }

            async fn read_rows(
                &self,
                id: &str,
                version: Option<u64>,
            ) -> Result<Option<$crate::VersionRows>, $crate::SessionError> {
                use sqlx::Row;
                use $crate::sql::{int, uint};
                let failed = |source| $crate::SessionError::Database {
                    operation: "loading",
                    session: id.to_owned(),
                    source,
                };
                let version = match version {
                    Some(version) => version,
                    None => {
                        let row = sqlx::query($crate::sql::LATEST_VERSION)
                            .bind(id)
                            .fetch_optional(&self.pool)
                            .await
                            .map_err(failed)?;
                        match row {
                            Some(row) => uint(row.try_get::<i64, _>(0).map_err(failed)?),
                            None => return Ok(None),
                        }
                    }
                };
                let Some(head) = sqlx::query($crate::sql::HEAD)
                    .bind(id)
                    .bind(int(version))
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(failed)?
                else {
                    return Ok(None);
                };
                let step_count: i64 = head.try_get(0).map_err(failed)?;
                let head = $crate::store::verified(
                    head.try_get(1).map_err(failed)?,
                    head.try_get::<&str, _>(2).map_err(failed)?,
                    id,
                    version,
                    || "the head".to_owned(),
                )?;
                // Each row is (position, text, checksum); the positions must run 0, 1, 2, ..
                let numbered = |rows: Vec<<$db as sqlx::Database>::Row>| {
                    rows.iter()
                        .map(|row| Ok((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?)))
                        .collect::<Result<Vec<(i64, String, String)>, sqlx::Error>>()
                };
                let rows = sqlx::query($crate::sql::MESSAGES)
                    .bind(id)
                    .bind(int(version))
                    .fetch_all(&self.pool)
                    .await
                    .map_err(failed)?;
                let messages = $crate::store::numbered_rows(
                    numbered(rows).map_err(failed)?,
                    id,
                    version,
                    "message",
                )?;
                let rows = sqlx::query($crate::sql::STEPS)
                    .bind(id)
                    .bind(int(version))
                    .bind(step_count)
                    .fetch_all(&self.pool)
                    .await
                    .map_err(failed)?;
                let steps = $crate::store::numbered_rows(
                    numbered(rows).map_err(failed)?,
                    id,
                    version,
                    "step record",
                )?;
                if steps.len() as u64 != uint(step_count) {
                    return Err($crate::store::missing(id, version, "step record", steps.len()));
                }
                Ok(Some($crate::VersionRows {
                    version,
                    messages,
                    steps,
                    head,
                }))
            }

            async fn write(
                &self,
                id: &str,
                expected: u64,
                commit: &$crate::Commit,
            ) -> Result<u64, $crate::SessionError> {
                use $crate::sql::int;
                $crate::validate_name(id)?;
                let failed = |source| $crate::SessionError::Database {
                    operation: "committing",
                    session: id.to_owned(),
                    source,
                };
                let next = expected + 1;
                let now = commit.committed_at.timestamp_millis();
                let mut tx = self.begin().await.map_err(failed)?;
                if $writers == $crate::sql::Writers::One {
                    return self.write_batched(tx, id, expected, commit).await;
                }
                if let Some(token) = commit.lease {
                    if !Self::fenced(&mut tx, id, token).await.map_err(failed)? {
                        tx.rollback().await.map_err(failed)?;
                        return Err($crate::SessionError::LeaseLost {
                            session: id.to_owned(),
                            token,
                        });
                    }
                }
                let (statement, versions) = if expected == 0 {
                    ($crate::sql::INSERT_SESSION, None)
                } else {
                    ($crate::sql::ADVANCE_SESSION, Some((int(next), int(expected))))
                };
                let mut query = sqlx::query(statement)
                    .bind(id)
                    .bind(&commit.title)
                    .bind(int(commit.message_count))
                    .bind(now)
                    .bind($crate::sql::status_text(commit.status))
                    .bind(int(commit.delta.step_count as u64))
                    .bind(int(commit.usage.input_tokens))
                    .bind(int(commit.usage.output_tokens))
                    .bind(int(commit.usage.cache_read_tokens))
                    .bind(commit.cost_usd);
                if let Some((next, expected)) = versions {
                    query = query.bind(next).bind(expected);
                }
                let advanced = query.execute(&mut *tx).await.map_err(failed)?;
                if advanced.rows_affected() != 1 {
                    return Err(Self::refused(tx, id, expected, None, None).await);
                }
                let delta = &commit.delta;
                sqlx::query($crate::sql::INSERT_HEAD)
                    .bind(id)
                    .bind(int(next))
                    .bind(&commit.commit_id)
                    .bind(int(delta.step_count as u64))
                    .bind(&delta.head)
                    .bind($crate::checksum(&delta.head))
                    .bind(now)
                    .bind(commit.execution_id.as_deref().unwrap_or(""))
                    .execute(&mut *tx)
                    .await
                    .map_err(failed)?;
                for (offset, body) in delta.messages.iter().enumerate() {
                    sqlx::query($crate::sql::INSERT_MESSAGE)
                        .bind(id)
                        .bind(int((delta.first_message + offset) as u64))
                        .bind(int(next))
                        .bind(body)
                        .bind($crate::checksum(body))
                        .execute(&mut *tx)
                        .await
                        .map_err(failed)?;
                }
                for (index, body) in &delta.steps {
                    sqlx::query($crate::sql::INSERT_STEP)
                        .bind(id)
                        .bind(int(*index as u64))
                        .bind(int(next))
                        .bind(body)
                        .bind($crate::checksum(body))
                        .execute(&mut *tx)
                        .await
                        .map_err(failed)?;
                }
                sqlx::query($crate::sql::CLEAR_JOURNAL)
                    .bind(id)
                    .bind(int(next))
                    .execute(&mut *tx)
                    .await
                    .map_err(failed)?;
                tx.commit().await.map_err(failed)?;
                Ok(next)
            }

            async fn commit_id(
                &self,
                id: &str,
                version: u64,
            ) -> Result<Option<String>, $crate::SessionError> {
                use sqlx::Row;
                let failed = |source| $crate::SessionError::Database {
                    operation: "loading",
                    session: id.to_owned(),
                    source,
                };
                sqlx::query($crate::sql::COMMIT_ID)
                    .bind(id)
                    .bind($crate::sql::int(version))
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(failed)?
                    .map(|row| row.try_get::<String, _>(0))
                    .transpose()
                    .map_err(failed)
            }

            async fn list(
                &self,
                page: $crate::ListPage,
            ) -> Result<Vec<$crate::SessionSummary>, $crate::SessionError> {
                use sqlx::Row;
                use $crate::sql::{int, uint};
                let failed = |source| $crate::SessionError::Database {
                    operation: "listing",
                    session: String::new(),
                    source,
                };
                let query = match &page.title_contains {
                    Some(text) => sqlx::query($crate::sql::LIST_MATCHING)
                        .bind(int(page.limit))
                        .bind(int(page.offset))
                        .bind($crate::sql::contains_pattern(text)),
                    None => sqlx::query($crate::sql::LIST)
                        .bind(int(page.limit))
                        .bind(int(page.offset)),
                };
                let rows = query.fetch_all(&self.pool).await.map_err(failed)?;
                rows.iter()
                    .map(|row| {
                        Ok($crate::SessionSummary {
                            id: row.try_get(0)?,
                            version: uint(row.try_get(1)?),
                            title: row.try_get(2)?,
                            message_count: uint(row.try_get(3)?),
                            updated_at: chrono::DateTime::from_timestamp_millis(row.try_get(4)?)
                                .unwrap_or_default(),
                            status: $crate::sql::status_of(row.try_get(5)?),
                            step_count: uint(row.try_get(6)?),
                            usage: inference::Usage {
                                input_tokens: uint(row.try_get(7)?),
                                output_tokens: uint(row.try_get(8)?),
                                cache_read_tokens: uint(row.try_get(9)?),
                                ..inference::Usage::default()
                            },
                            cost_usd: row.try_get(10)?,
                        })
                    })
                    .collect::<Result<Vec<_>, sqlx::Error>>()
                    .map_err(failed)
            }

            async fn executions(
                &self,
                id: &str,
            ) -> Result<Vec<$crate::ExecutionVersions>, $crate::SessionError> {
                use sqlx::Row;
                use $crate::sql::uint;
                let failed = |source| $crate::SessionError::Database {
                    operation: "listing the executions of",
                    session: id.to_owned(),
                    source,
                };
                let rows = sqlx::query($crate::sql::EXECUTIONS)
                    .bind(id)
                    .fetch_all(&self.pool)
                    .await
                    .map_err(failed)?;
                rows.iter()
                    .map(|row| {
                        Ok($crate::ExecutionVersions {
                            execution_id: row.try_get(0)?,
                            first_version: uint(row.try_get(1)?),
                            last_version: uint(row.try_get(2)?),
                        })
                    })
                    .collect::<Result<Vec<_>, sqlx::Error>>()
                    .map_err(failed)
            }

            async fn delete(&self, id: &str) -> Result<bool, $crate::SessionError> {
                $crate::validate_name(id)?;
                let failed = |source| $crate::SessionError::Database {
                    operation: "deleting",
                    session: id.to_owned(),
                    source,
                };
                let mut tx = self.begin().await.map_err(failed)?;
                let mut deleted = 0;
                for statement in $crate::sql::DELETE {
                    deleted = sqlx::query(statement)
                        .bind(id)
                        .execute(&mut *tx)
                        .await
                        .map_err(failed)?
                        .rows_affected();
                }
                tx.commit().await.map_err(failed)?;
                Ok(deleted > 0)
            }

            async fn prune(
                &self,
                id: &str,
                keep: $crate::Prune,
            ) -> Result<u64, $crate::SessionError> {
                use sqlx::Row;
                use $crate::sql::{int, uint};
                $crate::validate_name(id)?;
                let failed = |source| $crate::SessionError::Database {
                    operation: "pruning",
                    session: id.to_owned(),
                    source,
                };
                let mut tx = self.begin().await.map_err(failed)?;
                let Some(latest) = sqlx::query($crate::sql::LATEST_VERSION)
                    .bind(id)
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err(failed)?
                    .map(|row| row.try_get::<i64, _>(0).map(uint))
                    .transpose()
                    .map_err(failed)?
                else {
                    return Ok(0);
                };
                let cutoff = match keep {
                    $crate::Prune::KeepLast(n) => latest.saturating_sub(n.max(1)),
                    $crate::Prune::KeepSince(since) => uint(
                        sqlx::query($crate::sql::PRUNE_CUTOFF_SINCE)
                            .bind(id)
                            .bind(since.timestamp_millis())
                            .fetch_one(&mut *tx)
                            .await
                            .and_then(|row| row.try_get::<i64, _>(0))
                            .map_err(failed)?,
                    )
                    .min(latest - 1),
                };
                let removed = sqlx::query($crate::sql::PRUNE_HEADS)
                    .bind(id)
                    .bind(int(cutoff))
                    .execute(&mut *tx)
                    .await
                    .map_err(failed)?
                    .rows_affected();
                sqlx::query($crate::sql::PRUNE_STEPS)
                    .bind(id)
                    .bind(int(cutoff))
                    .execute(&mut *tx)
                    .await
                    .map_err(failed)?;
                tx.commit().await.map_err(failed)?;
                Ok(removed)
            }

            async fn journal_get(
                &self,
                id: &str,
                version: u64,
                key: &str,
            ) -> Result<Option<String>, $crate::SessionError> {
                use sqlx::Row;
                let failed = |source| $crate::SessionError::Database {
                    operation: "reading the step journal of",
                    session: id.to_owned(),
                    source,
                };
                let Some(row) = sqlx::query($crate::sql::JOURNAL_GET)
                    .bind(id)
                    .bind($crate::sql::int(version))
                    .bind(key)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(failed)?
                else {
                    return Ok(None);
                };
                $crate::store::verified(
                    row.try_get(0).map_err(failed)?,
                    row.try_get::<&str, _>(1).map_err(failed)?,
                    id,
                    version,
                    || format!("journal entry {key}"),
                )
                .map(Some)
            }

            async fn journal_put(
                &self,
                id: &str,
                version: u64,
                key: &str,
                body: &str,
                lease: Option<u64>,
            ) -> Result<(), $crate::SessionError> {
                let failed = |source| $crate::SessionError::Database {
                    operation: "recording the step journal of",
                    session: id.to_owned(),
                    source,
                };
                let lease_lost = |token| $crate::SessionError::LeaseLost {
                    session: id.to_owned(),
                    token,
                };
                let statement = match (lease, $writers) {
                    (Some(_), $crate::sql::Writers::One) => $crate::sql::FENCED_JOURNAL_PUT,
                    _ => $crate::sql::JOURNAL_PUT,
                };
                let put = sqlx::query(statement)
                    .bind(id)
                    .bind($crate::sql::int(version))
                    .bind(key)
                    .bind(body)
                    .bind($crate::checksum(body));
                let Some(token) = lease else {
                    put.execute(&self.pool).await.map_err(failed)?;
                    return Ok(());
                };
                if $writers == $crate::sql::Writers::One {
                    // One statement, which checks the lease itself: one call.
                    let put = put
                        .bind($crate::sql::int(token))
                        .execute(&self.pool)
                        .await
                        .map_err(failed)?;
                    return match put.rows_affected() {
                        0 => Err(lease_lost(token)),
                        _ => Ok(()),
                    };
                }
                let mut tx = self.begin().await.map_err(failed)?;
                if !Self::fenced(&mut tx, id, token).await.map_err(failed)? {
                    tx.rollback().await.map_err(failed)?;
                    return Err(lease_lost(token));
                }
                put.execute(&mut *tx).await.map_err(failed)?;
                tx.commit().await.map_err(failed)
            }

            async fn acquire_lease(
                &self,
                id: &str,
                request: &$crate::LeaseRequest,
            ) -> Result<$crate::Lease, $crate::SessionError> {
                use sqlx::Row;
                use $crate::sql::{int, uint};
                $crate::validate_name(id)?;
                let failed = |source| $crate::SessionError::Database {
                    operation: "taking the lease of",
                    session: id.to_owned(),
                    source,
                };
                let now = request.now.timestamp_millis();
                let expires_at = $crate::lease::expiry(request.now, request.ttl);
                let granted = sqlx::query($crate::sql::ACQUIRE_LEASE)
                    .bind(id)
                    .bind(&request.owner)
                    .bind(i64::from(request.pid))
                    .bind(&request.host)
                    .bind(now)
                    .bind(expires_at.timestamp_millis())
                    .bind(request.take_over.map_or(-1, int))
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(failed)?;
                if let Some(row) = granted {
                    return Ok($crate::Lease {
                        token: uint(row.try_get(0).map_err(failed)?),
                        owner: request.owner.clone(),
                        expires_at,
                    });
                }
                match self.lease_holder(id, request.now).await? {
                    Some(holder) => Err($crate::SessionError::Busy {
                        session: id.to_owned(),
                        holder,
                    }),
                    // Released between the two statements: ask again (once; a runner that
                    // is refused again is told who holds it then).
                    None => Box::pin(self.acquire_lease(id, request)).await,
                }
            }

            async fn renew_lease(
                &self,
                id: &str,
                lease: &$crate::Lease,
                expires_at: chrono::DateTime<chrono::Utc>,
            ) -> Result<$crate::Lease, $crate::SessionError> {
                let renewed = sqlx::query($crate::sql::RENEW_LEASE)
                    .bind(id)
                    .bind($crate::sql::int(lease.token))
                    .bind(expires_at.timestamp_millis())
                    .execute(&self.pool)
                    .await
                    .map_err(|source| $crate::SessionError::Database {
                        operation: "renewing the lease of",
                        session: id.to_owned(),
                        source,
                    })?;
                if renewed.rows_affected() != 1 {
                    return Err($crate::SessionError::LeaseLost {
                        session: id.to_owned(),
                        token: lease.token,
                    });
                }
                Ok($crate::Lease {
                    expires_at,
                    ..lease.clone()
                })
            }

            async fn release_lease(
                &self,
                id: &str,
                lease: &$crate::Lease,
            ) -> Result<(), $crate::SessionError> {
                sqlx::query($crate::sql::RELEASE_LEASE)
                    .bind(id)
                    .bind($crate::sql::int(lease.token))
                    .execute(&self.pool)
                    .await
                    .map_err(|source| $crate::SessionError::Database {
                        operation: "releasing the lease of",
                        session: id.to_owned(),
                        source,
                    })?;
                Ok(())
            }

            async fn lease_holder(
                &self,
                id: &str,
                now: chrono::DateTime<chrono::Utc>,
            ) -> Result<Option<$crate::LeaseHolder>, $crate::SessionError> {
                use sqlx::Row;
                use $crate::sql::uint;
                let failed = |source| $crate::SessionError::Database {
                    operation: "reading the lease of",
                    session: id.to_owned(),
                    source,
                };
                let Some(row) = sqlx::query($crate::sql::LEASE_HOLDER)
                    .bind(id)
                    .bind(now.timestamp_millis())
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(failed)?
                else {
                    return Ok(None);
                };
                let millis = |at: i64| {
                    chrono::DateTime::from_timestamp_millis(at).unwrap_or_default()
                };
                Ok(Some($crate::LeaseHolder {
                    pid: u32::try_from(row.try_get::<i64, _>(0).map_err(failed)?)
                        .unwrap_or_default(),
                    host: row.try_get(1).map_err(failed)?,
                    since: millis(row.try_get(2).map_err(failed)?),
                    expires_at: millis(row.try_get(3).map_err(failed)?),
                    token: uint(row.try_get(4).map_err(failed)?),
                }))
            }
        }
    };
}

pub(crate) use sql_store;
