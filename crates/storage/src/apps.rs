//! Platform apps, their redirect URIs, and the users they own.

use crate::backend;
use crate::db::AnyConnection;
use crate::schema::{app_redirect_uris, apps, sign_in_codes, users};
use crate::users::UserRecord;
use crate::{StorageError, StorageResult};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use tributary_domain::ids::{AppId, UserId};
use tributary_domain::model::{AppKind, BillingModel};

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = apps)]
pub struct AppRecord {
    #[diesel(deserialize_as = i64)]
    pub id: AppId,
    pub client_id: String,
    pub name: String,
    /// SHA-256 of the client secret; `None` for public apps.
    pub client_secret_hash: Option<String>,
    pub is_public: bool,
    #[diesel(deserialize_as = String)]
    pub billing_model: BillingModel,
    pub default_max_accounts: Option<i32>,
    pub created_at: NaiveDateTime,
    /// The built-in demo app (`platform-api`'s first start): the server's
    /// own callback page redeems its codes.
    pub is_demo: bool,
    /// A Platform app, or an assistant registered for MCP (`mcp_clients`).
    #[diesel(deserialize_as = String)]
    pub kind: AppKind,
    /// An assistant's registration: where from (for the registration
    /// limit), and when it last got a code or a token.
    pub registered_ip: Option<String>,
    pub last_used_at: Option<NaiveDateTime>,
}

#[derive(Debug, Clone)]
pub struct NewApp<'a> {
    pub client_id: &'a str,
    pub name: &'a str,
    pub client_secret_hash: Option<&'a str>,
    pub billing_model: BillingModel,
    pub default_max_accounts: Option<i32>,
    pub redirect_uris: &'a [String],
    pub now: NaiveDateTime,
}

pub fn create_app(conn: &mut AnyConnection, new: &NewApp<'_>) -> StorageResult<AppRecord> {
    conn.atomically(|conn| {
        let id = diesel::insert_into(apps::table)
            .values((
                apps::client_id.eq(new.client_id),
                apps::name.eq(new.name),
                apps::client_secret_hash.eq(new.client_secret_hash),
                apps::is_public.eq(new.client_secret_hash.is_none()),
                apps::billing_model.eq(new.billing_model.as_str()),
                apps::default_max_accounts.eq(new.default_max_accounts),
                apps::created_at.eq(new.now),
            ))
            .returning(apps::id)
            .get_result::<i64>(conn)
            .map(AppId::new)?;
        for uri in new.redirect_uris {
            add_redirect_uri(conn, id, uri, new.now)?;
        }
        get_app(conn, id)
    })
}

/// Whether the database has any app (a first start makes the demo app only
/// when it has none).
pub fn has_apps(conn: &mut AnyConnection) -> StorageResult<bool> {
    Ok(diesel::select(diesel::dsl::exists(
        apps::table
            .filter(apps::kind.eq(AppKind::Platform.as_str()))
            .select(apps::id),
    ))
    .get_result(conn)?)
}

/// Makes `id` the demo app.
pub fn mark_demo(conn: &mut AnyConnection, id: AppId) -> StorageResult<()> {
    diesel::update(apps::table.find(id.get()))
        .set(apps::is_demo.eq(true))
        .execute(conn)?;
    Ok(())
}

/// The demo app, when this database has one.
pub fn demo_app(conn: &mut AnyConnection) -> StorageResult<Option<AppRecord>> {
    Ok(apps::table
        .filter(apps::is_demo.eq(true))
        .order(apps::id)
        .select(AppRecord::as_select())
        .first(conn)
        .optional()?)
}

pub fn get_app(conn: &mut AnyConnection, id: AppId) -> StorageResult<AppRecord> {
    Ok(apps::table
        .find(id.get())
        .select(AppRecord::as_select())
        .first(conn)?)
}

/// The Platform app with this client id (an assistant registered for MCP
/// is not one: `mcp_clients::find`).
pub fn find_by_client_id(
    conn: &mut AnyConnection,
    client_id: &str,
) -> StorageResult<Option<AppRecord>> {
    find_of_kind(conn, client_id, AppKind::Platform)
}

/// The client of `kind` with this client id.
pub(crate) fn find_of_kind(
    conn: &mut AnyConnection,
    client_id: &str,
    kind: AppKind,
) -> StorageResult<Option<AppRecord>> {
    Ok(apps::table
        .filter(apps::client_id.eq(client_id))
        .filter(apps::kind.eq(kind.as_str()))
        .select(AppRecord::as_select())
        .first(conn)
        .optional()?)
}

/// Every Platform app.
pub fn list_apps(conn: &mut AnyConnection) -> StorageResult<Vec<AppRecord>> {
    Ok(apps::table
        .filter(apps::kind.eq(AppKind::Platform.as_str()))
        .order(apps::id)
        .select(AppRecord::as_select())
        .load(conn)?)
}

pub fn set_secret_hash(conn: &mut AnyConnection, id: AppId, hash: &str) -> StorageResult<()> {
    let updated = diesel::update(apps::table.find(id.get()).filter(apps::is_public.eq(false)))
        .set(apps::client_secret_hash.eq(hash))
        .execute(conn)?;
    if updated == 0 {
        return Err(StorageError::InvalidReference(format!(
            "app {id} does not exist or is public (public apps have no secret)"
        )));
    }
    Ok(())
}

pub fn redirect_uris(conn: &mut AnyConnection, app_id: AppId) -> StorageResult<Vec<String>> {
    Ok(app_redirect_uris::table
        .filter(app_redirect_uris::app_id.eq(app_id.get()))
        .order(app_redirect_uris::id)
        .select(app_redirect_uris::uri)
        .load(conn)?)
}

pub fn add_redirect_uri(
    conn: &mut AnyConnection,
    app_id: AppId,
    uri: &str,
    now: NaiveDateTime,
) -> StorageResult<()> {
    diesel::insert_into(app_redirect_uris::table)
        .values((
            app_redirect_uris::app_id.eq(app_id.get()),
            app_redirect_uris::uri.eq(uri),
            app_redirect_uris::created_at.eq(now),
        ))
        .execute(conn)?;
    Ok(())
}

/// `false` when the app had no such URI.
pub fn remove_redirect_uri(
    conn: &mut AnyConnection,
    app_id: AppId,
    uri: &str,
) -> StorageResult<bool> {
    let removed = diesel::delete(
        app_redirect_uris::table
            .filter(app_redirect_uris::app_id.eq(app_id.get()))
            .filter(app_redirect_uris::uri.eq(uri)),
    )
    .execute(conn)?;
    Ok(removed > 0)
}

/// What [`add_redirect_uri_up_to`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectUriAdded {
    Added,
    AlreadyRegistered,
    /// The app has as many as it may.
    Full,
}

/// Registers `uri` for `app_id` unless the app already has `max`: checked
/// and written under the app's lock, so concurrent adds cannot pass it.
pub fn add_redirect_uri_up_to(
    conn: &mut AnyConnection,
    app_id: AppId,
    uri: &str,
    max: usize,
    now: NaiveDateTime,
) -> StorageResult<RedirectUriAdded> {
    conn.atomically(|conn| {
        if !backend::lock_app(conn, app_id)? {
            return Err(StorageError::NotFound);
        }
        let registered = redirect_uris(conn, app_id)?;
        if registered.iter().any(|known| known == uri) {
            return Ok(RedirectUriAdded::AlreadyRegistered);
        }
        if registered.len() >= max {
            return Ok(RedirectUriAdded::Full);
        }
        add_redirect_uri(conn, app_id, uri, now)?;
        Ok(RedirectUriAdded::Added)
    })
}

/// What [`remove_redirect_uri_keeping_one`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectUriRemoved {
    Removed,
    NotRegistered,
    /// It is the app's last one, which stays.
    LastOne,
}

/// Removes `uri` from `app_id` unless it is the app's last redirect URI:
/// checked and written under the app's lock, so two concurrent removals
/// of an app's last two leave one.
pub fn remove_redirect_uri_keeping_one(
    conn: &mut AnyConnection,
    app_id: AppId,
    uri: &str,
) -> StorageResult<RedirectUriRemoved> {
    conn.atomically(|conn| {
        if !backend::lock_app(conn, app_id)? {
            return Err(StorageError::NotFound);
        }
        let registered = redirect_uris(conn, app_id)?;
        if !registered.iter().any(|known| known == uri) {
            return Ok(RedirectUriRemoved::NotRegistered);
        }
        if registered.len() == 1 {
            return Ok(RedirectUriRemoved::LastOne);
        }
        remove_redirect_uri(conn, app_id, uri)?;
        Ok(RedirectUriRemoved::Removed)
    })
}

/// A user of an app, by the id the app knows it by.
pub fn find_app_user(
    conn: &mut AnyConnection,
    app_id: AppId,
    public_id: &str,
) -> StorageResult<Option<UserRecord>> {
    Ok(users::table
        .filter(users::app_id.eq(app_id.get()))
        .filter(users::public_id.eq(public_id))
        .select(UserRecord::as_select())
        .first(conn)
        .optional()?)
}

pub fn find_app_user_by_email(
    conn: &mut AnyConnection,
    app_id: AppId,
    email: &str,
) -> StorageResult<Option<UserRecord>> {
    Ok(users::table
        .filter(users::app_id.eq(app_id.get()))
        .filter(users::email.eq(email))
        .select(UserRecord::as_select())
        .first(conn)
        .optional()?)
}

#[derive(Debug, Clone)]
pub struct NewAppUser<'a> {
    pub app_id: AppId,
    pub email: &'a str,
    pub public_id: &'a str,
    pub external_user_id: Option<&'a str>,
    pub max_accounts: Option<i32>,
    pub now: NaiveDateTime,
}

/// Creates the app's user with this e-mail, or returns the one that exists
/// (`false`). Safe under concurrency: the (app, e-mail) index decides.
pub fn create_or_get_app_user(
    conn: &mut AnyConnection,
    new: &NewAppUser<'_>,
) -> StorageResult<(UserRecord, bool)> {
    if let Some(user) = find_app_user_by_email(conn, new.app_id, new.email)? {
        return Ok((user, false));
    }
    let inserted = backend::insert_user_unless_exists(
        conn,
        &backend::AppUserRow {
            app_id: new.app_id,
            email: new.email,
            public_id: new.public_id,
            external_user_id: new.external_user_id,
            max_accounts: new.max_accounts,
            created_at: new.now,
            updated_at: new.now,
        },
    )?;
    let user =
        find_app_user_by_email(conn, new.app_id, new.email)?.ok_or(StorageError::NotFound)?;
    Ok((user, inserted))
}

#[derive(Debug, Clone, Default)]
pub struct AppUserChanges<'a> {
    pub email: Option<&'a str>,
    pub external_user_id: Option<Option<&'a str>>,
    pub max_accounts: Option<Option<i32>>,
}

pub fn update_app_user(
    conn: &mut AnyConnection,
    user_id: UserId,
    changes: &AppUserChanges<'_>,
    now: NaiveDateTime,
) -> StorageResult<UserRecord> {
    conn.atomically(|conn| {
        if let Some(email) = changes.email {
            diesel::update(users::table.find(user_id.get()))
                .set(users::email.eq(email))
                .execute(conn)?;
        }
        if let Some(external) = changes.external_user_id {
            diesel::update(users::table.find(user_id.get()))
                .set(users::external_user_id.eq(external))
                .execute(conn)?;
        }
        if let Some(max) = changes.max_accounts {
            diesel::update(users::table.find(user_id.get()))
                .set(users::max_accounts.eq(max))
                .execute(conn)?;
        }
        diesel::update(users::table.find(user_id.get()))
            .set(users::updated_at.eq(now))
            .execute(conn)?;
        Ok(users::table
            .find(user_id.get())
            .select(UserRecord::as_select())
            .first(conn)?)
    })
}

/// Erases a user and, through the foreign keys, everything that is theirs:
/// connections, accounts, transactions, balances, holdings, securities,
/// keys, tokens, codes, portal sessions and jobs. The sign-in codes sent to their address
/// go too: they name no user, only the address, which must not outlive
/// the user (the address's send limit starts afresh).
pub fn delete_user(conn: &mut AnyConnection, user_id: UserId) -> StorageResult<bool> {
    conn.atomically(|conn| {
        let Some(email) = users::table
            .find(user_id.get())
            .select(users::email)
            .first::<String>(conn)
            .optional()?
        else {
            return Ok(false);
        };
        diesel::delete(users::table.find(user_id.get())).execute(conn)?;
        diesel::delete(sign_in_codes::table.filter(sign_in_codes::email.eq(&email)))
            .execute(conn)?;
        Ok(true)
    })
}

/// The number of accounts a user may have, when limited: their own limit,
/// else their app's default when the integrator pays.
pub fn account_limit(conn: &mut AnyConnection, user_id: UserId) -> StorageResult<Option<i32>> {
    let (own, app_id): (Option<i32>, Option<i64>) = users::table
        .find(user_id.get())
        .select((users::max_accounts, users::app_id))
        .first(conn)?;
    if own.is_some() {
        return Ok(own);
    }
    let Some(app_id) = app_id else {
        return Ok(None);
    };
    let app = get_app(conn, AppId::new(app_id))?;
    Ok(effective_account_limit(own, &app))
}

/// The number of accounts a user of `app` whose own limit is `own` may
/// have: their own limit, else the app's default when the integrator pays.
pub fn effective_account_limit(own: Option<i32>, app: &AppRecord) -> Option<i32> {
    own.or(if app.billing_model == BillingModel::Integrator {
        app.default_max_accounts
    } else {
        None
    })
}

/// Deletes an app and, through the foreign keys, its redirect URIs, its
/// users and everything that is theirs; `false` when there was none.
pub fn delete_app(conn: &mut AnyConnection, id: AppId) -> StorageResult<bool> {
    Ok(diesel::delete(apps::table.find(id.get())).execute(conn)? > 0)
}
