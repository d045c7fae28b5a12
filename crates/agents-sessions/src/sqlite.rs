//! `SqliteSessionStore`: sessions in an embedded SQLite database (a file, or memory).

use std::path::{Path, PathBuf};
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Pool, Sqlite};

use crate::SessionError;

/// Sessions in an embedded SQLite database: WAL journal, `BEGIN IMMEDIATE` for every write,
/// a busy timeout so writers from several processes wait for each other, foreign keys on.
#[derive(Clone, Debug)]
pub struct SqliteSessionStore {
    pool: Pool<Sqlite>,
    database: String,
}

/// How long a writer waits for another process's write to finish.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Creates `dir` and its missing parents readable by their owner only (0700); directories
/// that exist are left as they are.
fn private_dir_all(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Creates the database file empty and readable by its owner only (0600) when it is missing,
/// whatever the umask: it holds every conversation. SQLite gives the `-wal` and `-shm` files it
/// creates beside it the same permissions. An existing file is left as it is.
fn create_private_file(path: &Path) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(error) => Err(error),
    }
}

impl SqliteSessionStore {
    /// Opens (creating it and its directory when missing) the database file at `path` and
    /// brings its schema up to date.
    ///
    /// # Errors
    /// [`SessionError::Unavailable`] when the file cannot be created or opened (the message
    /// names the path and what to check); [`SessionError::SchemaTooNew`] for a database
    /// written by a newer version of this library.
    pub async fn open(path: impl AsRef<Path>) -> Result<Self, SessionError> {
        let path = path.as_ref();
        let database = path.display().to_string();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            if let Err(error) = private_dir_all(parent) {
                return Err(SessionError::Unavailable {
                    database,
                    check: format!(
                        "its directory {} cannot be created; check the path and permissions",
                        parent.display()
                    ),
                    source: sqlx::Error::Io(error),
                });
            }
        }
        if let Err(error) = create_private_file(path) {
            return Err(SessionError::Unavailable {
                database,
                check: "the file cannot be created; check the path and permissions".into(),
                source: sqlx::Error::Io(error),
            });
        }
        // Two processes opening a new database at once: switching it to WAL (and the first
        // migration) can find it locked without waiting for the busy timeout; try again
        // until the busy timeout has passed.
        let deadline = tokio::time::Instant::now() + BUSY_TIMEOUT;
        let mut pause = Duration::from_millis(10);
        loop {
            match Self::open_once(path, &database).await {
                Err(error) if is_locked(&error) && tokio::time::Instant::now() < deadline => {
                    tracing::debug!(%database, "the new session database is locked; trying again");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_millis(200));
                }
                other => return other,
            }
        }
    }

    async fn open_once(path: &Path, database: &str) -> Result<Self, SessionError> {
        let options = SqliteConnectOptions::new()
            .filename(PathBuf::from(path))
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(BUSY_TIMEOUT)
            .foreign_keys(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            // A file on this machine: checking a connection before each use would cost a
            // round trip to its worker thread per transaction and find nothing.
            .test_before_acquire(false)
            .connect_with(options)
            .await
            .map_err(|source| SessionError::Unavailable {
                database: database.to_owned(),
                check: "check that the file and its directory are writable by this user".into(),
                source,
            })?;
        let store = Self {
            pool,
            database: database.to_owned(),
        };
        store.migrate().await.map_err(|error| match error {
            SessionError::Database { source, .. } => SessionError::Unavailable {
                database: store.database.clone(),
                check: "the schema could not be set up; check that the file is a writable \
                        SQLite database"
                    .into(),
                source,
            },
            other => other,
        })?;
        Ok(store)
    }

    /// A private in-memory database (gone when the store is dropped), for tests and
    /// throwaway runs.
    ///
    /// # Errors
    /// As [`SqliteSessionStore::open`].
    pub async fn in_memory() -> Result<Self, SessionError> {
        let options = SqliteConnectOptions::new()
            .in_memory(true)
            .foreign_keys(true);
        // One connection: every connection to `:memory:` is a database of its own.
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .min_connections(1)
            .test_before_acquire(false)
            .idle_timeout(None)
            .max_lifetime(None)
            .connect_with(options)
            .await
            .map_err(|source| SessionError::Unavailable {
                database: ":memory:".into(),
                check: "SQLite could not open an in-memory database".into(),
                source,
            })?;
        let store = Self {
            pool,
            database: ":memory:".into(),
        };
        store.migrate().await?;
        Ok(store)
    }
}

/// Whether `error` is SQLite's "database is locked" (SQLITE_BUSY, SQLITE_LOCKED).
fn is_locked(error: &SessionError) -> bool {
    let source = match error {
        SessionError::Unavailable { source, .. } | SessionError::Database { source, .. } => source,
        _ => return false,
    };
    match source {
        // The primary code is the low byte of the extended one.
        sqlx::Error::Database(error) => error
            .code()
            .and_then(|code| code.parse::<u32>().ok())
            .is_some_and(|code| matches!(code & 0xff, 5 | 6)),
        _ => false,
    }
}

async fn begin_immediate(
    pool: &Pool<Sqlite>,
) -> Result<sqlx::Transaction<'static, Sqlite>, sqlx::Error> {
    pool.begin_with("BEGIN IMMEDIATE").await
}

crate::sql::sql_store!(
    SqliteSessionStore,
    Sqlite,
    begin_immediate,
    None::<&'static str>,
    crate::sql::Writers::One
);
