//! API keys of the Personal interface. Only the SHA-256 of a key is stored;
//! creating, checking and revoking keys is `tributary-auth`'s business.

use crate::StorageResult;
use crate::backend;
use crate::db::AnyConnection;
use crate::error::StorageError;
use crate::schema::{accounts, api_key_accounts, api_keys};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use tributary_domain::ids::{AccountId, ApiKeyId, UserId};

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = api_keys)]
pub struct ApiKeyRecord {
    #[diesel(deserialize_as = i64)]
    pub id: ApiKeyId,
    #[diesel(deserialize_as = i64)]
    pub user_id: UserId,
    pub name: String,
    /// Lower-case hex SHA-256 of the key.
    pub key_hash: String,
    pub is_restricted: bool,
    pub created_at: NaiveDateTime,
    pub last_used_at: Option<NaiveDateTime>,
    pub revoked_at: Option<NaiveDateTime>,
}

#[derive(Debug, Clone)]
pub struct NewApiKey<'a> {
    pub user_id: UserId,
    pub name: &'a str,
    pub key_hash: &'a str,
    /// `Some` restricts the key to these accounts (all must be the user's).
    pub account_scope: Option<&'a [AccountId]>,
    pub now: NaiveDateTime,
}

pub fn insert_api_key(
    conn: &mut AnyConnection,
    key: &NewApiKey<'_>,
) -> StorageResult<ApiKeyRecord> {
    conn.atomically(|conn| {
        if let Some(scope) = key.account_scope {
            ensure_owned_accounts(conn, key.user_id, scope)?;
        }
        let id = diesel::insert_into(api_keys::table)
            .values((
                api_keys::user_id.eq(key.user_id.get()),
                api_keys::name.eq(key.name),
                api_keys::key_hash.eq(key.key_hash),
                api_keys::is_restricted.eq(key.account_scope.is_some()),
                api_keys::created_at.eq(key.now),
            ))
            .returning(api_keys::id)
            .get_result::<i64>(conn)
            .map(ApiKeyId::new)?;
        if let Some(scope) = key.account_scope {
            backend::insert_api_key_scope(conn, id, scope)?;
        }
        Ok(api_keys::table
            .find(id.get())
            .select(ApiKeyRecord::as_select())
            .first(conn)?)
    })
}

/// `InvalidReference` unless every account of a credential's scope is the
/// user's.
pub(crate) fn ensure_owned_accounts(
    conn: &mut AnyConnection,
    user_id: UserId,
    scope: &[AccountId],
) -> StorageResult<()> {
    let owned: Vec<i64> = accounts::table
        .filter(accounts::user_id.eq(user_id.get()))
        .filter(accounts::id.eq_any(scope.iter().map(|id| id.get())))
        .select(accounts::id)
        .load(conn)?;
    match scope.iter().find(|id| !owned.contains(&id.get())) {
        Some(missing) => Err(StorageError::InvalidReference(format!(
            "account {missing} does not exist or does not belong to this user"
        ))),
        None => Ok(()),
    }
}

/// The key with this hash, if any, and its account scope when restricted.
/// The hash column is unique and indexed: one lookup, plus one for the scope
/// of a restricted key.
pub fn find_by_hash(
    conn: &mut AnyConnection,
    key_hash: &str,
) -> StorageResult<Option<(ApiKeyRecord, Option<Vec<AccountId>>)>> {
    let Some(record) = api_keys::table
        .filter(api_keys::key_hash.eq(key_hash))
        .select(ApiKeyRecord::as_select())
        .first(conn)
        .optional()?
    else {
        return Ok(None);
    };
    let scope = if record.is_restricted {
        Some(scope_of(conn, record.id)?)
    } else {
        None
    };
    Ok(Some((record, scope)))
}

pub fn scope_of(conn: &mut AnyConnection, key_id: ApiKeyId) -> StorageResult<Vec<AccountId>> {
    Ok(api_key_accounts::table
        .filter(api_key_accounts::api_key_id.eq(key_id.get()))
        .order(api_key_accounts::account_id)
        .select(api_key_accounts::account_id)
        .load::<i64>(conn)?
        .into_iter()
        .map(AccountId::new)
        .collect())
}

pub fn touch_last_used(
    conn: &mut AnyConnection,
    key_id: ApiKeyId,
    now: NaiveDateTime,
) -> StorageResult<()> {
    diesel::update(api_keys::table.find(key_id.get()))
        .set(api_keys::last_used_at.eq(now))
        .execute(conn)?;
    Ok(())
}

pub fn list_for_user(
    conn: &mut AnyConnection,
    user_id: UserId,
) -> StorageResult<Vec<(ApiKeyRecord, Option<Vec<AccountId>>)>> {
    let keys: Vec<ApiKeyRecord> = api_keys::table
        .filter(api_keys::user_id.eq(user_id.get()))
        .order(api_keys::id)
        .select(ApiKeyRecord::as_select())
        .load(conn)?;
    let scopes: Vec<(i64, i64)> = api_key_accounts::table
        .filter(api_key_accounts::api_key_id.eq_any(keys.iter().map(|k| k.id.get())))
        .order((api_key_accounts::api_key_id, api_key_accounts::account_id))
        .load(conn)?;
    Ok(keys
        .into_iter()
        .map(|key| {
            let scope = key.is_restricted.then(|| {
                scopes
                    .iter()
                    .filter(|(k, _)| *k == key.id.get())
                    .map(|(_, a)| AccountId::new(*a))
                    .collect()
            });
            (key, scope)
        })
        .collect())
}

/// Whose key `key_id` is, if it exists.
pub fn owner_of(conn: &mut AnyConnection, key_id: ApiKeyId) -> StorageResult<Option<UserId>> {
    Ok(api_keys::table
        .find(key_id.get())
        .select(api_keys::user_id)
        .first::<i64>(conn)
        .optional()?
        .map(UserId::new))
}

/// A revoked key, and whether this call revoked it (or an earlier one did).
#[derive(Debug, Clone)]
pub struct Revocation {
    pub key: ApiKeyRecord,
    pub revoked_now: bool,
}

/// Revokes a key; `NotFound` when there is no such key. Revoking twice keeps
/// the first revocation time.
pub fn revoke(
    conn: &mut AnyConnection,
    key_id: ApiKeyId,
    now: NaiveDateTime,
) -> StorageResult<Revocation> {
    conn.atomically(|conn| {
        let changed = diesel::update(
            api_keys::table
                .find(key_id.get())
                .filter(api_keys::revoked_at.is_null()),
        )
        .set(api_keys::revoked_at.eq(now))
        .execute(conn)?;
        let key = api_keys::table
            .find(key_id.get())
            .select(ApiKeyRecord::as_select())
            .first(conn)?;
        Ok(Revocation {
            key,
            revoked_now: changed == 1,
        })
    })
}
