//! Notices: what Tributary tells a person by mail on its own (not in answer
//! to something they did), beside the webhook an app may hear. Stored as
//! JSON until a worker sends them, so the shape here is the stored shape:
//! add fields with `#[serde(default)]`, never rename one.

use crate::ids::{ConnectionId, WebhookEndpointId};
use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};

/// Which reminder of a consent's end: a week before, or a day before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReminderStage {
    #[serde(rename = "7d")]
    WeekBefore,
    #[serde(rename = "1d")]
    DayBefore,
}

impl ReminderStage {
    /// The latest reminder due when the consent ends `left` from now, if
    /// any is.
    pub fn due(left: chrono::Duration) -> Option<Self> {
        if left <= chrono::Duration::zero() {
            None
        } else if left <= chrono::Duration::days(1) {
            Some(Self::DayBefore)
        } else if left <= chrono::Duration::days(7) {
            Some(Self::WeekBefore)
        } else {
            None
        }
    }

    /// As webhooks spell it (`notice` in `connection.consent_expiring`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::WeekBefore => "7d",
            Self::DayBefore => "1d",
        }
    }
}

/// One notice, as stored and as rendered into mail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Notice {
    /// A bank's consent ends soon: the user must reconnect before then or
    /// the connection stops syncing.
    ConsentExpiring {
        connection_id: ConnectionId,
        /// The bank, as the user knows it.
        institution: String,
        expires_at: NaiveDateTime,
        stage: ReminderStage,
    },
    /// A webhook endpoint was disabled by Tributary (it answered 410, or
    /// failed for days): its owner must fix and re-enable it.
    EndpointDisabled {
        endpoint_id: WebhookEndpointId,
        url: String,
        reason: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_due_reminder_is_chosen() {
        let hours = chrono::Duration::hours;
        assert_eq!(ReminderStage::due(hours(8 * 24)), None);
        assert_eq!(
            ReminderStage::due(hours(7 * 24)),
            Some(ReminderStage::WeekBefore)
        );
        assert_eq!(
            ReminderStage::due(hours(25)),
            Some(ReminderStage::WeekBefore)
        );
        assert_eq!(
            ReminderStage::due(hours(24)),
            Some(ReminderStage::DayBefore)
        );
        assert_eq!(ReminderStage::due(hours(1)), Some(ReminderStage::DayBefore));
        assert_eq!(ReminderStage::due(hours(0)), None);
    }

    #[test]
    fn the_stored_shape_is_stable() {
        let notice = Notice::ConsentExpiring {
            connection_id: ConnectionId::new(7),
            institution: "Example Bank".into(),
            expires_at: chrono::NaiveDate::from_ymd_opt(2026, 12, 1)
                .unwrap()
                .and_hms_opt(0, 0, 0)
                .unwrap(),
            stage: ReminderStage::DayBefore,
        };
        let stored = serde_json::to_value(&notice).unwrap();
        assert_eq!(
            stored,
            serde_json::json!({"kind": "consent_expiring", "connection_id": 7,
                "institution": "Example Bank", "expires_at": "2026-12-01T00:00:00",
                "stage": "1d"})
        );
        assert_eq!(serde_json::from_value::<Notice>(stored).unwrap(), notice);
    }
}
