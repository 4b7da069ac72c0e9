//! How soon a process sees a change (docs/architecture.md, "Caches"): a
//! cache may keep a credential's principal or an account's data version
//! only while nothing that could change it has been written. Writes are
//! counted in two epochs, one for credentials and one for data; an entry
//! remembers the epoch it was read in and is used only while that epoch is
//! current.
//!
//! - **This process** counts its own writes as they commit: every pooled
//!   connection carries a [`WriteWatch`] (diesel's instrumentation), so no
//!   writer can forget to say what it changed. A write outside a
//!   transaction is sorted by its table; a writing transaction counts as
//!   changing everything.
//! - **Other processes** (the CLI, a worker, a second server) are seen by a
//!   watcher thread, started by the first cache that asks: on PostgreSQL it
//!   `LISTEN`s for the notifications the tables' triggers send in the
//!   writing transaction (migrations 000024 and 000027); on SQLite it
//!   reads the file's change counter (`PRAGMA data_version`) every 100 ms.
//!   While the watcher cannot reach the database it moves both epochs on
//!   once a second, so nothing cached lives longer than that.
//!
//! An epoch only ever grows, and it moves *after* the change committed. A
//! cache reads the epoch *before* it reads the database, so an entry read
//! from a state a later commit replaced is already stale when stored.

use crate::db::DatabaseUrl;
use crate::write_turns::{TurnTaker, WriteTurns};
use diesel::connection::{Instrumentation, InstrumentationEvent, SimpleConnection};
use diesel::pg::PgConnection;
use diesel::sqlite::SqliteConnection;
use diesel::{Connection, RunQueryDsl};
use std::fmt::{self, Write as _};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

/// The tables whose rows decide whether a credential holds and what it may
/// see. PostgreSQL's `tributary_credentials` notifications come from
/// triggers on these same tables (migration 000024).
const CREDENTIAL_TABLES: [&str; 4] = ["api_keys", "api_key_accounts", "users", "oauth_tokens"];

/// How often the SQLite watcher reads the change counter.
const SQLITE_INTERVAL: Duration = Duration::from_millis(100);
/// How often the PostgreSQL watcher takes the notifications that arrived
/// (a read of what the socket holds, no round trip).
const POSTGRES_INTERVAL: Duration = Duration::from_millis(50);
/// While the watcher cannot reach the database: how often everything
/// cached is dropped, and the watcher tries again.
const DOWN_INTERVAL: Duration = Duration::from_secs(1);

const CREDENTIALS_CHANNEL: &str = "tributary_credentials";
const DATA_CHANNEL: &str = "tributary_data";

/// A moment in the history of one kind of change; a cached entry stays
/// good while the epoch it was read in is the current one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Epoch(u64);

/// What a write may have changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Touched {
    credentials: bool,
    data: bool,
}

impl Touched {
    const EVERYTHING: Touched = Touched {
        credentials: true,
        data: true,
    };
    const DATA: Touched = Touched {
        credentials: false,
        data: true,
    };
}

/// The epochs of one database, shared by every connection of its pool and
/// the caches that read through it.
pub struct Freshness {
    credentials: AtomicU64,
    data: AtomicU64,
    url: DatabaseUrl,
    /// Whether the watcher thread runs (set by the first cache's read).
    watcher: OnceLock<bool>,
}

impl fmt::Debug for Freshness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Freshness")
            .field("credentials", &self.credentials)
            .field("data", &self.data)
            .finish_non_exhaustive()
    }
}

impl Freshness {
    pub(crate) fn new(url: DatabaseUrl) -> Arc<Self> {
        Arc::new(Self {
            credentials: AtomicU64::new(0),
            data: AtomicU64::new(0),
            url,
            watcher: OnceLock::new(),
        })
    }

    /// The current epoch of credentials (keys, tokens, users). The first
    /// call starts watching other processes' writes.
    pub fn credentials(self: &Arc<Self>) -> Epoch {
        self.watch_others();
        Epoch(self.credentials.load(Ordering::SeqCst))
    }

    /// The current epoch of data (accounts and their versions).
    pub fn data(self: &Arc<Self>) -> Epoch {
        self.watch_others();
        Epoch(self.data.load(Ordering::SeqCst))
    }

    /// Both epochs as they are, without starting the watcher.
    pub(crate) fn peek(&self) -> (u64, u64) {
        (
            self.credentials.load(Ordering::SeqCst),
            self.data.load(Ordering::SeqCst),
        )
    }

    fn changed(&self, touched: Touched) {
        if touched.credentials {
            self.credentials.fetch_add(1, Ordering::SeqCst);
        }
        if touched.data {
            self.data.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn watch_others(self: &Arc<Self>) {
        let watching = *self.watcher.get_or_init(|| {
            let watched = Arc::downgrade(self);
            let url = self.url.clone();
            std::thread::Builder::new()
                .name("tributary-watch".into())
                .spawn(move || match url {
                    DatabaseUrl::Sqlite(path) => watch_sqlite(&watched, &path),
                    DatabaseUrl::Postgres(url) => watch_postgres(&watched, &url),
                })
                .inspect_err(|err| {
                    log::error!("cannot watch the database for other processes' writes: {err}");
                })
                .is_ok()
        });
        if !watching {
            // Blind to other processes: every entry is stale at once.
            self.changed(Touched::EVERYTHING);
        }
    }

    /// The instrumentation a pooled connection reports its writes to;
    /// with `turns` (SQLite), its writes also wait for their turn.
    pub(crate) fn write_watch(self: &Arc<Self>, turns: Option<Arc<WriteTurns>>) -> WriteWatch {
        WriteWatch {
            freshness: self.clone(),
            turns: turns.map(TurnTaker::new),
            depth: 0,
            beginning: false,
            read_only: false,
            committing: false,
            statement: None,
        }
    }
}

/// Runs `step` every `interval` while the database is still in use; each
/// step that fails drops everything cached and waits [`DOWN_INTERVAL`].
fn watch_loop<C>(
    watched: &Weak<Freshness>,
    interval: Duration,
    mut connect: impl FnMut() -> Option<C>,
    mut step: impl FnMut(&mut C, &Freshness) -> bool,
) {
    let mut conn: Option<C> = None;
    loop {
        let Some(freshness) = watched.upgrade() else {
            return;
        };
        if conn.is_none() {
            conn = connect();
            // Whatever happened while nobody watched is unknown.
            freshness.changed(Touched::EVERYTHING);
        }
        let healthy = match conn.as_mut() {
            Some(c) => step(c, &freshness),
            None => false,
        };
        drop(freshness);
        if healthy {
            std::thread::sleep(interval);
        } else {
            conn = None;
            std::thread::sleep(DOWN_INTERVAL);
        }
    }
}

#[derive(diesel::QueryableByName)]
struct DataVersion {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    data_version: i64,
}

/// SQLite: the file's change counter, as a connection of its own sees it,
/// moves whenever any other connection (of this process or another)
/// commits a write.
fn watch_sqlite(watched: &Weak<Freshness>, path: &std::path::Path) {
    let mut last = None;
    watch_loop(
        watched,
        SQLITE_INTERVAL,
        || {
            // Opening a file that is gone would create an empty one.
            let path = path.to_str().filter(|_| path.exists())?;
            SqliteConnection::establish(path)
                .inspect_err(|err| log::warn!("the change watcher cannot open the database: {err}"))
                .ok()
        },
        |conn, freshness| match diesel::sql_query("PRAGMA data_version")
            .get_result::<DataVersion>(conn)
        {
            Ok(now) => {
                if last.is_some_and(|last| last != now.data_version) {
                    freshness.changed(Touched::EVERYTHING);
                }
                last = Some(now.data_version);
                true
            }
            Err(err) => {
                log::warn!("the change watcher lost the database: {err}");
                last = None;
                false
            }
        },
    );
}

/// PostgreSQL: the notifications the triggers send as a writing
/// transaction commits.
fn watch_postgres(watched: &Weak<Freshness>, url: &str) {
    watch_loop(
        watched,
        POSTGRES_INTERVAL,
        || {
            let mut conn = PgConnection::establish(url)
                .inspect_err(|err| {
                    log::warn!(
                        "the change watcher cannot connect: {}",
                        err.to_string().trim_end()
                    );
                })
                .ok()?;
            conn.batch_execute(&format!(
                "LISTEN {CREDENTIALS_CHANNEL}; LISTEN {DATA_CHANNEL}"
            ))
            .inspect_err(|err| log::warn!("the change watcher cannot listen: {err}"))
            .ok()?;
            Some(conn)
        },
        |conn, freshness| {
            let mut touched = Touched::default();
            for notification in conn.notifications_iter() {
                match notification {
                    Ok(n) if n.channel == DATA_CHANNEL => touched.data = true,
                    Ok(_) => touched.credentials = true,
                    Err(err) => {
                        log::warn!("the change watcher lost the database: {err}");
                        return false;
                    }
                }
            }
            freshness.changed(touched);
            true
        },
    );
}

/// Counts one connection's writes into its database's epochs as they
/// commit. A statement outside a transaction is sorted by what it may
/// change ([`touched_by`]) as it finishes. A transaction is not sorted
/// statement by statement (that would mean writing out the SQL of every
/// row batch of an import): one begun read-only (the read snapshots)
/// changes nothing, any other counts as a change of everything when its
/// outermost `COMMIT` has finished; a rolled-back one changes nothing.
///
/// On SQLite the same classification orders this process's writers
/// ([`crate::write_turns`]): a write outside a transaction, or a
/// transaction that may write, waits for its turn when it starts.
pub(crate) struct WriteWatch {
    freshness: Arc<Freshness>,
    /// This connection's place in its SQLite database's writer queue.
    turns: Option<TurnTaker>,
    /// The transaction depth diesel reports (0: none open).
    depth: u32,
    /// The next finished statement is the outermost `BEGIN …`.
    beginning: bool,
    /// The open transaction was begun read-only.
    read_only: bool,
    /// The next finished statement is the outermost `COMMIT`.
    committing: bool,
    /// The start of the running statement's SQL, when it is one outside a
    /// transaction or the outermost `BEGIN` (read once, when it starts).
    statement: Option<String>,
}

impl Instrumentation for WriteWatch {
    fn on_connection_event(&mut self, event: InstrumentationEvent<'_>) {
        match event {
            InstrumentationEvent::BeginTransaction { depth, .. } => {
                self.depth = depth.get();
                self.beginning = self.depth == 1;
            }
            // Diesel reports the commit before it sends `COMMIT`: the
            // epochs move when that statement has finished.
            InstrumentationEvent::CommitTransaction { depth, .. } => {
                self.depth = depth.get() - 1;
                self.committing = self.depth == 0;
            }
            InstrumentationEvent::RollbackTransaction { depth, .. } => {
                self.depth = depth.get() - 1;
            }
            InstrumentationEvent::StartQuery { query, .. } if self.beginning || self.depth == 0 => {
                let statement = statement_start(query);
                if let Some(turns) = &mut self.turns {
                    turns.before(if self.beginning {
                        !begins_read_only(&statement)
                    } else {
                        writes(&statement)
                    });
                }
                self.statement = Some(statement);
            }
            InstrumentationEvent::FinishQuery { error, .. } => {
                let statement = self.statement.take().unwrap_or_default();
                if std::mem::take(&mut self.beginning) {
                    if error.is_some() {
                        // A `BEGIN` that failed opened no transaction.
                        self.depth = 0;
                    }
                    self.read_only = begins_read_only(&statement);
                } else if std::mem::take(&mut self.committing) {
                    // Even a failed commit may have ended the transaction
                    // either way; counting it only costs a re-read.
                    if !self.read_only {
                        self.freshness.changed(Touched::EVERYTHING);
                    }
                } else if self.depth == 0 && error.is_none() {
                    self.freshness.changed(touched_by(&statement));
                }
                if let Some(turns) = &mut self.turns {
                    turns.after(self.depth > 0);
                }
            }
            _ => {}
        }
    }
}

/// The read snapshots' `BEGIN` (`connection::READ_SNAPSHOT`): PostgreSQL's
/// says `READ ONLY`; SQLite's is the one `BEGIN DEFERRED` (units of work
/// begin `IMMEDIATE`, diesel's own transactions plain `BEGIN`).
fn begins_read_only(sql: &str) -> bool {
    let sql = sql.to_ascii_uppercase();
    sql.contains("READ ONLY") || sql.trim() == "BEGIN DEFERRED"
}

/// The first characters of a statement's SQL: enough for its verb and
/// table, and the bound values are never formatted.
fn statement_start(query: &dyn diesel::connection::DebugQuery) -> String {
    const ENOUGH: usize = 96;
    struct Prefix(String);
    impl fmt::Write for Prefix {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            for c in s.chars() {
                if self.0.len() >= ENOUGH {
                    return Err(fmt::Error);
                }
                self.0.push(c);
            }
            Ok(())
        }
    }
    let mut prefix = Prefix(String::with_capacity(ENOUGH));
    // Stopping at ENOUGH is the expected way out.
    let _ = write!(prefix, "{query}");
    prefix.0
}

/// The verbs of statements that write nothing: reads and transaction
/// control.
const NOT_WRITING: [&str; 13] = [
    "select",
    "pragma",
    "begin",
    "commit",
    "end",
    "rollback",
    "savepoint",
    "release",
    "set",
    "show",
    "listen",
    "unlisten",
    "explain",
];

/// The first word of a statement, lower-cased.
fn verb(sql: &str) -> String {
    sql.split(|c: char| c.is_whitespace() || c == '(')
        .find(|w| !w.is_empty())
        .unwrap_or_default()
        .to_ascii_lowercase()
}

/// Whether a statement may write, from its verb (a `WITH` may: the claim's
/// is an `UPDATE`). Unlike [`touched_by`], recording a key's last use is a
/// write here: it takes the lock like any other.
fn writes(sql: &str) -> bool {
    let verb = verb(sql);
    !verb.is_empty() && !NOT_WRITING.contains(&verb.as_str())
}

/// What a statement may change, from its text: nothing for reads and
/// transaction control; the credentials too when it writes one of
/// [`CREDENTIAL_TABLES`] or a table it does not name plainly; data for
/// every write.
fn touched_by(sql: &str) -> Touched {
    let words: Vec<String> = sql
        .split(|c: char| c.is_whitespace() || c == '(')
        .filter(|w| !w.is_empty())
        .take(8)
        .map(|w| w.trim_matches(['"', '`']).to_ascii_lowercase())
        .collect();
    let Some(verb) = words.first() else {
        return Touched::default();
    };
    let table = match verb.as_str() {
        verb if NOT_WRITING.contains(&verb) => return Touched::default(),
        "insert" | "replace" => words
            .iter()
            .position(|w| w == "into")
            .and_then(|i| words.get(i + 1)),
        "delete" => words
            .iter()
            .position(|w| w == "from")
            .and_then(|i| words.get(i + 1)),
        "update" => words
            .iter()
            .skip(1)
            .find(|w| !matches!(w.as_str(), "or" | "rollback" | "abort" | "fail" | "ignore")),
        _ => None,
    };
    match table {
        // Recording when a key was last used changes no credential.
        Some(table) if table == "api_keys" && is_last_use_only(&words) => Touched::default(),
        Some(table) if !CREDENTIAL_TABLES.contains(&table.as_str()) => Touched::DATA,
        _ => Touched::EVERYTHING,
    }
}

/// `UPDATE api_keys SET last_used_at = … WHERE …`, setting nothing else.
fn is_last_use_only(words: &[String]) -> bool {
    matches!(
        words,
        [update, _, set, column, eq, _, r#where, ..]
            if update == "update" && set == "set" && column == "last_used_at" && eq == "=" && r#where == "where"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_that_write_take_a_turn_by_their_verb() {
        for (sql, writing) in [
            ("SELECT 1", false),
            ("  select(1)", false),
            ("BEGIN IMMEDIATE", false),
            ("COMMIT", false),
            ("PRAGMA data_version", false),
            ("UPDATE \"api_keys\" SET \"last_used_at\" = ? WHERE", true),
            ("INSERT INTO \"users\" (\"email\") VALUES (?)", true),
            ("DELETE FROM \"sync_jobs\"", true),
            ("WITH due AS (SELECT id FROM sync_jobs) UPDATE", true),
            ("", false),
        ] {
            assert_eq!(writes(sql), writing, "{sql}");
        }
    }

    #[test]
    fn statements_are_sorted_by_what_they_may_change() {
        let cases = [
            (
                "SELECT \"api_keys\".\"id\" FROM \"api_keys\"",
                Touched::default(),
            ),
            ("COMMIT", Touched::default()),
            ("RELEASE SAVEPOINT diesel_savepoint_1", Touched::default()),
            ("BEGIN IMMEDIATE", Touched::default()),
            (
                "UPDATE \"api_keys\" SET \"revoked_at\" = $1 WHERE (\"api_keys\".\"id\" = $2)",
                Touched::EVERYTHING,
            ),
            (
                "UPDATE \"api_keys\" SET \"last_used_at\" = $1 WHERE (\"api_keys\".\"id\" = $2)",
                Touched::default(),
            ),
            (
                "UPDATE \"api_keys\" SET \"last_used_at\" = $1, \"revoked_at\" = $2 WHERE",
                Touched::EVERYTHING,
            ),
            (
                "DELETE FROM \"users\" WHERE (\"users\".\"id\" = $1)",
                Touched::EVERYTHING,
            ),
            (
                "INSERT INTO \"oauth_tokens\" (\"id\") VALUES ($1)",
                Touched::EVERYTHING,
            ),
            (
                "INSERT INTO \"transactions\" (\"id\") VALUES ($1)",
                Touched::DATA,
            ),
            (
                "INSERT OR IGNORE INTO balances (id) VALUES (?)",
                Touched::DATA,
            ),
            ("UPDATE accounts SET version = version + 1", Touched::DATA),
            (
                "WITH gone AS (DELETE FROM api_keys) SELECT 1",
                Touched::EVERYTHING,
            ),
            ("CREATE TABLE x (id INTEGER)", Touched::EVERYTHING),
        ];
        for (sql, expected) in cases {
            assert_eq!(touched_by(sql), expected, "{sql}");
        }
    }
}
