//! Provider limits held across every worker (docs/operations.md, "Provider
//! limits"): each sync let through to a provider is an admission row,
//! counted while its job runs (the concurrency cap) and for one period (the
//! rate). Admissions to one provider take its gate row's lock, so two
//! workers never both take the last place.

use crate::StorageResult;
use crate::backend;
use crate::db::AnyConnection;
use crate::schema::{provider_admissions as admissions, provider_gates as gates, sync_jobs};
use crate::sync_jobs::ClaimedJob;
use chrono::NaiveDateTime;
use diesel::prelude::*;
use tributary_domain::model::{Provider, SyncJobStatus};
use tributary_domain::provider_limits::ProviderLimits;

/// How soon a job held back by the concurrency cap looks again (a running
/// sync's end is not announced); a backlog of them is spread over this
/// period, `K` at a time ([`spacing`]).
pub const FULL_RETRY: chrono::Duration = chrono::Duration::seconds(1);

/// One sync let through: its row of `provider_admissions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdmissionId(i64);

/// Whether a claimed job may ask its provider now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    Admitted(AdmissionId),
    /// Held back, and put back in the queue until then.
    Deferred {
        until: NaiveDateTime,
    },
}

/// Lets `job` through to `provider` if both of `limits` allow it now, and
/// records it; otherwise puts the job back in the queue (`sync_jobs::defer`)
/// for its slot: the first moment the limits may allow it, or, behind
/// others already held back, one [`spacing`] after the last of them, so a
/// backlog wakes at the pace the provider takes, not all at once. All in
/// one transaction, under the provider's gate.
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
        if let Some(earliest) = wait {
            let next_slot: Option<NaiveDateTime> = gates::table
                .find(provider)
                .select(gates::next_slot)
                .first(conn)?;
            let until = next_slot.map_or(earliest, |slot| slot.max(earliest));
            diesel::update(gates::table.find(provider))
                .set(gates::next_slot.eq(until + spacing(limits)))
                .execute(conn)?;
            crate::sync_jobs::defer(conn, job, until)?;
            return Ok(Admission::Deferred { until });
        }
        let id = diesel::insert_into(admissions::table)
            .values((
                admissions::provider.eq(provider),
                admissions::job_id.eq(job.id.get()),
                admissions::admitted_at.eq(now),
            ))
            .returning(admissions::id)
            .get_result(conn)?;
        Ok(Admission::Admitted(AdmissionId(id)))
    })
}

/// Takes back an admission whose sync was not sent after all (the
/// connection's own daily quota held it back): it counts for nothing.
pub fn release(conn: &mut AnyConnection, admission: AdmissionId) -> StorageResult<()> {
    diesel::delete(admissions::table.find(admission.0)).execute(conn)?;
    Ok(())
}

/// The time between two held-back syncs' slots: one share of the rate's
/// period, or of [`FULL_RETRY`] among the `K` places, whichever is longer.
fn spacing(limits: &ProviderLimits) -> chrono::Duration {
    let of_rate = limits
        .rate
        .and_then(|rate| chrono::Duration::from_std(rate.per / rate.syncs.max(1)).ok());
    let of_places = limits
        .concurrent
        .map(|most| FULL_RETRY / i32::try_from(most).unwrap_or(i32::MAX).max(1));
    of_rate.max(of_places).unwrap_or(FULL_RETRY)
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
    // The `most`-th newest admission in the window, if there are that
    // many: the window is full until it leaves.
    admissions::table
        .filter(admissions::provider.eq(provider))
        .filter(admissions::admitted_at.gt(window_start))
        .order(admissions::admitted_at.desc())
        .offset(i64::from(most.max(1) - 1))
        .select(admissions::admitted_at)
        .first(conn)
        .optional()
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
