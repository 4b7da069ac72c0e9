//! The job queue under load, for the bench's scale-out measurement
//! (`make bench --workers`, docs/performance.md "Workers"): a deep queue
//! made in two statements, and what one schedule tick did, read from the
//! jobs' own rows. PostgreSQL only: the measurement is of several worker
//! processes on one server.

use crate::StorageResult;
use crate::db::AnyConnection;
use crate::error::StorageError;
use chrono::NaiveDateTime;
use diesel::RunQueryDsl as _;
use diesel::pg::PgConnection;
use diesel::sql_types::{BigInt, Nullable, Timestamp};

fn postgres(conn: &mut AnyConnection) -> StorageResult<&mut PgConnection> {
    match conn {
        AnyConnection::Postgresql(pg) => Ok(pg),
        AnyConnection::Sqlite(_) => Err(StorageError::InvalidUrl(
            "the queue under load is measured on PostgreSQL".into(),
        )),
    }
}

#[derive(diesel::QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

fn count(conn: &mut AnyConnection, sql: &str) -> StorageResult<i64> {
    Ok(diesel::sql_query(sql)
        .get_result::<Count>(postgres(conn)?)?
        .n)
}

/// Jobs that have ended, succeeded or failed.
pub fn finished_jobs(conn: &mut AnyConnection) -> StorageResult<i64> {
    count(
        conn,
        "SELECT count(*) AS n FROM sync_jobs WHERE status IN ('succeeded', 'failed')",
    )
}

/// Connections to this database now, but the one asking.
pub fn open_connections(conn: &mut AnyConnection) -> StorageResult<i64> {
    count(
        conn,
        "SELECT count(*) AS n FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid()",
    )
}

/// What a schedule tick did, by the jobs' own rows.
#[derive(Debug, diesel::QueryableByName)]
pub struct Tick {
    /// Connections with exactly one succeeded job.
    #[diesel(sql_type = BigInt)]
    pub synced_once: i64,
    /// Jobs beyond one per connection.
    #[diesel(sql_type = BigInt)]
    pub extra_jobs: i64,
    #[diesel(sql_type = Nullable<Timestamp>)]
    pub first_start: Option<NaiveDateTime>,
    #[diesel(sql_type = Nullable<Timestamp>)]
    pub last_finish: Option<NaiveDateTime>,
}

pub fn tick(conn: &mut AnyConnection) -> StorageResult<Tick> {
    Ok(diesel::sql_query(
        "SELECT \
           (SELECT count(*) FROM (SELECT connection_id FROM sync_jobs WHERE status = 'succeeded' \
                                  GROUP BY connection_id HAVING count(*) = 1) once) AS synced_once, \
           (SELECT count(*) - count(DISTINCT connection_id) FROM sync_jobs) AS extra_jobs, \
           (SELECT min(started_at) FROM sync_jobs) AS first_start, \
           (SELECT max(finished_at) FROM sync_jobs) AS last_finish",
    )
    .get_result(postgres(conn)?)?)
}

/// Queues `jobs` due jobs, each on a copy of the first connection (one
/// active job per connection is the rule), and refreshes the planner's
/// statistics as a server would have by then.
pub fn queue_deep(conn: &mut AnyConnection, jobs: usize) -> StorageResult<()> {
    let pg = postgres(conn)?;
    diesel::sql_query(format!(
        "INSERT INTO connections (user_id, institution_id, provider, status, settings, \
                                  consecutive_failures, created_at, updated_at, quota_used) \
         SELECT user_id, institution_id, provider, status, settings, 0, created_at, updated_at, 0 \
         FROM connections, generate_series(1, {jobs}) \
         WHERE id = (SELECT min(id) FROM connections)"
    ))
    .execute(pg)?;
    diesel::sql_query(
        "INSERT INTO sync_jobs (connection_id, kind, status, run_after, attempts, created_at, turn) \
         SELECT c.id, 'scheduled', 'queued', now() - interval '1 minute', 0, now(), c.id \
         FROM connections c WHERE NOT EXISTS (SELECT 1 FROM sync_jobs j WHERE j.connection_id = c.id)",
    )
    .execute(pg)?;
    diesel::sql_query("ANALYZE sync_jobs").execute(pg)?;
    Ok(())
}

/// Makes `connections` connections due now, spread over `owners` people
/// (the first connection's copies, as [`queue_deep`] makes them), and
/// refreshes the planner's statistics: the scheduler's view of a large
/// installation, without syncing any of them.
pub fn generate_due(
    conn: &mut AnyConnection,
    connections: usize,
    owners: usize,
) -> StorageResult<()> {
    let pg = postgres(conn)?;
    diesel::sql_query(format!(
        "INSERT INTO users (email, public_id, created_at, updated_at) \
         SELECT 'owner-' || n || '@example.com', 'owner-' || n, now(), now() \
         FROM generate_series(1, {owners}) n"
    ))
    .execute(pg)?;
    diesel::sql_query(format!(
        "INSERT INTO connections (user_id, institution_id, provider, status, settings, \
                                  consecutive_failures, next_sync_at, created_at, updated_at, quota_used) \
         SELECT (SELECT min(id) FROM users WHERE email LIKE 'owner-%') + n % {owners}, \
                template.institution_id, template.provider, template.status, template.settings, 0, \
                now() - interval '1 minute' * random(), now(), now(), 0 \
         FROM (SELECT * FROM connections ORDER BY id LIMIT 1) template, generate_series(1, {connections}) n"
    ))
    .execute(pg)?;
    diesel::sql_query("ANALYZE").execute(pg)?;
    Ok(())
}

/// Queues a scheduled job for every connection without one, each owner's
/// jobs in turns from 1 (as the scheduler would have given them).
pub fn queue_every_connection(conn: &mut AnyConnection) -> StorageResult<()> {
    let pg = postgres(conn)?;
    diesel::sql_query(
        "INSERT INTO sync_jobs (connection_id, kind, status, run_after, attempts, created_at, turn) \
         SELECT c.id, 'scheduled', 'queued', now() - interval '1 minute', 0, now(), \
                row_number() OVER (PARTITION BY c.user_id ORDER BY c.id) \
         FROM connections c WHERE NOT EXISTS (SELECT 1 FROM sync_jobs j WHERE j.connection_id = c.id)",
    )
    .execute(pg)?;
    diesel::sql_query("ANALYZE sync_jobs").execute(pg)?;
    Ok(())
}

#[derive(diesel::QueryableByName)]
struct PlanLine {
    #[diesel(sql_type = diesel::sql_types::Text)]
    #[diesel(column_name = "QUERY PLAN")]
    line: String,
}

/// PostgreSQL's plan of `sql` (no parameters), as run: `EXPLAIN (ANALYZE,
/// BUFFERS)`, one line per node, in a transaction that is rolled back (a
/// claim or an enqueue changes nothing).
pub fn explain(conn: &mut AnyConnection, sql: &str) -> StorageResult<Vec<String>> {
    use diesel::Connection as _;
    let pg = postgres(conn)?;
    let mut plan = Vec::new();
    let rolled_back = pg.transaction::<(), diesel::result::Error, _>(|pg| {
        plan = diesel::sql_query(format!("EXPLAIN (ANALYZE, BUFFERS) {sql}"))
            .load::<PlanLine>(pg)?
            .into_iter()
            .map(|l| l.line)
            .collect();
        Err(diesel::result::Error::RollbackTransaction)
    });
    match rolled_back {
        Err(diesel::result::Error::RollbackTransaction) | Ok(()) => Ok(plan),
        Err(err) => Err(err.into()),
    }
}

/// The plan of a claim from the queue as it is now (the workers' statement,
/// `backend::claim_sql`, bound to a bench worker and this moment).
pub fn explain_claim(conn: &mut AnyConnection) -> StorageResult<Vec<String>> {
    let sql = crate::backend::claim_sql(true, false)
        .replace("$1", "'explain'")
        .replace("$2", "LOCALTIMESTAMP")
        .replace("$3", "LOCALTIMESTAMP + interval '5 minutes'");
    explain(conn, &sql)
}

/// The plan of the scheduler's turn for a new owner (`backend::turn_sql`).
pub fn explain_turn(conn: &mut AnyConnection) -> StorageResult<Vec<String>> {
    explain(
        conn,
        &crate::backend::turn_sql(true).replace("$1", "'explain:owner'"),
    )
}

/// The plan of the scheduler's look for due connections: the statement
/// `connections::due_for_sync` builds, written out here (diesel's
/// statement takes its values as parameters).
pub fn explain_due(conn: &mut AnyConnection, batch: usize) -> StorageResult<Vec<String>> {
    explain(
        conn,
        &format!(
            "SELECT id FROM connections WHERE next_sync_at <= LOCALTIMESTAMP \
             AND status IN ('ACTIVE', 'ERROR') ORDER BY next_sync_at, id LIMIT {batch}"
        ),
    )
}
