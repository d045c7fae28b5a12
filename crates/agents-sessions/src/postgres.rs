//! `PostgresSessionStore`: sessions in Postgres, for many processes and machines.

use std::time::Duration;

use sqlx::postgres::PgPoolOptions;
use sqlx::{Pool, Postgres};

use crate::{redact_url, SessionError};

/// Sessions in Postgres through a connection pool. Any process can serve any session: each
/// commit updates the session row only at the version it expects (the row lock makes racing
/// writers wait; the loser gets [`SessionError::Conflict`]).
#[derive(Clone, Debug)]
pub struct PostgresSessionStore {
    pool: Pool<Postgres>,
    database: String,
}

impl PostgresSessionStore {
    /// Connects to `url` (`postgres://user:password@host:port/database`) and brings the
    /// schema up to date.
    ///
    /// # Errors
    /// [`SessionError::Unavailable`] naming the URL (password redacted) when the server cannot
    /// be reached or refuses the login; [`SessionError::SchemaTooNew`] for a database written
    /// by a newer version of this library.
    pub async fn connect(url: &str) -> Result<Self, SessionError> {
        let database = redact_url(url);
        let pool = PgPoolOptions::new()
            .max_connections(8)
            .acquire_timeout(Duration::from_secs(10))
            .connect(url)
            .await
            .map_err(|source| SessionError::Unavailable {
                database: database.clone(),
                check: "check that the server is running and reachable at that address, and \
                        the user, password and database name"
                    .into(),
                source,
            })?;
        let store = Self { pool, database };
        store.migrate().await?;
        Ok(store)
    }
}

async fn begin(pool: &Pool<Postgres>) -> Result<sqlx::Transaction<'static, Postgres>, sqlx::Error> {
    pool.begin().await
}

/// Serializes schema migrations between processes (released at the end of the transaction).
const MIGRATION_LOCK: &str = "SELECT pg_advisory_xact_lock(7243150518)";

crate::sql::sql_store!(
    PostgresSessionStore,
    Postgres,
    begin,
    Some(MIGRATION_LOCK),
    crate::sql::Writers::Many
);
