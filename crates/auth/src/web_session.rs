//! Sessions of the browser pages (the authorization flow and the portal):
//! a random token in an HttpOnly cookie, stored only as its SHA-256, and the
//! CSRF token every form carries, derived from the session token so that
//! only a page this session loaded can know it.

use crate::secret;
use chrono::{Duration, NaiveDateTime};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tributary_domain::ids::{AppId, UserId};
use tributary_domain::model::{PkceMethod, WebSessionPurpose};
use tributary_storage::sign_in_codes;
use tributary_storage::web_sessions::{self as web, NewWebSession, WebSessionRecord};
use tributary_storage::{AnyConnection, StorageError};

pub const WEB_SESSION_PREFIX: &str = "tws_";
/// Long enough to sign in, pay and wait for a first sync; short enough that
/// a forgotten tab does not stay signed in.
pub const WEB_SESSION_TTL: Duration = Duration::hours(1);

/// Authorization sessions one IP address may start per hour: far more
/// than people behind one address sign in, few enough that nobody fills
/// the table.
pub const MAX_STARTS_PER_IP: i64 = 300;

/// What an authorization request asked for, kept until consent.
#[derive(Debug, Clone, Default)]
pub struct AuthorizationRequest<'a> {
    pub redirect_uri: &'a str,
    pub state: Option<&'a str>,
    /// Already checked (`oauth::check_pkce`).
    pub code_challenge: Option<(&'a str, PkceMethod)>,
    pub login_hint: Option<&'a str>,
    /// The browser's IP address.
    pub ip: &'a str,
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("Too many sign-ins were started from your network in the last hour. Try again later.")]
    RateLimited,
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// Sign-in codes, with the address and IP they name, are kept this long:
/// past the send-limit window, then purged.
pub const SIGN_IN_CODE_RETENTION: Duration = Duration::days(1);

/// Starts a session of the authorization flow; returns the cookie token.
/// Ended sessions and old sign-in codes are purged on the way.
pub fn start_authorization(
    conn: &mut AnyConnection,
    app_id: AppId,
    request: &AuthorizationRequest<'_>,
    now: NaiveDateTime,
) -> Result<String, StartError> {
    web::purge_expired(conn, now)?;
    sign_in_codes::purge_created_before(conn, now - SIGN_IN_CODE_RETENTION)?;
    if web::sessions_started_since(conn, request.ip, now - Duration::hours(1))? >= MAX_STARTS_PER_IP
    {
        return Err(StartError::RateLimited);
    }
    let token = secret::generate(WEB_SESSION_PREFIX);
    web::insert_session(
        conn,
        &NewWebSession {
            token_hash: &secret::hash(&token),
            purpose: WebSessionPurpose::Authorize,
            app_id,
            user_id: None,
            redirect_uri: Some(request.redirect_uri),
            client_state: request.state,
            code_challenge: request.code_challenge.map(|(c, _)| c),
            code_challenge_method: request.code_challenge.map(|(_, m)| m),
            login_hint: request.login_hint,
            ip: Some(request.ip),
            expires_at: now + WEB_SESSION_TTL,
            now,
        },
    )?;
    Ok(token)
}

/// Starts a portal session for a user who opened a portal link.
pub fn start_portal(
    conn: &mut AnyConnection,
    app_id: AppId,
    user_id: UserId,
    now: NaiveDateTime,
) -> Result<String, StorageError> {
    let token = secret::generate(WEB_SESSION_PREFIX);
    web::insert_session(
        conn,
        &NewWebSession {
            token_hash: &secret::hash(&token),
            purpose: WebSessionPurpose::Portal,
            app_id,
            user_id: Some(user_id),
            redirect_uri: None,
            client_state: None,
            code_challenge: None,
            code_challenge_method: None,
            login_hint: None,
            ip: None,
            expires_at: now + WEB_SESSION_TTL,
            now,
        },
    )?;
    Ok(token)
}

/// The live session behind a cookie token, if any.
pub fn find(
    conn: &mut AnyConnection,
    token: &str,
    now: NaiveDateTime,
) -> Result<Option<WebSessionRecord>, StorageError> {
    if !secret::is_well_formed(token, WEB_SESSION_PREFIX) {
        return Ok(None);
    }
    Ok(web::find_session(conn, &secret::hash(token))?
        .filter(|s| secret::matches_hash(token, &s.token_hash) && now < s.expires_at))
}

/// The CSRF token of the session whose cookie holds `session_token`.
pub fn csrf_token(session_token: &str) -> String {
    hex::encode(Sha256::digest(format!("csrf\0{session_token}").as_bytes()))
}

/// Whether a form's CSRF token belongs to this session (constant time).
pub fn csrf_matches(session_token: &str, presented: &str) -> bool {
    csrf_token(session_token)
        .as_bytes()
        .ct_eq(presented.as_bytes())
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csrf_tokens_belong_to_one_session() {
        let a = secret::generate(WEB_SESSION_PREFIX);
        let b = secret::generate(WEB_SESSION_PREFIX);
        assert!(csrf_matches(&a, &csrf_token(&a)));
        assert!(!csrf_matches(&a, &csrf_token(&b)));
        assert!(!csrf_matches(&a, ""));
        assert!(!csrf_token(&a).contains(&a[4..]));
    }
}
