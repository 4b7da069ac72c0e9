//! The credentials of Tributary's SimpleFIN server (docs/simplefin.md).
//!
//! A destination starts as a *setup token*: the base64 of a claim URL that
//! carries `sfc_` + 256 random bits. Claiming it (once, before it expires)
//! yields the *Access URL*, whose Basic username (`sfu_…`, random, not
//! secret) finds the destination and whose password (`sfp_` + 256 random
//! bits) proves the caller. Only SHA-256 hashes of the claim token and of
//! the password are stored; the password's hash is compared in constant
//! time.

use crate::secret;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use chrono::{DateTime, Duration, Utc};
use tributary_domain::access::Viewer;
use tributary_domain::ids::{AccountId, UserId};
use tributary_storage::simplefin::{
    self as store, AccessCredentials, DestinationRecord, NewDestination,
};
use tributary_storage::{AnyConnection, StorageError};

pub const CLAIM_TOKEN_PREFIX: &str = "sfc_";
pub const ACCESS_PASSWORD_PREFIX: &str = "sfp_";
const ACCESS_USERNAME_PREFIX: &str = "sfu_";

/// How long a setup token may wait to be claimed: enough to paste it into
/// an app, short enough that a token left in a chat log is dead.
pub const SETUP_TOKEN_LIFETIME: Duration = Duration::hours(1);

/// `last_used_at` is written at most this often per destination.
const LAST_USED_RESOLUTION: Duration = Duration::seconds(60);

#[derive(Debug, thiserror::Error)]
pub enum SimpleFinAuthError {
    /// Unknown, already claimed, revoked or expired: a claimant must not
    /// learn which.
    #[error("the setup token is not valid, was already claimed or has expired")]
    ClaimRefused,
    #[error("the access credentials are not valid")]
    Unknown,
    #[error("this access was revoked")]
    Revoked,
    #[error("the server's address cannot carry credentials: {0}")]
    BadAccessRoot(String),
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// A destination as created: the setup token is shown once.
#[derive(Debug)]
pub struct IssuedSetupToken {
    pub record: DestinationRecord,
    pub setup_token: String,
}

/// Creates a destination for `user_id` and its setup token. `claim_root` is
/// where apps reach the claim endpoint, e.g. `https://host/simplefin/claim`.
pub fn create(
    conn: &mut AnyConnection,
    user_id: UserId,
    name: &str,
    account_scope: Option<&[AccountId]>,
    claim_root: &str,
    now: DateTime<Utc>,
) -> Result<IssuedSetupToken, SimpleFinAuthError> {
    let claim_token = secret::generate(CLAIM_TOKEN_PREFIX);
    let record = store::insert_destination(
        conn,
        &NewDestination {
            user_id,
            name,
            claim_hash: &secret::hash(&claim_token),
            claim_expires_at: (now + SETUP_TOKEN_LIFETIME).naive_utc(),
            account_scope,
            now: now.naive_utc(),
        },
    )?;
    let claim_url = format!("{}/{claim_token}", claim_root.trim_end_matches('/'));
    Ok(IssuedSetupToken {
        record,
        setup_token: STANDARD.encode(claim_url),
    })
}

/// Exchanges a claim token for the Access URL: `access_root` (where apps
/// reach the data, e.g. `https://host/simplefin`) with fresh Basic
/// credentials in it. Succeeds once per token.
pub fn claim(
    conn: &mut AnyConnection,
    presented: &str,
    access_root: &str,
    now: DateTime<Utc>,
) -> Result<String, SimpleFinAuthError> {
    if !secret::is_well_formed(presented, CLAIM_TOKEN_PREFIX) {
        return Err(SimpleFinAuthError::ClaimRefused);
    }
    let username = secret::random_id(ACCESS_USERNAME_PREFIX, 16);
    let password = secret::generate(ACCESS_PASSWORD_PREFIX);
    let mut access_url = url::Url::parse(access_root)
        .map_err(|err| SimpleFinAuthError::BadAccessRoot(err.to_string()))?;
    access_url
        .set_username(&username)
        .and_then(|()| access_url.set_password(Some(&password)))
        .map_err(|()| SimpleFinAuthError::BadAccessRoot("it has no host".into()))?;
    store::claim(
        conn,
        &secret::hash(presented),
        &AccessCredentials {
            username: &username,
            password_hash: &secret::hash(&password),
        },
        now.naive_utc(),
    )?
    .ok_or(SimpleFinAuthError::ClaimRefused)?;
    Ok(access_url.into())
}

/// Who the Basic credentials of an Access URL belong to and what they may
/// see.
pub fn authenticate(
    conn: &mut AnyConnection,
    username: &str,
    password: &str,
    now: DateTime<Utc>,
) -> Result<(DestinationRecord, Viewer), SimpleFinAuthError> {
    let found = store::find_by_username(conn, username)?;
    // Hash and compare even when the username is unknown, so the time taken
    // does not tell a known username from an unknown one.
    let stored_hash = found
        .as_ref()
        .and_then(|(record, _)| record.access_hash.clone())
        .unwrap_or_default();
    let password_matches = secret::matches_hash(password, &stored_hash);
    let Some((record, scope)) = found.filter(|_| password_matches) else {
        return Err(SimpleFinAuthError::Unknown);
    };
    if record.revoked_at.is_some() {
        return Err(SimpleFinAuthError::Revoked);
    }
    let now_naive = now.naive_utc();
    if record
        .last_used_at
        .is_none_or(|last| now_naive - last >= LAST_USED_RESOLUTION)
        && let Err(err) = store::touch_last_used(conn, record.id, now_naive)
    {
        // Bookkeeping: a failure (a full disk) must not turn reads away.
        log::warn!(
            "SimpleFIN destination {}: last use not recorded: {err}",
            record.id
        );
    }
    let viewer = Viewer {
        user_id: record.user_id,
        account_scope: scope,
    };
    Ok((record, viewer))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tributary_storage::{Database, testing, users};

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-11-24T10:00:00Z")
            .unwrap()
            .with_timezone(&Utc)
    }

    fn claim_token_of(setup_token: &str) -> String {
        let url = String::from_utf8(STANDARD.decode(setup_token).unwrap()).unwrap();
        url.rsplit('/').next().unwrap().to_owned()
    }

    #[test]
    fn a_setup_token_claims_once_into_credentials_that_authenticate() {
        testing::on_every_backend(|db: &Database| {
            let mut conn = db.conn().unwrap();
            let user = users::create_personal_user(&mut conn, "sf@example.com", now().naive_utc())
                .unwrap()
                .id;
            let issued = create(
                &mut conn,
                user,
                "Actual",
                None,
                "https://money.example/simplefin/claim",
                now(),
            )
            .unwrap();
            let claim_url =
                String::from_utf8(STANDARD.decode(&issued.setup_token).unwrap()).unwrap();
            assert!(claim_url.starts_with("https://money.example/simplefin/claim/sfc_"));
            let token = claim_token_of(&issued.setup_token);

            let access =
                claim(&mut conn, &token, "https://money.example/simplefin", now()).unwrap();
            let url = url::Url::parse(&access).unwrap();
            assert_eq!(url.path(), "/simplefin");
            assert!(url.username().starts_with("sfu_"));
            let password = url.password().unwrap();
            assert!(password.starts_with("sfp_"));

            // Only hashes are stored.
            let stored = &store::list_for_user(&mut conn, user).unwrap()[0].0;
            assert_ne!(stored.access_hash.as_deref(), Some(password));

            let second = claim(&mut conn, &token, "https://money.example/simplefin", now());
            assert!(
                matches!(second, Err(SimpleFinAuthError::ClaimRefused)),
                "{second:?}"
            );

            let (record, viewer) =
                authenticate(&mut conn, url.username(), password, now()).unwrap();
            assert_eq!(record.id, issued.record.id);
            assert_eq!(viewer.user_id, user);
            assert!(matches!(
                authenticate(&mut conn, url.username(), "sfp_wrong", now()),
                Err(SimpleFinAuthError::Unknown)
            ));
            store::revoke(&mut conn, record.id, now().naive_utc()).unwrap();
            assert!(matches!(
                authenticate(&mut conn, url.username(), password, now()),
                Err(SimpleFinAuthError::Revoked)
            ));
        });
    }

    #[test]
    fn an_expired_or_revoked_setup_token_cannot_be_claimed() {
        testing::on_every_backend(|db: &Database| {
            let mut conn = db.conn().unwrap();
            let user = users::create_personal_user(&mut conn, "sf@example.com", now().naive_utc())
                .unwrap()
                .id;
            let root = "http://127.0.0.1:8080/simplefin";
            let expired = create(&mut conn, user, "a", None, root, now()).unwrap();
            let late = now() + SETUP_TOKEN_LIFETIME;
            assert!(matches!(
                claim(&mut conn, &claim_token_of(&expired.setup_token), root, late),
                Err(SimpleFinAuthError::ClaimRefused)
            ));
            let revoked = create(&mut conn, user, "b", None, root, now()).unwrap();
            store::revoke(&mut conn, revoked.record.id, now().naive_utc()).unwrap();
            assert!(matches!(
                claim(
                    &mut conn,
                    &claim_token_of(&revoked.setup_token),
                    root,
                    now()
                ),
                Err(SimpleFinAuthError::ClaimRefused)
            ));
            assert!(matches!(
                claim(&mut conn, "not-a-token", root, now()),
                Err(SimpleFinAuthError::ClaimRefused)
            ));
        });
    }
}
