//! Signing in to the Personal dashboard: one-time sign-in links (printed on
//! a fresh database's first start and by `tributary users login-link`) and
//! the browser sessions they open. Forms carry the CSRF token
//! [`crate::web_session::csrf_token`] derives from the session token.

use crate::secret;
use chrono::{Duration, NaiveDateTime};
use tributary_domain::ids::UserId;
use tributary_storage::dashboard::{self as store, DashboardSessionRecord};
use tributary_storage::{AnyConnection, StorageError};

pub const LOGIN_LINK_PREFIX: &str = "tdl_";
pub const SESSION_PREFIX: &str = "tds_";
/// Long enough to open the mail or the terminal and click; short enough
/// that a link found later in a scrollback opens nothing.
pub const LOGIN_LINK_TTL: Duration = Duration::minutes(15);
/// A session unused this long ends (a tab left open on a shared computer).
pub const SESSION_IDLE: Duration = Duration::minutes(30);
/// A session ends this long after sign-in, however busy.
pub const SESSION_LIFETIME: Duration = Duration::hours(12);
/// `last_seen_at` is written at most this often: a page load is a read.
const LAST_SEEN_RESOLUTION: Duration = Duration::minutes(1);

/// A new sign-in link token for `user_id`; `{base}/sign-in/link/{token}`
/// is the link.
pub fn issue_login_link(
    conn: &mut AnyConnection,
    user_id: UserId,
    now: NaiveDateTime,
) -> Result<String, StorageError> {
    let token = secret::generate(LOGIN_LINK_PREFIX);
    store::insert_login_link(
        conn,
        &secret::hash(&token),
        user_id,
        now + LOGIN_LINK_TTL,
        now,
    )?;
    Ok(token)
}

/// Uses a sign-in link: its user when it is unused and unexpired (it is
/// then used up), else `None`.
pub fn use_login_link(
    conn: &mut AnyConnection,
    token: &str,
    now: NaiveDateTime,
) -> Result<Option<UserId>, StorageError> {
    if !secret::is_well_formed(token, LOGIN_LINK_PREFIX) {
        return Ok(None);
    }
    store::use_login_link(conn, &secret::hash(token), now)
}

/// Opens a session for `user_id`; returns the cookie token. Ended sessions
/// and links are purged on the way.
pub fn start_session(
    conn: &mut AnyConnection,
    user_id: UserId,
    now: NaiveDateTime,
) -> Result<String, StorageError> {
    store::purge_expired(conn, now)?;
    let token = secret::generate(SESSION_PREFIX);
    store::insert_session(
        conn,
        &secret::hash(&token),
        user_id,
        now + SESSION_LIFETIME,
        now,
    )?;
    Ok(token)
}

/// The live session behind a cookie token: neither idle too long nor past
/// its absolute expiry. Its last use is recorded.
pub fn find_session(
    conn: &mut AnyConnection,
    token: &str,
    now: NaiveDateTime,
) -> Result<Option<DashboardSessionRecord>, StorageError> {
    if !secret::is_well_formed(token, SESSION_PREFIX) {
        return Ok(None);
    }
    let Some(session) = store::find_session(conn, &secret::hash(token))?
        .filter(|s| secret::matches_hash(token, &s.token_hash))
    else {
        return Ok(None);
    };
    if now >= session.expires_at || now - session.last_seen_at >= SESSION_IDLE {
        store::delete_session(conn, session.id)?;
        return Ok(None);
    }
    if now - session.last_seen_at >= LAST_SEEN_RESOLUTION {
        store::touch_session(conn, session.id, now)?;
    }
    Ok(Some(session))
}

/// Ends the session behind a cookie token (signing out).
pub fn end_session(conn: &mut AnyConnection, token: &str) -> Result<(), StorageError> {
    if let Some(session) = store::find_session(conn, &secret::hash(token))? {
        store::delete_session(conn, session.id)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tributary_storage::{Database, testing, users};

    fn at(minutes: i64) -> NaiveDateTime {
        chrono::DateTime::parse_from_rfc3339("2026-11-24T10:00:00Z")
            .unwrap()
            .naive_utc()
            + Duration::minutes(minutes)
    }

    fn check(db: &Database) {
        let conn = &mut *db.conn().unwrap();
        let user = users::create_personal_user(conn, "dash@example.com", at(0))
            .unwrap()
            .id;
        // A link works once, and not after 15 minutes.
        let link = issue_login_link(conn, user, at(0)).unwrap();
        assert_eq!(use_login_link(conn, &link, at(1)).unwrap(), Some(user));
        assert_eq!(use_login_link(conn, &link, at(2)).unwrap(), None);
        let late = issue_login_link(conn, user, at(0)).unwrap();
        assert_eq!(use_login_link(conn, &late, at(15)).unwrap(), None);
        assert_eq!(use_login_link(conn, "tdl_made-up", at(1)).unwrap(), None);
        assert!(!testing::dump(db).contains(&link[4..]), "stored hashed");

        // A session lives while used, ends when idle, and ends at 12 hours.
        let token = start_session(conn, user, at(0)).unwrap();
        assert!(find_session(conn, &token, at(29)).unwrap().is_some());
        assert!(find_session(conn, &token, at(58)).unwrap().is_some());
        assert!(find_session(conn, &token, at(58 + 30)).unwrap().is_none());
        assert!(
            find_session(conn, &token, at(58)).unwrap().is_none(),
            "gone"
        );
        let busy = start_session(conn, user, at(0)).unwrap();
        for minute in (20..720).step_by(20) {
            assert!(find_session(conn, &busy, at(minute)).unwrap().is_some());
        }
        assert!(find_session(conn, &busy, at(720)).unwrap().is_none());
        let ended = start_session(conn, user, at(0)).unwrap();
        end_session(conn, &ended).unwrap();
        assert!(find_session(conn, &ended, at(1)).unwrap().is_none());
    }

    #[test]
    fn links_work_once_and_sessions_end_when_idle_or_old() {
        testing::on_every_backend(check);
    }
}
