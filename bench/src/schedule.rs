//! The scheduler at scale (`--schedule 1000,100000,1000000`), on
//! PostgreSQL: for each count N, N connections due at once over N/10
//! owners, generated in SQL (nothing is synced), then the three statements
//! a scheduling pass and a claim are made of, each timed many times with
//! everything due: the look for a batch of due connections, a job's
//! enqueue (its owner's turn and the row), and a claim with N jobs queued.
//! Their plans (`EXPLAIN ANALYZE`) go to stderr.

use anyhow::Context as _;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tributary_domain::clock::SystemClock;
use tributary_domain::model::SyncJobKind;
use tributary_providers::Registry;
use tributary_providers::sandbox::{self, SandboxConnector};
use tributary_providers::sync::SyncEngine;
use tributary_storage::testing::TestDatabase;
use tributary_storage::{connections, queue_load, sync_jobs, users};

/// The scheduler's batch (`SyncEngine::schedule_due`).
const BATCH: usize = 500;
/// Times each statement is timed.
const TIMES: usize = 200;

pub struct Measured {
    pub connections: usize,
    pub due: (Duration, Duration),
    pub enqueue: (Duration, Duration),
    pub claim: (Duration, Duration),
    /// Whether any plan read a whole table (a `Seq Scan` of connections or
    /// sync_jobs) or sorted more than its batch.
    pub scans: Vec<String>,
}

pub fn measure(connections: usize) -> anyhow::Result<Measured> {
    let database = TestDatabase::postgres()
        .context("--schedule needs PostgreSQL (set TRIBUTARY_TEST_POSTGRES_URL)")?;
    let db = database.db();
    // One real connection, the template of the generated ones.
    let mut registry = Registry::default();
    registry.register(Arc::new(SandboxConnector::default()));
    let engine = SyncEngine::new(db.clone(), registry, Arc::new(SystemClock));
    let now = chrono::Utc::now().naive_utc();
    let user = users::create_personal_user(&mut *db.conn()?, "template@example.com", now)?;
    engine.connect(
        user.id,
        sandbox::PROVIDER,
        &sandbox::connect_request("template@example.com", sandbox::USER_GOOD),
    )?;
    let conn = &mut *db.conn()?;
    let started = Instant::now();
    queue_load::generate_due(conn, connections, (connections / 10).max(1))?;
    eprintln!(
        "-- schedule {connections}: generated in {} s",
        started.elapsed().as_secs()
    );

    let mut scans = Vec::new();
    let mut show = |what: &str, plan: Vec<String>| {
        eprintln!("-- schedule {connections}: {what}:");
        for line in &plan {
            eprintln!("     {line}");
            let whole_table =
                line.contains("Seq Scan on connections") || line.contains("Seq Scan on sync_jobs");
            if whole_table {
                scans.push(format!("{what}: {}", line.trim()));
            }
        }
    };
    show("due", queue_load::explain_due(conn, BATCH)?);

    let now = chrono::Utc::now().naive_utc();
    let due = timed(|| {
        let batch = connections::due_for_sync(conn, now, BATCH)?;
        anyhow::ensure!(batch.len() >= BATCH.min(connections), "a short batch");
        Ok(())
    })?;
    let mut to_queue = connections::due_for_sync(conn, now, TIMES)?.into_iter();
    let enqueue = timed(|| {
        let connection = to_queue.next().context("ran out of due connections")?;
        sync_jobs::enqueue(conn, connection, SyncJobKind::Scheduled, now, now)?;
        Ok(())
    })?;
    queue_load::queue_every_connection(conn)?;
    show("turn", queue_load::explain_turn(conn)?);
    show("claim", queue_load::explain_claim(conn)?);
    let claim = timed(|| {
        let now = chrono::Utc::now().naive_utc();
        let claimed = sync_jobs::claim(conn, "bench", now, now + chrono::Duration::minutes(5))?;
        anyhow::ensure!(claimed.is_some(), "the queue ran dry");
        Ok(())
    })?;
    Ok(Measured {
        connections,
        due,
        enqueue,
        claim,
        scans,
    })
}

/// p50 and p99 of `TIMES` runs of `run`.
fn timed(mut run: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<(Duration, Duration)> {
    let mut times = Vec::with_capacity(TIMES);
    for _ in 0..TIMES {
        let started = Instant::now();
        run()?;
        times.push(started.elapsed());
    }
    times.sort();
    let at = |percent: usize| times[(times.len() * percent / 100).min(times.len() - 1)];
    Ok((at(50), at(99)))
}
