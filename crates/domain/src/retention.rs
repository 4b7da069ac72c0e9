//! How long the rows that grow with time and are not a person's data are
//! kept (docs/operations.md, "Retention"): used, expired and revoked OAuth
//! tokens, codes and portal links; webhook deliveries that ended and their
//! events; finished sync jobs. Workers purge what is older, in small
//! batches (`tributary_storage::retention`).

use std::time::Duration;

const DAY: u64 = 24 * 3600;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// A token, code or portal link is kept this long after it expired,
    /// was used or was revoked. A refresh token replayed within it revokes
    /// its family (RFC 9700 §4.14.2); after it, it is merely unknown.
    pub credentials: Duration,
    /// A delivered, cancelled or abandoned webhook delivery, and an event
    /// none is pending for, is kept this long.
    pub webhooks: Duration,
    /// The newest finished (succeeded or deferred) sync jobs kept per
    /// connection.
    pub sync_jobs_per_connection: u32,
    /// A failed sync job is kept this long, whatever the count.
    pub failed_sync_jobs: Duration,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            credentials: Duration::from_secs(30 * DAY),
            webhooks: Duration::from_secs(30 * DAY),
            sync_jobs_per_connection: 20,
            failed_sync_jobs: Duration::from_secs(30 * DAY),
        }
    }
}
