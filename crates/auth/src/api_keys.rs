//! API keys of the Personal interface: `trb_` + 256 random bits. Only the
//! SHA-256 is stored; a presented key is found by its hash (a unique index)
//! and the stored hash is then compared in constant time.

use crate::secret;
use chrono::{DateTime, Duration, Utc};
use tributary_domain::access::Viewer;
use tributary_domain::ids::{AccountId, UserId};
use tributary_storage::api_keys::{self as store, ApiKeyRecord, NewApiKey};
use tributary_storage::{AnyConnection, StorageError};

pub const API_KEY_PREFIX: &str = "trb_";

/// `last_used_at` is written at most this often per key, so a busy client
/// does not turn every read into a write.
pub const LAST_USED_RESOLUTION: Duration = Duration::seconds(60);

#[derive(Debug, thiserror::Error)]
pub enum ApiKeyError {
    #[error("The API key is malformed: it should be `trb_` followed by 43 base64url characters.")]
    Malformed,
    #[error("the API key is not valid")]
    Unknown,
    #[error("the API key was revoked")]
    Revoked,
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// A key as issued: the plain text is shown to its owner once and then only
/// its hash exists.
#[derive(Debug)]
pub struct IssuedApiKey {
    pub record: ApiKeyRecord,
    pub plain_text: String,
}

pub fn issue(
    conn: &mut AnyConnection,
    user_id: UserId,
    name: &str,
    account_scope: Option<&[AccountId]>,
    now: DateTime<Utc>,
) -> Result<IssuedApiKey, ApiKeyError> {
    let plain_text = secret::generate(API_KEY_PREFIX);
    let key_hash = secret::hash(&plain_text);
    let record = store::insert_api_key(
        conn,
        &NewApiKey {
            user_id,
            name,
            key_hash: &key_hash,
            account_scope,
            now: now.naive_utc(),
        },
    )?;
    Ok(IssuedApiKey { record, plain_text })
}

/// Who a presented key belongs to and what it may see.
pub fn authenticate(
    conn: &mut AnyConnection,
    presented: &str,
    now: DateTime<Utc>,
) -> Result<(ApiKeyRecord, Viewer), ApiKeyError> {
    if !secret::is_well_formed(presented, API_KEY_PREFIX) {
        return Err(ApiKeyError::Malformed);
    }
    let (record, scope) =
        store::find_by_hash(conn, &secret::hash(presented))?.ok_or(ApiKeyError::Unknown)?;
    // The lookup went by hash; compare the stored hash in constant time too,
    // so no check on the way depends on how much of a guess was right.
    if !secret::matches_hash(presented, &record.key_hash) {
        return Err(ApiKeyError::Unknown);
    }
    if record.revoked_at.is_some() {
        return Err(ApiKeyError::Revoked);
    }
    let now_naive = now.naive_utc();
    if record
        .last_used_at
        .is_none_or(|last| now_naive - last >= LAST_USED_RESOLUTION)
    {
        // Bookkeeping: a failure (a full disk) must not turn reads away.
        if let Err(err) = store::touch_last_used(conn, record.id, now_naive) {
            log::warn!("API key {}: last use not recorded: {err}", record.id);
        }
    }
    let viewer = Viewer {
        user_id: record.user_id,
        account_scope: scope,
    };
    Ok((record, viewer))
}
