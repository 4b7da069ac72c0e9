//! Connections, the pool and migrations. The backend is chosen from the URL
//! scheme here, before anything connects, so a bad URL fails at once with a
//! message that says what is wrong (diesel's own multi-connection `establish`
//! would try every backend and report only "invalid connection url" after
//! the pool's timeout).

use crate::StorageResult;
use crate::error::StorageError;
use crate::freshness::Freshness;
use crate::write_turns::WriteTurns;
use diesel::Connection;
use diesel::connection::SimpleConnection;
use diesel::pg::PgConnection;
use diesel::r2d2::{self, CustomizeConnection, ManageConnection, Pool, PooledConnection};
use diesel::sqlite::SqliteConnection;
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/sqlite");
const POSTGRES_MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/postgres");

use crate::connection::READ_SNAPSHOT;
pub use crate::connection::{AnyConnection, MultiBackend};

/// A read snapshot that outlives one call: a pooled connection inside an
/// open read-only transaction, for a response read and sent in batches
/// while the client takes it (see [`AnyConnection::read_snapshot`] for what
/// the snapshot guarantees). [`HeldSnapshot::finish`] ends the transaction
/// and hands the connection back; dropped unfinished (the client went
/// away, a batch failed), the pool discards the connection rather than
/// reuse one with a transaction open.
pub struct HeldSnapshot {
    conn: PooledConn,
}

impl fmt::Debug for HeldSnapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HeldSnapshot").finish_non_exhaustive()
    }
}

impl HeldSnapshot {
    pub fn open(db: &Database) -> StorageResult<Self> {
        Self::begin(db.conn()?)
    }

    /// The snapshot on a connection already checked out (a request that
    /// has used it for its credential's check).
    pub fn begin(mut conn: PooledConn) -> StorageResult<Self> {
        conn.begin(&READ_SNAPSHOT)?;
        Ok(Self { conn })
    }

    pub fn conn(&mut self) -> &mut AnyConnection {
        &mut self.conn
    }

    pub fn finish(mut self) -> StorageResult<()> {
        use diesel::connection::TransactionManager;
        <AnyConnection as Connection>::TransactionManager::commit_transaction(&mut self.conn)?;
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A parsed `TRIBUTARY_DATABASE_URL`.
#[derive(Clone, PartialEq, Eq)]
pub enum DatabaseUrl {
    /// `sqlite://PATH`: a file, created when missing.
    Sqlite(PathBuf),
    /// `postgres://…` or `postgresql://…`, handed to libpq as given.
    Postgres(String),
}

// The PostgreSQL URL may carry a password: never print it.
impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl fmt::Display for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DatabaseUrl::Sqlite(path) => write!(f, "sqlite://{}", path.display()),
            DatabaseUrl::Postgres(url) => match redact_password(url) {
                Some(redacted) => f.write_str(&redacted),
                None => f.write_str(url),
            },
        }
    }
}

fn redact_password(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let (userinfo, host) = rest.split_once('@')?;
    let (user, _password) = userinfo.split_once(':')?;
    Some(format!("{scheme}://{user}:***@{host}"))
}

impl DatabaseUrl {
    pub fn parse(url: &str) -> StorageResult<Self> {
        let url = url.trim();
        if let Some(path) = url.strip_prefix("sqlite://") {
            if path.is_empty() {
                return Err(StorageError::InvalidUrl(
                    "`sqlite://` needs a file path, e.g. sqlite://tributary.db".into(),
                ));
            }
            if path == ":memory:" {
                return Err(StorageError::InvalidUrl(
                    "an in-memory SQLite database would be a different empty database on \
                     every pooled connection; give a file path"
                        .into(),
                ));
            }
            return Ok(DatabaseUrl::Sqlite(PathBuf::from(path)));
        }
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(DatabaseUrl::Postgres(url.to_owned()));
        }
        let scheme = url.split_once("://").map_or(url, |(scheme, _)| scheme);
        Err(StorageError::InvalidUrl(format!(
            "unsupported scheme `{scheme}`: use sqlite://PATH or postgres://USER@HOST/DB"
        )))
    }

    pub fn backend(&self) -> Backend {
        match self {
            DatabaseUrl::Sqlite(_) => Backend::Sqlite,
            DatabaseUrl::Postgres(_) => Backend::Postgres,
        }
    }

    /// Opens one connection of the right backend, with the real error.
    pub fn establish(&self) -> StorageResult<AnyConnection> {
        match self {
            DatabaseUrl::Sqlite(path) => {
                let path = path.to_str().ok_or_else(|| {
                    StorageError::InvalidUrl("the SQLite path is not valid UTF-8".into())
                })?;
                SqliteConnection::establish(path).map(AnyConnection::Sqlite)
            }
            DatabaseUrl::Postgres(url) => {
                PgConnection::establish(url).map(AnyConnection::Postgresql)
            }
        }
        // libpq ends its messages with a newline.
        .map_err(|err| {
            StorageError::Unavailable(format!(
                "cannot connect to {self}: {}",
                err.to_string().trim_end()
            ))
        })
    }
}

/// r2d2 manager that opens the backend the URL names (and only that one).
/// Whether the database answered the last connection attempt, shared by
/// the pool's manager (which learns it) and checkouts (which act on it).
#[derive(Debug, Default)]
struct Health {
    down: AtomicBool,
}

#[derive(Debug)]
pub struct Manager {
    url: DatabaseUrl,
    health: Arc<Health>,
    freshness: Arc<Freshness>,
    /// SQLite only: the queue this process's writers wait in.
    write_turns: Option<Arc<WriteTurns>>,
}

impl ManageConnection for Manager {
    type Connection = AnyConnection;
    type Error = r2d2::Error;

    fn connect(&self) -> Result<AnyConnection, r2d2::Error> {
        let connected = self.url.establish();
        self.health
            .down
            .store(connected.is_err(), Ordering::Relaxed);
        connected
            .map(|mut conn| {
                // Every write through the pool moves the caches' epochs,
                // and on SQLite waits for its turn.
                conn.set_instrumentation(self.freshness.write_watch(self.write_turns.clone()));
                conn
            })
            .map_err(|err| {
                r2d2::Error::ConnectionError(diesel::ConnectionError::BadConnection(
                    err.to_string(),
                ))
            })
    }

    /// Only when the pool asks for it (it does not on checkout, see
    /// [`Database::connect`]).
    fn is_valid(&self, conn: &mut AnyConnection) -> Result<(), r2d2::Error> {
        conn.batch_execute("SELECT 1")
            .map_err(r2d2::Error::QueryError)
    }

    /// A connection goes back into the pool unless a query on it found the
    /// server gone, or it still has a transaction open (a held snapshot
    /// whose reader went away, see [`HeldSnapshot`]).
    fn has_broken(&self, conn: &mut AnyConnection) -> bool {
        use diesel::connection::{AnsiTransactionManager, TransactionManager};
        let lost = crate::error::take_connection_lost();
        let in_transaction = match conn {
            AnyConnection::Postgresql(c) => {
                AnsiTransactionManager::is_broken_transaction_manager(c)
            }
            AnyConnection::Sqlite(c) => AnsiTransactionManager::is_broken_transaction_manager(c),
        };
        lost || in_transaction
    }
}

/// SQLite settings that are per connection, not per file.
#[derive(Debug)]
struct SqlitePragmas {
    busy_timeout: Duration,
}

impl CustomizeConnection<AnyConnection, r2d2::Error> for SqlitePragmas {
    fn on_acquire(&self, conn: &mut AnyConnection) -> Result<(), r2d2::Error> {
        apply_sqlite_pragmas(conn, self.busy_timeout).map_err(r2d2::Error::QueryError)
    }
}

fn apply_sqlite_pragmas(
    conn: &mut AnyConnection,
    busy_timeout: Duration,
) -> diesel::QueryResult<()> {
    // One statement per call: SQLite ignores all but the first PRAGMA of a
    // batch in some builds.
    conn.batch_execute(&format!(
        "PRAGMA busy_timeout = {}",
        busy_timeout.as_millis()
    ))?;
    conn.batch_execute("PRAGMA journal_mode = WAL")?;
    conn.batch_execute("PRAGMA synchronous = NORMAL")?;
    conn.batch_execute("PRAGMA foreign_keys = ON")?;
    // Deleted rows (an erased user's data) are overwritten, not left in
    // free pages.
    conn.batch_execute("PRAGMA secure_delete = ON")
}

#[derive(Debug, Clone)]
pub struct PoolOptions {
    pub max_size: u32,
    /// How long a request waits for a free connection before the database
    /// counts as unavailable (503).
    pub connection_timeout: Duration,
    pub sqlite_busy_timeout: Duration,
}

impl Default for PoolOptions {
    fn default() -> Self {
        Self {
            max_size: 8,
            connection_timeout: Duration::from_secs(5),
            sqlite_busy_timeout: Duration::from_secs(5),
        }
    }
}

pub type PooledConn = PooledConnection<Manager>;

/// The pool, cheap to clone.
#[derive(Clone)]
pub struct Database {
    pool: Pool<Manager>,
    url: DatabaseUrl,
    health: Arc<Health>,
    checkout_timeout: Duration,
    checkouts: Arc<CheckoutCounts>,
    freshness: Arc<Freshness>,
}

/// Checkouts from the pool and how long they waited, counted for the
/// metrics endpoint (two relaxed atomic adds a checkout).
#[derive(Debug, Default)]
struct CheckoutCounts {
    served: AtomicU64,
    timed_out: AtomicU64,
    waited_micros: AtomicU64,
}

/// The pool's use, for the metrics endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolUse {
    /// Connections open now, and how many of them are idle.
    pub open: u32,
    pub idle: u32,
    /// The most it opens (`TRIBUTARY_DB_POOL_SIZE`).
    pub max: u32,
    /// Checkouts since start that got a connection, and that gave up.
    pub served: u64,
    pub timed_out: u64,
    /// Time every checkout spent waiting for a connection, in all.
    pub waited: Duration,
}

/// How long a checkout waits at a time before it looks again whether the
/// database has meanwhile been found down.
const CHECKOUT_SLICE: Duration = Duration::from_millis(100);

impl fmt::Debug for Database {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Database")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl Database {
    /// Connects once directly (so an unreachable server reports its real
    /// error at once), then builds the pool.
    pub fn connect(url: &DatabaseUrl, options: &PoolOptions) -> StorageResult<Self> {
        if let DatabaseUrl::Sqlite(path) = url
            && let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty())
            && !dir.is_dir()
        {
            return Err(StorageError::InvalidUrl(format!(
                "the directory {} of the SQLite file does not exist",
                dir.display()
            )));
        }
        let mut probe = url.establish()?;
        if url.backend() == Backend::Sqlite {
            apply_sqlite_pragmas(&mut probe, options.sqlite_busy_timeout)?;
        }
        drop(probe);

        // No test query on checkout: it was a round trip on every request
        // (two on PostgreSQL). A connection the server dropped fails its
        // next query once (503 with Retry-After) and is discarded
        // (`has_broken`).
        let mut builder = Pool::builder()
            .max_size(options.max_size)
            .min_idle(Some(1))
            .test_on_check_out(false)
            .connection_timeout(options.connection_timeout);
        if url.backend() == Backend::Sqlite {
            builder = builder.connection_customizer(Box::new(SqlitePragmas {
                busy_timeout: options.sqlite_busy_timeout,
            }));
        }
        let health = Arc::new(Health::default());
        let freshness = Freshness::new(url.clone());
        let pool = builder
            .build(Manager {
                url: url.clone(),
                health: health.clone(),
                freshness: freshness.clone(),
                write_turns: (url.backend() == Backend::Sqlite)
                    .then(|| WriteTurns::new(options.sqlite_busy_timeout)),
            })
            .map_err(|err| StorageError::Unavailable(err.to_string()))?;
        Ok(Self {
            pool,
            url: url.clone(),
            health,
            checkout_timeout: options.connection_timeout,
            checkouts: Arc::default(),
            freshness,
        })
    }

    /// The epochs caches of this database's rows check their entries
    /// against.
    pub fn freshness(&self) -> &Arc<Freshness> {
        &self.freshness
    }

    /// The pool's use now and since start.
    pub fn pool_use(&self) -> PoolUse {
        let state = self.pool.state();
        let counts = &self.checkouts;
        PoolUse {
            open: state.connections,
            idle: state.idle_connections,
            max: self.pool.max_size(),
            served: counts.served.load(Ordering::Relaxed),
            timed_out: counts.timed_out.load(Ordering::Relaxed),
            waited: Duration::from_micros(counts.waited_micros.load(Ordering::Relaxed)),
        }
    }

    pub fn backend(&self) -> Backend {
        self.url.backend()
    }

    pub fn url(&self) -> &DatabaseUrl {
        &self.url
    }

    /// How long a checkout waits for a free connection.
    pub fn checkout_timeout(&self) -> Duration {
        self.checkout_timeout
    }

    /// The most connections the pool opens (`TRIBUTARY_DB_POOL_SIZE`).
    pub fn max_connections(&self) -> u32 {
        self.pool.max_size()
    }

    /// A pooled connection; never hold one across an `.await`. Waits up to
    /// the pool's timeout for a free one, but no longer than one short
    /// slice once a connection attempt has failed: while the database is
    /// down every caller hears so at once, and each checkout still asks the
    /// pool to connect, so service resumes by itself when it is back.
    pub fn conn(&self) -> StorageResult<PooledConn> {
        let started = std::time::Instant::now();
        let deadline = started + self.checkout_timeout;
        let outcome = loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.pool.get_timeout(left.min(CHECKOUT_SLICE)) {
                Ok(conn) => break Ok(conn),
                Err(err) if left <= CHECKOUT_SLICE || self.is_down() => break Err(err.into()),
                Err(_) => {}
            }
        };
        let counts = &self.checkouts;
        let waited = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        counts.waited_micros.fetch_add(waited, Ordering::Relaxed);
        match &outcome {
            Ok(_) => counts.served.fetch_add(1, Ordering::Relaxed),
            Err(_) => counts.timed_out.fetch_add(1, Ordering::Relaxed),
        };
        outcome
    }

    /// Whether the last attempt to connect to the database failed.
    pub fn is_down(&self) -> bool {
        self.health.down.load(Ordering::Relaxed)
    }

    /// Applies every pending migration; returns the names applied.
    pub fn migrate(&self) -> StorageResult<Vec<String>> {
        let mut conn = self.conn()?;
        let applied = match &mut *conn {
            AnyConnection::Sqlite(c) => c.run_pending_migrations(SQLITE_MIGRATIONS),
            AnyConnection::Postgresql(c) => c.run_pending_migrations(POSTGRES_MIGRATIONS),
        }
        .map_err(|err| StorageError::Migration(err.to_string()))?;
        let applied: Vec<String> = applied.iter().map(ToString::to_string).collect();
        // A migration SQL cannot do: respelling e-mail addresses by Rust's rules.
        if applied.iter().any(|v| v == crate::respell::MIGRATION) {
            let done = crate::respell::respell_emails(&mut conn)?;
            if done.changed + done.left > 0 {
                log::warn!(
                    "e-mail addresses respelled (IDNA, NFC): {} changed, {} left as they were (their new spelling is another account's, or no address)",
                    done.changed,
                    done.left
                );
            }
        }
        Ok(applied)
    }

    pub fn has_pending_migrations(&self) -> StorageResult<bool> {
        let mut conn = self.conn()?;
        match &mut *conn {
            AnyConnection::Sqlite(c) => c.has_pending_migration(SQLITE_MIGRATIONS),
            AnyConnection::Postgresql(c) => c.has_pending_migration(POSTGRES_MIGRATIONS),
        }
        .map_err(|err| StorageError::Migration(err.to_string()))
    }

    /// Undoes every applied migration from `version` on, newest first:
    /// a test of what a migration does to data written before it.
    #[cfg(test)]
    pub(crate) fn revert_migrations_from(&self, version: &str) -> StorageResult<()> {
        let mut conn = self.conn()?;
        loop {
            let latest = match &mut *conn {
                AnyConnection::Sqlite(c) => c.applied_migrations(),
                AnyConnection::Postgresql(c) => c.applied_migrations(),
            }
            .map_err(|err| StorageError::Migration(err.to_string()))?
            .into_iter()
            .map(|v| v.to_string())
            .max();
            if latest.as_deref().is_none_or(|latest| latest < version) {
                return Ok(());
            }
            match &mut *conn {
                AnyConnection::Sqlite(c) => c.revert_last_migration(SQLITE_MIGRATIONS),
                AnyConnection::Postgresql(c) => c.revert_last_migration(POSTGRES_MIGRATIONS),
            }
            .map_err(|err| StorageError::Migration(err.to_string()))?;
        }
    }

    /// Readiness: a round trip to the database.
    pub fn ping(&self) -> StorageResult<()> {
        self.conn()?.batch_execute("SELECT 1")?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_respelling_migration_is_one_of_both_backends() {
        use diesel::migration::MigrationSource;
        let sqlite: Vec<String> =
            MigrationSource::<diesel::sqlite::Sqlite>::migrations(&SQLITE_MIGRATIONS)
                .expect("sqlite migrations")
                .iter()
                .map(|m| m.name().version().to_string())
                .collect();
        let postgres: Vec<String> =
            MigrationSource::<diesel::pg::Pg>::migrations(&POSTGRES_MIGRATIONS)
                .expect("postgres migrations")
                .iter()
                .map(|m| m.name().version().to_string())
                .collect();
        assert!(
            sqlite.iter().any(|v| v == crate::respell::MIGRATION),
            "{sqlite:?}"
        );
        assert!(
            postgres.iter().any(|v| v == crate::respell::MIGRATION),
            "{postgres:?}"
        );
    }

    #[test]
    fn backend_comes_from_the_scheme() {
        assert_eq!(
            DatabaseUrl::parse("sqlite://tributary.db").unwrap(),
            DatabaseUrl::Sqlite("tributary.db".into())
        );
        assert_eq!(
            DatabaseUrl::parse("sqlite:///var/lib/t.db").unwrap(),
            DatabaseUrl::Sqlite("/var/lib/t.db".into())
        );
        assert_eq!(
            DatabaseUrl::parse("postgresql://u@h/db").unwrap().backend(),
            Backend::Postgres
        );
    }

    #[test]
    fn bad_urls_fail_with_the_reason() {
        let err = DatabaseUrl::parse("mysql://root@localhost/x")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unsupported scheme `mysql`"), "{err}");
        let err = DatabaseUrl::parse("tributary.db").unwrap_err().to_string();
        assert!(err.contains("sqlite://PATH"), "{err}");
        assert!(DatabaseUrl::parse("sqlite://").is_err());
        assert!(DatabaseUrl::parse("sqlite://:memory:").is_err());
    }

    #[test]
    fn passwords_never_print() {
        let url = DatabaseUrl::parse("postgres://app:s3cret@db:5432/t").unwrap();
        assert_eq!(url.to_string(), "postgres://app:***@db:5432/t");
        assert!(!format!("{url:?}").contains("s3cret"));
    }

    #[test]
    fn unreachable_postgres_reports_the_real_error_not_a_pool_timeout() {
        let url = DatabaseUrl::parse("postgres://nobody@127.0.0.1:1/none").unwrap();
        let err = Database::connect(&url, &PoolOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("cannot connect to postgres://nobody@127.0.0.1:1/none"),
            "{err}"
        );
        assert!(!err.contains("timed out"), "{err}");
    }
}
