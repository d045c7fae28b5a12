//! The rows of one commit as a few calls of several statements each, for SQLite.
//!
//! `sqlx`'s SQLite driver runs every call on the connection's worker thread, and on a small
//! machine the hand-off between threads costs more than the statement (about 80 µs on two
//! vCPUs, against a few µs of SQLite work). A [`Batch`] holds `;`-separated statements
//! sharing one set of `$n` parameters, which the driver runs in one call: the head, the
//! commit's messages and step records as multi-row inserts, and the journal clean-up. A batch
//! stays under [`MAX_VALUES`] parameters (SQLite's oldest limit is 999), so a commit of many
//! rows (a long conversation's first save) takes several.
//!
//! Postgres does not take several statements in one prepared call; its store runs them one
//! by one (its round trips are cheaper than this hand-off).

/// The most parameters one batch binds.
pub(crate) const MAX_VALUES: usize = 900;

/// A value bound to one batch parameter.
#[derive(Debug)]
pub(crate) enum Value<'a> {
    /// Text borrowed from the commit.
    Text(&'a str),
    /// Text computed for the commit (a checksum).
    Owned(String),
    /// A `BIGINT`.
    Int(i64),
}

/// Statements and the values their `$n` parameters take, run as one call.
#[derive(Debug, Default)]
pub(crate) struct Batch<'a> {
    /// The statements, separated by `;`.
    pub(crate) sql: String,
    /// `values[n - 1]` is `$n`.
    pub(crate) values: Vec<Value<'a>>,
}

/// The batches that store one commit's rows after its session row was advanced.
#[derive(Debug)]
pub(crate) struct CommitRows<'a> {
    /// The session.
    pub(crate) id: &'a str,
    /// The version the commit creates.
    pub(crate) version: i64,
    /// The head row's columns after `(session_id, version)`, in `INSERT_HEAD`'s order.
    pub(crate) head: [Value<'a>; 6],
    /// `(position, body)` of each new message.
    pub(crate) messages: Vec<(i64, &'a str)>,
    /// `(index, body)` of each new or changed step record.
    pub(crate) steps: Vec<(i64, &'a str)>,
}

/// Builds batches: every batch starts with `$1` = the session, `$2` = the version.
struct Builder<'a> {
    id: &'a str,
    version: i64,
    done: Vec<Batch<'a>>,
    current: Batch<'a>,
    /// The table whose multi-row insert the current batch has open.
    open: Option<&'static str>,
}

impl<'a> Builder<'a> {
    fn new(id: &'a str, version: i64) -> Self {
        let mut builder = Self {
            id,
            version,
            done: Vec::new(),
            current: Batch::default(),
            open: None,
        };
        builder.start();
        builder
    }

    fn start(&mut self) {
        self.current.values.push(Value::Text(self.id));
        self.current.values.push(Value::Int(self.version));
    }

    /// Ends the current statement.
    fn end_statement(&mut self) {
        if self.open.take().is_some() {
            self.current.sql.push(';');
        }
    }

    /// Makes room for `count` more values, starting a new batch when needed.
    fn room(&mut self, count: usize) {
        if self.current.values.len() + count > MAX_VALUES && self.current.values.len() > 2 {
            self.end_statement();
            let full = std::mem::take(&mut self.current);
            self.done.push(full);
            self.start();
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
                .push_str(&format!("INSERT INTO {table} ({columns}) VALUES "));
            self.open = Some(table);
        }
        let params: Vec<String> = values.into_iter().map(|v| self.param(v)).collect();
        self.current
            .sql
            .push_str(&format!("($1, $2, {})", params.join(", ")));
    }

    /// Adds a statement whose only parameters are `$1` and `$2`.
    fn statement(&mut self, sql: &str) {
        self.end_statement();
        self.current.sql.push_str(sql);
        self.current.sql.push(';');
    }

    fn finish(mut self) -> Vec<Batch<'a>> {
        self.end_statement();
        if !self.current.sql.is_empty() {
            self.done.push(self.current);
        }
        self.done
    }
}

impl<'a> CommitRows<'a> {
    /// The batches, in order: the head, the messages, the step records, then the clean-up of
    /// the step journal (`$2` and below), in the last batch.
    pub(crate) fn batches(self) -> Vec<Batch<'a>> {
        let mut builder = Builder::new(self.id, self.version);
        builder.row(
            "session_heads",
            "session_id, version, commit_id, step_count, body, checksum, committed_at, \
             execution_id",
            self.head.into(),
        );
        for (position, body) in self.messages {
            builder.row(
                "session_messages",
                "session_id, version, position, body, checksum",
                vec![
                    Value::Int(position),
                    Value::Text(body),
                    Value::Owned(crate::checksum(body)),
                ],
            );
        }
        for (index, body) in self.steps {
            builder.row(
                "session_steps",
                "session_id, version, idx, body, checksum",
                vec![
                    Value::Int(index),
                    Value::Text(body),
                    Value::Owned(crate::checksum(body)),
                ],
            );
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
            id: "s1",
            version: 7,
            head: [
                Value::Text("c7"),
                Value::Int(3),
                Value::Text("{}"),
                Value::Owned(crate::checksum("{}")),
                Value::Int(1000),
                Value::Text(""),
            ],
            messages: (0..messages).map(|i| (i as i64, "m")).collect(),
            steps: (0..steps).map(|i| (i as i64, "s")).collect(),
        }
        .batches()
    }

    #[test]
    fn a_small_commit_is_one_call() {
        let batches = rows(2, 1);
        assert_eq!(batches.len(), 1);
        let expected = [
            "INSERT INTO session_heads (session_id, version, commit_id, step_count, body, \
             checksum, committed_at, execution_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            "INSERT INTO session_messages (session_id, version, position, body, checksum) \
             VALUES ($1, $2, $9, $10, $11), ($1, $2, $12, $13, $14)",
            "INSERT INTO session_steps (session_id, version, idx, body, checksum) \
             VALUES ($1, $2, $15, $16, $17)",
            "DELETE FROM session_journal WHERE session_id = $1 AND version <= $2",
            "",
        ];
        assert_eq!(batches[0].sql.split(';').collect::<Vec<_>>(), expected);
        assert_eq!(batches[0].values.len(), 17);
    }

    #[test]
    fn a_large_commit_is_split_under_the_parameter_limit() {
        let batches = rows(10_000, 3);
        assert!(batches.len() > 1);
        let mut messages = 0;
        for batch in &batches {
            assert!(batch.values.len() <= MAX_VALUES, "{}", batch.values.len());
            // Every parameter a batch names is one it binds, and every batch binds $1, $2.
            let highest = batch
                .sql
                .split('$')
                .skip(1)
                .map(|p| {
                    p.chars()
                        .take_while(char::is_ascii_digit)
                        .collect::<String>()
                })
                .filter_map(|n| n.parse::<usize>().ok())
                .max()
                .unwrap_or(0);
            assert_eq!(highest, batch.values.len());
            assert!(matches!(batch.values[0], Value::Text("s1")));
            assert!(matches!(batch.values[1], Value::Int(7)));
            messages += batch.sql.matches("($1, $2, ").count();
        }
        // The head, every message and every step, once each.
        assert_eq!(messages, 1 + 10_000 + 3);
        assert!(batches[batches.len() - 1].sql.ends_with("version <= $2;"));
        assert_eq!(
            batches.iter().filter(|b| b.sql.contains("DELETE")).count(),
            1
        );
    }
}
