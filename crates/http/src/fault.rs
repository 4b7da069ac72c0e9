//! Failures on the server's side, classified once for every surface: the
//! JSON envelope (`error::ApiError`), the HTML pages (`web::page::PageError`)
//! and the RFC 6749 token endpoint each render a [`Fault`] in their own
//! shape, but what counts as temporary, how long to wait and what goes to the
//! log is decided here. Also the one way handlers run database work off the
//! async runtime ([`with_conn`]).

use crate::request_id;
use crate::state::AppState;
use actix_web::error::BlockingError;
use actix_web::http::StatusCode;
use actix_web::web;
use std::fmt;
use tributary_storage::{AnyConnection, StorageError};

/// What kind of server-side failure, as a client can act on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// The database is unreachable or every connection is busy: retry soon.
    Unavailable,
    /// The database has no room left; nothing was changed.
    StorageFull,
    /// Anything else: a bug or an unexpected failure, reported by request id.
    Internal,
}

impl FaultKind {
    /// What the client is told, on every surface.
    pub fn message(self) -> &'static str {
        match self {
            FaultKind::Unavailable => "The database is unavailable; retry shortly.",
            FaultKind::StorageFull => {
                "The database has no room left: nothing was changed. Retry later."
            }
            FaultKind::Internal => {
                "An internal error occurred; quote the request id when reporting it."
            }
        }
    }
}

/// A server-side failure with its cause. The cause is logged with the
/// request id and never sent to the client.
#[derive(Debug)]
pub struct Fault {
    pub kind: FaultKind,
    cause: String,
}

impl Fault {
    pub fn internal(cause: impl fmt::Display) -> Self {
        Self {
            kind: FaultKind::Internal,
            cause: cause.to_string(),
        }
    }

    pub fn status(&self) -> StatusCode {
        match self.kind {
            FaultKind::Unavailable | FaultKind::StorageFull => StatusCode::SERVICE_UNAVAILABLE,
            FaultKind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// Seconds for `Retry-After`, when waiting helps.
    pub fn retry_after(&self) -> Option<u64> {
        match self.kind {
            FaultKind::Unavailable => Some(5),
            FaultKind::StorageFull => Some(60),
            FaultKind::Internal => None,
        }
    }

    /// Logs the cause under the current request's id and returns that id,
    /// for the answer to quote.
    pub fn log(&self) -> String {
        let request_id = request_id::current().unwrap_or_else(|| "unknown".to_owned());
        log::error!(
            "request {request_id} failed with {} ({:?}): {}",
            self.status().as_u16(),
            self.kind,
            self.cause
        );
        request_id
    }
}

/// Storage errors that are not the client's doing. Errors with a meaning of
/// their own (not found, conflict, account limit) are the caller's to map
/// before this; whatever reaches here is a fault.
impl From<StorageError> for Fault {
    fn from(err: StorageError) -> Self {
        match err {
            StorageError::Unavailable(cause) => Self {
                kind: FaultKind::Unavailable,
                cause,
            },
            StorageError::Full(cause) => Self {
                kind: FaultKind::StorageFull,
                cause,
            },
            other => Self::internal(other),
        }
    }
}

/// The blocking pool refused or lost the work (shutting down, or the work
/// panicked).
impl From<BlockingError> for Fault {
    fn from(err: BlockingError) -> Self {
        Self::internal(err)
    }
}

/// Runs blocking database work off the async runtime, with a pooled
/// connection that is returned before anything awaits.
pub async fn with_conn<T, E>(
    state: &web::Data<AppState>,
    work: impl FnOnce(&mut AnyConnection) -> Result<T, E> + Send + 'static,
) -> Result<T, E>
where
    T: Send + 'static,
    E: From<StorageError> + From<BlockingError> + Send + 'static,
{
    let db = state.db.clone();
    web::block(move || {
        let mut conn = db.conn()?;
        work(&mut conn)
    })
    .await?
}
