//! Webhooks: the endpoints users and apps register, the outbox of events
//! (written in the same transaction as the change that caused them, so an
//! event is never lost nor sent for a change that rolled back) and each
//! event's delivery to each endpoint, which workers claim under a lease.
//! Secrets arrive sealed (`tributary-auth`'s keyring); this module never
//! sees one in the clear.

use crate::db::AnyConnection;
use crate::notices::{self, Recipient};
use crate::schema::{users, webhook_deliveries, webhook_endpoints, webhook_events};
use crate::{StorageError, StorageResult};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use rand::Rng as _;
use tributary_domain::ids::{AppId, UserId, WebhookDeliveryId, WebhookEndpointId, WebhookEventId};
use tributary_domain::model::{DeliveryStatus, WebhookEventType};
use tributary_domain::notice::Notice;
use tributary_domain::webhook_event::WebhookEvent;

/// Who owns an endpoint: a Personal user, or an app (it hears about all
/// its users).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndpointOwner {
    User(UserId),
    App(AppId),
}

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = webhook_endpoints)]
struct EndpointRow {
    id: i64,
    user_id: Option<i64>,
    app_id: Option<i64>,
    url: String,
    event_types: String,
    secret_sealed: String,
    previous_secret_sealed: Option<String>,
    previous_secret_until: Option<NaiveDateTime>,
    enabled: bool,
    disabled_reason: Option<String>,
    failing_since: Option<NaiveDateTime>,
    created_at: NaiveDateTime,
    updated_at: NaiveDateTime,
}

/// An endpoint as read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointRecord {
    pub id: WebhookEndpointId,
    pub owner: EndpointOwner,
    pub url: String,
    pub event_types: Vec<WebhookEventType>,
    pub secret_sealed: String,
    /// The secret before the last rotation, and until when it signs too.
    pub previous_secret: Option<(String, NaiveDateTime)>,
    pub enabled: bool,
    pub disabled_reason: Option<String>,
    pub failing_since: Option<NaiveDateTime>,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
}

impl TryFrom<EndpointRow> for EndpointRecord {
    type Error = StorageError;
    fn try_from(row: EndpointRow) -> StorageResult<Self> {
        let owner = match (row.user_id, row.app_id) {
            (Some(user), None) => EndpointOwner::User(UserId::new(user)),
            (None, Some(app)) => EndpointOwner::App(AppId::new(app)),
            _ => return Err(StorageError::Corrupt("webhook endpoint owner".into())),
        };
        let event_types = row
            .event_types
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .map_err(|err| StorageError::Corrupt(format!("webhook event types: {err}")))?;
        Ok(EndpointRecord {
            id: WebhookEndpointId::new(row.id),
            owner,
            url: row.url,
            event_types,
            secret_sealed: row.secret_sealed,
            previous_secret: row.previous_secret_sealed.zip(row.previous_secret_until),
            enabled: row.enabled,
            disabled_reason: row.disabled_reason,
            failing_since: row.failing_since,
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }
}

fn event_types_text(types: &[WebhookEventType]) -> String {
    types
        .iter()
        .map(|t| t.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

fn owned_by(
    owner: EndpointOwner,
) -> Box<
    dyn BoxableExpression<
            webhook_endpoints::table,
            crate::db::MultiBackend,
            SqlType = diesel::sql_types::Bool,
        >,
> {
    match owner {
        EndpointOwner::User(user) => {
            Box::new(webhook_endpoints::user_id.eq(user.get()).assume_not_null())
        }
        EndpointOwner::App(app) => {
            Box::new(webhook_endpoints::app_id.eq(app.get()).assume_not_null())
        }
    }
}

#[derive(Debug, Clone)]
pub struct NewEndpoint<'a> {
    pub owner: EndpointOwner,
    pub url: &'a str,
    pub event_types: &'a [WebhookEventType],
    pub secret_sealed: &'a str,
    pub now: NaiveDateTime,
}

pub fn create_endpoint(
    conn: &mut AnyConnection,
    new: &NewEndpoint<'_>,
) -> StorageResult<EndpointRecord> {
    let (user_id, app_id) = match new.owner {
        EndpointOwner::User(user) => (Some(user.get()), None),
        EndpointOwner::App(app) => (None, Some(app.get())),
    };
    let id: i64 = diesel::insert_into(webhook_endpoints::table)
        .values((
            webhook_endpoints::user_id.eq(user_id),
            webhook_endpoints::app_id.eq(app_id),
            webhook_endpoints::url.eq(new.url),
            webhook_endpoints::event_types.eq(event_types_text(new.event_types)),
            webhook_endpoints::secret_sealed.eq(new.secret_sealed),
            webhook_endpoints::enabled.eq(true),
            webhook_endpoints::created_at.eq(new.now),
            webhook_endpoints::updated_at.eq(new.now),
        ))
        .returning(webhook_endpoints::id)
        .get_result(conn)?;
    get_endpoint(conn, WebhookEndpointId::new(id))
}

pub fn get_endpoint(
    conn: &mut AnyConnection,
    id: WebhookEndpointId,
) -> StorageResult<EndpointRecord> {
    webhook_endpoints::table
        .find(id.get())
        .select(EndpointRow::as_select())
        .first(conn)?
        .try_into()
}

/// The owner's endpoints, oldest first.
pub fn list_endpoints(
    conn: &mut AnyConnection,
    owner: EndpointOwner,
) -> StorageResult<Vec<EndpointRecord>> {
    webhook_endpoints::table
        .filter(owned_by(owner))
        .order(webhook_endpoints::id)
        .select(EndpointRow::as_select())
        .load(conn)?
        .into_iter()
        .map(TryInto::try_into)
        .collect()
}

/// The endpoint `id` when `owner` owns it; another's reads as missing.
pub fn find_endpoint(
    conn: &mut AnyConnection,
    owner: EndpointOwner,
    id: WebhookEndpointId,
) -> StorageResult<Option<EndpointRecord>> {
    webhook_endpoints::table
        .filter(webhook_endpoints::id.eq(id.get()))
        .filter(owned_by(owner))
        .select(EndpointRow::as_select())
        .first(conn)
        .optional()?
        .map(TryInto::try_into)
        .transpose()
}

/// Deletes the owner's endpoint and its deliveries; `false` when there was
/// none of theirs.
pub fn delete_endpoint(
    conn: &mut AnyConnection,
    owner: EndpointOwner,
    id: WebhookEndpointId,
) -> StorageResult<bool> {
    Ok(diesel::delete(
        webhook_endpoints::table
            .filter(webhook_endpoints::id.eq(id.get()))
            .filter(owned_by(owner)),
    )
    .execute(conn)?
        > 0)
}

/// Enables (`reason` none) or disables an endpoint of the owner's. A
/// disabled endpoint's pending deliveries are cancelled; an enabled one
/// starts afresh (no failures counted).
pub fn set_enabled(
    conn: &mut AnyConnection,
    owner: EndpointOwner,
    id: WebhookEndpointId,
    reason: Option<&str>,
    now: NaiveDateTime,
) -> StorageResult<Option<EndpointRecord>> {
    conn.atomically(|conn| {
        if find_endpoint(conn, owner, id)?.is_none() {
            return Ok(None);
        }
        disable_or_enable(conn, id, reason, now)?;
        Ok(Some(get_endpoint(conn, id)?))
    })
}

fn disable_or_enable(
    conn: &mut AnyConnection,
    id: WebhookEndpointId,
    reason: Option<&str>,
    now: NaiveDateTime,
) -> StorageResult<()> {
    diesel::update(webhook_endpoints::table.find(id.get()))
        .set((
            webhook_endpoints::enabled.eq(reason.is_none()),
            webhook_endpoints::disabled_reason.eq(reason),
            webhook_endpoints::failing_since.eq(None::<NaiveDateTime>),
            webhook_endpoints::updated_at.eq(now),
        ))
        .execute(conn)?;
    if reason.is_some() {
        diesel::update(
            webhook_deliveries::table
                .filter(webhook_deliveries::endpoint_id.eq(id.get()))
                .filter(webhook_deliveries::status.eq(DeliveryStatus::Pending.as_str())),
        )
        .set((
            webhook_deliveries::status.eq(DeliveryStatus::Cancelled.as_str()),
            webhook_deliveries::lease_until.eq(None::<NaiveDateTime>),
        ))
        .execute(conn)?;
    }
    Ok(())
}

/// Writes a mail notice to the owner of an endpoint Tributary disabled: a
/// Personal user, or the developer who owns the app (the operator's own
/// apps have none: the log tells the operator).
fn tell_owner_of_disabling(
    conn: &mut AnyConnection,
    endpoint: &EndpointRecord,
    reason: &str,
    now: NaiveDateTime,
) -> StorageResult<()> {
    let recipient = match endpoint.owner {
        EndpointOwner::User(user) => Some(Recipient::User(user)),
        EndpointOwner::App(app) => {
            crate::developers::owner_of(conn, app)?.map(Recipient::Developer)
        }
    };
    if let Some(recipient) = recipient {
        let notice = Notice::EndpointDisabled {
            endpoint_id: endpoint.id,
            url: endpoint.url.clone(),
            reason: reason.to_owned(),
        };
        notices::record(conn, recipient, &notice, None, now)?;
    }
    Ok(())
}

/// Replaces the owner's endpoint's secret; the one it replaces still signs
/// until `previous_until`.
pub fn rotate_secret(
    conn: &mut AnyConnection,
    owner: EndpointOwner,
    id: WebhookEndpointId,
    new_sealed: &str,
    previous_until: NaiveDateTime,
    now: NaiveDateTime,
) -> StorageResult<Option<EndpointRecord>> {
    conn.atomically(|conn| {
        let Some(endpoint) = find_endpoint(conn, owner, id)? else {
            return Ok(None);
        };
        diesel::update(webhook_endpoints::table.find(id.get()))
            .set((
                webhook_endpoints::previous_secret_sealed.eq(Some(&endpoint.secret_sealed)),
                webhook_endpoints::previous_secret_until.eq(Some(previous_until)),
                webhook_endpoints::secret_sealed.eq(new_sealed),
                webhook_endpoints::updated_at.eq(now),
            ))
            .execute(conn)?;
        Ok(Some(get_endpoint(conn, id)?))
    })
}

/// A new event's outbox row.
#[derive(Debug, Clone)]
pub struct NewEvent<'a> {
    pub user_id: UserId,
    pub event_type: WebhookEventType,
    /// The body sent, as JSON.
    pub payload: &'a serde_json::Value,
    /// Writes the event at most once for this key (a consent reminder).
    pub once_key: Option<&'a str>,
    pub now: NaiveDateTime,
}

/// Writes an event to the outbox, with a pending delivery to each enabled
/// endpoint that listens for its type: the user's own, and their app's.
/// Run it inside the transaction of the change it tells of. `None` when
/// `once_key` was used before, or when no endpoint listens (nothing is
/// written then).
pub fn record_event(
    conn: &mut AnyConnection,
    new: &NewEvent<'_>,
) -> StorageResult<Option<WebhookEventId>> {
    conn.atomically(|conn| {
        if let Some(key) = new.once_key {
            let used: bool = diesel::select(diesel::dsl::exists(
                webhook_events::table.filter(webhook_events::once_key.eq(key)),
            ))
            .get_result(conn)?;
            if used {
                return Ok(None);
            }
        }
        let app: Option<i64> = users::table
            .find(new.user_id.get())
            .select(users::app_id)
            .first(conn)?;
        let mut listening = webhook_endpoints::table
            .filter(webhook_endpoints::enabled.eq(true))
            .filter(
                webhook_endpoints::user_id
                    .eq(new.user_id.get())
                    .or(webhook_endpoints::app_id.eq(app.unwrap_or(-1))),
            )
            .select(EndpointRow::as_select())
            .load(conn)?;
        listening.retain(|row| {
            row.event_types
                .split_whitespace()
                .any(|t| t == new.event_type.as_str())
        });
        // No endpoint listens: nothing to send, and an outbox row would only
        // grow the table (an endpoint registered later gets later events).
        if listening.is_empty() {
            return Ok(None);
        }
        let id: i64 = diesel::insert_into(webhook_events::table)
            .values((
                webhook_events::message_id.eq(new_message_id()),
                webhook_events::event_type.eq(new.event_type.as_str()),
                webhook_events::user_id.eq(new.user_id.get()),
                webhook_events::payload.eq(new.payload.to_string()),
                webhook_events::once_key.eq(new.once_key),
                webhook_events::created_at.eq(new.now),
            ))
            .returning(webhook_events::id)
            .get_result(conn)?;
        for endpoint in listening {
            schedule_delivery(conn, WebhookEndpointId::new(endpoint.id), id, new.now)?;
        }
        Ok(Some(WebhookEventId::new(id)))
    })
}

/// Writes `event` about `user_id` to the outbox, in the Standard Webhooks
/// shape `{type, timestamp, data}`; `data` gains the user's id as their app
/// knows it (a Personal user's own id otherwise). Called by the changes
/// themselves, in their transactions; `false` when `once_key` was used
/// before and nothing was written.
pub(crate) fn announce(
    conn: &mut AnyConnection,
    user_id: UserId,
    event: &WebhookEvent,
    once_key: Option<&str>,
    now: NaiveDateTime,
) -> StorageResult<bool> {
    let public_id: Option<String> = users::table
        .find(user_id.get())
        .select(users::public_id)
        .first(conn)?;
    let mut data = event.data();
    data.insert(
        "user_id".into(),
        public_id.unwrap_or_else(|| user_id.to_string()).into(),
    );
    let event_type = event.event_type();
    let payload = serde_json::json!({
        "type": event_type.as_str(),
        "timestamp": now.and_utc().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "data": data,
    });
    Ok(record_event(
        conn,
        &NewEvent {
            user_id,
            event_type,
            payload: &payload,
            once_key,
            now,
        },
    )?
    .is_some())
}

fn new_message_id() -> String {
    let mut bytes = [0u8; 16];
    rand::rng().fill_bytes(&mut bytes);
    let text: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("msg_{text}")
}

fn schedule_delivery(
    conn: &mut AnyConnection,
    endpoint: WebhookEndpointId,
    event: i64,
    now: NaiveDateTime,
) -> StorageResult<()> {
    diesel::insert_into(webhook_deliveries::table)
        .values((
            webhook_deliveries::endpoint_id.eq(endpoint.get()),
            webhook_deliveries::event_id.eq(event),
            webhook_deliveries::status.eq(DeliveryStatus::Pending.as_str()),
            webhook_deliveries::next_attempt_at.eq(now),
            webhook_deliveries::created_at.eq(now),
        ))
        .execute(conn)?;
    Ok(())
}

/// A delivery a worker holds: what to send, where, signed with what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedDelivery {
    pub id: WebhookDeliveryId,
    /// Attempts so far, this one included.
    pub attempts: i32,
    pub message_id: String,
    pub payload: String,
    pub endpoint: EndpointRecord,
}

/// Claims up to `limit` due deliveries for a worker until `lease_until`
/// (a worker that dies holding one lets it go when the lease ends), each
/// attempt counted as it is claimed.
pub fn claim_due(
    conn: &mut AnyConnection,
    now: NaiveDateTime,
    lease_until: NaiveDateTime,
    limit: i64,
) -> StorageResult<Vec<ClaimedDelivery>> {
    let ids = crate::backend::claim_deliveries(conn, now, lease_until, limit)?;
    let mut claimed = Vec::with_capacity(ids.len());
    for (id, attempts) in ids {
        let (endpoint, message_id, payload): (EndpointRow, String, String) =
            webhook_deliveries::table
                .find(id)
                .inner_join(webhook_endpoints::table)
                .inner_join(webhook_events::table)
                .select((
                    EndpointRow::as_select(),
                    webhook_events::message_id,
                    webhook_events::payload,
                ))
                .first(conn)?;
        claimed.push(ClaimedDelivery {
            id: WebhookDeliveryId::new(id),
            attempts,
            message_id,
            payload,
            endpoint: endpoint.try_into()?,
        });
    }
    Ok(claimed)
}

/// How an attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// A 2xx.
    Delivered { status: i32 },
    /// Try again at `at`.
    Retry {
        at: NaiveDateTime,
        status: Option<i32>,
        error: String,
    },
    /// The schedule is spent.
    GivenUp { status: Option<i32>, error: String },
    /// The receiver asked for no more (410), or failed for too long: the
    /// endpoint is disabled, with this reason.
    DisableEndpoint {
        status: Option<i32>,
        error: String,
        reason: String,
    },
}

/// Records an attempt's outcome; `false` when the worker no longer held the
/// delivery (its lease ran out and another took it), and nothing changed.
pub fn record_attempt(
    conn: &mut AnyConnection,
    delivery: &ClaimedDelivery,
    outcome: &AttemptOutcome,
    now: NaiveDateTime,
) -> StorageResult<bool> {
    conn.atomically(|conn| {
        // Another worker that took the delivery over counted an attempt.
        let held = webhook_deliveries::table
            .filter(webhook_deliveries::id.eq(delivery.id.get()))
            .filter(webhook_deliveries::status.eq(DeliveryStatus::Pending.as_str()))
            .filter(webhook_deliveries::attempts.eq(delivery.attempts));
        let (status, last_status, error, next, delivered_at) = match outcome {
            AttemptOutcome::Delivered { status } => (
                DeliveryStatus::Delivered,
                Some(*status),
                None,
                now,
                Some(now),
            ),
            AttemptOutcome::Retry { at, status, error } => (
                DeliveryStatus::Pending,
                *status,
                Some(error.as_str()),
                *at,
                None,
            ),
            AttemptOutcome::GivenUp { status, error }
            | AttemptOutcome::DisableEndpoint { status, error, .. } => (
                DeliveryStatus::Failed,
                *status,
                Some(error.as_str()),
                now,
                None,
            ),
        };
        let updated = diesel::update(held)
            .set((
                webhook_deliveries::status.eq(status.as_str()),
                webhook_deliveries::last_status.eq(last_status),
                webhook_deliveries::last_error.eq(error),
                webhook_deliveries::next_attempt_at.eq(next),
                webhook_deliveries::delivered_at.eq(delivered_at),
                webhook_deliveries::lease_until.eq(None::<NaiveDateTime>),
            ))
            .execute(conn)?;
        if updated == 0 {
            return Ok(false);
        }
        let endpoint = delivery.endpoint.id;
        match outcome {
            AttemptOutcome::Delivered { .. } => {
                diesel::update(webhook_endpoints::table.find(endpoint.get()))
                    .set(webhook_endpoints::failing_since.eq(None::<NaiveDateTime>))
                    .execute(conn)?;
            }
            AttemptOutcome::DisableEndpoint { reason, .. } => {
                disable_or_enable(conn, endpoint, Some(reason), now)?;
                tell_owner_of_disabling(conn, &delivery.endpoint, reason, now)?;
            }
            AttemptOutcome::Retry { .. } | AttemptOutcome::GivenUp { .. } => {
                diesel::update(
                    webhook_endpoints::table
                        .find(endpoint.get())
                        .filter(webhook_endpoints::failing_since.is_null()),
                )
                .set(webhook_endpoints::failing_since.eq(now))
                .execute(conn)?;
            }
        }
        Ok(true)
    })
}

/// One line of an endpoint's delivery log.
#[derive(Debug, Clone, PartialEq, Eq, Queryable)]
pub struct DeliveryLine {
    #[diesel(deserialize_as = i64)]
    pub id: WebhookDeliveryId,
    pub message_id: String,
    #[diesel(deserialize_as = String)]
    pub event_type: WebhookEventType,
    #[diesel(deserialize_as = String)]
    pub status: DeliveryStatus,
    pub attempts: i32,
    pub last_status: Option<i32>,
    pub last_error: Option<String>,
    pub next_attempt_at: NaiveDateTime,
    pub created_at: NaiveDateTime,
    pub delivered_at: Option<NaiveDateTime>,
}

/// The endpoint's newest deliveries first, at most `limit`.
pub fn delivery_log(
    conn: &mut AnyConnection,
    endpoint: WebhookEndpointId,
    limit: i64,
) -> StorageResult<Vec<DeliveryLine>> {
    Ok(webhook_deliveries::table
        .inner_join(webhook_events::table)
        .filter(webhook_deliveries::endpoint_id.eq(endpoint.get()))
        .order(webhook_deliveries::id.desc())
        .limit(limit)
        .select((
            webhook_deliveries::id,
            webhook_events::message_id,
            webhook_events::event_type,
            webhook_deliveries::status,
            webhook_deliveries::attempts,
            webhook_deliveries::last_status,
            webhook_deliveries::last_error,
            webhook_deliveries::next_attempt_at,
            webhook_deliveries::created_at,
            webhook_deliveries::delivered_at,
        ))
        .load(conn)?)
}

/// Sends a delivery of the endpoint's again (same webhook-id), from a fresh
/// schedule; `false` when it is not one of the endpoint's.
pub fn replay(
    conn: &mut AnyConnection,
    endpoint: WebhookEndpointId,
    delivery: WebhookDeliveryId,
    now: NaiveDateTime,
) -> StorageResult<bool> {
    Ok(diesel::update(
        webhook_deliveries::table
            .filter(webhook_deliveries::id.eq(delivery.get()))
            .filter(webhook_deliveries::endpoint_id.eq(endpoint.get())),
    )
    .set((
        webhook_deliveries::status.eq(DeliveryStatus::Pending.as_str()),
        webhook_deliveries::attempts.eq(0),
        webhook_deliveries::next_attempt_at.eq(now),
        webhook_deliveries::lease_until.eq(None::<NaiveDateTime>),
    ))
    .execute(conn)?
        > 0)
}
