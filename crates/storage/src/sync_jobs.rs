//! The sync job queue. Every sync, scheduled or asked for, is a row here.
//!
//! - `enqueue` adds a queued job, or returns the connection's active one (a
//!   partial unique index allows one queued-or-running job per connection).
//! - Scheduled jobs take turns between owners (`backend::take_turn`), so a
//!   big owner's backlog does not hold up everyone else's; jobs a person
//!   asked for, and retries once due, go first.
//! - `claim` hands the next due job to a worker with a lease: on PostgreSQL
//!   with `FOR UPDATE SKIP LOCKED`, so any number of workers in any number of
//!   processes never take the same job; a running job whose lease expired
//!   (its worker died) is claimable again.
//! - `renew_lease` doubles as a fence: storing a sync's results first renews
//!   the lease inside the same transaction, so a worker that lost its job
//!   stores nothing.

use crate::backend;
use crate::db::AnyConnection;
use crate::schema::sync_jobs;
use crate::{StorageError, StorageResult};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use tributary_domain::ids::{ConnectionId, SyncJobId};
use tributary_domain::model::{SyncJobKind, SyncJobStatus};
use tributary_domain::summary::SyncSummary;
use tributary_domain::webhook_event::WebhookEvent;

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = sync_jobs)]
pub struct SyncJobRecord {
    #[diesel(deserialize_as = i64)]
    pub id: SyncJobId,
    #[diesel(deserialize_as = i64)]
    pub connection_id: ConnectionId,
    #[diesel(deserialize_as = String)]
    pub kind: SyncJobKind,
    #[diesel(deserialize_as = String)]
    pub status: SyncJobStatus,
    pub run_after: NaiveDateTime,
    pub attempts: i32,
    pub locked_by: Option<String>,
    pub lease_expires_at: Option<NaiveDateTime>,
    pub started_at: Option<NaiveDateTime>,
    pub finished_at: Option<NaiveDateTime>,
    pub error: Option<String>,
    pub summary: Option<String>,
    pub created_at: NaiveDateTime,
}

/// A job a worker holds the lease of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedJob {
    pub id: SyncJobId,
    pub connection_id: ConnectionId,
    pub kind: SyncJobKind,
    /// Including this one.
    pub attempts: i32,
    pub worker: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Enqueued {
    pub job_id: SyncJobId,
    /// False when the connection already had a queued or running job.
    pub created: bool,
}

pub fn enqueue(
    conn: &mut AnyConnection,
    connection_id: ConnectionId,
    kind: SyncJobKind,
    run_after: NaiveDateTime,
    now: NaiveDateTime,
) -> StorageResult<Enqueued> {
    // A unit of work (on SQLite it takes the write lock first): the owner
    // is read before the turn and the row are written.
    let inserted = conn.atomically(|conn| {
        // A scheduled job due at once takes its owner's next turn; any other
        // goes ahead of the turns once due (`backend::claim_job`).
        let turn = if kind == SyncJobKind::Scheduled && run_after <= now {
            let owner = owner_of(conn, connection_id)?;
            Some(backend::take_turn(conn, &owner)?)
        } else {
            None
        };
        Ok(diesel::insert_into(sync_jobs::table)
            .values((
                sync_jobs::connection_id.eq(connection_id.get()),
                sync_jobs::kind.eq(kind.as_str()),
                sync_jobs::status.eq(SyncJobStatus::Queued.as_str()),
                sync_jobs::run_after.eq(run_after),
                sync_jobs::created_at.eq(now),
                sync_jobs::turn.eq(turn),
            ))
            .returning(sync_jobs::id)
            .get_result::<i64>(conn)?)
    });
    match inserted {
        Ok(job_id) => Ok(Enqueued {
            job_id: SyncJobId::new(job_id),
            created: true,
        }),
        Err(StorageError::Conflict(_)) => {
            let job_id = active_job(conn, connection_id)?
                .map(|job| job.id)
                .ok_or(StorageError::NotFound)?;
            if kind != SyncJobKind::Scheduled {
                // Asked for while a scheduled sync waits its turn: the
                // waiting job goes ahead of the turns now instead.
                diesel::update(
                    sync_jobs::table
                        .find(job_id.get())
                        .filter(sync_jobs::status.eq(SyncJobStatus::Queued.as_str())),
                )
                .set(sync_jobs::turn.eq(None::<i64>))
                .execute(conn)?;
            }
            Ok(Enqueued {
                job_id,
                created: false,
            })
        }
        Err(err) => Err(err),
    }
}

/// Who takes turns for a connection's scheduled syncs: the app whose user
/// it is, or the person who connected it on their own.
fn owner_of(conn: &mut AnyConnection, connection_id: ConnectionId) -> QueryResult<String> {
    use crate::schema::{connections, users};
    let (app, user): (Option<i64>, i64) = connections::table
        .inner_join(users::table)
        .filter(connections::id.eq(connection_id.get()))
        .select((users::app_id, users::id))
        .first(conn)?;
    Ok(match app {
        Some(app) => format!("app:{app}"),
        None => format!("user:{user}"),
    })
}

/// The connection's queued or running job, if any.
pub fn active_job(
    conn: &mut AnyConnection,
    connection_id: ConnectionId,
) -> StorageResult<Option<SyncJobRecord>> {
    Ok(sync_jobs::table
        .filter(sync_jobs::connection_id.eq(connection_id.get()))
        .filter(sync_jobs::status.eq_any([
            SyncJobStatus::Queued.as_str(),
            SyncJobStatus::Running.as_str(),
        ]))
        .select(SyncJobRecord::as_select())
        .first(conn)
        .optional()?)
}

/// Takes the next due job for `worker`: one without a turn or whose lease
/// expired, oldest first, else the next scheduled job by turn
/// (`backend::claim_sql`).
pub fn claim(
    conn: &mut AnyConnection,
    worker: &str,
    now: NaiveDateTime,
    lease_until: NaiveDateTime,
) -> StorageResult<Option<ClaimedJob>> {
    backend::claim_job(conn, worker, now, lease_until, None)?
        .map(|row| row.into_claimed(worker))
        .transpose()
}

/// Takes one particular job, if it is queued (due or not) or its lease
/// expired; `None` when another worker holds it or it has finished.
pub fn claim_job(
    conn: &mut AnyConnection,
    job_id: SyncJobId,
    worker: &str,
    now: NaiveDateTime,
    lease_until: NaiveDateTime,
) -> StorageResult<Option<ClaimedJob>> {
    backend::claim_job(conn, worker, now, lease_until, Some(job_id))?
        .map(|row| row.into_claimed(worker))
        .transpose()
}

/// Extends the lease; `false` when `job` is no longer this worker's (its
/// lease expired and another worker took it, or it was finished).
pub fn renew_lease(
    conn: &mut AnyConnection,
    job: &ClaimedJob,
    lease_until: NaiveDateTime,
) -> StorageResult<bool> {
    let updated = diesel::update(
        sync_jobs::table
            .find(job.id.get())
            .filter(sync_jobs::locked_by.eq(&job.worker))
            .filter(sync_jobs::status.eq(SyncJobStatus::Running.as_str())),
    )
    .set(sync_jobs::lease_expires_at.eq(lease_until))
    .execute(conn)?;
    Ok(updated == 1)
}

/// Ends a job (succeeded or failed) that `job.worker` holds.
pub fn finish(
    conn: &mut AnyConnection,
    job: &ClaimedJob,
    status: SyncJobStatus,
    summary: Option<&str>,
    error: Option<&str>,
    now: NaiveDateTime,
) -> StorageResult<()> {
    conn.atomically(|conn| {
        let finished = diesel::update(
            sync_jobs::table
                .find(job.id.get())
                .filter(sync_jobs::locked_by.eq(&job.worker)),
        )
        .set((
            sync_jobs::status.eq(status.as_str()),
            sync_jobs::summary.eq(summary),
            sync_jobs::error.eq(error),
            sync_jobs::finished_at.eq(now),
            sync_jobs::lease_expires_at.eq(None::<NaiveDateTime>),
        ))
        .execute(conn)?;
        if finished > 0 && status == SyncJobStatus::Failed {
            // The retries gave up: `sync.failed`.
            let user: i64 = crate::schema::connections::table
                .find(job.connection_id.get())
                .select(crate::schema::connections::user_id)
                .first(conn)?;
            let event = WebhookEvent::SyncFailed {
                connection_id: job.connection_id,
                job_id: job.id,
                attempts: job.attempts,
                reason: error.map(str::to_owned),
            };
            crate::webhooks::announce(
                conn,
                tributary_domain::ids::UserId::new(user),
                &event,
                None,
                now,
            )?;
        }
        Ok(())
    })
}

/// Puts a job that failed transiently back in the queue until `run_after`.
pub fn retry_later(
    conn: &mut AnyConnection,
    job: &ClaimedJob,
    run_after: NaiveDateTime,
    error: &str,
) -> StorageResult<()> {
    put_back(conn, job, run_after, Some(error))
}

/// Puts a job that a limit held back before its provider was asked back in
/// the queue until `run_after`: this claim was no attempt, so it does not
/// count as one.
pub fn defer(
    conn: &mut AnyConnection,
    job: &ClaimedJob,
    run_after: NaiveDateTime,
) -> StorageResult<()> {
    put_back(conn, job, run_after, None)
}

/// Back in the queue, out of the turns (once due it goes ahead of them: it
/// has waited). With the `error` of a failed attempt, or, without one,
/// as if this claim had not happened.
fn put_back(
    conn: &mut AnyConnection,
    job: &ClaimedJob,
    run_after: NaiveDateTime,
    error: Option<&str>,
) -> StorageResult<()> {
    let held = sync_jobs::table
        .find(job.id.get())
        .filter(sync_jobs::locked_by.eq(&job.worker));
    let back = (
        sync_jobs::status.eq(SyncJobStatus::Queued.as_str()),
        sync_jobs::run_after.eq(run_after),
        sync_jobs::turn.eq(None::<i64>),
        sync_jobs::locked_by.eq(None::<String>),
        sync_jobs::lease_expires_at.eq(None::<NaiveDateTime>),
    );
    match error {
        Some(error) => diesel::update(held)
            .set((back, sync_jobs::error.eq(error)))
            .execute(conn)?,
        None => diesel::update(held)
            .set((back, sync_jobs::attempts.eq(sync_jobs::attempts - 1)))
            .execute(conn)?,
    };
    Ok(())
}

pub fn get_job(conn: &mut AnyConnection, job_id: SyncJobId) -> StorageResult<SyncJobRecord> {
    Ok(sync_jobs::table
        .find(job_id.get())
        .select(SyncJobRecord::as_select())
        .first(conn)?)
}

pub fn jobs_of_connection(
    conn: &mut AnyConnection,
    connection_id: ConnectionId,
) -> StorageResult<Vec<SyncJobRecord>> {
    Ok(sync_jobs::table
        .filter(sync_jobs::connection_id.eq(connection_id.get()))
        .order(sync_jobs::id)
        .select(SyncJobRecord::as_select())
        .load(conn)?)
}

/// When the connection's newest successful sync finished and what it
/// changed: the page that follows a sync says it.
pub fn last_success(
    conn: &mut AnyConnection,
    connection_id: ConnectionId,
) -> StorageResult<Option<(NaiveDateTime, SyncSummary)>> {
    let newest: Option<(Option<NaiveDateTime>, Option<String>)> = sync_jobs::table
        .filter(sync_jobs::connection_id.eq(connection_id.get()))
        .filter(sync_jobs::status.eq(SyncJobStatus::Succeeded.as_str()))
        .order((sync_jobs::finished_at.desc(), sync_jobs::id.desc()))
        .select((sync_jobs::finished_at, sync_jobs::summary))
        .first(conn)
        .optional()?;
    Ok(newest
        .and_then(|(finished, summary)| Some((finished?, serde_json::from_str(&summary?).ok()?))))
}

/// The most recent on-demand request for a connection (for rate limiting).
pub fn last_on_demand_at(
    conn: &mut AnyConnection,
    connection_id: ConnectionId,
) -> StorageResult<Option<NaiveDateTime>> {
    Ok(sync_jobs::table
        .filter(sync_jobs::connection_id.eq(connection_id.get()))
        .filter(sync_jobs::kind.eq(SyncJobKind::OnDemand.as_str()))
        .order(sync_jobs::created_at.desc())
        .select(sync_jobs::created_at)
        .first(conn)
        .optional()?)
}

impl backend::ClaimedRow {
    pub(crate) fn into_claimed(self, worker: &str) -> StorageResult<ClaimedJob> {
        Ok(ClaimedJob {
            id: self.id,
            connection_id: self.connection_id,
            kind: self.kind.parse()?,
            attempts: self.attempts,
            worker: worker.to_owned(),
        })
    }
}
