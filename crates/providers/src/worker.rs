//! A worker: schedules due connections, then claims and runs jobs until the
//! queue has nothing due, then waits `poll` (or until stopped) and repeats.
//! Run as `tributary worker`, or embedded in a server (the SQLite default).
//!
//! A sync is mostly waiting for a provider's answers, so a worker runs
//! several at once: `concurrency` lanes, threads that each claim and run
//! one job after another. A provider's call never holds a database
//! connection; each job's lease is renewed by its own heartbeat
//! (`SyncEngine::run_job`).

use crate::sync::SyncEngine;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Tells a running worker to stop after its current jobs (each lane
/// finishes the job it runs and claims no other).
#[derive(Debug, Clone, Default)]
pub struct StopSignal(Arc<(Mutex<bool>, Condvar)>);

impl StopSignal {
    pub fn stop(&self) {
        let (stopped, wake) = &*self.0;
        *stopped.lock().unwrap_or_else(|p| p.into_inner()) = true;
        wake.notify_all();
    }

    pub fn is_stopped(&self) -> bool {
        *self.0.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits up to `timeout`; returns early (true) when stopped.
    fn wait(&self, timeout: Duration) -> bool {
        let (stopped, wake) = &*self.0;
        let guard = stopped.lock().unwrap_or_else(|p| p.into_inner());
        let (guard, _) = wake
            .wait_timeout_while(guard, timeout, |stopped| !*stopped)
            .unwrap_or_else(|p| p.into_inner());
        *guard
    }
}

pub struct Worker {
    engine: SyncEngine,
    id: String,
    poll: Duration,
    /// When this worker last purged old tombstones (hourly is plenty: they
    /// are kept for months).
    last_purge: std::sync::Mutex<Option<std::time::Instant>>,
    /// Other work done each round, after the due jobs (sending webhooks).
    chores: Vec<Chore>,
    /// How many jobs run at once.
    concurrency: usize,
}

/// Work a worker does each round beside syncs; it logs its own failures.
pub type Chore = Box<dyn Fn() + Send + Sync>;

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("id", &self.id)
            .field("poll", &self.poll)
            .field("chores", &self.chores.len())
            .field("concurrency", &self.concurrency)
            .finish_non_exhaustive()
    }
}

/// How often a worker purges the change feed's old tombstones.
const PURGE_EVERY: Duration = Duration::from_secs(3600);

/// A worker id that says where it runs: host, process and a random part.
pub fn worker_id(role: &str) -> String {
    use rand::RngExt as _;
    let host = std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_else(|_| "host".to_owned());
    format!(
        "{role}@{host}:{}:{:04x}",
        std::process::id(),
        rand::rng().random::<u16>()
    )
}

impl Worker {
    pub fn new(engine: SyncEngine, id: String, poll: Duration) -> Self {
        Self {
            engine,
            id,
            poll,
            last_purge: std::sync::Mutex::new(None),
            chores: Vec::new(),
            concurrency: 1,
        }
    }

    /// Runs up to `jobs` jobs at once (at least one).
    pub fn with_concurrency(mut self, jobs: usize) -> Self {
        self.concurrency = jobs.max(1);
        self
    }

    /// Adds work done each round after the due jobs.
    pub fn with_chore(mut self, chore: Chore) -> Self {
        self.chores.push(chore);
        self
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// Schedules, then runs every job that is due now, up to
    /// `concurrency` at once; returns how many jobs ran. Errors of single
    /// jobs are logged, not returned.
    pub fn run_due(&self, stop: &StopSignal) -> usize {
        if let Err(err) = self.engine.schedule_due() {
            log::error!("worker {}: scheduling failed: {err}", self.id);
        }
        self.purge_when_due();
        let ran = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for lane in 0..self.concurrency {
                // Each lane claims under an id of its own: a job's lease is
                // fenced by who holds it (`sync_jobs::renew_lease`), so one
                // lane can never store a job another lane took over.
                let lane_id = format!("{}/{lane}", self.id);
                let ran = &ran;
                let lane_runs = move || {
                    let runs = self.run_lane(&lane_id, stop);
                    ran.fetch_add(runs, std::sync::atomic::Ordering::Relaxed);
                };
                let started = std::thread::Builder::new()
                    .name(format!("sync-lane-{lane}"))
                    .spawn_scoped(scope, lane_runs);
                if let Err(err) = started {
                    // Fewer lanes this round; the others drain the queue.
                    log::error!("worker {}: starting lane {lane} failed: {err}", self.id);
                }
            }
        });
        for chore in &self.chores {
            chore();
        }
        ran.into_inner()
    }

    /// One lane: claims and runs jobs one after another until none is due
    /// or the worker is stopped; how many it ran.
    fn run_lane(&self, lane_id: &str, stop: &StopSignal) -> usize {
        let mut ran = 0;
        while !stop.is_stopped() {
            match self.engine.claim_next(lane_id) {
                Ok(Some(job)) => {
                    ran += 1;
                    log::info!(
                        "worker {lane_id}: claimed job {} (connection {}, attempt {})",
                        job.id,
                        job.connection_id,
                        job.attempts
                    );
                    let started = std::time::Instant::now();
                    match self.engine.run_job(&job) {
                        Ok(outcome) => log::info!(
                            "worker {lane_id}: job {} (connection {}): {} in {} ms",
                            job.id,
                            job.connection_id,
                            in_words(&outcome),
                            started.elapsed().as_millis()
                        ),
                        Err(err) => log::error!("worker {lane_id}: job {} failed: {err}", job.id),
                    }
                }
                Ok(None) => break,
                Err(err) => {
                    log::error!("worker {lane_id}: claiming a job failed: {err}");
                    break;
                }
            }
        }
        ran
    }

    /// Purges old tombstones, and what is past its retention, when the last
    /// purge is an hour old.
    fn purge_when_due(&self) {
        let Ok(mut last) = self.last_purge.lock() else {
            return;
        };
        if last.is_some_and(|at| at.elapsed() < PURGE_EVERY) {
            return;
        }
        *last = Some(std::time::Instant::now());
        match self.engine.purge_tombstones() {
            Ok(0) => {}
            Ok(purged) => log::info!("worker {}: purged {purged} old tombstones", self.id),
            Err(err) => log::error!("worker {}: purging tombstones failed: {err}", self.id),
        }
        match self.engine.purge_retained() {
            Ok(purged) if purged.total() == 0 => {}
            Ok(purged) => log::info!("worker {}: purged past retention: {purged:?}", self.id),
            Err(err) => log::error!("worker {}: purging past retention failed: {err}", self.id),
        }
    }

    /// Runs until `stop` is signalled.
    pub fn run(&self, stop: &StopSignal) {
        log::info!(
            "worker {} started (polling every {:?}, {} jobs at once)",
            self.id,
            self.poll,
            self.concurrency
        );
        loop {
            self.run_due(stop);
            if stop.wait(self.poll) {
                break;
            }
        }
        log::info!("worker {} stopped", self.id);
    }
}

/// A job's outcome in a log line: what happened and the counts, never a
/// provider's text (it may quote the person's data).
fn in_words(outcome: &crate::sync::SyncOutcome) -> String {
    use crate::sync::SyncOutcome;
    match outcome {
        SyncOutcome::Synced { summary: s, .. } => format!(
            "synced {} accounts ({} new), transactions {} added, {} updated, {} removed, {} unchanged",
            s.accounts_seen,
            s.accounts_created,
            s.transactions_added,
            s.transactions_updated,
            s.transactions_removed,
            s.transactions_unchanged
        ),
        SyncOutcome::ProviderFailed {
            error, retry_at, ..
        } => match retry_at {
            Some(at) => format!(
                "the provider failed (connection now {}), retried at {} UTC",
                error.connection_status(),
                at.format("%Y-%m-%d %H:%M:%S")
            ),
            None => format!(
                "the provider failed (connection now {})",
                error.connection_status()
            ),
        },
        SyncOutcome::LeaseLost { .. } => "lease lost to another worker, nothing stored".to_owned(),
        SyncOutcome::Deferred { until, .. } => format!(
            "deferred by a limit (the provider's, or the connection's daily quota) until {} UTC",
            until.format("%Y-%m-%d %H:%M:%S")
        ),
        SyncOutcome::GaveUp { .. } => "gave up after too many attempts".to_owned(),
    }
}
