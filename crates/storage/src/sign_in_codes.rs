//! E-mailed sign-in codes, stored as hashes; attempts and send limits are
//! counted here atomically, the rules are `tributary-auth`'s.

use crate::StorageResult;
use crate::columns::NullableId;
use crate::db::AnyConnection;
use crate::schema::sign_in_codes;
use chrono::NaiveDateTime;
use diesel::prelude::*;
use tributary_domain::ids::{SignInCodeId, WebSessionId};

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = sign_in_codes)]
pub struct SignInCodeRecord {
    #[diesel(deserialize_as = i64)]
    pub id: SignInCodeId,
    #[diesel(deserialize_as = NullableId)]
    pub web_session_id: Option<WebSessionId>,
    pub email: String,
    pub ip: String,
    pub code_hash: String,
    pub attempts: i32,
    pub expires_at: NaiveDateTime,
    pub used_at: Option<NaiveDateTime>,
    pub created_at: NaiveDateTime,
}

#[derive(Debug, Clone)]
pub struct NewSignInCode<'a> {
    pub web_session_id: WebSessionId,
    pub email: &'a str,
    pub ip: &'a str,
    pub code_hash: &'a str,
    pub expires_at: NaiveDateTime,
    pub now: NaiveDateTime,
}

pub fn insert_sign_in_code(conn: &mut AnyConnection, new: &NewSignInCode<'_>) -> StorageResult<()> {
    diesel::insert_into(sign_in_codes::table)
        .values((
            sign_in_codes::web_session_id.eq(new.web_session_id.get()),
            sign_in_codes::email.eq(new.email),
            sign_in_codes::ip.eq(new.ip),
            sign_in_codes::code_hash.eq(new.code_hash),
            sign_in_codes::expires_at.eq(new.expires_at),
            sign_in_codes::created_at.eq(new.now),
        ))
        .execute(conn)?;
    Ok(())
}

/// The code most recently sent to this session (earlier ones are void).
pub fn latest_sign_in_code(
    conn: &mut AnyConnection,
    web_session_id: WebSessionId,
) -> StorageResult<Option<SignInCodeRecord>> {
    Ok(sign_in_codes::table
        .filter(sign_in_codes::web_session_id.eq(web_session_id.get()))
        .order(sign_in_codes::id.desc())
        .select(SignInCodeRecord::as_select())
        .first(conn)
        .optional()?)
}

/// Counts one attempt at a code; `false` when it already had `max` (the
/// update is conditional, so concurrent guesses cannot exceed the limit).
pub fn count_sign_in_attempt(
    conn: &mut AnyConnection,
    id: SignInCodeId,
    max: i32,
) -> StorageResult<bool> {
    let updated = diesel::update(
        sign_in_codes::table
            .find(id.get())
            .filter(sign_in_codes::attempts.lt(max))
            .filter(sign_in_codes::used_at.is_null()),
    )
    .set(sign_in_codes::attempts.eq(sign_in_codes::attempts + 1))
    .execute(conn)?;
    Ok(updated == 1)
}

/// Marks a code used; `false` if it already was.
pub fn mark_sign_in_code_used(
    conn: &mut AnyConnection,
    id: SignInCodeId,
    now: NaiveDateTime,
) -> StorageResult<bool> {
    let updated = diesel::update(
        sign_in_codes::table
            .find(id.get())
            .filter(sign_in_codes::used_at.is_null()),
    )
    .set(sign_in_codes::used_at.eq(now))
    .execute(conn)?;
    Ok(updated == 1)
}

/// Codes sent after `since` to `email`, and from `ip`.
pub fn sign_in_codes_sent_since(
    conn: &mut AnyConnection,
    email: &str,
    ip: &str,
    since: NaiveDateTime,
) -> StorageResult<(i64, i64)> {
    let to_email = sign_in_codes::table
        .filter(sign_in_codes::email.eq(email))
        .filter(sign_in_codes::created_at.gt(since))
        .count()
        .get_result(conn)?;
    let from_ip = sign_in_codes::table
        .filter(sign_in_codes::ip.eq(ip))
        .filter(sign_in_codes::created_at.gt(since))
        .count()
        .get_result(conn)?;
    Ok((to_email, from_ip))
}

/// Deletes codes created before `before`; returns how many went.
pub fn purge_created_before(
    conn: &mut AnyConnection,
    before: NaiveDateTime,
) -> StorageResult<usize> {
    Ok(
        diesel::delete(sign_in_codes::table.filter(sign_in_codes::created_at.lt(before)))
            .execute(conn)?,
    )
}
