//! Users: Personal users (no app); Platform users, owned by an app, are in
//! `apps`.

use crate::StorageResult;
use crate::db::AnyConnection;
use crate::schema::users;
use chrono::NaiveDateTime;
use diesel::prelude::*;
use tributary_domain::ids::{AppId, UserId};

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = users)]
pub struct UserRecord {
    #[diesel(deserialize_as = i64)]
    pub id: UserId,
    #[diesel(deserialize_as = crate::columns::NullableId)]
    pub app_id: Option<AppId>,
    pub email: String,
    pub external_user_id: Option<String>,
    pub max_accounts: Option<i32>,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
    /// The id an app knows its user by (`user_id` on the Platform interface).
    pub public_id: Option<String>,
    /// When a user of a "user pays" app paid (see `web::record_subscription`).
    pub subscribed_at: Option<NaiveDateTime>,
}

/// Creates a Personal user. An existing e-mail is a `Conflict`.
pub fn create_personal_user(
    conn: &mut AnyConnection,
    email: &str,
    now: NaiveDateTime,
) -> StorageResult<UserRecord> {
    let id = diesel::insert_into(users::table)
        .values((
            users::email.eq(email),
            users::created_at.eq(now),
            users::updated_at.eq(now),
        ))
        .returning(users::id)
        .get_result::<i64>(conn)
        .map(UserId::new)?;
    get_user(conn, id)
}

pub fn find_personal_user(
    conn: &mut AnyConnection,
    email: &str,
) -> StorageResult<Option<UserRecord>> {
    Ok(users::table
        .filter(users::app_id.is_null())
        .filter(users::email.eq(email))
        .select(UserRecord::as_select())
        .first(conn)
        .optional()?)
}

pub fn get_user(conn: &mut AnyConnection, id: UserId) -> StorageResult<UserRecord> {
    Ok(users::table
        .find(id.get())
        .select(UserRecord::as_select())
        .first(conn)?)
}

pub fn list_users(conn: &mut AnyConnection) -> StorageResult<Vec<UserRecord>> {
    Ok(users::table
        .order(users::id)
        .select(UserRecord::as_select())
        .load(conn)?)
}

pub fn count_users(conn: &mut AnyConnection) -> StorageResult<i64> {
    Ok(users::table.count().get_result(conn)?)
}
