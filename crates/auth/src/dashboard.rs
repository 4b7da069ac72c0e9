//! Signing in to the Personal dashboard: one-time sign-in links (printed on
//! a fresh database's first start and by `tributary users login-link`) or
//! a code e-mailed to a signed-out browser, and the browser sessions they
//! open. Forms carry the CSRF token [`crate::web_session::csrf_token`]
//! derives from the session token (before sign-in: the browser token).

use crate::sign_in::{self, SignInError};
use crate::{secret, signed_in};
use chrono::{Duration, NaiveDateTime};
use tributary_domain::ids::UserId;
use tributary_storage::dashboard::{self as store, DashboardSessionRecord};
use tributary_storage::sign_in_codes::{CodeBinding, SignInSurface};
use tributary_storage::{AnyConnection, StorageError, users};

pub const LOGIN_LINK_PREFIX: &str = "tdl_";
pub const SESSION_PREFIX: &str = "tds_";
/// A signed-out browser's token, in its sign-in cookie.
pub const BROWSER_PREFIX: &str = "tdb_";
/// How long a signed-out browser keeps its token: time to ask for a code,
/// find the mail and type it (a code lives 10 minutes).
pub const BROWSER_TOKEN_TTL: Duration = Duration::minutes(30);
/// Long enough to open the mail or the terminal and click; short enough
/// that a link found later in a scrollback opens nothing.
pub const LOGIN_LINK_TTL: Duration = Duration::minutes(15);
pub use crate::signed_in::{SESSION_IDLE, SESSION_LIFETIME};

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

// Where the Personal dashboard's sessions are kept.
signed_in::sessions_in!(
    DashboardSessions,
    store,
    DashboardSessionRecord,
    UserId,
    SESSION_PREFIX
);

/// Opens a dashboard session for `user_id`; its token, for the cookie.
pub fn start_session(
    conn: &mut AnyConnection,
    user_id: UserId,
    now: NaiveDateTime,
) -> Result<String, StorageError> {
    signed_in::start::<DashboardSessions>(conn, user_id, now)
}

/// The live session `token` names (see [`signed_in::find`]).
pub fn find_session(
    conn: &mut AnyConnection,
    token: &str,
    now: NaiveDateTime,
) -> Result<Option<DashboardSessionRecord>, StorageError> {
    signed_in::find::<DashboardSessions>(conn, token, now)
}

pub fn new_browser_token() -> String {
    secret::generate(BROWSER_PREFIX)
}

fn browser_binding(browser_token: &str) -> Option<CodeBinding> {
    signed_in::code_binding(browser_token, BROWSER_PREFIX)
}

/// A sign-in code for the dashboard user `email` (already normalised),
/// bound to this browser, within the send limits; `None` when no Personal
/// user has that address. The request counts against the limits either
/// way (a code nobody is sent is stored, and opens nothing), and the caller
/// answers both cases alike, so neither the form nor its limits tell who
/// has an account here.
pub fn issue_code(
    conn: &mut AnyConnection,
    browser_token: &str,
    email: &str,
    ip: &str,
    now: NaiveDateTime,
) -> Result<Option<String>, SignInError> {
    let binding = browser_binding(browser_token).ok_or(SignInError::NoCode)?;
    let code = sign_in::issue(conn, SignInSurface::Dashboard, &binding, email, ip, now)?;
    Ok(users::find_personal_user(conn, email)?.map(|_| code))
}

/// Checks a code typed in this browser (every check counts as an
/// attempt); the user it signs in.
pub fn verify_code(
    conn: &mut AnyConnection,
    browser_token: &str,
    typed: &str,
    now: NaiveDateTime,
) -> Result<UserId, SignInError> {
    let binding = browser_binding(browser_token).ok_or(SignInError::NoCode)?;
    let email = sign_in::verify(conn, &binding, typed, now)?;
    // The user was there when the code was sent; erased since, the code
    // signs nobody in.
    users::find_personal_user(conn, &email)?
        .map(|user| user.id)
        .ok_or(SignInError::NoCode)
}

/// Signs out.
pub fn end_session(conn: &mut AnyConnection, token: &str) -> Result<(), StorageError> {
    signed_in::end::<DashboardSessions>(conn, token)
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

    #[test]
    fn a_code_signs_in_its_user_only_in_the_browser_that_asked_for_it() {
        testing::on_every_backend(|db| {
            let conn = &mut *db.conn().unwrap();
            let user = users::create_personal_user(conn, "code@example.com", at(0))
                .unwrap()
                .id;
            let (asked, other) = (new_browser_token(), new_browser_token());
            let code = issue_code(conn, &asked, "code@example.com", "10.0.0.1", at(0))
                .unwrap()
                .expect("a code for a user");
            assert!(
                issue_code(
                    conn,
                    &new_browser_token(),
                    "nobody@example.com",
                    "10.0.0.1",
                    at(0)
                )
                .unwrap()
                .is_none(),
                "no code for an address without a user"
            );
            assert!(matches!(
                verify_code(conn, &other, &code, at(1)),
                Err(SignInError::NoCode)
            ));
            assert!(matches!(
                verify_code(conn, "tdb_made-up", &code, at(1)),
                Err(SignInError::NoCode)
            ));
            assert_eq!(verify_code(conn, &asked, &code, at(1)).unwrap(), user);
            assert!(
                verify_code(conn, &asked, &code, at(2)).is_err(),
                "a code works once"
            );
            assert!(
                !testing::dump(db).contains(&asked[4..]),
                "only its hash is kept"
            );
        });
    }
}
