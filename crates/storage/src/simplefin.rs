//! SimpleFIN destinations: apps that read one user's data over the SimpleFIN
//! protocol. A destination is created with a one-time claim token and, once
//! claimed, answers to Basic credentials; only SHA-256 hashes of the token
//! and of the access password are stored. Issuing and checking them is
//! `tributary-auth`'s business.

use crate::StorageResult;
use crate::api_keys::ensure_owned_accounts;
use crate::backend;
use crate::db::AnyConnection;
use crate::schema::{simplefin_destination_accounts, simplefin_destinations};
use chrono::{NaiveDate, NaiveDateTime};
use diesel::prelude::*;
use tributary_domain::ids::{AccountId, SimpleFinDestinationId, UserId};

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = simplefin_destinations)]
pub struct DestinationRecord {
    #[diesel(deserialize_as = i64)]
    pub id: SimpleFinDestinationId,
    #[diesel(deserialize_as = i64)]
    pub user_id: UserId,
    pub name: String,
    pub is_restricted: bool,
    pub claim_expires_at: NaiveDateTime,
    pub claimed_at: Option<NaiveDateTime>,
    /// The Basic username of the Access URL (random, not secret); set by
    /// the claim.
    pub access_username: Option<String>,
    /// Lower-case hex SHA-256 of the Access URL's password.
    pub access_hash: Option<String>,
    pub created_at: NaiveDateTime,
    pub last_used_at: Option<NaiveDateTime>,
    pub revoked_at: Option<NaiveDateTime>,
}

#[derive(Debug, Clone)]
pub struct NewDestination<'a> {
    pub user_id: UserId,
    pub name: &'a str,
    /// SHA-256 of the claim token the setup token carries.
    pub claim_hash: &'a str,
    pub claim_expires_at: NaiveDateTime,
    /// `Some` restricts the destination to these accounts (all the user's).
    pub account_scope: Option<&'a [AccountId]>,
    pub now: NaiveDateTime,
}

pub fn insert_destination(
    conn: &mut AnyConnection,
    new: &NewDestination<'_>,
) -> StorageResult<DestinationRecord> {
    conn.atomically(|conn| {
        if let Some(scope) = new.account_scope {
            ensure_owned_accounts(conn, new.user_id, scope)?;
        }
        let id = diesel::insert_into(simplefin_destinations::table)
            .values((
                simplefin_destinations::user_id.eq(new.user_id.get()),
                simplefin_destinations::name.eq(new.name),
                simplefin_destinations::is_restricted.eq(new.account_scope.is_some()),
                simplefin_destinations::claim_hash.eq(new.claim_hash),
                simplefin_destinations::claim_expires_at.eq(new.claim_expires_at),
                simplefin_destinations::created_at.eq(new.now),
            ))
            .returning(simplefin_destinations::id)
            .get_result::<i64>(conn)
            .map(SimpleFinDestinationId::new)?;
        if let Some(scope) = new.account_scope {
            backend::insert_simplefin_scope(conn, id, scope)?;
        }
        find(conn, id)
    })
}

fn find(conn: &mut AnyConnection, id: SimpleFinDestinationId) -> StorageResult<DestinationRecord> {
    Ok(simplefin_destinations::table
        .find(id.get())
        .select(DestinationRecord::as_select())
        .first(conn)?)
}

/// The Access credentials a claim sets.
#[derive(Debug, Clone)]
pub struct AccessCredentials<'a> {
    pub username: &'a str,
    /// SHA-256 of the password.
    pub password_hash: &'a str,
}

/// Claims the destination whose claim token hashes to `claim_hash`: sets its
/// Access credentials, once. `None` when no destination has this token, or
/// it was claimed, revoked or has expired. One conditional update, so of two
/// concurrent claims exactly one wins, on either backend.
pub fn claim(
    conn: &mut AnyConnection,
    claim_hash: &str,
    access: &AccessCredentials<'_>,
    now: NaiveDateTime,
) -> StorageResult<Option<DestinationRecord>> {
    conn.atomically(|conn| {
        let claimed = diesel::update(
            simplefin_destinations::table
                .filter(simplefin_destinations::claim_hash.eq(claim_hash))
                .filter(simplefin_destinations::claimed_at.is_null())
                .filter(simplefin_destinations::revoked_at.is_null())
                .filter(simplefin_destinations::claim_expires_at.gt(now)),
        )
        .set((
            simplefin_destinations::claimed_at.eq(now),
            simplefin_destinations::access_username.eq(access.username),
            simplefin_destinations::access_hash.eq(access.password_hash),
        ))
        .returning(simplefin_destinations::id)
        .get_result::<i64>(conn)
        .optional()?;
        claimed
            .map(|id| find(conn, SimpleFinDestinationId::new(id)))
            .transpose()
    })
}

/// The claimed destination with this Access username, and its account
/// scope when restricted.
pub fn find_by_username(
    conn: &mut AnyConnection,
    username: &str,
) -> StorageResult<Option<(DestinationRecord, Option<Vec<AccountId>>)>> {
    let Some(record) = simplefin_destinations::table
        .filter(simplefin_destinations::access_username.eq(username))
        .select(DestinationRecord::as_select())
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

pub fn scope_of(
    conn: &mut AnyConnection,
    id: SimpleFinDestinationId,
) -> StorageResult<Vec<AccountId>> {
    Ok(simplefin_destination_accounts::table
        .filter(simplefin_destination_accounts::destination_id.eq(id.get()))
        .order(simplefin_destination_accounts::account_id)
        .select(simplefin_destination_accounts::account_id)
        .load::<i64>(conn)?
        .into_iter()
        .map(AccountId::new)
        .collect())
}

pub fn touch_last_used(
    conn: &mut AnyConnection,
    id: SimpleFinDestinationId,
    now: NaiveDateTime,
) -> StorageResult<()> {
    diesel::update(simplefin_destinations::table.find(id.get()))
        .set(simplefin_destinations::last_used_at.eq(now))
        .execute(conn)?;
    Ok(())
}

/// Counts one request against the destination's budget of `limit` a UTC
/// day; `false` (nothing counted) when today's budget is spent. Each step is
/// a single conditional update, so concurrent requests cannot both take the
/// last one: PostgreSQL re-checks an update's condition on the row a
/// concurrent writer left.
pub fn take_daily_request(
    conn: &mut AnyConnection,
    id: SimpleFinDestinationId,
    today: NaiveDate,
    limit: i32,
) -> StorageResult<bool> {
    let row = || simplefin_destinations::table.find(id.get());
    // A new day starts with an empty count.
    diesel::update(
        row().filter(
            simplefin_destinations::quota_day
                .is_null()
                .or(simplefin_destinations::quota_day.ne(today)),
        ),
    )
    .set((
        simplefin_destinations::quota_day.eq(today),
        simplefin_destinations::quota_used.eq(0),
    ))
    .execute(conn)?;
    let taken = diesel::update(
        row()
            .filter(simplefin_destinations::quota_day.eq(today))
            .filter(simplefin_destinations::quota_used.lt(limit)),
    )
    .set(simplefin_destinations::quota_used.eq(simplefin_destinations::quota_used + 1))
    .execute(conn)?;
    Ok(taken == 1)
}

pub fn list_for_user(
    conn: &mut AnyConnection,
    user_id: UserId,
) -> StorageResult<Vec<(DestinationRecord, Option<Vec<AccountId>>)>> {
    let destinations: Vec<DestinationRecord> = simplefin_destinations::table
        .filter(simplefin_destinations::user_id.eq(user_id.get()))
        .order(simplefin_destinations::id)
        .select(DestinationRecord::as_select())
        .load(conn)?;
    // Every scope in one query, as `api_keys::list_for_user` does.
    let scopes: Vec<(i64, i64)> = simplefin_destination_accounts::table
        .filter(
            simplefin_destination_accounts::destination_id
                .eq_any(destinations.iter().map(|d| d.id.get())),
        )
        .order((
            simplefin_destination_accounts::destination_id,
            simplefin_destination_accounts::account_id,
        ))
        .load(conn)?;
    Ok(destinations
        .into_iter()
        .map(|record| {
            let scope = record.is_restricted.then(|| {
                scopes
                    .iter()
                    .filter(|(d, _)| *d == record.id.get())
                    .map(|(_, a)| AccountId::new(*a))
                    .collect()
            });
            (record, scope)
        })
        .collect())
}

/// Whose destination `id` is, if it exists.
pub fn owner_of(
    conn: &mut AnyConnection,
    id: SimpleFinDestinationId,
) -> StorageResult<Option<UserId>> {
    Ok(simplefin_destinations::table
        .find(id.get())
        .select(simplefin_destinations::user_id)
        .first::<i64>(conn)
        .optional()?
        .map(UserId::new))
}

/// Revokes a destination (claimed or not); `NotFound` when there is none.
/// Revoking twice keeps the first time. Returns the record and whether this
/// call revoked it.
pub fn revoke(
    conn: &mut AnyConnection,
    id: SimpleFinDestinationId,
    now: NaiveDateTime,
) -> StorageResult<(DestinationRecord, bool)> {
    conn.atomically(|conn| {
        let changed = diesel::update(
            simplefin_destinations::table
                .find(id.get())
                .filter(simplefin_destinations::revoked_at.is_null()),
        )
        .set(simplefin_destinations::revoked_at.eq(now))
        .execute(conn)?;
        Ok((find(conn, id)?, changed == 1))
    })
}
