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
    pub browser_hash: Option<String>,
}

/// Where a code was sent from, and so the only place it works.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeBinding {
    /// A browser-flow session of the Platform interface.
    WebSession(WebSessionId),
    /// A browser signing in to the Personal dashboard, which has no session
    /// yet: the SHA-256 of the random token in its sign-in cookie.
    Browser(String),
}

/// Where a person asked for a code. Each surface has send budgets of its
/// own, so sends through one never use up another's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignInSurface {
    /// The Platform's authorization (and portal) pages, any app's.
    Authorize,
    /// The Personal dashboard.
    Dashboard,
    /// The developer dashboard of platform-api.
    Developers,
}

impl SignInSurface {
    pub fn as_str(self) -> &'static str {
        match self {
            SignInSurface::Authorize => "authorize",
            SignInSurface::Dashboard => "dashboard",
            SignInSurface::Developers => "developers",
        }
    }
}

#[derive(Debug, Clone)]
pub struct NewSignInCode<'a> {
    pub surface: SignInSurface,
    pub binding: &'a CodeBinding,
    pub email: &'a str,
    pub ip: &'a str,
    pub code_hash: &'a str,
    pub expires_at: NaiveDateTime,
    pub now: NaiveDateTime,
}

pub fn insert_sign_in_code(conn: &mut AnyConnection, new: &NewSignInCode<'_>) -> StorageResult<()> {
    diesel::insert_into(sign_in_codes::table)
        .values((
            sign_in_codes::web_session_id.eq(match new.binding {
                CodeBinding::WebSession(id) => Some(id.get()),
                CodeBinding::Browser(_) => None,
            }),
            sign_in_codes::browser_hash.eq(match new.binding {
                CodeBinding::WebSession(_) => None,
                CodeBinding::Browser(hash) => Some(hash),
            }),
            sign_in_codes::surface.eq(new.surface.as_str()),
            sign_in_codes::email.eq(new.email),
            sign_in_codes::ip.eq(new.ip),
            sign_in_codes::code_hash.eq(new.code_hash),
            sign_in_codes::expires_at.eq(new.expires_at),
            sign_in_codes::created_at.eq(new.now),
        ))
        .execute(conn)?;
    Ok(())
}

/// The code most recently sent to this session or browser (earlier ones
/// are void).
pub fn latest_sign_in_code(
    conn: &mut AnyConnection,
    binding: &CodeBinding,
) -> StorageResult<Option<SignInCodeRecord>> {
    let mut query = sign_in_codes::table.into_boxed();
    query = match binding {
        CodeBinding::WebSession(id) => query.filter(sign_in_codes::web_session_id.eq(id.get())),
        CodeBinding::Browser(hash) => query.filter(sign_in_codes::browser_hash.eq(hash)),
    };
    Ok(query
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

/// What a surface's sends since some time count against its budgets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendsCounted {
    /// Codes for this address asked for from this IP.
    pub to_address_from_ip: i64,
    /// Codes asked for from this IP, for any address.
    pub from_ip: i64,
}

/// The codes asked for through `surface` after `since`: for `email` from
/// `ip`, and from `ip` for any address.
pub fn sign_in_codes_sent_since(
    conn: &mut AnyConnection,
    surface: SignInSurface,
    email: &str,
    ip: &str,
    since: NaiveDateTime,
) -> StorageResult<SendsCounted> {
    let from_ip = || {
        sign_in_codes::table
            .filter(sign_in_codes::surface.eq(surface.as_str()))
            .filter(sign_in_codes::ip.eq(ip))
            .filter(sign_in_codes::created_at.gt(since))
    };
    Ok(SendsCounted {
        to_address_from_ip: from_ip()
            .filter(sign_in_codes::email.eq(email))
            .count()
            .get_result(conn)?,
        from_ip: from_ip().count().get_result(conn)?,
    })
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
