//! One connection type for both backends, and the transactions run on it
//! (a unit of work, a read snapshot).

use crate::StorageResult;
use crate::error::StorageError;
use diesel::Connection;
use diesel::pg::PgConnection;
use diesel::sqlite::SqliteConnection;
use std::fmt;

/// One connection type for both backends; queries written once against it run
/// on either. Backend-specific SQL lives in `crate::backend`.
#[derive(diesel::MultiConnection)]
pub enum AnyConnection {
    Postgresql(PgConnection),
    Sqlite(SqliteConnection),
}

impl AnyConnection {
    /// Runs `work` in one transaction (a savepoint when one is open): every
    /// write of it commits, or none. For callers above storage that must
    /// join several repository calls into one unit. On SQLite the
    /// outermost transaction is `BEGIN IMMEDIATE`: it takes the write lock
    /// up front (waiting up to the busy timeout), so a unit that reads
    /// before it writes cannot fail with "database is locked" halfway.
    pub fn atomically<T>(
        &mut self,
        work: impl FnOnce(&mut AnyConnection) -> StorageResult<T>,
    ) -> StorageResult<T> {
        self.transaction_begun_by(&UNIT_OF_WORK, work)
    }

    /// [`Self::atomically`] for work with an error of its own, which a
    /// storage error converts into.
    pub fn atomically_or<T, E: From<StorageError>>(
        &mut self,
        work: impl FnOnce(&mut AnyConnection) -> Result<T, E>,
    ) -> Result<T, E> {
        self.transaction_begun_by(&UNIT_OF_WORK, work)
    }

    /// Runs `work`'s reads against one snapshot of the database, so that
    /// several queries (a page and its total) agree even while writers
    /// commit in between: PostgreSQL `REPEATABLE READ READ ONLY`; SQLite
    /// (WAL) keeps a read transaction's snapshot until it ends.
    pub fn read_snapshot<T, E: From<StorageError>>(
        &mut self,
        work: impl FnOnce(&mut AnyConnection) -> Result<T, E>,
    ) -> Result<T, E> {
        self.transaction_begun_by(&READ_SNAPSHOT, work)
    }

    /// Begins a transaction of kind `begin` (fails with
    /// `AlreadyInTransaction` inside one).
    pub(crate) fn begin(&mut self, begin: &Begin) -> diesel::QueryResult<()> {
        use diesel::connection::AnsiTransactionManager;
        match self {
            AnyConnection::Postgresql(c) => {
                AnsiTransactionManager::begin_transaction_sql(c, begin.postgres)
            }
            AnyConnection::Sqlite(c) => {
                AnsiTransactionManager::begin_transaction_sql(c, begin.sqlite)
            }
        }
    }

    /// A transaction opened by the backend's `BEGIN …` statement; inside an
    /// open transaction, a savepoint (which keeps the outer one's mode).
    fn transaction_begun_by<T, E: From<StorageError>>(
        &mut self,
        begin: &Begin,
        work: impl FnOnce(&mut AnyConnection) -> Result<T, E>,
    ) -> Result<T, E> {
        use diesel::connection::TransactionManager;
        match self.begin(begin) {
            Err(diesel::result::Error::AlreadyInTransaction) => {
                return self
                    .transaction(|conn| work(conn).map_err(Nested::Work))
                    .map_err(Nested::into_inner);
            }
            begun => begun.map_err(|err| E::from(err.into()))?,
        }
        match work(self) {
            Ok(value) => {
                <Self as Connection>::TransactionManager::commit_transaction(self)
                    .map_err(|err| E::from(err.into()))?;
                Ok(value)
            }
            Err(err) => {
                <Self as Connection>::TransactionManager::rollback_transaction(self)
                    .map_err(|err| E::from(err.into()))?;
                Err(err)
            }
        }
    }
}

/// How each backend begins a transaction of one kind.
pub(crate) struct Begin {
    postgres: &'static str,
    sqlite: &'static str,
}

const UNIT_OF_WORK: Begin = Begin {
    postgres: "BEGIN",
    sqlite: "BEGIN IMMEDIATE",
};

pub(crate) const READ_SNAPSHOT: Begin = Begin {
    postgres: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
    sqlite: "BEGIN DEFERRED",
};

/// `work`'s own error through diesel's `transaction`, which needs one that
/// a diesel error converts into.
enum Nested<E> {
    Work(E),
    Diesel(diesel::result::Error),
}

impl<E> From<diesel::result::Error> for Nested<E> {
    fn from(err: diesel::result::Error) -> Self {
        Nested::Diesel(err)
    }
}

impl<E: From<StorageError>> Nested<E> {
    fn into_inner(self) -> E {
        match self {
            Nested::Work(err) => err,
            Nested::Diesel(err) => E::from(err.into()),
        }
    }
}

impl fmt::Debug for AnyConnection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AnyConnection::Postgresql(_) => "AnyConnection::Postgresql",
            AnyConnection::Sqlite(_) => "AnyConnection::Sqlite",
        })
    }
}
