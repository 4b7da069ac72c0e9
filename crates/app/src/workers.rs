//! What a worker runs: syncs, and its chore of sending the webhooks and
//! mail notices that are due and enriching stored rows again; and a worker
//! on a thread of its own, for the servers that embed one.

use crate::config::Config;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tributary_domain::clock::Clock;
use tributary_notify::deliver::Deliverer;
use tributary_notify::mail::Mailer;
use tributary_notify::notices::NoticeSender;
use tributary_providers::sync::SyncEngine;
use tributary_providers::worker::{Chore, StopSignal, Worker, worker_id};
use tributary_storage::{Database, reenrich};

/// The webhook sender the workers run, with the configured keyring.
pub fn deliverer(
    config: &Config,
    db: &Database,
    clock: Arc<dyn Clock>,
) -> anyhow::Result<Deliverer> {
    Ok(Deliverer::new(
        db.clone(),
        clock,
        Arc::new(config.keyring()?),
        &config.outbound_guard(),
    )?
    .with_lease(config.sync_policy.lease))
}

/// What the workers send besides syncing: the webhooks due, and the mail
/// notices due.
pub fn outbound_chore(deliverer: Deliverer, notices: NoticeSender) -> Chore {
    Box::new(move || {
        if let Err(err) = deliverer.run_due() {
            log::error!("sending webhooks failed: {err}");
        }
        if let Err(err) = notices.run_due() {
            log::error!("mailing notices failed: {err}");
        }
    })
}

/// How long one pass of the worker's loop spends enriching stored rows
/// again, at most (a batch started is finished): the syncs due wait no
/// longer than that for it.
pub const ENRICHING_PER_PASS: Duration = Duration::from_millis(500);

/// Enriching stored transactions again where a person's rules or the
/// tables changed (storage::reenrich): batches of the runs under way,
/// each its own short transaction, for at most [`ENRICHING_PER_PASS`].
pub fn enrichment_chore(db: Database, clock: Arc<dyn Clock>) -> Chore {
    Box::new(move || {
        let now = || clock.now().naive_utc();
        let work = || -> tributary_storage::StorageResult<usize> {
            let conn = &mut *db.conn()?;
            let asked = reenrich::request_for_new_tables(conn, now())?;
            if asked > 0 {
                log::info!(
                    "the enrichment tables changed: enriching the rows of {asked} users again"
                );
            }
            let started = Instant::now();
            let mut batches = 0;
            while started.elapsed() < ENRICHING_PER_PASS {
                match reenrich::advance(conn, now())? {
                    Some(step) => {
                        batches += 1;
                        if step.finished {
                            log::info!("enriching again: a run finished");
                        }
                    }
                    None => break,
                }
            }
            Ok(batches)
        };
        if let Err(err) = work() {
            log::error!("enriching stored transactions again failed: {err}");
        }
    })
}

/// The worker's chore with the configured keyring and mailer: what is
/// sent, then what is enriched again.
pub fn worker_chore(
    config: &Config,
    db: &Database,
    clock: Arc<dyn Clock>,
    mailer: Arc<dyn Mailer>,
) -> anyhow::Result<Chore> {
    let outbound = outbound_chore(
        deliverer(config, db, clock.clone())?,
        NoticeSender::new(db.clone(), clock.clone(), mailer),
    );
    let enriching = enrichment_chore(db.clone(), clock);
    Ok(Box::new(move || {
        outbound();
        enriching();
    }))
}

/// How many syncs a server's embedded worker runs at once: the configured
/// number, but at most half the server's pool, so that syncs waiting for
/// SQLite's one writer never hold the connections requests need.
pub fn embedded_concurrency(configured: usize, pool_size: u32) -> usize {
    let half = usize::try_from(pool_size / 2).unwrap_or(1).max(1);
    configured.clamp(1, half)
}

/// A worker running on its own thread, stopped and joined on drop.
#[derive(Debug)]
pub struct BackgroundWorker {
    stop: StopSignal,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl BackgroundWorker {
    /// Starts a worker named after `role` (the binary it runs in), running
    /// up to `concurrency` syncs at once.
    pub fn start(
        engine: SyncEngine,
        chore: Chore,
        poll: std::time::Duration,
        role: &str,
        concurrency: usize,
    ) -> std::io::Result<Self> {
        let stop = StopSignal::default();
        let worker = Worker::new(engine, worker_id(role), poll)
            .with_chore(chore)
            .with_concurrency(concurrency);
        let signal = stop.clone();
        let thread = std::thread::Builder::new()
            .name("sync-worker".into())
            .spawn(move || worker.run(&signal))?;
        Ok(Self {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for BackgroundWorker {
    fn drop(&mut self) {
        self.stop.stop();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
