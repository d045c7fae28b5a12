//! Durable conversations in the embedded SQLite database (default
//! `$XDG_DATA_HOME/agents/sessions.db`) or in Postgres (`--db postgres://..`): the store `--db`
//! names, a run on a session (`--session NAME`, `--resume`, `--wait`) and a decision recorded
//! in one (for the runner, `runner.rs`, and `agents approve | reject`), and `agents sessions
//! list | show | delete | export`.

use std::path::PathBuf;

use agents::prelude::*;
use agents::sessions::{ListPage, PostgresSessionStore, Session, SessionStore, SqliteSessionStore};

use crate::render::{print_transcript, printable, printable_json};

type Error = Box<dyn std::error::Error>;

/// The session options of `agents run`.
#[derive(Debug, Default, clap::Args)]
pub struct SessionArgs {
    /// Keep the conversation in the session NAME (created on first use, continued after).
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,
    /// Finish the run a crash left unfinished in `--session NAME` (no prompt needed).
    #[arg(long, requires = "session")]
    pub resume: bool,
    /// The session database: `sqlite://PATH` or `postgres://..` (default:
    /// `$XDG_DATA_HOME/agents/sessions.db`).
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,
    /// When another process is running the session, wait for it to finish instead of exiting
    /// with code 4.
    #[arg(long, requires = "session")]
    pub wait: bool,
    /// Cancelled on SIGTERM: the session finishes and commits the step in progress, gives its
    /// lease back and stops, leaving the run for `--resume` (not an option: set by the signal
    /// handler).
    #[arg(skip)]
    pub graceful_stop: CancellationToken,
}

impl SessionArgs {
    /// The same session, resumed (for a run that continues after a decision).
    pub fn resuming(&self) -> Self {
        Self {
            session: self.session.clone(),
            resume: true,
            db: self.db.clone(),
            wait: self.wait,
            graceful_stop: self.graceful_stop.clone(),
        }
    }
}

/// `agents sessions ...`.
#[derive(Debug, clap::Args)]
pub struct SessionsArgs {
    /// The session database: `sqlite://PATH` or `postgres://..` (default:
    /// `$XDG_DATA_HOME/agents/sessions.db`).
    #[arg(long, value_name = "URL", global = true)]
    pub db: Option<String>,
    #[command(subcommand)]
    pub command: SessionsCommand,
}

/// What to do with sessions.
#[derive(Debug, clap::Subcommand)]
pub enum SessionsCommand {
    /// Sessions, newest first.
    List {
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: u64,
    },
    /// A session's conversation (its latest version, or `--version N`).
    Show {
        /// The session.
        name: String,
        /// A committed version (one per step).
        #[arg(long)]
        version: Option<u64>,
    },
    /// Deletes a session and all its versions.
    Delete {
        /// The session.
        name: String,
    },
    /// Writes a session's state document (JSON) to stdout.
    Export {
        /// The session.
        name: String,
    },
}

/// The store `--db` names (the default: SQLite in the user's data directory).
#[derive(Clone, Debug)]
pub enum Store {
    Sqlite(SqliteSessionStore),
    Postgres(PostgresSessionStore),
}

impl Store {
    pub async fn open(db: Option<&str>) -> Result<Self, Error> {
        match db {
            Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
                Ok(Self::Postgres(PostgresSessionStore::connect(url).await?))
            }
            Some(url) => {
                let path = url.strip_prefix("sqlite://").unwrap_or(url);
                Ok(Self::Sqlite(SqliteSessionStore::open(path).await?))
            }
            None => Ok(Self::Sqlite(SqliteSessionStore::open(default_db()?).await?)),
        }
    }

    fn dyn_store(&self) -> &dyn SessionStore {
        match self {
            Self::Sqlite(store) => store,
            Self::Postgres(store) => store,
        }
    }
}

/// `$XDG_DATA_HOME/agents/sessions.db`, else `$HOME/.local/share/agents/sessions.db`.
fn default_db() -> Result<PathBuf, Error> {
    Ok(data_dir()
        .map_err(|_| "no session database: set XDG_DATA_HOME or HOME, or pass --db")?
        .join("agents")
        .join("sessions.db"))
}

/// The user's data directory: `$XDG_DATA_HOME`, else `$HOME/.local/share`.
pub fn data_dir() -> Result<PathBuf, Error> {
    let env = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    match (env("XDG_DATA_HOME"), env("HOME")) {
        (Some(data), _) => Ok(PathBuf::from(data)),
        (None, Some(home)) => Ok(PathBuf::from(home).join(".local/share")),
        (None, None) => Err("neither XDG_DATA_HOME nor HOME is set".into()),
    }
}

/// The session's conversation as stored (a new one when the session does not exist yet).
pub async fn load(args: &SessionArgs) -> Result<AgentState, Error> {
    let name = args
        .session
        .as_deref()
        .ok_or("--session NAME is required")?;
    let store = Store::open(args.db.as_deref()).await?;
    Ok(store.dyn_store().load(name).await?.unwrap_or_default())
}

/// Runs `prompt` (or, with `--resume`, the unfinished run) on the session and returns the
/// final state.
pub async fn run(
    agent: &Agent,
    args: &SessionArgs,
    prompt: Option<&str>,
    cancellation: CancellationToken,
) -> Result<AgentState, Error> {
    let name = args
        .session
        .as_deref()
        .ok_or("--session NAME is required")?;
    match Store::open(args.db.as_deref()).await? {
        Store::Sqlite(store) => {
            let session = agent
                .session(&store, name)
                .with_cancellation(cancellation)
                .with_graceful_stop(args.graceful_stop.clone());
            drive(session, args, prompt).await
        }
        Store::Postgres(store) => {
            let session = agent
                .session(&store, name)
                .with_cancellation(cancellation)
                .with_graceful_stop(args.graceful_stop.clone());
            drive(session, args, prompt).await
        }
    }
}

async fn drive<S: SessionStore + Clone + std::fmt::Debug + 'static>(
    session: Session<S>,
    args: &SessionArgs,
    prompt: Option<&str>,
) -> Result<AgentState, Error> {
    if !args.resume && prompt.is_none() {
        return Err("a prompt is required (or --resume)".into());
    }
    let once = |session: &Session<S>| {
        let session = session.clone();
        async move {
            match prompt {
                Some(prompt) if !args.resume => session.send(prompt).await,
                _ => session.resume().await,
            }
        }
    };
    match once(&session).await {
        Err(error) if error.is_busy() && args.wait => {
            eprintln!("{}; waiting for it (--wait)", printable(&busy_line(&error)));
            Ok(once(&session.waiting_for_lease(true)).await?)
        }
        other => Ok(other?),
    }
}

/// "session s1 is being run by another process (pid 12, host, since ...)": the first clause of
/// a [`SessionError::Busy`](agents::sessions::SessionError::Busy) message.
pub fn busy_line(error: &agents::sessions::SessionError) -> String {
    let text = error.to_string();
    text.split_once("; ")
        .map_or(text.clone(), |(first, _)| first.to_owned())
}

/// Whether `error` says another process is running the session (exit code 4).
pub fn is_busy(error: &(dyn std::error::Error + 'static)) -> bool {
    error
        .downcast_ref::<agents::sessions::SessionError>()
        .is_some_and(agents::sessions::SessionError::is_busy)
}

/// Records a decision on the waiting call `call_id` (a key, see `PendingApproval::key`) of
/// the session `args` names: `make` decides on the call as the session stores it (so a call
/// whose arguments changed is refused), and with `expect` only when the call's fingerprint is
/// the one the person was shown.
pub async fn decide(
    args: &SessionArgs,
    call_id: &str,
    expect: Option<&str>,
    make: impl Fn(&PendingApproval) -> ApprovalDecision,
) -> Result<AgentState, Error> {
    let name = args
        .session
        .as_deref()
        .ok_or("--session NAME is required")?;
    match Store::open(args.db.as_deref()).await? {
        Store::Sqlite(store) => decide_in(&store, name, call_id, expect, make, args.wait).await,
        Store::Postgres(store) => decide_in(&store, name, call_id, expect, make, args.wait).await,
    }
}

async fn decide_in<S: SessionStore + Clone + std::fmt::Debug + 'static>(
    store: &S,
    name: &str,
    call_id: &str,
    expect: Option<&str>,
    make: impl Fn(&PendingApproval) -> ApprovalDecision,
    wait: bool,
) -> Result<AgentState, Error> {
    if store.load(name).await?.is_none() {
        return Err(format!("there is no session `{name}`").into());
    }
    let session = Session::for_decisions(store, name);
    let decided = match session.decide_with(call_id, expect, &make).await {
        Err(error) if error.is_busy() && wait => {
            eprintln!("{}; waiting for it (--wait)", printable(&busy_line(&error)));
            session
                .waiting_for_lease(true)
                .decide_with(call_id, expect, &make)
                .await
        }
        other => other,
    };
    match decided {
        Err(agents::sessions::SessionError::Approval {
            source: agents::core::ApprovalError::UnknownCall { .. },
            ..
        }) => Err(format!("session `{name}` has no call `{call_id}` waiting for approval").into()),
        other => Ok(other?),
    }
}

/// `agents sessions ...`.
pub async fn command(args: SessionsArgs) -> Result<(), Error> {
    let store = Store::open(args.db.as_deref()).await?;
    let store = store.dyn_store();
    let unknown = |name: &str| format!("no session `{name}` in {}", store.describe());
    match args.command {
        SessionsCommand::List { limit } => {
            let sessions = store.list(ListPage::new(0, limit)).await?;
            if sessions.is_empty() {
                println!("no sessions in {}", store.describe());
            }
            for s in sessions {
                println!(
                    "{}\tv{}\t{} messages\t{}\t{}",
                    printable(&s.id),
                    s.version,
                    s.message_count,
                    s.updated_at.format("%Y-%m-%d %H:%M:%S"),
                    printable(&s.title)
                );
            }
        }
        SessionsCommand::Show { name, version } => {
            let state = match version {
                Some(version) => store.load_version(&name, version).await?,
                None => store.load(&name).await?,
            }
            .ok_or_else(|| match version {
                Some(version) => format!("{} at version {version}", unknown(&name)),
                None => unknown(&name),
            })?;
            println!(
                "session {}: {:?}, {} step(s) in the last run",
                printable(&name),
                state.status(),
                state.step_count()
            );
            print_transcript(&state);
        }
        SessionsCommand::Delete { name } => {
            if !store.delete(&name).await? {
                return Err(unknown(&name).into());
            }
            println!("deleted session {}", printable(&name));
        }
        SessionsCommand::Export { name } => {
            let state = store.load(&name).await?.ok_or_else(|| unknown(&name))?;
            println!("{}", printable_json(&state.to_json()?));
        }
    }
    Ok(())
}
