//! Developers (the people who own Platform apps), which apps they own, and
//! their developer dashboard sessions. Only SHA-256 hashes of session
//! tokens are stored; issuing and checking them is `tributary-auth`'s
//! business. An app no developer owns is the operator's.

use crate::apps::{self as app_store, AppRecord, NewApp};
use crate::backend;
use crate::db::AnyConnection;
use crate::schema::{apps, developer_apps, developer_sessions, developers, sign_in_codes, users};
use crate::{StorageError, StorageResult};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use tributary_domain::ids::{AppId, DeveloperId, DeveloperSessionId};

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = developers)]
pub struct DeveloperRecord {
    #[diesel(deserialize_as = i64)]
    pub id: DeveloperId,
    /// Normalized (`tributary_domain::email::normalize_email`).
    pub email: String,
    pub created_at: NaiveDateTime,
    pub last_signed_in_at: Option<NaiveDateTime>,
}

/// The developer with `email` (normalized by the caller), made if there is
/// none; `true` when made now. Concurrent adds of one address make one row.
pub fn add(
    conn: &mut AnyConnection,
    email: &str,
    now: NaiveDateTime,
) -> StorageResult<(DeveloperRecord, bool)> {
    let inserted = backend::insert_developer_unless_exists(conn, email, now)?;
    let record = find_by_email(conn, email)?.ok_or(StorageError::NotFound)?;
    Ok((record, inserted))
}

pub fn find_by_email(
    conn: &mut AnyConnection,
    email: &str,
) -> StorageResult<Option<DeveloperRecord>> {
    Ok(developers::table
        .filter(developers::email.eq(email))
        .select(DeveloperRecord::as_select())
        .first(conn)
        .optional()?)
}

/// Removes a developer; their sessions go with them (and the ownership of
/// any app, which the caller makes sure there is none of). `false` when
/// there was no such developer.
pub fn remove(conn: &mut AnyConnection, id: DeveloperId) -> StorageResult<bool> {
    Ok(diesel::delete(developers::table.find(id.get())).execute(conn)? == 1)
}

pub fn get(conn: &mut AnyConnection, id: DeveloperId) -> StorageResult<DeveloperRecord> {
    Ok(developers::table
        .find(id.get())
        .select(DeveloperRecord::as_select())
        .first(conn)?)
}

/// Every developer, oldest first.
pub fn list(conn: &mut AnyConnection) -> StorageResult<Vec<DeveloperRecord>> {
    Ok(developers::table
        .order(developers::id)
        .select(DeveloperRecord::as_select())
        .load(conn)?)
}

pub fn record_sign_in(
    conn: &mut AnyConnection,
    id: DeveloperId,
    now: NaiveDateTime,
) -> StorageResult<()> {
    diesel::update(developers::table.find(id.get()))
        .set(developers::last_signed_in_at.eq(now))
        .execute(conn)?;
    Ok(())
}

/// Gives `app_id` to `developer_id` (an app has one owner).
pub fn set_owner(
    conn: &mut AnyConnection,
    app_id: AppId,
    developer_id: DeveloperId,
) -> StorageResult<()> {
    Ok(backend::upsert_app_owner(conn, app_id, developer_id)?)
}

/// Who owns `app_id`; `None` for the operator's apps.
pub fn owner_of(conn: &mut AnyConnection, app_id: AppId) -> StorageResult<Option<DeveloperId>> {
    Ok(developer_apps::table
        .find(app_id.get())
        .select(developer_apps::developer_id)
        .first::<i64>(conn)
        .optional()?
        .map(DeveloperId::new))
}

/// The developer's apps, oldest first.
pub fn apps_of(
    conn: &mut AnyConnection,
    developer_id: DeveloperId,
) -> StorageResult<Vec<AppRecord>> {
    Ok(apps::table
        .inner_join(developer_apps::table)
        .filter(developer_apps::developer_id.eq(developer_id.get()))
        .order(apps::id)
        .select(AppRecord::as_select())
        .load(conn)?)
}

/// `app_id` when `developer_id` owns it; another developer's app, the
/// operator's and a missing one are all `None`, so a page cannot tell them
/// apart.
pub fn owned_app(
    conn: &mut AnyConnection,
    developer_id: DeveloperId,
    app_id: AppId,
) -> StorageResult<Option<AppRecord>> {
    Ok(apps::table
        .inner_join(developer_apps::table)
        .filter(apps::id.eq(app_id.get()))
        .filter(developer_apps::developer_id.eq(developer_id.get()))
        .select(AppRecord::as_select())
        .first(conn)
        .optional()?)
}

/// Creates an app owned by `developer_id`: the app and its owner in one
/// transaction, so no app is ever briefly the operator's.
pub fn create_owned_app(
    conn: &mut AnyConnection,
    developer_id: DeveloperId,
    new: &NewApp<'_>,
) -> StorageResult<AppRecord> {
    conn.atomically(|conn| {
        let app = app_store::create_app(conn, new)?;
        set_owner(conn, app.id, developer_id)?;
        Ok(app)
    })
}

/// Deletes `app_id` and everything of its users when `developer_id` owns
/// it (one statement: the owner is checked where the row is deleted);
/// `false` for another's app, the operator's, or none.
pub fn delete_owned_app(
    conn: &mut AnyConnection,
    developer_id: DeveloperId,
    app_id: AppId,
) -> StorageResult<bool> {
    conn.atomically(|conn| {
        if owned_app(conn, developer_id, app_id)?.is_none() {
            return Ok(false);
        }
        // The codes sent to its users' addresses name no user (see
        // `apps::delete_user`), so the foreign keys do not take them along.
        let addresses = users::table
            .filter(users::app_id.eq(app_id.get()))
            .select(users::email);
        diesel::delete(sign_in_codes::table.filter(sign_in_codes::email.eq_any(addresses)))
            .execute(conn)?;
        let owned = developer_apps::table
            .filter(developer_apps::developer_id.eq(developer_id.get()))
            .select(developer_apps::app_id);
        Ok(diesel::delete(
            apps::table
                .filter(apps::id.eq(app_id.get()))
                .filter(apps::id.eq_any(owned)),
        )
        .execute(conn)?
            > 0)
    })
}

/// How many users `app_id` has.
pub fn count_app_users(conn: &mut AnyConnection, app_id: AppId) -> StorageResult<i64> {
    Ok(users::table
        .filter(users::app_id.eq(app_id.get()))
        .count()
        .get_result(conn)?)
}

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = developer_sessions)]
pub struct DeveloperSessionRecord {
    #[diesel(deserialize_as = i64)]
    pub id: DeveloperSessionId,
    pub token_hash: String,
    #[diesel(deserialize_as = i64)]
    pub developer_id: DeveloperId,
    pub created_at: NaiveDateTime,
    pub last_seen_at: NaiveDateTime,
    pub expires_at: NaiveDateTime,
}

pub fn insert_session(
    conn: &mut AnyConnection,
    token_hash: &str,
    developer_id: DeveloperId,
    expires_at: NaiveDateTime,
    now: NaiveDateTime,
) -> StorageResult<()> {
    diesel::insert_into(developer_sessions::table)
        .values((
            developer_sessions::token_hash.eq(token_hash),
            developer_sessions::developer_id.eq(developer_id.get()),
            developer_sessions::created_at.eq(now),
            developer_sessions::last_seen_at.eq(now),
            developer_sessions::expires_at.eq(expires_at),
        ))
        .execute(conn)?;
    Ok(())
}

pub fn find_session(
    conn: &mut AnyConnection,
    token_hash: &str,
) -> StorageResult<Option<DeveloperSessionRecord>> {
    Ok(developer_sessions::table
        .filter(developer_sessions::token_hash.eq(token_hash))
        .select(DeveloperSessionRecord::as_select())
        .first(conn)
        .optional()?)
}

pub fn touch_session(
    conn: &mut AnyConnection,
    id: DeveloperSessionId,
    now: NaiveDateTime,
) -> StorageResult<()> {
    diesel::update(developer_sessions::table.find(id.get()))
        .set(developer_sessions::last_seen_at.eq(now))
        .execute(conn)?;
    Ok(())
}

pub fn delete_session(conn: &mut AnyConnection, id: DeveloperSessionId) -> StorageResult<()> {
    diesel::delete(developer_sessions::table.find(id.get())).execute(conn)?;
    Ok(())
}

/// Deletes sessions past their absolute expiry.
pub fn purge_expired(conn: &mut AnyConnection, now: NaiveDateTime) -> StorageResult<()> {
    diesel::delete(developer_sessions::table.filter(developer_sessions::expires_at.lt(now)))
        .execute(conn)?;
    Ok(())
}
