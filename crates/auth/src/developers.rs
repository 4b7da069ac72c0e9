//! Signing in to the developer dashboard (`/developers` on platform-api):
//! a code e-mailed to a signed-out browser, bound to the token in that
//! browser's cookie, then a session ([`crate::signed_in`]). Who may sign up
//! is the operator's choice ([`Signup`]): when closed, only the addresses
//! added with `tributary developers add` get a code, and an unknown address
//! gets the same answer and no mail.

use crate::sign_in::{self, SignInError};
use crate::{secret, signed_in};
use chrono::NaiveDateTime;
use tributary_domain::ids::DeveloperId;
use tributary_storage::AnyConnection;
use tributary_storage::developers::{self as store, DeveloperSessionRecord};
use tributary_storage::sign_in_codes::SignInSurface;

pub const SESSION_PREFIX: &str = "tvs_";
/// A signed-out browser's token, in its sign-in cookie.
pub const BROWSER_PREFIX: &str = "tvb_";

/// Who may become a developer (`TRIBUTARY_DEVELOPER_SIGNUP`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signup {
    /// Anyone with an e-mail address that receives the code.
    Open,
    /// Only the addresses the operator added.
    Closed,
}

// Where the developer dashboard's sessions are kept.
signed_in::sessions_in!(
    DeveloperSessions,
    store,
    DeveloperSessionRecord,
    DeveloperId,
    SESSION_PREFIX
);

pub fn new_browser_token() -> String {
    secret::generate(BROWSER_PREFIX)
}

/// A code to mail to `email` (normalized) for the browser holding
/// `browser_token`; `None` (and no mail) when sign-up is closed and the
/// address is not a developer's. The request counts against the send
/// limits either way, so they do not tell who is a developer.
pub fn issue_code(
    conn: &mut AnyConnection,
    browser_token: &str,
    email: &str,
    ip: &str,
    signup: Signup,
    now: NaiveDateTime,
) -> Result<Option<String>, SignInError> {
    let binding =
        signed_in::code_binding(browser_token, BROWSER_PREFIX).ok_or(SignInError::NoCode)?;
    let code = sign_in::issue(conn, SignInSurface::Developers, &binding, email, ip, now)?;
    let may_sign_in = signup == Signup::Open || store::find_by_email(conn, email)?.is_some();
    Ok(may_sign_in.then_some(code))
}

/// Checks a typed code for the browser holding `browser_token`; the
/// developer it signs in, made now when sign-up is open and the address is
/// new.
pub fn verify_code(
    conn: &mut AnyConnection,
    browser_token: &str,
    typed: &str,
    signup: Signup,
    now: NaiveDateTime,
) -> Result<DeveloperId, SignInError> {
    let binding =
        signed_in::code_binding(browser_token, BROWSER_PREFIX).ok_or(SignInError::NoCode)?;
    let email = sign_in::verify(conn, &binding, typed, now)?;
    let developer = match (store::find_by_email(conn, &email)?, signup) {
        (Some(developer), _) => developer,
        (None, Signup::Open) => store::add(conn, &email, now)?.0,
        // Closed since the code was sent: the address is no one's.
        (None, Signup::Closed) => return Err(SignInError::NoCode),
    };
    store::record_sign_in(conn, developer.id, now)?;
    Ok(developer.id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;
    use tributary_storage::testing;

    fn at(minutes: i64) -> NaiveDateTime {
        chrono::DateTime::parse_from_rfc3339("2026-11-24T10:00:00Z")
            .unwrap()
            .naive_utc()
            + Duration::minutes(minutes)
    }

    #[test]
    fn closed_sign_up_mails_only_added_developers_and_open_sign_up_adds_them() {
        testing::on_every_backend(|db| {
            let conn = &mut *db.conn().unwrap();
            let browser = new_browser_token();
            assert!(
                issue_code(
                    conn,
                    &browser,
                    "new@example.com",
                    "10.0.0.1",
                    Signup::Closed,
                    at(0)
                )
                .unwrap()
                .is_none(),
                "closed: no code for an address no one added"
            );
            let (added, _) = store::add(conn, "added@example.com", at(0)).unwrap();
            let code = issue_code(
                conn,
                &browser,
                "added@example.com",
                "10.0.0.1",
                Signup::Closed,
                at(0),
            )
            .unwrap()
            .expect("a code for an added developer");
            // Only in the browser that asked.
            assert!(matches!(
                verify_code(conn, &new_browser_token(), &code, Signup::Closed, at(1)),
                Err(SignInError::NoCode)
            ));
            assert_eq!(
                verify_code(conn, &browser, &code, Signup::Closed, at(1)).unwrap(),
                added.id
            );
            assert!(
                store::get(conn, added.id)
                    .unwrap()
                    .last_signed_in_at
                    .is_some()
            );

            let open = new_browser_token();
            let code = issue_code(
                conn,
                &open,
                "new@example.com",
                "10.0.0.1",
                Signup::Open,
                at(2),
            )
            .unwrap()
            .expect("open: a code for anyone");
            let made = verify_code(conn, &open, &code, Signup::Open, at(3)).unwrap();
            assert_eq!(store::get(conn, made).unwrap().email, "new@example.com");
            assert!(
                !testing::dump(db).contains(&code),
                "codes are stored hashed"
            );
        });
    }

    #[test]
    fn developer_sessions_end_when_idle_or_old_and_on_sign_out() {
        testing::on_every_backend(|db| {
            let conn = &mut *db.conn().unwrap();
            let (ada, _) = store::add(conn, "ada@example.com", at(0)).unwrap();
            let token = signed_in::start::<DeveloperSessions>(conn, ada.id, at(0)).unwrap();
            assert!(token.starts_with(SESSION_PREFIX));
            assert!(!testing::dump(db).contains(&token[4..]), "stored hashed");
            assert_eq!(
                signed_in::find::<DeveloperSessions>(conn, &token, at(29))
                    .unwrap()
                    .map(|s| s.developer_id),
                Some(ada.id)
            );
            assert!(
                signed_in::find::<DeveloperSessions>(conn, &token, at(29 + 30))
                    .unwrap()
                    .is_none(),
                "idle"
            );
            let busy = signed_in::start::<DeveloperSessions>(conn, ada.id, at(0)).unwrap();
            for minute in (20..720).step_by(20) {
                assert!(
                    signed_in::find::<DeveloperSessions>(conn, &busy, at(minute))
                        .unwrap()
                        .is_some()
                );
            }
            assert!(
                signed_in::find::<DeveloperSessions>(conn, &busy, at(720))
                    .unwrap()
                    .is_none(),
                "old"
            );
            // A dashboard token is not a developer token.
            let dashboard = crate::secret::generate(crate::dashboard::SESSION_PREFIX);
            assert!(
                signed_in::find::<DeveloperSessions>(conn, &dashboard, at(1))
                    .unwrap()
                    .is_none()
            );
            let ended = signed_in::start::<DeveloperSessions>(conn, ada.id, at(0)).unwrap();
            signed_in::end::<DeveloperSessions>(conn, &ended).unwrap();
            assert!(
                signed_in::find::<DeveloperSessions>(conn, &ended, at(1))
                    .unwrap()
                    .is_none()
            );
        });
    }
}
