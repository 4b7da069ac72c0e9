use diesel::result::{DatabaseErrorKind, Error as DieselError};

#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// The database URL cannot be used; says why.
    #[error("invalid database URL: {0}")]
    InvalidUrl(String),
    /// The database cannot be reached or no connection was free in time.
    #[error("database unavailable: {0}")]
    Unavailable(String),
    /// The database has no room for the write (SQLite "database or disk
    /// is full", PostgreSQL "No space left on device"); the transaction
    /// was rolled back whole.
    #[error("database full: {0}")]
    Full(String),
    #[error("not found")]
    NotFound,
    /// A uniqueness rule was hit, e.g. a user that already exists.
    #[error("conflict: {0}")]
    Conflict(String),
    /// A stored value does not parse (e.g. decimal text); data written by
    /// something other than Tributary.
    #[error("corrupt stored value: {0}")]
    Corrupt(String),
    /// A referenced row does not exist or is not the caller's; says which.
    #[error("{0}")]
    InvalidReference(String),
    /// Adding accounts would pass the user's account limit; nothing of the
    /// sync was stored.
    #[error("{}", .0.describe())]
    AccountLimit(tributary_domain::status::AccountLimitExceeded),
    #[error("migration failed: {0}")]
    Migration(String),
    #[error("database error: {0}")]
    Query(#[source] DieselError),
}

/// How each backend says it ran out of space: SQLite's SQLITE_FULL, and
/// PostgreSQL's `disk_full` (53100) with the operating system's ENOSPC text.
fn says_full(message: &str) -> bool {
    [
        "database or disk is full",
        "No space left on device",
        "could not extend file",
    ]
    .iter()
    .any(|text| message.contains(text))
}

impl From<DieselError> for StorageError {
    fn from(err: DieselError) -> Self {
        match err {
            DieselError::NotFound => StorageError::NotFound,
            DieselError::DatabaseError(_, info) if says_full(info.message()) => {
                StorageError::Full(info.message().to_owned())
            }
            DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
                StorageError::Conflict(info.message().to_owned())
            }
            DieselError::DatabaseError(
                DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand,
                info,
            ) => {
                // The pool does not test connections on checkout: the
                // connection that failed this way is dropped, not reused
                // (dropping one that could still have served costs a
                // reconnect, nothing more).
                note_connection_lost();
                StorageError::Unavailable(info.message().to_owned())
            }
            other => StorageError::Query(other),
        }
    }
}

impl From<diesel::r2d2::PoolError> for StorageError {
    fn from(err: diesel::r2d2::PoolError) -> Self {
        StorageError::Unavailable(err.to_string())
    }
}

impl From<tributary_domain::money::DecimalParseError> for StorageError {
    fn from(err: tributary_domain::money::DecimalParseError) -> Self {
        StorageError::Corrupt(err.to_string())
    }
}

impl From<tributary_domain::model::UnknownValue> for StorageError {
    fn from(err: tributary_domain::model::UnknownValue) -> Self {
        StorageError::Corrupt(err.to_string())
    }
}

thread_local! {
    /// Set when a query on this thread found its connection gone; the pool
    /// reads it when that connection is handed back (on the same thread,
    /// right after the failed work).
    static CONNECTION_LOST: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Marks the connection this thread is using as lost: the pool drops it
/// when it comes back instead of handing it to the next request.
pub(crate) fn note_connection_lost() {
    CONNECTION_LOST.set(true);
}

/// Whether this thread's connection was marked lost, clearing the mark.
pub(crate) fn take_connection_lost() -> bool {
    CONNECTION_LOST.replace(false)
}
