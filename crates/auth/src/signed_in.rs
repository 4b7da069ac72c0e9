//! Signed-in browser sessions of the dashboards (the Personal dashboard's
//! and the developer dashboard's), written once: a random token in an
//! HttpOnly cookie, only its SHA-256 stored, ended after [`SESSION_IDLE`]
//! without use or [`SESSION_LIFETIME`] after sign-in, whichever comes
//! first. Each dashboard says where its sessions are kept by implementing
//! [`SessionStore`].

use crate::secret;
use chrono::{Duration, NaiveDateTime};
use tributary_storage::sign_in_codes::CodeBinding;
use tributary_storage::{AnyConnection, StorageError};

/// A session unused this long ends (a tab left open on a shared computer).
pub const SESSION_IDLE: Duration = Duration::minutes(30);
/// A session ends this long after sign-in, however busy.
pub const SESSION_LIFETIME: Duration = Duration::hours(12);
/// `last_seen_at` is written at most this often: a page load is a read.
const LAST_SEEN_RESOLUTION: Duration = Duration::minutes(1);

/// What the session logic reads of a stored session.
pub trait StoredSession {
    fn token_hash(&self) -> &str;
    fn last_seen_at(&self) -> NaiveDateTime;
    fn expires_at(&self) -> NaiveDateTime;
}

/// Where one kind of session is kept.
pub trait SessionStore {
    /// Whose session it is (a user, a developer).
    type Owner: Copy;
    type Record: StoredSession;
    /// The token's prefix (`tds_`, `tvs_`): a token of another kind is
    /// refused before any lookup.
    const PREFIX: &'static str;

    fn insert(
        conn: &mut AnyConnection,
        token_hash: &str,
        owner: Self::Owner,
        expires_at: NaiveDateTime,
        now: NaiveDateTime,
    ) -> Result<(), StorageError>;
    fn find(
        conn: &mut AnyConnection,
        token_hash: &str,
    ) -> Result<Option<Self::Record>, StorageError>;
    fn touch(
        conn: &mut AnyConnection,
        session: &Self::Record,
        now: NaiveDateTime,
    ) -> Result<(), StorageError>;
    fn delete(conn: &mut AnyConnection, session: &Self::Record) -> Result<(), StorageError>;
    /// Deletes the sessions past their absolute expiry.
    fn purge(conn: &mut AnyConnection, now: NaiveDateTime) -> Result<(), StorageError>;
}

/// `$name`: the sessions kept by the storage module `$store` (whose
/// `insert_session`, `find_session`, `touch_session`, `delete_session` and
/// `purge_expired` all dashboards' session tables share), records `$record`
/// owned by `$owner`, tokens starting with `$prefix`.
macro_rules! sessions_in {
    ($name:ident, $store:ident, $record:ty, $owner:ty, $prefix:expr) => {
        #[doc = concat!("Where `", stringify!($store), "` keeps its sessions (see `signed_in`).")]
        #[derive(Debug)]
        pub struct $name;

        impl $crate::signed_in::StoredSession for $record {
            fn token_hash(&self) -> &str {
                &self.token_hash
            }
            fn last_seen_at(&self) -> chrono::NaiveDateTime {
                self.last_seen_at
            }
            fn expires_at(&self) -> chrono::NaiveDateTime {
                self.expires_at
            }
        }

        impl $crate::signed_in::SessionStore for $name {
            type Owner = $owner;
            type Record = $record;
            const PREFIX: &'static str = $prefix;

            fn insert(
                conn: &mut tributary_storage::AnyConnection,
                token_hash: &str,
                owner: $owner,
                expires_at: chrono::NaiveDateTime,
                now: chrono::NaiveDateTime,
            ) -> Result<(), tributary_storage::StorageError> {
                $store::insert_session(conn, token_hash, owner, expires_at, now)
            }
            fn find(
                conn: &mut tributary_storage::AnyConnection,
                token_hash: &str,
            ) -> Result<Option<$record>, tributary_storage::StorageError> {
                $store::find_session(conn, token_hash)
            }
            fn touch(
                conn: &mut tributary_storage::AnyConnection,
                session: &$record,
                now: chrono::NaiveDateTime,
            ) -> Result<(), tributary_storage::StorageError> {
                $store::touch_session(conn, session.id, now)
            }
            fn delete(
                conn: &mut tributary_storage::AnyConnection,
                session: &$record,
            ) -> Result<(), tributary_storage::StorageError> {
                $store::delete_session(conn, session.id)
            }
            fn purge(
                conn: &mut tributary_storage::AnyConnection,
                now: chrono::NaiveDateTime,
            ) -> Result<(), tributary_storage::StorageError> {
                $store::purge_expired(conn, now)
            }
        }
    };
}
pub(crate) use sessions_in;

/// Opens a session for `owner`; its token, for the cookie.
pub fn start<S: SessionStore>(
    conn: &mut AnyConnection,
    owner: S::Owner,
    now: NaiveDateTime,
) -> Result<String, StorageError> {
    S::purge(conn, now)?;
    let token = secret::generate(S::PREFIX);
    S::insert(
        conn,
        &secret::hash(&token),
        owner,
        now + SESSION_LIFETIME,
        now,
    )?;
    Ok(token)
}

/// The live session `token` names, its use recorded; an idle or expired
/// one is deleted and reads as none.
pub fn find<S: SessionStore>(
    conn: &mut AnyConnection,
    token: &str,
    now: NaiveDateTime,
) -> Result<Option<S::Record>, StorageError> {
    if !secret::is_well_formed(token, S::PREFIX) {
        return Ok(None);
    }
    // Found by its hash, then compared in constant time.
    let Some(session) = S::find(conn, &secret::hash(token))?
        .filter(|s| secret::matches_hash(token, s.token_hash()))
    else {
        return Ok(None);
    };
    if now >= session.expires_at() || now - session.last_seen_at() >= SESSION_IDLE {
        S::delete(conn, &session)?;
        return Ok(None);
    }
    if now - session.last_seen_at() >= LAST_SEEN_RESOLUTION {
        S::touch(conn, &session, now)?;
    }
    Ok(Some(session))
}

/// Ends the session `token` names (signing out); none is no error.
pub fn end<S: SessionStore>(conn: &mut AnyConnection, token: &str) -> Result<(), StorageError> {
    if let Some(session) = S::find(conn, &secret::hash(token))? {
        S::delete(conn, &session)?;
    }
    Ok(())
}

/// What the e-mailed codes a signed-out browser asks for are bound to: the
/// hash of the token in its sign-in cookie (which starts with `prefix`);
/// `None` for a token that is not one of ours.
pub fn code_binding(browser_token: &str, prefix: &str) -> Option<CodeBinding> {
    secret::is_well_formed(browser_token, prefix)
        .then(|| CodeBinding::Browser(secret::hash(browser_token)))
}
