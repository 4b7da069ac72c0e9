//! The Personal dashboard's sign-in links and sessions. Only SHA-256 hashes
//! of their tokens are stored; issuing and checking them is
//! `tributary-auth`'s business.

use crate::StorageResult;
use crate::columns::NullableId;
use crate::db::AnyConnection;
use crate::schema::{dashboard_login_links, dashboard_sessions};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use tributary_domain::ids::{ConnectionId, DashboardSessionId, UserId};

/// Stores a sign-in link for `user_id`, valid until `expires_at`.
pub fn insert_login_link(
    conn: &mut AnyConnection,
    token_hash: &str,
    user_id: UserId,
    expires_at: NaiveDateTime,
    now: NaiveDateTime,
) -> StorageResult<()> {
    diesel::insert_into(dashboard_login_links::table)
        .values((
            dashboard_login_links::token_hash.eq(token_hash),
            dashboard_login_links::user_id.eq(user_id.get()),
            dashboard_login_links::expires_at.eq(expires_at),
            dashboard_login_links::created_at.eq(now),
        ))
        .execute(conn)?;
    Ok(())
}

/// Marks the unused, unexpired link whose token hashes to `token_hash` as
/// used; its user, or `None`. One conditional update: of two concurrent
/// uses exactly one finds the row still unused.
pub fn use_login_link(
    conn: &mut AnyConnection,
    token_hash: &str,
    now: NaiveDateTime,
) -> StorageResult<Option<UserId>> {
    Ok(diesel::update(
        dashboard_login_links::table
            .filter(dashboard_login_links::token_hash.eq(token_hash))
            .filter(dashboard_login_links::used_at.is_null())
            .filter(dashboard_login_links::expires_at.gt(now)),
    )
    .set(dashboard_login_links::used_at.eq(now))
    .returning(dashboard_login_links::user_id)
    .get_result::<i64>(conn)
    .optional()?
    .map(UserId::new))
}

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = dashboard_sessions)]
pub struct DashboardSessionRecord {
    #[diesel(deserialize_as = i64)]
    pub id: DashboardSessionId,
    pub token_hash: String,
    #[diesel(deserialize_as = i64)]
    pub user_id: UserId,
    pub created_at: NaiveDateTime,
    pub last_seen_at: NaiveDateTime,
    pub expires_at: NaiveDateTime,
    /// The connection whose bank consent the person is giving (GoCardless),
    /// until they come back from their bank.
    #[diesel(deserialize_as = NullableId)]
    pub pending_connection_id: Option<ConnectionId>,
}

pub fn insert_session(
    conn: &mut AnyConnection,
    token_hash: &str,
    user_id: UserId,
    expires_at: NaiveDateTime,
    now: NaiveDateTime,
) -> StorageResult<()> {
    diesel::insert_into(dashboard_sessions::table)
        .values((
            dashboard_sessions::token_hash.eq(token_hash),
            dashboard_sessions::user_id.eq(user_id.get()),
            dashboard_sessions::created_at.eq(now),
            dashboard_sessions::last_seen_at.eq(now),
            dashboard_sessions::expires_at.eq(expires_at),
        ))
        .execute(conn)?;
    Ok(())
}

pub fn find_session(
    conn: &mut AnyConnection,
    token_hash: &str,
) -> StorageResult<Option<DashboardSessionRecord>> {
    Ok(dashboard_sessions::table
        .filter(dashboard_sessions::token_hash.eq(token_hash))
        .select(DashboardSessionRecord::as_select())
        .first(conn)
        .optional()?)
}

pub fn touch_session(
    conn: &mut AnyConnection,
    id: DashboardSessionId,
    now: NaiveDateTime,
) -> StorageResult<()> {
    diesel::update(dashboard_sessions::table.find(id.get()))
        .set(dashboard_sessions::last_seen_at.eq(now))
        .execute(conn)?;
    Ok(())
}

pub fn set_pending_connection(
    conn: &mut AnyConnection,
    id: DashboardSessionId,
    connection_id: Option<ConnectionId>,
) -> StorageResult<()> {
    diesel::update(dashboard_sessions::table.find(id.get()))
        .set(dashboard_sessions::pending_connection_id.eq(connection_id.map(ConnectionId::get)))
        .execute(conn)?;
    Ok(())
}

pub fn delete_session(conn: &mut AnyConnection, id: DashboardSessionId) -> StorageResult<()> {
    diesel::delete(dashboard_sessions::table.find(id.get())).execute(conn)?;
    Ok(())
}

/// Deletes sessions past their absolute expiry and links past theirs.
pub fn purge_expired(conn: &mut AnyConnection, now: NaiveDateTime) -> StorageResult<()> {
    diesel::delete(dashboard_sessions::table.filter(dashboard_sessions::expires_at.lt(now)))
        .execute(conn)?;
    diesel::delete(dashboard_login_links::table.filter(dashboard_login_links::expires_at.lt(now)))
        .execute(conn)?;
    Ok(())
}
