//! Assistants that read a person's data over MCP (docs/mcp.md, "OAuth"):
//! the clients that registered themselves (apps of kind `mcp`, public,
//! with their redirect URIs) and the consents ("grants") people gave them,
//! each with the accounts it may read. The rules (what a registration may
//! say, lifetimes) are `tributary-auth`'s `mcp` module.

use crate::apps::{self, AppRecord};
use crate::db::AnyConnection;
use crate::schema::{
    accounts, apps as apps_table, mcp_grant_accounts, mcp_grants, oauth_codes, oauth_tokens,
};
use crate::{StorageError, StorageResult};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use tributary_domain::ids::{AccountId, AppId, GrantId, UserId};
use tributary_domain::model::{AppKind, BillingModel};

#[derive(Debug, Clone)]
pub struct NewClient<'a> {
    pub client_id: &'a str,
    pub name: &'a str,
    pub redirect_uris: &'a [String],
    /// Where the registration came from (for the registration limit).
    pub ip: &'a str,
    pub now: NaiveDateTime,
}

/// Registers a public client of kind `mcp`.
pub fn register(conn: &mut AnyConnection, new: &NewClient<'_>) -> StorageResult<AppRecord> {
    conn.atomically(|conn| {
        let id = diesel::insert_into(apps_table::table)
            .values((
                apps_table::client_id.eq(new.client_id),
                apps_table::name.eq(new.name),
                apps_table::is_public.eq(true),
                apps_table::billing_model.eq(BillingModel::Integrator.as_str()),
                apps_table::created_at.eq(new.now),
                apps_table::kind.eq(AppKind::Mcp.as_str()),
                apps_table::registered_ip.eq(new.ip),
            ))
            .returning(apps_table::id)
            .get_result::<i64>(conn)
            .map(AppId::new)?;
        for uri in new.redirect_uris {
            apps::add_redirect_uri(conn, id, uri, new.now)?;
        }
        apps::get_app(conn, id)
    })
}

/// The registered MCP client with this client id.
pub fn find(conn: &mut AnyConnection, client_id: &str) -> StorageResult<Option<AppRecord>> {
    apps::find_of_kind(conn, client_id, AppKind::Mcp)
}

/// The registered MCP client with this client id, unless its registration
/// has expired: no consent in force and nothing done since `idle_since`
/// ([`purge_unused`] deletes such registrations; until it runs, they are
/// as good as gone).
pub fn find_live(
    conn: &mut AnyConnection,
    client_id: &str,
    idle_since: NaiveDateTime,
) -> StorageResult<Option<AppRecord>> {
    let Some(client) = find(conn, client_id)? else {
        return Ok(None);
    };
    let last_activity = client
        .last_used_at
        .unwrap_or(client.created_at)
        .max(client.created_at);
    if last_activity >= idle_since {
        return Ok(Some(client));
    }
    let consented: bool = diesel::select(diesel::dsl::exists(
        mcp_grants::table
            .filter(mcp_grants::app_id.eq(client.id.get()))
            .filter(mcp_grants::revoked_at.is_null()),
    ))
    .get_result(conn)?;
    Ok(consented.then_some(client))
}

/// How many clients `ip` registered since `since`.
pub fn registrations_since(
    conn: &mut AnyConnection,
    ip: &str,
    since: NaiveDateTime,
) -> StorageResult<i64> {
    Ok(apps_table::table
        .filter(apps_table::kind.eq(AppKind::Mcp.as_str()))
        .filter(apps_table::registered_ip.eq(ip))
        .filter(apps_table::created_at.ge(since))
        .count()
        .get_result(conn)?)
}

/// Notes that the client got a code or a token at `now`.
pub fn mark_used(conn: &mut AnyConnection, id: AppId, now: NaiveDateTime) -> StorageResult<()> {
    diesel::update(apps_table::table.find(id.get()))
        .set(apps_table::last_used_at.eq(now))
        .execute(conn)?;
    Ok(())
}

/// Deletes the registrations nobody uses: no consent in force, and nothing
/// done since `idle_since` (their codes, tokens and revoked grants go with
/// them). How many went.
pub fn purge_unused(conn: &mut AnyConnection, idle_since: NaiveDateTime) -> StorageResult<usize> {
    let live = mcp_grants::table
        .filter(mcp_grants::revoked_at.is_null())
        .select(mcp_grants::app_id);
    let idle: Vec<i64> = apps_table::table
        .filter(apps_table::kind.eq(AppKind::Mcp.as_str()))
        .filter(apps_table::created_at.lt(idle_since))
        .filter(
            apps_table::last_used_at
                .is_null()
                .or(apps_table::last_used_at.lt(idle_since)),
        )
        .filter(diesel::dsl::not(apps_table::id.eq_any(live)))
        .select(apps_table::id)
        .limit(500)
        .load(conn)?;
    if idle.is_empty() {
        return Ok(0);
    }
    Ok(diesel::delete(apps_table::table.filter(apps_table::id.eq_any(&idle))).execute(conn)?)
}

/// A person's consent to one assistant.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = mcp_grants)]
pub struct GrantRecord {
    #[diesel(deserialize_as = i64)]
    pub id: GrantId,
    #[diesel(deserialize_as = i64)]
    pub user_id: UserId,
    #[diesel(deserialize_as = i64)]
    pub app_id: AppId,
    pub created_at: NaiveDateTime,
    pub last_used_at: Option<NaiveDateTime>,
    pub revoked_at: Option<NaiveDateTime>,
}

/// Records that `user_id` lets the client `app_id` read `accounts` (each
/// must be theirs: `InvalidReference` otherwise, and nothing is written).
pub fn create_grant(
    conn: &mut AnyConnection,
    user_id: UserId,
    app_id: AppId,
    chosen: &[AccountId],
    now: NaiveDateTime,
) -> StorageResult<GrantId> {
    conn.atomically(|conn| {
        let theirs: Vec<i64> = accounts::table
            .filter(accounts::user_id.eq(user_id.get()))
            .filter(accounts::id.eq_any(chosen.iter().map(|a| a.get())))
            .select(accounts::id)
            .load(conn)?;
        let mut wanted: Vec<i64> = chosen.iter().map(|a| a.get()).collect();
        wanted.sort_unstable();
        wanted.dedup();
        if theirs.len() != wanted.len() {
            return Err(StorageError::InvalidReference(
                "an account chosen is not the person's".into(),
            ));
        }
        let id = diesel::insert_into(mcp_grants::table)
            .values((
                mcp_grants::user_id.eq(user_id.get()),
                mcp_grants::app_id.eq(app_id.get()),
                mcp_grants::created_at.eq(now),
            ))
            .returning(mcp_grants::id)
            .get_result::<i64>(conn)?;
        for account in wanted {
            diesel::insert_into(mcp_grant_accounts::table)
                .values((
                    mcp_grant_accounts::grant_id.eq(id),
                    mcp_grant_accounts::account_id.eq(account),
                ))
                .execute(conn)?;
        }
        Ok(GrantId::new(id))
    })
}

/// The grant and the accounts it lets its client read (those still
/// there), in id order.
pub fn grant_scope(
    conn: &mut AnyConnection,
    id: GrantId,
) -> StorageResult<Option<(GrantRecord, Vec<AccountId>)>> {
    let Some(grant) = mcp_grants::table
        .find(id.get())
        .select(GrantRecord::as_select())
        .first(conn)
        .optional()?
    else {
        return Ok(None);
    };
    let accounts: Vec<i64> = mcp_grant_accounts::table
        .filter(mcp_grant_accounts::grant_id.eq(id.get()))
        .order(mcp_grant_accounts::account_id)
        .select(mcp_grant_accounts::account_id)
        .load(conn)?;
    Ok(Some((
        grant,
        accounts.into_iter().map(AccountId::new).collect(),
    )))
}

/// Notes the grant's use at `now`.
pub fn touch_grant(conn: &mut AnyConnection, id: GrantId, now: NaiveDateTime) -> StorageResult<()> {
    diesel::update(mcp_grants::table.find(id.get()))
        .set(mcp_grants::last_used_at.eq(now))
        .execute(conn)?;
    Ok(())
}

/// An assistant a person let in, as the dashboard lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectedApp {
    pub grant: GrantRecord,
    pub client_name: String,
    pub redirect_uris: Vec<String>,
    pub accounts: Vec<AccountId>,
}

/// The consents in force of `user_id`, newest first.
pub fn connected_apps(
    conn: &mut AnyConnection,
    user_id: UserId,
) -> StorageResult<Vec<ConnectedApp>> {
    let grants: Vec<(GrantRecord, String)> = mcp_grants::table
        .inner_join(apps_table::table)
        .filter(mcp_grants::user_id.eq(user_id.get()))
        .filter(mcp_grants::revoked_at.is_null())
        .order(mcp_grants::id.desc())
        .select((GrantRecord::as_select(), apps_table::name))
        .load(conn)?;
    let mut listed = Vec::with_capacity(grants.len());
    for (grant, client_name) in grants {
        let Some((_, accounts)) = grant_scope(conn, grant.id)? else {
            continue;
        };
        listed.push(ConnectedApp {
            redirect_uris: apps::redirect_uris(conn, grant.app_id)?,
            grant,
            client_name,
            accounts,
        });
    }
    Ok(listed)
}

/// Revokes `user_id`'s grant `id` and every token issued under it, in one
/// transaction; `false` when it is not theirs or was revoked already.
pub fn revoke_grant(
    conn: &mut AnyConnection,
    user_id: UserId,
    id: GrantId,
    now: NaiveDateTime,
) -> StorageResult<bool> {
    conn.atomically(|conn| {
        let revoked = diesel::update(
            mcp_grants::table
                .find(id.get())
                .filter(mcp_grants::user_id.eq(user_id.get()))
                .filter(mcp_grants::revoked_at.is_null()),
        )
        .set(mcp_grants::revoked_at.eq(now))
        .execute(conn)?;
        if revoked == 0 {
            return Ok(false);
        }
        diesel::update(
            oauth_tokens::table
                .filter(oauth_tokens::grant_id.eq(id.get()))
                .filter(oauth_tokens::revoked_at.is_null()),
        )
        .set(oauth_tokens::revoked_at.eq(now))
        .execute(conn)?;
        // A code not yet exchanged is spent too: it would bring tokens of
        // a consent that no longer stands.
        diesel::update(
            oauth_codes::table
                .filter(oauth_codes::grant_id.eq(id.get()))
                .filter(oauth_codes::redeemed_at.is_null()),
        )
        .set(oauth_codes::redeemed_at.eq(now))
        .execute(conn)?;
        Ok(true)
    })
}
