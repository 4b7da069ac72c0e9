//! What a webhook tells, typed as mail notices are (`notice`): each event
//! with its data. Storage writes them to the outbox in the same transaction
//! as the change they tell of; the wire shape of each event's `data` is in
//! docs/changes.md#events (the user's id is added when it is written).

use crate::changes::FeedCursor;
use crate::ids::{AccountId, ConnectionId, SyncJobId};
use crate::model::{ConnectionStatus, WebhookEventType};
use crate::notice::ReminderStage;
use chrono::NaiveDateTime;
use serde_json::{Map, Value};

/// What one change did to one feed's rows: in these accounts, so many
/// added, modified and removed; the cursor reads the feed from just before
/// the change.
#[derive(Debug, Clone, PartialEq)]
pub struct FeedUpdate {
    pub account_ids: Vec<AccountId>,
    pub cursor: FeedCursor,
    pub added: usize,
    pub modified: usize,
    pub removed: usize,
}

/// One event, before it is addressed to its user.
#[derive(Debug, Clone, PartialEq)]
pub enum WebhookEvent {
    /// A sync or an import changed transactions (`GET /transactions/sync`).
    TransactionsUpdated(FeedUpdate),
    /// A sync or an import changed investment activity
    /// (`GET /investment_transactions/sync`).
    InvestmentTransactionsUpdated(FeedUpdate),
    /// A connection's status changed.
    ConnectionStatusChanged {
        connection_id: ConnectionId,
        old_status: ConnectionStatus,
        new_status: ConnectionStatus,
        reason: Option<String>,
    },
    /// A connection's consent ends soon (a week, then a day, before).
    ConnectionConsentExpiring {
        connection_id: ConnectionId,
        expires_at: NaiveDateTime,
        stage: ReminderStage,
    },
    /// A sync gave up after its retries.
    SyncFailed {
        connection_id: ConnectionId,
        job_id: SyncJobId,
        attempts: i32,
        reason: Option<String>,
    },
}

impl WebhookEvent {
    pub fn event_type(&self) -> WebhookEventType {
        match self {
            WebhookEvent::TransactionsUpdated(_) => WebhookEventType::TransactionsUpdated,
            WebhookEvent::InvestmentTransactionsUpdated(_) => {
                WebhookEventType::InvestmentTransactionsUpdated
            }
            WebhookEvent::ConnectionStatusChanged { .. } => {
                WebhookEventType::ConnectionStatusChanged
            }
            WebhookEvent::ConnectionConsentExpiring { .. } => {
                WebhookEventType::ConnectionConsentExpiring
            }
            WebhookEvent::SyncFailed { .. } => WebhookEventType::SyncFailed,
        }
    }

    /// The event's `data`, as the wire carries it (ids of accounts as
    /// strings, of connections and jobs as numbers, times in RFC 3339 UTC).
    pub fn data(&self) -> Map<String, Value> {
        let mut data = Map::new();
        match self {
            WebhookEvent::TransactionsUpdated(FeedUpdate {
                account_ids,
                cursor,
                added,
                modified,
                removed,
            })
            | WebhookEvent::InvestmentTransactionsUpdated(FeedUpdate {
                account_ids,
                cursor,
                added,
                modified,
                removed,
            }) => {
                let ids: Vec<String> = account_ids.iter().map(ToString::to_string).collect();
                data.insert("account_ids".into(), ids.into());
                data.insert("cursor".into(), cursor.to_text().into());
                data.insert("added".into(), (*added).into());
                data.insert("modified".into(), (*modified).into());
                data.insert("removed".into(), (*removed).into());
            }
            WebhookEvent::ConnectionStatusChanged {
                connection_id,
                old_status,
                new_status,
                reason,
            } => {
                data.insert("connection_id".into(), connection_id.get().into());
                data.insert("old_status".into(), old_status.as_str().into());
                data.insert("new_status".into(), new_status.as_str().into());
                data.insert("reason".into(), reason.clone().into());
            }
            WebhookEvent::ConnectionConsentExpiring {
                connection_id,
                expires_at,
                stage,
            } => {
                data.insert("connection_id".into(), connection_id.get().into());
                data.insert(
                    "consent_expires_at".into(),
                    expires_at
                        .and_utc()
                        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                        .into(),
                );
                data.insert("notice".into(), stage.as_str().into());
            }
            WebhookEvent::SyncFailed {
                connection_id,
                job_id,
                attempts,
                reason,
            } => {
                data.insert("connection_id".into(), connection_id.get().into());
                data.insert("job_id".into(), job_id.get().into());
                data.insert("attempts".into(), (*attempts).into());
                data.insert("reason".into(), reason.clone().into());
            }
        }
        data
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_event_has_its_type_and_its_wire_data() {
        let failed = WebhookEvent::SyncFailed {
            connection_id: ConnectionId::new(7),
            job_id: SyncJobId::new(9),
            attempts: 3,
            reason: None,
        };
        assert_eq!(failed.event_type(), WebhookEventType::SyncFailed);
        assert_eq!(
            Value::Object(failed.data()),
            json!({ "connection_id": 7, "job_id": 9, "attempts": 3, "reason": null })
        );
        let expiring = WebhookEvent::ConnectionConsentExpiring {
            connection_id: ConnectionId::new(2),
            expires_at: chrono::NaiveDate::from_ymd_opt(2026, 12, 1)
                .unwrap()
                .and_hms_opt(8, 30, 0)
                .unwrap(),
            stage: ReminderStage::DayBefore,
        };
        assert_eq!(
            Value::Object(expiring.data()),
            json!({
                "connection_id": 2,
                "consent_expires_at": "2026-12-01T08:30:00Z",
                "notice": "1d"
            })
        );
        let changed = WebhookEvent::ConnectionStatusChanged {
            connection_id: ConnectionId::new(2),
            old_status: ConnectionStatus::Active,
            new_status: ConnectionStatus::ReauthRequired,
            reason: Some("sign in again".into()),
        };
        assert_eq!(
            changed.data()["new_status"],
            json!(ConnectionStatus::ReauthRequired.as_str())
        );
    }
}
