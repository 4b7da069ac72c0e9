//! Sign-in by a one-time code sent by e-mail: 6 digits, valid 10 minutes, at
//! most 5 attempts, a new code voiding the previous one. Codes are stored
//! only as a SHA-256 bound to the browser session they were sent to, so a
//! code works only there.
//!
//! Sends are limited per surface (the Platform's authorization pages, the
//! Personal dashboard, the developer dashboard) and per requesting IP
//! address: an address gets at most [`MAX_SENDS_PER_ADDRESS`] codes an hour
//! asked for from one IP, and one IP may ask for [`MAX_SENDS_PER_IP`]. So
//! a stranger spends only their own budgets, never the person's on another
//! network or on another surface. A surface that mails only some addresses
//! (the dashboards) still counts every request, and answers alike: the
//! limits do not tell who has an account (docs/platform.md, "Sign-in
//! codes").

use crate::secret;
use chrono::{Duration, NaiveDateTime};
use rand::RngExt as _;
use subtle::ConstantTimeEq;
use tributary_storage::sign_in_codes::{
    self as codes, CodeBinding, NewSignInCode, SendsCounted, SignInSurface,
};
use tributary_storage::{AnyConnection, StorageError};

pub const CODE_TTL: Duration = Duration::minutes(10);
pub const MAX_ATTEMPTS: i32 = 5;
/// The window the send limits count over.
pub const SEND_WINDOW: Duration = Duration::hours(1);
/// Codes one address may be sent per window and surface from one IP:
/// enough for typos and a lost mail, too few to flood an inbox from there.
pub const MAX_SENDS_PER_ADDRESS: i64 = 5;
/// Codes one IP may ask for per window and surface, for any addresses (an
/// office shares one address).
pub const MAX_SENDS_PER_IP: i64 = 30;

#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    #[error(
        "Too many codes were sent to this address in the last hour. Wait a while, then ask for a new one."
    )]
    AddressRateLimited,
    #[error("Too many sign-in codes were requested from your network. Wait a while and try again.")]
    IpRateLimited,
    #[error("No code was sent yet: enter your e-mail address first.")]
    NoCode,
    #[error("This code has expired. Ask for a new one.")]
    Expired,
    #[error("Too many wrong attempts. Ask for a new code.")]
    TooManyAttempts,
    #[error("That code is not right. {remaining} attempt(s) left.")]
    Wrong { remaining: i32 },
    #[error(transparent)]
    Storage(#[from] StorageError),
}

fn code_hash(binding: &CodeBinding, code: &str) -> String {
    match binding {
        CodeBinding::WebSession(id) => secret::hash(&format!("sign-in\0{id}\0{code}")),
        CodeBinding::Browser(hash) => secret::hash(&format!("sign-in\0browser:{hash}\0{code}")),
    }
}

/// A new code for `email`, asked for through `surface` from `ip` and bound
/// to where it was asked for, when the send limits allow; returns the code
/// to mail. The caller decides whether to mail it: the request counts
/// either way.
pub fn issue(
    conn: &mut AnyConnection,
    surface: SignInSurface,
    binding: &CodeBinding,
    email: &str,
    ip: &str,
    now: NaiveDateTime,
) -> Result<String, SignInError> {
    let SendsCounted {
        to_address_from_ip,
        from_ip,
    } = codes::sign_in_codes_sent_since(conn, surface, email, ip, now - SEND_WINDOW)?;
    if to_address_from_ip >= MAX_SENDS_PER_ADDRESS {
        return Err(SignInError::AddressRateLimited);
    }
    if from_ip >= MAX_SENDS_PER_IP {
        return Err(SignInError::IpRateLimited);
    }
    let code = format!("{:06}", rand::rng().random_range(0..1_000_000u32));
    codes::insert_sign_in_code(
        conn,
        &NewSignInCode {
            surface,
            binding,
            email,
            ip,
            code_hash: &code_hash(binding, &code),
            expires_at: now + CODE_TTL,
            now,
        },
    )?;
    Ok(code)
}

/// Checks a code typed where it was asked for; returns the address it was
/// sent to. Every check counts as an attempt, right or wrong.
pub fn verify(
    conn: &mut AnyConnection,
    binding: &CodeBinding,
    typed: &str,
    now: NaiveDateTime,
) -> Result<String, SignInError> {
    let record = codes::latest_sign_in_code(conn, binding)?.ok_or(SignInError::NoCode)?;
    if record.used_at.is_some() || now >= record.expires_at {
        return Err(SignInError::Expired);
    }
    if !codes::count_sign_in_attempt(conn, record.id, MAX_ATTEMPTS)? {
        return Err(SignInError::TooManyAttempts);
    }
    let typed: String = typed.chars().filter(|c| !c.is_whitespace()).collect();
    let expected = code_hash(binding, &typed);
    if !bool::from(expected.as_bytes().ct_eq(record.code_hash.as_bytes())) {
        let remaining = MAX_ATTEMPTS - (record.attempts + 1);
        return Err(if remaining <= 0 {
            SignInError::TooManyAttempts
        } else {
            SignInError::Wrong { remaining }
        });
    }
    if !codes::mark_sign_in_code_used(conn, record.id, now)? {
        return Err(SignInError::Expired);
    }
    Ok(record.email)
}

#[cfg(test)]
mod tests {
    use super::*;

    use tributary_domain::ids::WebSessionId;

    #[test]
    fn codes_are_bound_to_their_session_or_browser() {
        let session = |id| CodeBinding::WebSession(WebSessionId::new(id));
        let browser = |hash: &str| CodeBinding::Browser(hash.to_owned());
        assert_ne!(
            code_hash(&session(1), "123456"),
            code_hash(&session(2), "123456")
        );
        assert_eq!(
            code_hash(&session(1), "123456"),
            code_hash(&session(1), "123456")
        );
        assert_ne!(
            code_hash(&browser("a"), "123456"),
            code_hash(&browser("b"), "123456")
        );
        assert_ne!(
            code_hash(&browser("1"), "123456"),
            code_hash(&session(1), "123456")
        );
        assert!(!code_hash(&session(1), "123456").contains("123456"));
    }
}
