//! The sync job table: every sync, scheduled or asked for, leaves a row with
//! its outcome. (The queue that claims due jobs builds on this table.)

use crate::StorageResult;
use crate::db::AnyConnection;
use crate::schema::sync_jobs;
use chrono::NaiveDateTime;
use diesel::prelude::*;
use tributary_domain::model::{SyncJobKind, SyncJobStatus};

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = sync_jobs)]
pub struct SyncJobRecord {
    pub id: i64,
    pub connection_id: i64,
    pub kind: String,
    pub status: String,
    pub run_after: NaiveDateTime,
    pub attempts: i32,
    pub started_at: Option<NaiveDateTime>,
    pub finished_at: Option<NaiveDateTime>,
    pub error: Option<String>,
    pub summary: Option<String>,
    pub created_at: NaiveDateTime,
}

/// Records a job that starts running now; returns its id.
pub fn start_job(
    conn: &mut AnyConnection,
    connection_id: i64,
    kind: SyncJobKind,
    now: NaiveDateTime,
) -> StorageResult<i64> {
    Ok(diesel::insert_into(sync_jobs::table)
        .values((
            sync_jobs::connection_id.eq(connection_id),
            sync_jobs::kind.eq(kind.as_str()),
            sync_jobs::status.eq(SyncJobStatus::Running.as_str()),
            sync_jobs::run_after.eq(now),
            sync_jobs::attempts.eq(1),
            sync_jobs::started_at.eq(now),
            sync_jobs::created_at.eq(now),
        ))
        .returning(sync_jobs::id)
        .get_result(conn)?)
}

pub fn finish_job(
    conn: &mut AnyConnection,
    job_id: i64,
    status: SyncJobStatus,
    summary: Option<&str>,
    error: Option<&str>,
    now: NaiveDateTime,
) -> StorageResult<()> {
    diesel::update(sync_jobs::table.find(job_id))
        .set((
            sync_jobs::status.eq(status.as_str()),
            sync_jobs::summary.eq(summary),
            sync_jobs::error.eq(error),
            sync_jobs::finished_at.eq(now),
        ))
        .execute(conn)?;
    Ok(())
}

pub fn jobs_of_connection(
    conn: &mut AnyConnection,
    connection_id: i64,
) -> StorageResult<Vec<SyncJobRecord>> {
    Ok(sync_jobs::table
        .filter(sync_jobs::connection_id.eq(connection_id))
        .order(sync_jobs::id)
        .select(SyncJobRecord::as_select())
        .load(conn)?)
}
