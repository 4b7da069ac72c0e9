//! Sessions of the browser flow's pages (authorize and portal). Secrets
//! arrive here already hashed; lifetimes and limits are `tributary-auth`'s.

use crate::StorageResult;
use crate::columns::{NullableId, NullableText};
use crate::db::AnyConnection;
use crate::schema::web_sessions;
use chrono::NaiveDateTime;
use diesel::prelude::*;
use tributary_domain::ids::{AppId, ConnectionId, UserId, WebSessionId};
use tributary_domain::model::{PkceMethod, WebSessionPurpose};

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = web_sessions)]
pub struct WebSessionRecord {
    #[diesel(deserialize_as = i64)]
    pub id: WebSessionId,
    pub token_hash: String,
    #[diesel(deserialize_as = String)]
    pub purpose: WebSessionPurpose,
    #[diesel(deserialize_as = i64)]
    pub app_id: AppId,
    #[diesel(deserialize_as = NullableId)]
    pub user_id: Option<UserId>,
    pub redirect_uri: Option<String>,
    pub client_state: Option<String>,
    pub code_challenge: Option<String>,
    #[diesel(deserialize_as = NullableText)]
    pub code_challenge_method: Option<PkceMethod>,
    pub login_hint: Option<String>,
    #[diesel(deserialize_as = NullableId)]
    pub pending_connection_id: Option<ConnectionId>,
    pub ip: Option<String>,
    pub expires_at: NaiveDateTime,
    pub created_at: NaiveDateTime,
}

#[derive(Debug, Clone)]
pub struct NewWebSession<'a> {
    pub token_hash: &'a str,
    pub purpose: WebSessionPurpose,
    pub app_id: AppId,
    pub user_id: Option<UserId>,
    pub redirect_uri: Option<&'a str>,
    pub client_state: Option<&'a str>,
    pub code_challenge: Option<&'a str>,
    pub code_challenge_method: Option<PkceMethod>,
    pub login_hint: Option<&'a str>,
    pub ip: Option<&'a str>,
    pub expires_at: NaiveDateTime,
    pub now: NaiveDateTime,
}

pub fn insert_session(conn: &mut AnyConnection, new: &NewWebSession<'_>) -> StorageResult<()> {
    diesel::insert_into(web_sessions::table)
        .values((
            web_sessions::token_hash.eq(new.token_hash),
            web_sessions::purpose.eq(new.purpose.as_str()),
            web_sessions::app_id.eq(new.app_id.get()),
            web_sessions::user_id.eq(new.user_id.map(UserId::get)),
            web_sessions::redirect_uri.eq(new.redirect_uri),
            web_sessions::client_state.eq(new.client_state),
            web_sessions::code_challenge.eq(new.code_challenge),
            web_sessions::code_challenge_method
                .eq(new.code_challenge_method.map(PkceMethod::as_str)),
            web_sessions::login_hint.eq(new.login_hint),
            web_sessions::ip.eq(new.ip),
            web_sessions::expires_at.eq(new.expires_at),
            web_sessions::created_at.eq(new.now),
        ))
        .execute(conn)?;
    Ok(())
}

/// Sessions started from `ip` after `since`.
pub fn sessions_started_since(
    conn: &mut AnyConnection,
    ip: &str,
    since: NaiveDateTime,
) -> StorageResult<i64> {
    Ok(web_sessions::table
        .filter(web_sessions::ip.eq(ip))
        .filter(web_sessions::created_at.gt(since))
        .count()
        .get_result(conn)?)
}

pub fn find_session(
    conn: &mut AnyConnection,
    token_hash: &str,
) -> StorageResult<Option<WebSessionRecord>> {
    Ok(web_sessions::table
        .filter(web_sessions::token_hash.eq(token_hash))
        .select(WebSessionRecord::as_select())
        .first(conn)
        .optional()?)
}

/// The person signed in as `user_id`.
pub fn set_session_user(
    conn: &mut AnyConnection,
    id: WebSessionId,
    user_id: UserId,
) -> StorageResult<()> {
    diesel::update(web_sessions::table.find(id.get()))
        .set(web_sessions::user_id.eq(user_id.get()))
        .execute(conn)?;
    Ok(())
}

pub fn set_pending_connection(
    conn: &mut AnyConnection,
    id: WebSessionId,
    connection_id: Option<ConnectionId>,
) -> StorageResult<()> {
    diesel::update(web_sessions::table.find(id.get()))
        .set(web_sessions::pending_connection_id.eq(connection_id.map(ConnectionId::get)))
        .execute(conn)?;
    Ok(())
}

/// Deletes sessions that ended before `now`; returns how many went.
pub fn purge_expired(conn: &mut AnyConnection, now: NaiveDateTime) -> StorageResult<usize> {
    Ok(
        diesel::delete(web_sessions::table.filter(web_sessions::expires_at.lt(now)))
            .execute(conn)?,
    )
}

pub fn delete_session(conn: &mut AnyConnection, id: WebSessionId) -> StorageResult<()> {
    diesel::delete(web_sessions::table.find(id.get())).execute(conn)?;
    Ok(())
}
