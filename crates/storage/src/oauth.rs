//! OAuth tokens, authorization codes and portal sessions: rows keyed by the
//! SHA-256 of the secret. The rules (lifetimes, rotation, PKCE) are
//! `tributary-auth`'s; this module only stores and finds, with the few
//! updates that must be atomic ("mark used if not yet used").

use crate::StorageResult;
use crate::db::AnyConnection;
use crate::schema::{oauth_codes, oauth_tokens, portal_sessions};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use tributary_domain::ids::{AppId, AuthCodeId, GrantId, PortalSessionId, TokenId, UserId};
use tributary_domain::model::{PkceMethod, TokenKind};

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = oauth_tokens)]
pub struct TokenRecord {
    #[diesel(deserialize_as = i64)]
    pub id: TokenId,
    #[diesel(deserialize_as = i64)]
    pub app_id: AppId,
    #[diesel(deserialize_as = i64)]
    pub user_id: UserId,
    pub family: String,
    #[diesel(deserialize_as = String)]
    pub kind: TokenKind,
    pub token_hash: String,
    pub expires_at: NaiveDateTime,
    pub used_at: Option<NaiveDateTime>,
    pub revoked_at: Option<NaiveDateTime>,
    pub created_at: NaiveDateTime,
    /// The person's consent an MCP token was issued under; `None` for a
    /// Platform app's token. It decides where the token works.
    #[diesel(deserialize_as = crate::columns::NullableId)]
    pub grant_id: Option<GrantId>,
}

#[derive(Debug, Clone)]
pub struct NewToken<'a> {
    pub app_id: AppId,
    pub user_id: UserId,
    pub grant_id: Option<GrantId>,
    pub family: &'a str,
    pub kind: TokenKind,
    pub token_hash: &'a str,
    pub expires_at: NaiveDateTime,
    pub now: NaiveDateTime,
}

pub fn insert_token(conn: &mut AnyConnection, token: &NewToken<'_>) -> StorageResult<()> {
    diesel::insert_into(oauth_tokens::table)
        .values((
            oauth_tokens::app_id.eq(token.app_id.get()),
            oauth_tokens::user_id.eq(token.user_id.get()),
            oauth_tokens::family.eq(token.family),
            oauth_tokens::kind.eq(token.kind.as_str()),
            oauth_tokens::token_hash.eq(token.token_hash),
            oauth_tokens::expires_at.eq(token.expires_at),
            oauth_tokens::created_at.eq(token.now),
            oauth_tokens::grant_id.eq(token.grant_id.map(GrantId::get)),
        ))
        .execute(conn)?;
    Ok(())
}

pub fn find_token(
    conn: &mut AnyConnection,
    token_hash: &str,
) -> StorageResult<Option<TokenRecord>> {
    Ok(oauth_tokens::table
        .filter(oauth_tokens::token_hash.eq(token_hash))
        .select(TokenRecord::as_select())
        .first(conn)
        .optional()?)
}

/// A token read under a row lock (PostgreSQL `FOR UPDATE`; on SQLite the
/// write transaction it must run in already excludes other writers): every
/// rotation of one refresh token queues here, so exactly one finds it
/// unused, and the others find it used with the winner's pair committed.
pub fn lock_token(conn: &mut AnyConnection, id: TokenId) -> StorageResult<Option<TokenRecord>> {
    let token = oauth_tokens::table.find(id.get());
    Ok(match conn {
        AnyConnection::Postgresql(pg) => token
            .select(TokenRecord::as_select())
            .for_update()
            .first(pg)
            .optional()?,
        AnyConnection::Sqlite(sqlite) => token
            .select(TokenRecord::as_select())
            .first(sqlite)
            .optional()?,
    })
}

/// Marks a refresh token used; `false` if it already was (a replay) or was
/// revoked meanwhile. On PostgreSQL the update waits for a concurrent
/// rotation of the same token to commit, then finds it used.
pub fn mark_token_used(
    conn: &mut AnyConnection,
    id: TokenId,
    now: NaiveDateTime,
) -> StorageResult<bool> {
    let updated = diesel::update(
        oauth_tokens::table
            .find(id.get())
            .filter(oauth_tokens::used_at.is_null())
            .filter(oauth_tokens::revoked_at.is_null()),
    )
    .set(oauth_tokens::used_at.eq(now))
    .execute(conn)?;
    Ok(updated == 1)
}

/// Revokes every live token of a family. Rows are locked in id order, so two
/// revocations of one family (a replay and an RFC 7009 request, say) queue
/// instead of deadlocking on PostgreSQL.
pub fn revoke_family(
    conn: &mut AnyConnection,
    family: &str,
    now: NaiveDateTime,
) -> StorageResult<usize> {
    let live = oauth_tokens::table
        .filter(oauth_tokens::family.eq(family))
        .filter(oauth_tokens::revoked_at.is_null())
        .order(oauth_tokens::id)
        .select(oauth_tokens::id);
    let ids: Vec<i64> = match conn {
        AnyConnection::Postgresql(pg) => live.for_update().load(pg)?,
        AnyConnection::Sqlite(sqlite) => live.load(sqlite)?,
    };
    Ok(
        diesel::update(oauth_tokens::table.filter(oauth_tokens::id.eq_any(&ids)))
            .set(oauth_tokens::revoked_at.eq(now))
            .execute(conn)?,
    )
}

pub fn revoke_token(
    conn: &mut AnyConnection,
    id: TokenId,
    now: NaiveDateTime,
) -> StorageResult<()> {
    diesel::update(
        oauth_tokens::table
            .find(id.get())
            .filter(oauth_tokens::revoked_at.is_null()),
    )
    .set(oauth_tokens::revoked_at.eq(now))
    .execute(conn)?;
    Ok(())
}

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = oauth_codes)]
pub struct CodeRecord {
    #[diesel(deserialize_as = i64)]
    pub id: AuthCodeId,
    #[diesel(deserialize_as = i64)]
    pub app_id: AppId,
    #[diesel(deserialize_as = i64)]
    pub user_id: UserId,
    pub code_hash: String,
    pub redirect_uri: String,
    pub code_challenge: Option<String>,
    #[diesel(deserialize_as = crate::columns::NullableText)]
    pub code_challenge_method: Option<PkceMethod>,
    pub expires_at: NaiveDateTime,
    pub redeemed_at: Option<NaiveDateTime>,
    pub family: Option<String>,
    pub created_at: NaiveDateTime,
    /// As [`TokenRecord::grant_id`]: its tokens inherit it.
    #[diesel(deserialize_as = crate::columns::NullableId)]
    pub grant_id: Option<GrantId>,
}

#[derive(Debug, Clone)]
pub struct NewCode<'a> {
    pub app_id: AppId,
    pub user_id: UserId,
    pub grant_id: Option<GrantId>,
    pub code_hash: &'a str,
    pub redirect_uri: &'a str,
    pub code_challenge: Option<&'a str>,
    pub code_challenge_method: Option<PkceMethod>,
    pub expires_at: NaiveDateTime,
    pub now: NaiveDateTime,
}

pub fn insert_code(conn: &mut AnyConnection, code: &NewCode<'_>) -> StorageResult<()> {
    diesel::insert_into(oauth_codes::table)
        .values((
            oauth_codes::app_id.eq(code.app_id.get()),
            oauth_codes::user_id.eq(code.user_id.get()),
            oauth_codes::code_hash.eq(code.code_hash),
            oauth_codes::redirect_uri.eq(code.redirect_uri),
            oauth_codes::code_challenge.eq(code.code_challenge),
            oauth_codes::code_challenge_method
                .eq(code.code_challenge_method.map(PkceMethod::as_str)),
            oauth_codes::expires_at.eq(code.expires_at),
            oauth_codes::created_at.eq(code.now),
            oauth_codes::grant_id.eq(code.grant_id.map(GrantId::get)),
        ))
        .execute(conn)?;
    Ok(())
}

pub fn find_code(conn: &mut AnyConnection, code_hash: &str) -> StorageResult<Option<CodeRecord>> {
    Ok(oauth_codes::table
        .filter(oauth_codes::code_hash.eq(code_hash))
        .select(CodeRecord::as_select())
        .first(conn)
        .optional()?)
}

/// Marks a code redeemed by the token family `family`; `false` if it
/// already was.
pub fn mark_code_redeemed(
    conn: &mut AnyConnection,
    id: AuthCodeId,
    family: &str,
    now: NaiveDateTime,
) -> StorageResult<bool> {
    let updated = diesel::update(
        oauth_codes::table
            .find(id.get())
            .filter(oauth_codes::redeemed_at.is_null()),
    )
    .set((
        oauth_codes::redeemed_at.eq(now),
        oauth_codes::family.eq(family),
    ))
    .execute(conn)?;
    Ok(updated == 1)
}

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = portal_sessions)]
pub struct PortalSessionRecord {
    #[diesel(deserialize_as = i64)]
    pub id: PortalSessionId,
    #[diesel(deserialize_as = i64)]
    pub app_id: AppId,
    #[diesel(deserialize_as = i64)]
    pub user_id: UserId,
    pub token_hash: String,
    pub expires_at: NaiveDateTime,
    pub used_at: Option<NaiveDateTime>,
    pub created_at: NaiveDateTime,
}

pub fn insert_portal_session(
    conn: &mut AnyConnection,
    app_id: AppId,
    user_id: UserId,
    token_hash: &str,
    expires_at: NaiveDateTime,
    now: NaiveDateTime,
) -> StorageResult<()> {
    diesel::insert_into(portal_sessions::table)
        .values((
            portal_sessions::app_id.eq(app_id.get()),
            portal_sessions::user_id.eq(user_id.get()),
            portal_sessions::token_hash.eq(token_hash),
            portal_sessions::expires_at.eq(expires_at),
            portal_sessions::created_at.eq(now),
        ))
        .execute(conn)?;
    Ok(())
}

pub fn find_portal_session(
    conn: &mut AnyConnection,
    token_hash: &str,
) -> StorageResult<Option<PortalSessionRecord>> {
    Ok(portal_sessions::table
        .filter(portal_sessions::token_hash.eq(token_hash))
        .select(PortalSessionRecord::as_select())
        .first(conn)
        .optional()?)
}

/// Marks a portal session used; `false` if it already was.
pub fn mark_portal_session_used(
    conn: &mut AnyConnection,
    id: PortalSessionId,
    now: NaiveDateTime,
) -> StorageResult<bool> {
    let updated = diesel::update(
        portal_sessions::table
            .find(id.get())
            .filter(portal_sessions::used_at.is_null()),
    )
    .set(portal_sessions::used_at.eq(now))
    .execute(conn)?;
    Ok(updated == 1)
}
