//! Provider limits held across every worker (docs/operations.md, "Provider
//! limits"): each sync let through to a provider is an admission row,
//! counted while its job runs (the concurrency cap) and for one period (the
//! rate). Admissions to one provider take its gate row's lock, so two
//! workers never both take the last place.

use crate::StorageResult;
use crate::backend;
use crate::db::AnyConnection;
use crate::schema::{provider_admissions as admissions, sync_jobs};
use crate::sync_jobs::ClaimedJob;
use chrono::NaiveDateTime;
use diesel::prelude::*;
use tributary_domain::model::{Provider, SyncJobStatus};
use tributary_domain::provider_limits::ProviderLimits;

/// How soon a job held back by the concurrency cap looks again: a running
/// sync's end is not announced, so the queue asks again shortly.
pub const FULL_RETRY: chrono::Duration = chrono::Duration::seconds(1);

/// Whether a claimed job may ask its provider now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    Admitted,
    /// Held back, and put back in the queue until then.
    Deferred {
        until: NaiveDateTime,
    },
}

/// Lets `job` through to `provider` if both of `limits` allow it now, and
/// records it; otherwise puts the job back in the queue for when they may
/// (`sync_jobs::defer`), all in one transaction.
pub fn admit_or_defer(
    conn: &mut AnyConnection,
    job: &ClaimedJob,
    provider: Provider,
    limits: &ProviderLimits,
    now: NaiveDateTime,
) -> StorageResult<Admission> {
    let provider = provider.as_str();
    conn.atomically(|conn| {
        backend::lock_provider_gate(conn, provider, now)?;
        let period = limits
            .rate
            .and_then(|rate| chrono::Duration::from_std(rate.per).ok());
        let window_start = period.map_or(now, |per| now - per);
        forget_ended(conn, provider, window_start)?;
        let mut wait = None;
        if let Some(most) = limits.concurrent
            && running(conn, provider, job, now)? >= i64::from(most)
        {
            wait = Some(now + FULL_RETRY);
        }
        if let (Some(rate), Some(per)) = (limits.rate, period)
            && let Some(oldest) = oldest_filling(conn, provider, window_start, rate.syncs)?
        {
            wait = wait.max(Some(oldest + per));
        }
        if let Some(until) = wait {
            crate::sync_jobs::defer(conn, job, until)?;
            return Ok(Admission::Deferred { until });
        }
        diesel::insert_into(admissions::table)
            .values((
                admissions::provider.eq(provider),
                admissions::job_id.eq(job.id.get()),
                admissions::admitted_at.eq(now),
            ))
            .execute(conn)?;
        Ok(Admission::Admitted)
    })
}

/// Syncs of the provider running now other than `job`: admitted during
/// their present claim, lease still held.
fn running(
    conn: &mut AnyConnection,
    provider: &str,
    job: &ClaimedJob,
    now: NaiveDateTime,
) -> QueryResult<i64> {
    admissions::table
        .inner_join(sync_jobs::table)
        .filter(admissions::provider.eq(provider))
        .filter(sync_jobs::status.eq(SyncJobStatus::Running.as_str()))
        .filter(sync_jobs::lease_expires_at.ge(now))
        .filter(admissions::admitted_at.nullable().ge(sync_jobs::started_at))
        .filter(sync_jobs::id.ne(job.id.get()))
        .select(diesel::dsl::count(admissions::job_id).aggregate_distinct())
        .first(conn)
}

/// When the rate's window is full: the oldest of the admissions that fill
/// it (the next sync may go once that one has left the window).
fn oldest_filling(
    conn: &mut AnyConnection,
    provider: &str,
    window_start: NaiveDateTime,
    most: u32,
) -> QueryResult<Option<NaiveDateTime>> {
    let recent: Vec<NaiveDateTime> = admissions::table
        .filter(admissions::provider.eq(provider))
        .filter(admissions::admitted_at.gt(window_start))
        .order(admissions::admitted_at.desc())
        .limit(i64::from(most))
        .select(admissions::admitted_at)
        .load(conn)?;
    // The newest `most` admissions: a full window waits for the oldest of
    // them to leave it.
    Ok(
        (recent.len() >= usize::try_from(most).unwrap_or(usize::MAX))
            .then(|| recent.last().copied())
            .flatten(),
    )
}

/// Deletes the provider's admissions that count for nothing any more: out
/// of the rate's window and their sync no longer running.
fn forget_ended(
    conn: &mut AnyConnection,
    provider: &str,
    window_start: NaiveDateTime,
) -> QueryResult<usize> {
    let still_running = sync_jobs::table
        .filter(sync_jobs::status.eq(SyncJobStatus::Running.as_str()))
        .select(sync_jobs::id);
    diesel::delete(
        admissions::table
            .filter(admissions::provider.eq(provider))
            .filter(admissions::admitted_at.le(window_start))
            .filter(admissions::job_id.ne_all(still_running)),
    )
    .execute(conn)
}
