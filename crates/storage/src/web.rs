//! The browser flow's state: sessions of the authorization and portal pages,
//! e-mailed sign-in codes, checkouts and subscriptions. Secrets arrive here
//! already hashed; the rules (lifetimes, attempts, send limits) belong to
//! `tributary-auth` and the HTTP layer.

use crate::StorageResult;
use crate::db::AnyConnection;
use crate::schema::{accounts, checkouts, connections, sign_in_codes, users, web_sessions};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use tributary_domain::model::{AccountKind, CheckoutStatus};

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = web_sessions)]
pub struct WebSessionRecord {
    pub id: i64,
    pub token_hash: String,
    /// `authorize` or `portal`.
    pub purpose: String,
    pub app_id: i64,
    pub user_id: Option<i64>,
    pub redirect_uri: Option<String>,
    pub client_state: Option<String>,
    pub code_challenge: Option<String>,
    pub code_challenge_method: Option<String>,
    pub login_hint: Option<String>,
    pub pending_connection_id: Option<i64>,
    pub ip: Option<String>,
    pub expires_at: NaiveDateTime,
    pub created_at: NaiveDateTime,
}

#[derive(Debug, Clone, Default)]
pub struct NewWebSession<'a> {
    pub token_hash: &'a str,
    pub purpose: &'a str,
    pub app_id: i64,
    pub user_id: Option<i64>,
    pub redirect_uri: Option<&'a str>,
    pub client_state: Option<&'a str>,
    pub code_challenge: Option<&'a str>,
    pub code_challenge_method: Option<&'a str>,
    pub login_hint: Option<&'a str>,
    pub ip: Option<&'a str>,
    pub expires_at: NaiveDateTime,
    pub now: NaiveDateTime,
}

pub fn insert_session(conn: &mut AnyConnection, new: &NewWebSession<'_>) -> StorageResult<()> {
    diesel::insert_into(web_sessions::table)
        .values((
            web_sessions::token_hash.eq(new.token_hash),
            web_sessions::purpose.eq(new.purpose),
            web_sessions::app_id.eq(new.app_id),
            web_sessions::user_id.eq(new.user_id),
            web_sessions::redirect_uri.eq(new.redirect_uri),
            web_sessions::client_state.eq(new.client_state),
            web_sessions::code_challenge.eq(new.code_challenge),
            web_sessions::code_challenge_method.eq(new.code_challenge_method),
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
pub fn set_session_user(conn: &mut AnyConnection, id: i64, user_id: i64) -> StorageResult<()> {
    diesel::update(web_sessions::table.find(id))
        .set(web_sessions::user_id.eq(user_id))
        .execute(conn)?;
    Ok(())
}

pub fn set_pending_connection(
    conn: &mut AnyConnection,
    id: i64,
    connection_id: Option<i64>,
) -> StorageResult<()> {
    diesel::update(web_sessions::table.find(id))
        .set(web_sessions::pending_connection_id.eq(connection_id))
        .execute(conn)?;
    Ok(())
}

/// Deletes sessions that ended before `now` and sign-in codes created
/// before `codes_before`; returns how many rows went.
pub fn purge_expired(
    conn: &mut AnyConnection,
    now: NaiveDateTime,
    codes_before: NaiveDateTime,
) -> StorageResult<usize> {
    let sessions = diesel::delete(web_sessions::table.filter(web_sessions::expires_at.lt(now)))
        .execute(conn)?;
    let codes =
        diesel::delete(sign_in_codes::table.filter(sign_in_codes::created_at.lt(codes_before)))
            .execute(conn)?;
    Ok(sessions + codes)
}

pub fn delete_session(conn: &mut AnyConnection, id: i64) -> StorageResult<()> {
    diesel::delete(web_sessions::table.find(id)).execute(conn)?;
    Ok(())
}

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = sign_in_codes)]
pub struct SignInCodeRecord {
    pub id: i64,
    pub web_session_id: Option<i64>,
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
    pub web_session_id: i64,
    pub email: &'a str,
    pub ip: &'a str,
    pub code_hash: &'a str,
    pub expires_at: NaiveDateTime,
    pub now: NaiveDateTime,
}

pub fn insert_sign_in_code(conn: &mut AnyConnection, new: &NewSignInCode<'_>) -> StorageResult<()> {
    diesel::insert_into(sign_in_codes::table)
        .values((
            sign_in_codes::web_session_id.eq(new.web_session_id),
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
    web_session_id: i64,
) -> StorageResult<Option<SignInCodeRecord>> {
    Ok(sign_in_codes::table
        .filter(sign_in_codes::web_session_id.eq(web_session_id))
        .order(sign_in_codes::id.desc())
        .select(SignInCodeRecord::as_select())
        .first(conn)
        .optional()?)
}

/// Counts one attempt at a code; `false` when it already had `max` (the
/// update is conditional, so concurrent guesses cannot exceed the limit).
pub fn count_sign_in_attempt(conn: &mut AnyConnection, id: i64, max: i32) -> StorageResult<bool> {
    let updated = diesel::update(
        sign_in_codes::table
            .find(id)
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
    id: i64,
    now: NaiveDateTime,
) -> StorageResult<bool> {
    let updated = diesel::update(
        sign_in_codes::table
            .find(id)
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

/// Erases one of the user's connections and, through the foreign keys, its
/// accounts, transactions, balances, holdings and jobs. `false` when the
/// user has no such connection.
pub fn delete_connection(
    conn: &mut AnyConnection,
    user_id: i64,
    connection_id: i64,
) -> StorageResult<bool> {
    Ok(diesel::delete(
        connections::table
            .filter(connections::id.eq(connection_id))
            .filter(connections::user_id.eq(user_id)),
    )
    .execute(conn)?
        > 0)
}

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = checkouts)]
pub struct CheckoutRecord {
    pub id: i64,
    pub user_id: i64,
    pub processor: String,
    pub external_id: String,
    #[diesel(deserialize_as = String)]
    pub status: CheckoutStatus,
    pub subscription_reference: Option<String>,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
}

pub fn insert_checkout(
    conn: &mut AnyConnection,
    user_id: i64,
    processor: &str,
    external_id: &str,
    now: NaiveDateTime,
) -> StorageResult<()> {
    diesel::insert_into(checkouts::table)
        .values((
            checkouts::user_id.eq(user_id),
            checkouts::processor.eq(processor),
            checkouts::external_id.eq(external_id),
            checkouts::status.eq(CheckoutStatus::Open.as_str()),
            checkouts::created_at.eq(now),
            checkouts::updated_at.eq(now),
        ))
        .execute(conn)?;
    Ok(())
}

pub fn find_checkout(
    conn: &mut AnyConnection,
    processor: &str,
    external_id: &str,
) -> StorageResult<Option<CheckoutRecord>> {
    Ok(checkouts::table
        .filter(checkouts::processor.eq(processor))
        .filter(checkouts::external_id.eq(external_id))
        .select(CheckoutRecord::as_select())
        .first(conn)
        .optional()?)
}

/// The user's most recent checkout.
pub fn latest_checkout(
    conn: &mut AnyConnection,
    user_id: i64,
) -> StorageResult<Option<CheckoutRecord>> {
    Ok(checkouts::table
        .filter(checkouts::user_id.eq(user_id))
        .order(checkouts::id.desc())
        .select(CheckoutRecord::as_select())
        .first(conn)
        .optional()?)
}

pub fn set_checkout_status(
    conn: &mut AnyConnection,
    id: i64,
    status: CheckoutStatus,
    subscription_reference: Option<&str>,
    now: NaiveDateTime,
) -> StorageResult<()> {
    diesel::update(checkouts::table.find(id))
        .set((
            checkouts::status.eq(status.as_str()),
            checkouts::subscription_reference.eq(subscription_reference),
            checkouts::updated_at.eq(now),
        ))
        .execute(conn)?;
    Ok(())
}

/// Records that the user holds a paid subscription.
pub fn record_subscription(
    conn: &mut AnyConnection,
    user_id: i64,
    processor: &str,
    reference: &str,
    now: NaiveDateTime,
) -> StorageResult<()> {
    diesel::update(users::table.find(user_id))
        .set((
            users::subscription_processor.eq(processor),
            users::subscription_reference.eq(reference),
            users::subscribed_at.eq(now),
            users::updated_at.eq(now),
        ))
        .execute(conn)?;
    Ok(())
}

/// One of a user's accounts, as the browser pages list them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountSummary {
    pub connection_id: i64,
    pub id: i64,
    pub name: String,
    pub kind: AccountKind,
    pub currency: String,
    pub mask: Option<String>,
}

/// Every account of the user, by connection then id.
pub fn account_summaries(
    conn: &mut AnyConnection,
    user_id: i64,
) -> StorageResult<Vec<AccountSummary>> {
    let rows: Vec<(i64, i64, String, String, String, Option<String>)> = accounts::table
        .filter(accounts::user_id.eq(user_id))
        .order((accounts::connection_id, accounts::id))
        .select((
            accounts::connection_id,
            accounts::id,
            accounts::name,
            accounts::kind,
            accounts::currency,
            accounts::mask,
        ))
        .load(conn)?;
    rows.into_iter()
        .map(|(connection_id, id, name, kind, currency, mask)| {
            Ok(AccountSummary {
                connection_id,
                id,
                name,
                kind: kind.parse()?,
                currency,
                mask,
            })
        })
        .collect()
}
