//! How a claimed sync job ends when it stores no snapshot, each in one
//! transaction, so that a job's state and its connection's never disagree
//! (a job failed whose connection still reads ACTIVE, a job deferred whose
//! connection says nothing). A job that stores its snapshot ends in
//! [`crate::sync_apply::apply_for_job`], also one transaction.

use crate::StorageResult;
use crate::connections;
use crate::db::AnyConnection;
use crate::sync_jobs::{self, ClaimedJob};
use chrono::{NaiveDate, NaiveDateTime};
use tributary_domain::model::{ConnectionStatus, SyncJobStatus};
use tributary_domain::status::StatusDetail;

/// Why a job failed, as its connection will show it.
#[derive(Debug, Clone, Copy)]
pub struct Failure<'a> {
    pub status: ConnectionStatus,
    pub reason: &'a str,
    pub detail: Option<&'a StatusDetail>,
}

/// Records `failure` on the job's connection and ends the job as failed for
/// good (`sync.failed`), or, with `retry_at`, puts it back in the queue
/// until then.
pub fn fail(
    conn: &mut AnyConnection,
    job: &ClaimedJob,
    failure: Failure<'_>,
    retry_at: Option<NaiveDateTime>,
    now: NaiveDateTime,
) -> StorageResult<()> {
    conn.atomically(|conn| {
        connections::record_failure(
            conn,
            job.connection_id,
            failure.status,
            failure.reason,
            failure.detail,
            now,
        )?;
        match retry_at {
            Some(when) => sync_jobs::retry_later(conn, job, when, failure.reason),
            None => sync_jobs::finish(
                conn,
                job,
                SyncJobStatus::Failed,
                None,
                Some(failure.reason),
                now,
            ),
        }
    })
}

/// A provider's daily quota of syncs per connection.
#[derive(Debug, Clone, Copy)]
pub struct DailyQuota<'a> {
    pub limit: i32,
    pub today: NaiveDate,
    /// When the job may run again if today's quota is used up.
    pub next_window: NaiveDateTime,
    /// What the connection says meanwhile.
    pub reason: &'a str,
}

/// Takes one sync of the job's connection's daily quota: true when taken;
/// false when it was used up, and then the job waits in the queue until
/// the next window and its connection says why.
pub fn take_quota_or_defer(
    conn: &mut AnyConnection,
    job: &ClaimedJob,
    quota: DailyQuota<'_>,
    now: NaiveDateTime,
) -> StorageResult<bool> {
    conn.atomically(|conn| {
        if connections::take_daily_quota(conn, job.connection_id, quota.today, quota.limit)? {
            return Ok(true);
        }
        sync_jobs::retry_later(conn, job, quota.next_window, quota.reason)?;
        connections::set_reason(conn, job.connection_id, quota.reason, now)?;
        Ok(false)
    })
}
