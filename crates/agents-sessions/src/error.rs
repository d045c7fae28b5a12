//! `SessionError`: what can go wrong storing or loading a session.

use agents_core::StateError;
use thiserror::Error;

/// A session store operation that failed. The text says what happened and what to check; the
/// cause (a database error, a state error) is the [`source`](std::error::Error::source).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SessionError {
    /// Another writer committed first: the session is at version `found`, not `expected`.
    /// Nothing was written; reload the session and try again.
    #[error(
        "session `{session}` is at version {found}, not {expected}: another writer committed \
         first; reload it and try again"
    )]
    Conflict {
        /// The session.
        session: String,
        /// The version the writer started from.
        expected: u64,
        /// The version the store holds.
        found: u64,
    },
    /// Another runner holds the session's lease: it is running a step of this session now.
    /// Nothing was done; wait for it (or until its lease expires) and try again.
    #[error(
        "session {session} is being run by another process (pid {pid} on {host}, since {since}); \
         wait for it to finish or try again after its lease expires at {expires_at}",
        pid = holder.pid,
        host = holder.host,
        since = holder.since.format("%Y-%m-%d %H:%M:%S UTC"),
        expires_at = holder.expires_at.format("%H:%M:%S UTC")
    )]
    Busy {
        /// The session.
        session: String,
        /// Who holds its lease.
        holder: crate::LeaseHolder,
    },
    /// This runner's lease was taken over (it expired, and another runner took the session) or
    /// released: the journal entry or commit it tried was refused and nothing was written.
    #[error(
        "session `{session}`: this runner no longer holds the session's lease (token {token}); \
         another runner took it over after it expired, so nothing more was written"
    )]
    LeaseLost {
        /// The session.
        session: String,
        /// The token this runner held.
        token: u64,
    },
    /// The session name cannot be used.
    #[error("invalid session name {name:?}: {reason}")]
    InvalidName {
        /// The name given (possibly cut short).
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A stored row is damaged (checksum mismatch, truncated or unreadable). Other sessions
    /// are unaffected.
    #[error(
        "session `{session}` version {version} is damaged ({what}); other sessions are \
         unaffected: restore it from a backup or delete it"
    )]
    Corrupt {
        /// The session.
        session: String,
        /// The version being read.
        version: u64,
        /// Which row and what is wrong.
        what: String,
        /// The state error, when the row could not be decoded.
        #[source]
        source: Option<StateError>,
    },
    /// A stored row was written in a format this library does not read.
    #[error(
        "session `{session}` version {version} is in format {found}, which this library does \
         not read (it reads {supported}): use a newer version of agents"
    )]
    UnsupportedFormat {
        /// The session.
        session: String,
        /// The version being read.
        version: u64,
        /// The format found.
        found: String,
        /// The format this library reads.
        supported: u32,
    },
    /// The database was written by a newer version of this library.
    #[error(
        "the session database {database} has schema version {found}, newer than this library's \
         {supported}: use a newer version of agents (nothing was changed)"
    )]
    SchemaTooNew {
        /// The database (URL with the password removed, or path).
        database: String,
        /// The schema version found.
        found: i64,
        /// The newest schema version this library knows.
        supported: i64,
    },
    /// The database could not be opened or reached.
    #[error("cannot open the session database {database}: {check}")]
    Unavailable {
        /// The database (URL with the password removed, or path).
        database: String,
        /// What to check.
        check: String,
        /// The driver's error.
        #[source]
        source: sqlx::Error,
    },
    /// A query failed.
    #[error("the session database failed while {operation} session `{session}`; check that it is reachable and writable")]
    Database {
        /// What was being done (`loading`, `committing`, ...).
        operation: &'static str,
        /// The session (empty for store-wide operations).
        session: String,
        /// The driver's error.
        #[source]
        source: sqlx::Error,
    },
    /// There is no session of that name (to resume or step).
    #[error("there is no session `{session}`; start it with a message first")]
    NotFound {
        /// The session.
        session: String,
    },
    /// A decision on a waiting call that the session's state refuses.
    #[error("session `{session}`: the decision was refused")]
    Approval {
        /// The session.
        session: String,
        /// Why.
        #[source]
        source: agents_core::ApprovalError,
    },
    /// The agent loop could not run the state.
    #[error("the agent could not run the session's state")]
    Agent(#[from] agents_core::AgentError),
    /// The state could not be serialized; nothing was written.
    #[error("session `{session}`: the state could not be serialized, so nothing was written")]
    Encode {
        /// The session.
        session: String,
        /// Why.
        #[source]
        source: StateError,
    },
}

impl SessionError {
    /// Whether this is a [`SessionError::Conflict`] (reload and retry).
    pub fn is_conflict(&self) -> bool {
        matches!(self, SessionError::Conflict { .. })
    }

    /// Whether another runner holds the session ([`SessionError::Busy`]).
    pub fn is_busy(&self) -> bool {
        matches!(self, SessionError::Busy { .. })
    }
}

/// Query parameters of a database URL that hold a secret (compared case-insensitively):
/// libpq's `password`, `sslpassword` (the client key's passphrase) and `passfile` (where the
/// passwords are).
const SECRET_PARAMETERS: &[&str] = &["password", "sslpassword", "passfile"];

/// `url` with its password and the values of its `password`, `sslpassword` and `passfile`
/// parameters replaced by `***`, and any `#fragment` dropped (for error messages and logs). A URL the `url` crate cannot
/// parse (a password holding `/`, say) is redacted by hand: everything between `://` and the
/// last `@` of the authority after the user name, and the same parameters.
pub fn redact_url(url: &str) -> String {
    match url::Url::parse(url) {
        // `user:pa/ss@host`, `user:a#b@host`: the parser ends the authority at the `/` or `#`
        // and finds no user; done by hand below
        Ok(parsed) if url.contains('@') && parsed.username().is_empty() => redact_by_hand(url),
        Ok(mut parsed) if parsed.has_authority() || parsed.query().is_some() => {
            // a database URL means nothing by a fragment; whatever follows a `#` is dropped
            parsed.set_fragment(None);
            if parsed.password().is_some() {
                // cannot fail on a URL with an authority
                let _ = parsed.set_password(Some("***"));
            }
            if parsed.query().is_some() {
                let pairs: Vec<(String, String)> = parsed
                    .query_pairs()
                    .map(|(key, value)| {
                        let value = if is_secret_parameter(&key) {
                            "***".to_owned()
                        } else {
                            value.into_owned()
                        };
                        (key.into_owned(), value)
                    })
                    .collect();
                parsed.query_pairs_mut().clear().extend_pairs(pairs);
            }
            parsed.to_string()
        }
        Ok(_) => url.to_owned(),
        Err(_) => redact_by_hand(url),
    }
}

fn is_secret_parameter(key: &str) -> bool {
    SECRET_PARAMETERS
        .iter()
        .any(|secret| key.eq_ignore_ascii_case(secret))
}

/// [`redact_url`] for what does not parse as a URL the way a database would read it: the user
/// information runs to the last `@` (a password may hold `/`, `?`, `#` or `:`; a query that
/// holds an `@` is masked too: more hidden, never less), then the secret parameters.
fn redact_by_hand(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (user, rest) = match rest.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => (format!("{user}:***@"), host),
            None => (format!("{userinfo}@"), host),
        },
        None => (String::new(), rest),
    };
    let mut redacted = format!("{scheme}://{user}");
    match rest.split_once('?') {
        Some((base, query)) => {
            let pairs: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((key, _)) if is_secret_parameter(key) => format!("{key}=***"),
                    _ => pair.to_owned(),
                })
                .collect();
            redacted.push_str(base);
            redacted.push('?');
            redacted.push_str(&pairs.join("&"));
        }
        None => redacted.push_str(rest),
    }
    redacted
}

/// Checks a session name: 1 to 200 characters, no control characters.
///
/// # Errors
/// [`SessionError::InvalidName`] saying what is wrong.
pub fn validate_name(name: &str) -> Result<(), SessionError> {
    let invalid = |reason| SessionError::InvalidName {
        name: name.chars().take(60).collect(),
        reason,
    };
    if name.is_empty() {
        return Err(invalid("a session name cannot be empty"));
    }
    if name.chars().count() > 200 {
        return Err(invalid("a session name has at most 200 characters"));
    }
    if name.chars().any(char::is_control) {
        return Err(invalid("a session name cannot contain control characters"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(
            redact_url("postgres://me:secret@db:5432/x?sslmode=off"),
            "postgres://me:***@db:5432/x?sslmode=off"
        );
        assert_eq!(redact_url("postgres://me@db/x"), "postgres://me@db/x");
        assert_eq!(redact_url("sqlite:///tmp/a.db"), "sqlite:///tmp/a.db");
    }

    #[test]
    fn secret_parameters_and_passwords_with_slashes_are_redacted() {
        for (url, redacted) in [
            (
                "postgres://me@db/x?password=hunter2&sslmode=require",
                "postgres://me@db/x?password=***&sslmode=require",
            ),
            (
                "postgres://db/x?sslpassword=k3y&PassFile=/home/me/.pgpass",
                "postgres://db/x?sslpassword=***&PassFile=***",
            ),
            ("postgres://me:pa/ss@db/x", "postgres://me:***@db/x"),
            ("postgres://me:12/x@db/y", "postgres://me:***@db/y"),
            (
                "postgres://me:a/b@db/x?password=p/q",
                "postgres://me:***@db/x?password=***",
            ),
        ] {
            assert_eq!(redact_url(url), redacted, "{url}");
        }
    }

    proptest::proptest! {
        #[test]
        fn a_password_never_survives_redaction(password in "[A-Za-z0-9/?#%:!]{6,20}") {
            let url = format!("postgres://me:{password}@db:5432/x");
            let redacted = redact_url(&url);
            proptest::prop_assert!(!redacted.contains(&password), "{} -> {}", url, redacted);
            let url = format!("postgres://db/x?password={password}");
            let redacted = redact_url(&url);
            proptest::prop_assert!(!redacted.contains(&password), "{} -> {}", url, redacted);
        }
    }

    #[test]
    fn names_are_checked() {
        assert!(validate_name("chat-42").is_ok());
        assert!(validate_name("").is_err());
        assert!(validate_name(&"x".repeat(201)).is_err());
        assert!(validate_name(&"é".repeat(200)).is_ok());
        let error = validate_name("a\nb").unwrap_err();
        assert!(error.to_string().contains("control characters"), "{error}");
    }
}
