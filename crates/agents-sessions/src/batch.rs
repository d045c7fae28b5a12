//! A commit to SQLite as one call: the statements of its transaction in a batch.
//!
//! `sqlx`'s SQLite driver runs every call on the connection's worker thread, and on a small
//! machine the hand-off between threads costs far more than the statement (about 100 µs on
//! two vCPUs, against a few µs of SQLite work). A [`Batch`] holds `;`-separated statements
//! sharing one set of `$n` parameters, which the driver runs in one call; a commit is then
//! `BEGIN IMMEDIATE`, one batch and `COMMIT`.
//!
//! The first batch advances the session row (checking the expected version and the lease in
//! its own `WHERE`: SQLite has one writer at a time, see
//! [`Writers::One`](crate::sql::Writers::One)), inserts the head only when that advance
//! happened, and then selects whether the head with this commit's id is there: the answer
//! says whether the commit took. The messages and step records follow as multi-row inserts,
//! then the journal clean-up. When the advance did not happen, the caller rolls the whole
//! transaction back, rows included. A batch stays under [`MAX_VALUES`] parameters (SQLite's
//! oldest limit is 999), so a commit of many rows (a long conversation's first save) takes
//! several batches.
//!
//! Postgres does not take several statements in one prepared call; its store runs them one
//! by one (its round trips cost less than this hand-off).

/// The most parameters one batch binds.
pub(crate) const MAX_VALUES: usize = 900;

/// Whether the session row was advanced, as the first batch's statements after it see it:
/// the version is the new one and no head has that version yet.
const ADVANCED: &str = "(SELECT version FROM sessions WHERE id = $1) = $2
    AND NOT EXISTS (SELECT 1 FROM session_heads WHERE session_id = $1 AND version = $2)";

/// The lease check: no lease (`$14` NULL), or the lease has the token `$14` and was not
/// released.
const HOLDS_LEASE: &str = "($14 IS NULL OR EXISTS (SELECT 1 FROM session_leases
    WHERE session_id = $1 AND token = $14 AND expires_at > 0))";

/// The first batch's opening: the session row inserted (a new session) or advanced, the
/// head when that happened, and the count of this commit's heads.
fn lead(new_session: bool) -> String {
    let session = if new_session {
        format!(
            "INSERT INTO sessions
    (id, version, title, message_count, created_at, updated_at, status, step_count,
     input_tokens, output_tokens, cache_read_tokens, cost_usd)
    SELECT $1, $2, $4, $5, $6, $6, $7, $8, $9, $10, $11, $12 WHERE {HOLDS_LEASE}
    ON CONFLICT (id) DO NOTHING"
        )
    } else {
        format!(
            "UPDATE sessions
    SET version = $2, title = $4, message_count = $5, updated_at = $6, status = $7,
        step_count = $8, input_tokens = $9, output_tokens = $10, cache_read_tokens = $11,
        cost_usd = $12
    WHERE id = $1 AND version = $13 AND {HOLDS_LEASE}"
        )
    };
    format!(
        "{session};
INSERT INTO session_heads
    (session_id, version, commit_id, step_count, body, checksum, committed_at, execution_id)
    SELECT $1, $2, $3, $8, $15, $16, $6, $17 WHERE {ADVANCED};
SELECT COUNT(*) FROM session_heads WHERE session_id = $1 AND version = $2 AND commit_id = $3;"
    )
}

/// A value bound to one batch parameter.
#[derive(Clone, Debug)]
pub(crate) enum Value<'a> {
    /// Text borrowed from the commit.
    Text(&'a str),
    /// Text computed for the commit (a checksum).
    Owned(String),
    /// A `BIGINT`.
    Int(i64),
    /// A `BIGINT` or NULL.
    MaybeInt(Option<i64>),
    /// A `DOUBLE PRECISION` or NULL.
    MaybeReal(Option<f64>),
}

/// Statements and the values their `$n` parameters take, run as one call.
#[derive(Debug, Default)]
pub(crate) struct Batch<'a> {
    /// The statements, each ended by `;`.
    pub(crate) sql: String,
    /// `values[n - 1]` is `$n`.
    pub(crate) values: Vec<Value<'a>>,
}

/// What a commit writes to SQLite, in the parameter order of the first batch.
#[derive(Debug)]
pub(crate) struct CommitRows<'a> {
    /// `$1` the session, `$2` the version the commit creates, `$3` the commit's id.
    pub(crate) key: [Value<'a>; 3],
    /// `$4` title, `$5` message count, `$6` the commit's time, `$7` status, `$8` step count,
    /// `$9`-`$11` input, output and cache-read tokens, `$12` cost, `$13` the expected
    /// version (0: a new session), `$14` the lease token, `$15` the head, `$16` its checksum,
    /// `$17` the execution id.
    pub(crate) session: [Value<'a>; 14],
    /// Whether the session is new (the expected version is 0).
    pub(crate) new_session: bool,
    /// `(position, body)` of each new message.
    pub(crate) messages: Vec<(i64, &'a str)>,
    /// `(index, body)` of each new or changed step record.
    pub(crate) steps: Vec<(i64, &'a str)>,
}

/// Builds batches; every batch binds `$1`-`$3` to the commit's key.
struct Builder<'a> {
    key: [Value<'a>; 3],
    done: Vec<Batch<'a>>,
    current: Batch<'a>,
    /// The table whose multi-row insert the current batch has open.
    open: Option<&'static str>,
}

impl<'a> Builder<'a> {
    fn new(key: [Value<'a>; 3], lead: String, session: [Value<'a>; 14]) -> Self {
        let mut values = key.to_vec();
        values.extend(session);
        Self {
            key,
            done: Vec::new(),
            current: Batch { sql: lead, values },
            open: None,
        }
    }

    /// Ends the current statement.
    fn end_statement(&mut self) {
        if self.open.take().is_some() {
            self.current.sql.push(';');
        }
    }

    /// Makes room for `count` more values, starting a new batch when needed.
    fn room(&mut self, count: usize) {
        if self.current.values.len() + count > MAX_VALUES {
            self.end_statement();
            let next = Batch {
                sql: String::new(),
                values: self.key.to_vec(),
            };
            let full = std::mem::replace(&mut self.current, next);
            self.done.push(full);
        }
    }

    /// `$n` for `value`.
    fn param(&mut self, value: Value<'a>) -> String {
        self.current.values.push(value);
        format!("${}", self.current.values.len())
    }

    /// Adds one `($1, $2, a, b, ..)` row to the multi-row insert into `table` (opened with
    /// `columns`, which start with the session and the version, when this batch has none
    /// open for it).
    fn row(&mut self, table: &'static str, columns: &str, values: Vec<Value<'a>>) {
        self.room(values.len());
        if self.open == Some(table) {
            self.current.sql.push_str(", ");
        } else {
            self.end_statement();
            self.current
                .sql
                .push_str(&format!("\nINSERT INTO {table} ({columns}) VALUES "));
            self.open = Some(table);
        }
        let params: Vec<String> = values.into_iter().map(|v| self.param(v)).collect();
        self.current
            .sql
            .push_str(&format!("($1, $2, {})", params.join(", ")));
    }

    /// Adds a statement whose only parameters are `$1`-`$3`.
    fn statement(&mut self, sql: &str) {
        self.end_statement();
        self.current.sql.push('\n');
        self.current.sql.push_str(sql);
        self.current.sql.push(';');
    }

    fn finish(mut self) -> Vec<Batch<'a>> {
        self.end_statement();
        self.done.push(self.current);
        self.done
    }
}

impl<'a> CommitRows<'a> {
    /// The batches, in order. The first one's only result row is the count of heads with
    /// this commit's version and id: 1 when the commit took, 0 when it did not (the expected
    /// version was not the session's, or the lease is not held), and then the transaction
    /// must be rolled back.
    pub(crate) fn batches(self) -> Vec<Batch<'a>> {
        let mut builder = Builder::new(self.key, lead(self.new_session), self.session);
        let tables = [
            (
                "session_messages",
                "session_id, version, position, body, checksum",
                self.messages,
            ),
            (
                "session_steps",
                "session_id, version, idx, body, checksum",
                self.steps,
            ),
        ];
        for (table, columns, rows) in tables {
            for (number, body) in rows {
                builder.row(
                    table,
                    columns,
                    vec![
                        Value::Int(number),
                        Value::Text(body),
                        Value::Owned(crate::checksum(body)),
                    ],
                );
            }
        }
        builder.statement("DELETE FROM session_journal WHERE session_id = $1 AND version <= $2");
        builder.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(messages: usize, steps: usize) -> Vec<Batch<'static>> {
        CommitRows {
            key: [Value::Text("s1"), Value::Int(7), Value::Text("c7")],
            session: [
                Value::Text("title"),
                Value::Int(2),
                Value::Int(1000),
                Value::Text("completed"),
                Value::Int(3),
                Value::Int(10),
                Value::Int(20),
                Value::Int(0),
                Value::MaybeReal(None),
                Value::Int(6),
                Value::MaybeInt(None),
                Value::Text("{}"),
                Value::Owned(crate::checksum("{}")),
                Value::Text(""),
            ],
            new_session: false,
            messages: (0..messages).map(|i| (i as i64, "m")).collect(),
            steps: (0..steps).map(|i| (i as i64, "s")).collect(),
        }
        .batches()
    }

    /// The highest `$n` that `sql` names.
    fn highest_param(sql: &str) -> usize {
        sql.split('$')
            .skip(1)
            .map(|p| {
                p.chars()
                    .take_while(char::is_ascii_digit)
                    .collect::<String>()
            })
            .filter_map(|n| n.parse::<usize>().ok())
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn a_small_commit_is_one_call() {
        let batches = rows(2, 1);
        assert_eq!(batches.len(), 1);
        let sql = &batches[0].sql;
        let rows_part = &sql[sql.find("\nINSERT INTO session_messages").unwrap()..];
        assert_eq!(
            rows_part.split('\n').collect::<Vec<_>>(),
            [
                "",
                "INSERT INTO session_messages (session_id, version, position, body, checksum) \
                 VALUES ($1, $2, $18, $19, $20), ($1, $2, $21, $22, $23);",
                "INSERT INTO session_steps (session_id, version, idx, body, checksum) \
                 VALUES ($1, $2, $24, $25, $26);",
                "DELETE FROM session_journal WHERE session_id = $1 AND version <= $2;",
            ]
        );
        assert_eq!(batches[0].values.len(), 26);
        assert_eq!(highest_param(sql), 26);
    }

    #[test]
    fn a_large_commit_is_split_under_the_parameter_limit() {
        let batches = rows(10_000, 3);
        assert!(batches.len() > 1);
        let mut rows = 0;
        for (n, batch) in batches.iter().enumerate() {
            assert!(batch.values.len() <= MAX_VALUES, "{}", batch.values.len());
            // Every parameter a batch names is one it binds, and every batch binds the key.
            assert_eq!(highest_param(&batch.sql), batch.values.len());
            assert!(matches!(batch.values[0], Value::Text("s1")));
            assert!(matches!(batch.values[1], Value::Int(7)));
            assert!(matches!(batch.values[2], Value::Text("c7")));
            // Only the first batch advances the session and answers whether it took.
            assert_eq!(batch.sql.contains("UPDATE sessions"), n == 0);
            assert_eq!(batch.sql.contains("SELECT COUNT(*)"), n == 0);
            rows += batch.sql.matches("($1, $2, ").count();
        }
        // Every message and every step, once each; the journal cleared once, at the end.
        assert_eq!(rows, 10_000 + 3);
        assert!(batches[batches.len() - 1].sql.ends_with("version <= $2;"));
        assert_eq!(
            batches.iter().filter(|b| b.sql.contains("DELETE")).count(),
            1
        );
    }
}
