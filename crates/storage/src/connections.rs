//! Connections (a user's link to one institution through one provider) and
//! the institutions they point at.

use crate::StorageResult;
use crate::backend;
use crate::db::AnyConnection;
use crate::notices::{self, Recipient};
use crate::schema::{accounts, connections, institutions};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use tributary_domain::access::Viewer;
use tributary_domain::ids::{ConnectionId, InstitutionId, UserId};
use tributary_domain::model::{ConnectionStatus, Provider};
use tributary_domain::notice::{Notice, ReminderStage};
use tributary_domain::snapshot::SnapshotInstitution;
use tributary_domain::status::StatusDetail;
use tributary_domain::webhook_event::WebhookEvent;

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = connections)]
struct ConnectionRow {
    #[diesel(deserialize_as = i64)]
    id: ConnectionId,
    #[diesel(deserialize_as = i64)]
    user_id: UserId,
    #[diesel(deserialize_as = i64)]
    institution_id: InstitutionId,
    #[diesel(deserialize_as = String)]
    provider: Provider,
    #[diesel(deserialize_as = String)]
    status: ConnectionStatus,
    status_reason: Option<String>,
    status_detail: Option<String>,
    settings: String,
    last_synced_at: Option<NaiveDateTime>,
    next_sync_at: Option<NaiveDateTime>,
    consecutive_failures: i32,
    consent_expires_at: Option<NaiveDateTime>,
    created_at: NaiveDateTime,
    updated_at: NaiveDateTime,
}

/// A connection as read back. Encrypted credentials are deliberately not
/// part of it: they are read only by the code that decrypts them.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectionRecord {
    pub id: ConnectionId,
    pub user_id: UserId,
    pub institution_id: InstitutionId,
    pub institution_name: String,
    pub provider: Provider,
    pub status: ConnectionStatus,
    /// In words: the provider's, or the detail's rendering for the API.
    pub status_reason: Option<String>,
    /// Why, as a code with its parameters, where Tributary knows.
    pub status_detail: Option<StatusDetail>,
    /// Non-secret provider settings.
    pub settings: serde_json::Value,
    pub last_synced_at: Option<NaiveDateTime>,
    pub next_sync_at: Option<NaiveDateTime>,
    pub consecutive_failures: i32,
    pub consent_expires_at: Option<NaiveDateTime>,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
}

impl ConnectionRow {
    fn into_record(self, institution_name: String) -> StorageResult<ConnectionRecord> {
        Ok(ConnectionRecord {
            id: self.id,
            user_id: self.user_id,
            institution_id: self.institution_id,
            institution_name,
            provider: self.provider,
            status: self.status,
            status_reason: self.status_reason,
            status_detail: self
                .status_detail
                .map(|json| serde_json::from_str(&json))
                .transpose()
                .map_err(|err| {
                    crate::StorageError::Corrupt(format!("connection status detail: {err}"))
                })?,
            settings: serde_json::from_str(&self.settings).map_err(|err| {
                crate::StorageError::Corrupt(format!("connection settings: {err}"))
            })?,
            last_synced_at: self.last_synced_at,
            next_sync_at: self.next_sync_at,
            consecutive_failures: self.consecutive_failures,
            consent_expires_at: self.consent_expires_at,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

pub fn upsert_institution(
    conn: &mut AnyConnection,
    provider: Provider,
    institution: &SnapshotInstitution,
) -> StorageResult<InstitutionId> {
    Ok(backend::upsert_institution(
        conn,
        provider.as_str(),
        institution,
    )?)
}

#[derive(Debug, Clone)]
pub struct NewConnection<'a> {
    pub user_id: UserId,
    pub provider: Provider,
    pub institution: &'a SnapshotInstitution,
    pub settings: &'a serde_json::Value,
    /// Already sealed (see `tributary_domain::secrets`); never plain text.
    pub sealed_credentials: Option<&'a [u8]>,
    pub consent_expires_at: Option<NaiveDateTime>,
    pub now: NaiveDateTime,
}

/// Creates an ACTIVE connection that has never synced.
pub fn create_connection(
    conn: &mut AnyConnection,
    new: &NewConnection<'_>,
) -> StorageResult<ConnectionRecord> {
    conn.atomically(|conn| {
        let institution_id = upsert_institution(conn, new.provider, new.institution)?;
        let id: i64 = diesel::insert_into(connections::table)
            .values((
                connections::user_id.eq(new.user_id.get()),
                connections::institution_id.eq(institution_id.get()),
                connections::provider.eq(new.provider.as_str()),
                connections::status.eq(ConnectionStatus::Active.as_str()),
                connections::settings.eq(new.settings.to_string()),
                connections::credentials_encrypted.eq(new.sealed_credentials),
                connections::consent_expires_at.eq(new.consent_expires_at),
                connections::next_sync_at.eq(new.now),
                connections::created_at.eq(new.now),
                connections::updated_at.eq(new.now),
            ))
            .returning(connections::id)
            .get_result(conn)?;
        get_connection(conn, ConnectionId::new(id))
    })
}

/// After the user signed in at the provider again: new settings and
/// credentials, the institution the provider names now (a user may choose
/// another bank; an aggregator names it only once the user has chosen),
/// status ACTIVE, failures forgotten, due for a sync now.
pub fn replace_credentials(
    conn: &mut AnyConnection,
    id: ConnectionId,
    institution: &SnapshotInstitution,
    settings: &serde_json::Value,
    sealed_credentials: Option<&[u8]>,
    consent_expires_at: Option<NaiveDateTime>,
    now: NaiveDateTime,
) -> StorageResult<ConnectionRecord> {
    let provider: String = connections::table
        .find(id.get())
        .select(connections::provider)
        .first(conn)?;
    let provider = provider
        .parse()
        .map_err(|err| crate::StorageError::Corrupt(format!("connection provider: {err}")))?;
    let institution_id = upsert_institution(conn, provider, institution)?;
    diesel::update(connections::table.find(id.get()))
        .set((
            connections::institution_id.eq(institution_id.get()),
            connections::settings.eq(settings.to_string()),
            connections::credentials_encrypted.eq(sealed_credentials),
            connections::consent_expires_at.eq(consent_expires_at),
            connections::status.eq(ConnectionStatus::Active.as_str()),
            connections::status_reason.eq(None::<String>),
            connections::status_detail.eq(None::<String>),
            connections::consecutive_failures.eq(0),
            connections::next_sync_at.eq(now),
            connections::updated_at.eq(now),
        ))
        .execute(conn)?;
    get_connection(conn, id)
}

pub fn get_connection(
    conn: &mut AnyConnection,
    id: ConnectionId,
) -> StorageResult<ConnectionRecord> {
    let (row, name): (ConnectionRow, String) = connections::table
        .inner_join(institutions::table)
        .filter(connections::id.eq(id.get()))
        .select((ConnectionRow::as_select(), institutions::name))
        .first(conn)?;
    row.into_record(name)
}

/// Connections of one user, or of everyone, oldest first.
pub fn list_connections(
    conn: &mut AnyConnection,
    user_id: Option<UserId>,
) -> StorageResult<Vec<ConnectionRecord>> {
    let mut query = connections::table
        .inner_join(institutions::table)
        .select((ConnectionRow::as_select(), institutions::name))
        .order(connections::id)
        .into_boxed();
    if let Some(user_id) = user_id {
        query = query.filter(connections::user_id.eq(user_id.get()));
    }
    let rows: Vec<(ConnectionRow, String)> = query.load(conn)?;
    rows.into_iter()
        .map(|(row, name)| row.into_record(name))
        .collect()
}

/// The connections of every user in `user_ids`, by user then oldest first
/// (a list of an app's users reads them in one query).
pub fn list_for_users(
    conn: &mut AnyConnection,
    user_ids: &[UserId],
) -> StorageResult<Vec<ConnectionRecord>> {
    let ids: Vec<i64> = user_ids.iter().map(|id| id.get()).collect();
    let rows: Vec<(ConnectionRow, String)> = connections::table
        .inner_join(institutions::table)
        .filter(connections::user_id.eq_any(ids))
        .select((ConnectionRow::as_select(), institutions::name))
        .order((connections::user_id, connections::id))
        .load(conn)?;
    rows.into_iter()
        .map(|(row, name)| row.into_record(name))
        .collect()
}

/// The connections through `provider` whose setting `key` is `value` (a
/// provider's webhook names an enrollment by it), leaving out those
/// disconnected or already waiting for the person (an event delivered
/// twice changes nothing more). Reads every such connection of the
/// provider's (its settings are JSON text): well within a self-hosted
/// server's size; a column of its own would index it.
pub fn with_setting(
    conn: &mut AnyConnection,
    provider: Provider,
    (key, value): (&str, &str),
) -> StorageResult<Vec<ConnectionId>> {
    let rows: Vec<(i64, String)> = connections::table
        .filter(connections::provider.eq(provider.as_str()))
        .filter(connections::status.ne_all([
            ConnectionStatus::Disconnected.as_str(),
            ConnectionStatus::ReauthRequired.as_str(),
        ]))
        .select((connections::id, connections::settings))
        .order(connections::id)
        .load(conn)?;
    Ok(rows
        .into_iter()
        .filter(|(_, settings)| {
            serde_json::from_str::<serde_json::Value>(settings)
                .is_ok_and(|settings| settings.get(key).and_then(|v| v.as_str()) == Some(value))
        })
        .map(|(id, _)| ConnectionId::new(id))
        .collect())
}

/// Records a failed sync: the new status, the reason in plain words, one more
/// consecutive failure.
pub fn record_failure(
    conn: &mut AnyConnection,
    id: ConnectionId,
    status: ConnectionStatus,
    reason: &str,
    detail: Option<&StatusDetail>,
    now: NaiveDateTime,
) -> StorageResult<()> {
    let detail = detail
        .map(serde_json::to_string)
        .transpose()
        .map_err(|err| crate::StorageError::Corrupt(format!("connection status detail: {err}")))?;
    conn.atomically(|conn| {
        let before = status_of(conn, id)?;
        diesel::update(connections::table.find(id.get()))
            .set((
                connections::status.eq(status.as_str()),
                connections::status_reason.eq(reason),
                connections::status_detail.eq(&detail),
                connections::consecutive_failures.eq(connections::consecutive_failures + 1),
                connections::updated_at.eq(now),
            ))
            .execute(conn)?;
        announce_status(conn, id, before, status, Some(reason), now)
    })
}

/// Writes `connection.consent_expiring` for each connection whose consent
/// ends within a week (and again within a day), once per reminder, and a
/// mail notice to its user, once per reminder too; how many connections
/// were reminded. Run by the scheduler.
pub fn announce_expiring_consents(
    conn: &mut AnyConnection,
    now: NaiveDateTime,
) -> StorageResult<usize> {
    let soon: Vec<(i64, i64, NaiveDateTime, String)> = connections::table
        .inner_join(institutions::table)
        .filter(connections::consent_expires_at.gt(now))
        .filter(connections::consent_expires_at.le(now + chrono::Duration::days(7)))
        .filter(connections::status.ne(ConnectionStatus::Disconnected.as_str()))
        .select((
            connections::id,
            connections::user_id,
            connections::consent_expires_at.assume_not_null(),
            institutions::name,
        ))
        .load(conn)?;
    let mut reminded = 0;
    for (id, user, expires, institution) in soon {
        let Some(stage) = ReminderStage::due(expires - now) else {
            continue;
        };
        let once = format!(
            "consent:{id}:{}:{}",
            expires.and_utc().timestamp(),
            stage.as_str()
        );
        let event = WebhookEvent::ConnectionConsentExpiring {
            connection_id: ConnectionId::new(id),
            expires_at: expires,
            stage,
        };
        let notice = Notice::ConsentExpiring {
            connection_id: ConnectionId::new(id),
            institution,
            expires_at: expires,
            stage,
        };
        let told = conn.atomically(|conn| {
            let heard =
                crate::webhooks::announce(conn, UserId::new(user), &event, Some(&once), now)?;
            let mailed = notices::record(
                conn,
                Recipient::User(UserId::new(user)),
                &notice,
                Some(&once),
                now,
            )?;
            Ok::<_, crate::StorageError>(heard || mailed)
        })?;
        reminded += usize::from(told);
    }
    Ok(reminded)
}

/// The connection's owner and status now.
fn status_of(
    conn: &mut AnyConnection,
    id: ConnectionId,
) -> StorageResult<(UserId, ConnectionStatus)> {
    let (user, status): (i64, String) = connections::table
        .find(id.get())
        .select((connections::user_id, connections::status))
        .first(conn)?;
    let status = status
        .parse()
        .map_err(|err| crate::StorageError::Corrupt(format!("connection status: {err}")))?;
    Ok((UserId::new(user), status))
}

/// `connection.status_changed`, when the status did change.
fn announce_status(
    conn: &mut AnyConnection,
    id: ConnectionId,
    (user_id, old): (UserId, ConnectionStatus),
    new: ConnectionStatus,
    reason: Option<&str>,
    now: NaiveDateTime,
) -> StorageResult<()> {
    if old == new {
        return Ok(());
    }
    let event = WebhookEvent::ConnectionStatusChanged {
        connection_id: id,
        old_status: old,
        new_status: new,
        reason: reason.map(str::to_owned),
    };
    crate::webhooks::announce(conn, user_id, &event, None, now)?;
    Ok(())
}

/// Records a successful sync (called inside the sync's own transaction);
/// `notice` is what the provider reported alongside its data, if anything.
pub(crate) fn record_success(
    conn: &mut AnyConnection,
    id: ConnectionId,
    notice: Option<&str>,
    now: NaiveDateTime,
) -> StorageResult<()> {
    let before = status_of(conn, id)?;
    announce_status(conn, id, before, ConnectionStatus::Active, notice, now)?;
    diesel::update(connections::table.find(id.get()))
        .set((
            connections::status.eq(ConnectionStatus::Active.as_str()),
            connections::status_reason.eq(notice),
            connections::status_detail.eq(None::<String>),
            // Stored: nothing waits to be chosen any more.
            connections::offered_accounts.eq(None::<String>),
            connections::consecutive_failures.eq(0),
            connections::last_synced_at.eq(now),
            connections::updated_at.eq(now),
        ))
        .execute(conn)?;
    Ok(())
}

pub fn set_next_sync(
    conn: &mut AnyConnection,
    id: ConnectionId,
    at: NaiveDateTime,
) -> StorageResult<()> {
    diesel::update(connections::table.find(id.get()))
        .set(connections::next_sync_at.eq(at))
        .execute(conn)?;
    Ok(())
}

/// Connections whose scheduled sync is due: ACTIVE or ERROR (a failed
/// connection keeps being tried on schedule), never REAUTH_REQUIRED (only the
/// user can fix that) or DISCONNECTED. Oldest due first.
pub fn due_for_sync(
    conn: &mut AnyConnection,
    now: NaiveDateTime,
    limit: usize,
) -> StorageResult<Vec<ConnectionId>> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    Ok(connections::table
        .filter(connections::next_sync_at.le(now))
        .filter(connections::status.eq_any([
            ConnectionStatus::Active.as_str(),
            ConnectionStatus::Error.as_str(),
        ]))
        .order((connections::next_sync_at, connections::id))
        .limit(limit)
        .select(connections::id)
        .load::<i64>(conn)?
        .into_iter()
        .map(ConnectionId::new)
        .collect())
}

/// The sealed credentials of a connection, if it has any.
pub fn sealed_credentials(
    conn: &mut AnyConnection,
    id: ConnectionId,
) -> StorageResult<Option<Vec<u8>>> {
    Ok(connections::table
        .find(id.get())
        .select(connections::credentials_encrypted)
        .first(conn)?)
}

/// Replaces the sealed credentials `expected` with `new`, only while they
/// are still stored (compared byte for byte, in one statement): `false`
/// when something else replaced them first.
pub fn swap_sealed_credentials(
    conn: &mut AnyConnection,
    id: ConnectionId,
    (expected, new): (Option<&[u8]>, Option<&[u8]>),
    now: NaiveDateTime,
) -> StorageResult<bool> {
    let target = connections::table.find(id.get());
    let values = (
        connections::credentials_encrypted.eq(new),
        connections::updated_at.eq(now),
    );
    let swapped = match expected {
        Some(bytes) => diesel::update(target.filter(connections::credentials_encrypted.eq(bytes)))
            .set(values)
            .execute(conn)?,
        None => diesel::update(target.filter(connections::credentials_encrypted.is_null()))
            .set(values)
            .execute(conn)?,
    };
    Ok(swapped == 1)
}

pub fn set_sealed_credentials(
    conn: &mut AnyConnection,
    id: ConnectionId,
    sealed: Option<&[u8]>,
    now: NaiveDateTime,
) -> StorageResult<()> {
    diesel::update(connections::table.find(id.get()))
        .set((
            connections::credentials_encrypted.eq(sealed),
            connections::updated_at.eq(now),
        ))
        .execute(conn)?;
    Ok(())
}

/// A connection's sealed credentials with what they are sealed under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealedCredentials {
    pub connection_id: ConnectionId,
    pub user_id: UserId,
    pub provider: Provider,
    pub sealed: Vec<u8>,
}

/// Every connection that has credentials.
pub fn all_sealed_credentials(conn: &mut AnyConnection) -> StorageResult<Vec<SealedCredentials>> {
    let rows: Vec<(i64, i64, String, Option<Vec<u8>>)> = connections::table
        .filter(connections::credentials_encrypted.is_not_null())
        .order(connections::id)
        .select((
            connections::id,
            connections::user_id,
            connections::provider,
            connections::credentials_encrypted,
        ))
        .load(conn)?;
    rows.into_iter()
        .filter_map(|(connection_id, user_id, provider, sealed)| {
            sealed.map(|sealed| {
                Ok(SealedCredentials {
                    connection_id: ConnectionId::new(connection_id),
                    user_id: UserId::new(user_id),
                    provider: provider.parse()?,
                    sealed,
                })
            })
        })
        .collect()
}

/// The connections a viewer may see: the user's own, and for a key
/// restricted to some accounts, only those holding one of them.
pub fn list_visible(
    conn: &mut AnyConnection,
    viewer: &Viewer,
) -> StorageResult<Vec<ConnectionRecord>> {
    load_visible(conn, viewer, None)
}

/// One connection, if the viewer may see it (see `list_visible`).
pub fn find_visible(
    conn: &mut AnyConnection,
    viewer: &Viewer,
    id: ConnectionId,
) -> StorageResult<Option<ConnectionRecord>> {
    Ok(load_visible(conn, viewer, Some(id))?.pop())
}

fn load_visible(
    conn: &mut AnyConnection,
    viewer: &Viewer,
    only: Option<ConnectionId>,
) -> StorageResult<Vec<ConnectionRecord>> {
    let mut query = connections::table
        .inner_join(institutions::table)
        .filter(connections::user_id.eq(viewer.user_id.get()))
        .select((ConnectionRow::as_select(), institutions::name))
        .order(connections::id)
        .into_boxed();
    if let Some(id) = only {
        query = query.filter(connections::id.eq(id.get()));
    }
    if let Some(scope) = &viewer.account_scope {
        query = query.filter(
            connections::id.eq_any(
                accounts::table
                    .filter(accounts::id.eq_any(scope.iter().map(|id| id.get())))
                    .select(accounts::connection_id),
            ),
        );
    }
    let rows: Vec<(ConnectionRow, String)> = query.load(conn)?;
    rows.into_iter()
        .map(|(row, name)| row.into_record(name))
        .collect()
}

/// Counts one provider sync against a daily quota of `limit` per UTC day;
/// `false` (and nothing counted) when today's quota is used up.
pub fn take_daily_quota(
    conn: &mut AnyConnection,
    id: ConnectionId,
    today: chrono::NaiveDate,
    limit: i32,
) -> StorageResult<bool> {
    conn.atomically(|conn| {
        let (day, used): (Option<chrono::NaiveDate>, i32) = connections::table
            .find(id.get())
            .select((connections::quota_day, connections::quota_used))
            .first(conn)?;
        let used_today = if day == Some(today) { used } else { 0 };
        if used_today >= limit {
            return Ok(false);
        }
        diesel::update(connections::table.find(id.get()))
            .set((
                connections::quota_day.eq(today),
                connections::quota_used.eq(used_today + 1),
            ))
            .execute(conn)?;
        Ok(true)
    })
}

/// Notes why a connection is waiting (e.g. a deferred sync) without
/// changing its status.
pub fn set_reason(
    conn: &mut AnyConnection,
    id: ConnectionId,
    reason: &str,
    now: NaiveDateTime,
) -> StorageResult<()> {
    diesel::update(connections::table.find(id.get()))
        .set((
            connections::status_reason.eq(reason),
            connections::status_detail.eq(None::<String>),
            connections::updated_at.eq(now),
        ))
        .execute(conn)?;
    Ok(())
}

/// Marks a connection DISCONNECTED and schedules nothing more for it; its
/// accounts, transactions, balances and holdings stay.
pub fn disconnect(
    conn: &mut AnyConnection,
    id: ConnectionId,
    now: NaiveDateTime,
) -> StorageResult<ConnectionRecord> {
    conn.atomically(|conn| {
        let before = status_of(conn, id)?;
        diesel::update(connections::table.find(id.get()))
            .set((
                connections::status.eq(ConnectionStatus::Disconnected.as_str()),
                connections::status_reason.eq(None::<String>),
                connections::status_detail.eq(None::<String>),
                connections::next_sync_at.eq(None::<NaiveDateTime>),
                connections::updated_at.eq(now),
            ))
            .execute(conn)?;
        announce_status(conn, id, before, ConnectionStatus::Disconnected, None, now)?;
        get_connection(conn, id)
    })
}

pub fn unschedule(conn: &mut AnyConnection, id: ConnectionId) -> StorageResult<()> {
    diesel::update(connections::table.find(id.get()))
        .set(connections::next_sync_at.eq(None::<NaiveDateTime>))
        .execute(conn)?;
    Ok(())
}

/// The user's one connection of `provider` that is never scheduled
/// (statement imports), created on first use.
pub fn unscheduled_connection(
    conn: &mut AnyConnection,
    new: &NewConnection<'_>,
) -> StorageResult<ConnectionRecord> {
    if let Some(existing) = list_connections(conn, Some(new.user_id))?
        .into_iter()
        .find(|c| c.provider == new.provider)
    {
        return Ok(existing);
    }
    let created = create_connection(conn, new)?;
    unschedule(conn, created.id)?;
    get_connection(conn, created.id)
}

/// Erases one of the user's connections and, through the foreign keys, its
/// accounts, transactions, balances, holdings and jobs. `false` when the
/// user has no such connection.
pub fn delete_connection(
    conn: &mut AnyConnection,
    user_id: UserId,
    connection_id: ConnectionId,
    now: NaiveDateTime,
) -> StorageResult<bool> {
    conn.atomically(|conn| {
        let theirs = connections::table
            .filter(connections::id.eq(connection_id.get()))
            .filter(connections::user_id.eq(user_id.get()));
        if diesel::select(diesel::dsl::exists(theirs.select(connections::id)))
            .get_result::<bool>(conn)?
        {
            // The change feed tells readers the transactions are gone.
            let seq = crate::changes::next_seq(conn, user_id)?;
            let account_ids: Vec<i64> = accounts::table
                .filter(accounts::connection_id.eq(connection_id.get()))
                .select(accounts::id)
                .load(conn)?;
            crate::changes::bury_accounts(conn, user_id, seq, &account_ids, now)?;
        }
        let deleted = diesel::delete(theirs).execute(conn)? > 0;
        if deleted {
            forget_unused_securities(conn, user_id)?;
        }
        Ok(deleted)
    })
}

/// Deletes `user_id`'s securities no holding or activity of theirs names
/// any more: what a removed connection's sources said of them goes too.
fn forget_unused_securities(conn: &mut AnyConnection, user_id: UserId) -> StorageResult<()> {
    use crate::schema::{holdings, investment_transactions, securities};
    // Only the user's own rows are read: by account, along their indexes.
    let theirs = || {
        accounts::table
            .filter(accounts::user_id.eq(user_id.get()))
            .select(accounts::id)
    };
    let held = holdings::table
        .filter(holdings::account_id.eq_any(theirs()))
        .select(holdings::security_id);
    let traded = investment_transactions::table
        .filter(investment_transactions::account_id.eq_any(theirs()))
        .filter(investment_transactions::security_id.is_not_null())
        .select(investment_transactions::security_id.assume_not_null());
    diesel::delete(
        securities::table
            .filter(securities::user_id.eq(user_id.get()))
            .filter(securities::id.ne_all(held))
            .filter(securities::id.ne_all(traded)),
    )
    .execute(conn)?;
    Ok(())
}
