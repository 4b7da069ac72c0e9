//! Purges what has outlived its retention (`tributary_domain::retention`):
//! each kind of row in batches of [`BATCH`] by id, each batch its own
//! statement, so that a purge never holds a lock for long and another
//! worker's claim or a person's request waits at most one batch.

use crate::StorageResult;
use crate::db::AnyConnection;
use crate::schema::{
    oauth_codes, oauth_tokens, portal_sessions, sync_jobs, webhook_deliveries, webhook_events,
};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use tributary_domain::model::{DeliveryStatus, SyncJobStatus};
use tributary_domain::retention::Retention;

/// Rows deleted by one statement.
pub const BATCH: i64 = 500;

/// How many rows of each kind one purge removed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Purged {
    pub tokens: usize,
    pub codes: usize,
    pub portal_links: usize,
    pub deliveries: usize,
    pub events: usize,
    pub sync_jobs: usize,
}

impl Purged {
    pub fn total(&self) -> usize {
        self.tokens
            + self.codes
            + self.portal_links
            + self.deliveries
            + self.events
            + self.sync_jobs
    }
}

fn cutoff(now: NaiveDateTime, kept: std::time::Duration) -> NaiveDateTime {
    now - chrono::Duration::from_std(kept).unwrap_or(chrono::Duration::days(36_500))
}

/// Deletes, batch by batch, the ids `next_batch` finds until a batch
/// comes back short; how many.
fn in_batches(
    conn: &mut AnyConnection,
    mut next_batch: impl FnMut(&mut AnyConnection) -> QueryResult<Vec<i64>>,
    mut delete: impl FnMut(&mut AnyConnection, &[i64]) -> QueryResult<usize>,
) -> StorageResult<usize> {
    let mut purged = 0;
    loop {
        let ids = next_batch(conn)?;
        if !ids.is_empty() {
            purged += delete(conn, &ids)?;
        }
        if (ids.len() as i64) < BATCH {
            return Ok(purged);
        }
    }
}

/// Purges everything `retention` no longer keeps as of `now`.
pub fn purge(
    conn: &mut AnyConnection,
    retention: &Retention,
    now: NaiveDateTime,
) -> StorageResult<Purged> {
    let credentials = cutoff(now, retention.credentials);
    let webhooks = cutoff(now, retention.webhooks);
    let failed_jobs = cutoff(now, retention.failed_sync_jobs);
    Ok(Purged {
        tokens: in_batches(
            conn,
            |conn| {
                oauth_tokens::table
                    .filter(
                        oauth_tokens::expires_at
                            .lt(credentials)
                            .or(oauth_tokens::used_at.lt(credentials))
                            .or(oauth_tokens::revoked_at.lt(credentials)),
                    )
                    .select(oauth_tokens::id)
                    .limit(BATCH)
                    .load(conn)
            },
            |conn, ids| {
                diesel::delete(oauth_tokens::table.filter(oauth_tokens::id.eq_any(ids)))
                    .execute(conn)
            },
        )?,
        codes: in_batches(
            conn,
            |conn| {
                oauth_codes::table
                    .filter(oauth_codes::expires_at.lt(credentials))
                    .select(oauth_codes::id)
                    .limit(BATCH)
                    .load(conn)
            },
            |conn, ids| {
                diesel::delete(oauth_codes::table.filter(oauth_codes::id.eq_any(ids))).execute(conn)
            },
        )?,
        portal_links: in_batches(
            conn,
            |conn| {
                portal_sessions::table
                    .filter(portal_sessions::expires_at.lt(credentials))
                    .select(portal_sessions::id)
                    .limit(BATCH)
                    .load(conn)
            },
            |conn, ids| {
                diesel::delete(portal_sessions::table.filter(portal_sessions::id.eq_any(ids)))
                    .execute(conn)
            },
        )?,
        deliveries: in_batches(
            conn,
            |conn| {
                webhook_deliveries::table
                    .filter(webhook_deliveries::status.ne(DeliveryStatus::Pending.as_str()))
                    .filter(webhook_deliveries::created_at.lt(webhooks))
                    .select(webhook_deliveries::id)
                    .limit(BATCH)
                    .load(conn)
            },
            |conn, ids| {
                diesel::delete(webhook_deliveries::table.filter(webhook_deliveries::id.eq_any(ids)))
                    .execute(conn)
            },
        )?,
        // An event with a `once_key` stands for "already announced" (a
        // consent's reminder): it stays, or the reminder would go again.
        events: in_batches(
            conn,
            |conn| {
                let pending = webhook_deliveries::table
                    .filter(webhook_deliveries::event_id.eq(webhook_events::id))
                    .select(webhook_deliveries::id);
                webhook_events::table
                    .filter(webhook_events::created_at.lt(webhooks))
                    .filter(webhook_events::once_key.is_null())
                    .filter(diesel::dsl::not(diesel::dsl::exists(pending)))
                    .select(webhook_events::id)
                    .limit(BATCH)
                    .load(conn)
            },
            |conn, ids| {
                diesel::delete(webhook_events::table.filter(webhook_events::id.eq_any(ids)))
                    .execute(conn)
            },
        )?,
        sync_jobs: purge_failed_jobs(conn, failed_jobs)?
            + purge_finished_jobs(conn, retention.sync_jobs_per_connection)?,
    })
}

fn purge_failed_jobs(conn: &mut AnyConnection, before: NaiveDateTime) -> StorageResult<usize> {
    in_batches(
        conn,
        |conn| {
            sync_jobs::table
                .filter(sync_jobs::status.eq(SyncJobStatus::Failed.as_str()))
                .filter(sync_jobs::finished_at.lt(before))
                .select(sync_jobs::id)
                .limit(BATCH)
                .load(conn)
        },
        |conn, ids| {
            diesel::delete(sync_jobs::table.filter(sync_jobs::id.eq_any(ids))).execute(conn)
        },
    )
}

/// Keeps the newest `kept` finished jobs of each connection; queued,
/// running and failed ones are not counted or touched.
fn purge_finished_jobs(conn: &mut AnyConnection, kept: u32) -> StorageResult<usize> {
    let finished = [
        SyncJobStatus::Succeeded.as_str(),
        SyncJobStatus::Deferred.as_str(),
    ];
    let mut purged = 0;
    loop {
        // Connections with more than they keep, a batch of them at a time.
        let over: Vec<i64> = sync_jobs::table
            .filter(sync_jobs::status.eq_any(finished))
            .group_by(sync_jobs::connection_id)
            .having(diesel::dsl::count(sync_jobs::id).gt(i64::from(kept)))
            .select(sync_jobs::connection_id)
            .limit(BATCH)
            .load(conn)?;
        for connection in &over {
            let oldest_kept: Option<i64> = sync_jobs::table
                .filter(sync_jobs::connection_id.eq(connection))
                .filter(sync_jobs::status.eq_any(finished))
                .order(sync_jobs::id.desc())
                .offset(i64::from(kept.max(1)) - 1)
                .select(sync_jobs::id)
                .first(conn)
                .optional()?;
            if let Some(oldest_kept) = oldest_kept {
                purged += in_batches(
                    conn,
                    |conn| {
                        sync_jobs::table
                            .filter(sync_jobs::connection_id.eq(connection))
                            .filter(sync_jobs::status.eq_any(finished))
                            .filter(sync_jobs::id.lt(oldest_kept))
                            .select(sync_jobs::id)
                            .limit(BATCH)
                            .load(conn)
                    },
                    |conn, ids| {
                        diesel::delete(sync_jobs::table.filter(sync_jobs::id.eq_any(ids)))
                            .execute(conn)
                    },
                )?;
            }
        }
        if (over.len() as i64) < BATCH {
            return Ok(purged);
        }
    }
}
